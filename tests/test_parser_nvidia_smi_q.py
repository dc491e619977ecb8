"""`nvidia-smi -q` text and `-q -x` XML: PCIe, ECC, retired pages / remapped rows, clocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed.nvidia_smi_q import NvidiaSmiQuery
from fabtui.parsers import nvidia_smi_q as query
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "nvidia-smi-q"


def _parse(name: str) -> NvidiaSmiQuery:
    return query.parse((FIXTURES / name).read_text())


def test_text_v100_first_gpu() -> None:
    result = _parse("mockdata-nvidia-smi-q-v100-550.127.05-first-gpu.txt")
    assert (result.format, result.driver_version, result.cuda_version) == (
        "text", "550.127.05", "12.4")
    assert result.attached_gpus == 8 and len(result.gpus) == 1
    gpu = result.gpus[0]
    assert gpu.pci_bus_id == "00000000:00:04.0"
    assert gpu.uuid == "GPU-f3bbf1a0-ec50-caa0-d5ab-180afe8207e3"
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_width_current) == (3, 3, 16)
    assert gpu.pcie_gen_host_max is None  # printed "Unknown Error"
    assert gpu.ecc_volatile_uncorrectable_total == 0 and gpu.ecc_aggregate_correctable_total == 0
    assert gpu.retired_pages_pending is False
    assert gpu.remapped_rows_pending is None  # "Remapped Rows : N/A"
    assert gpu.power_draw_w == 44.5 and gpu.power_limit_w == 300.0
    assert gpu.clocks_event_reasons == ["gpu_idle"]
    assert gpu.mig_mode is None and gpu.fan_speed_pct is None
    assert (gpu.clock_sm_mhz, gpu.clock_sm_max_mhz) == (135, 1530)


def test_xml_a100_mig() -> None:
    result = _parse("telegraf-nvidia-smi-q-x-a100-sxm4-80gb-mig.xml")
    gpu = result.gpus[0]
    assert result.format == "xml" and result.driver_version == "535.54.03"
    assert gpu.pci_bus_id == "00000000:01:00.0" and gpu.product_name == "NVIDIA A100-SXM4-80GB"
    assert (gpu.mig_mode, gpu.mig_devices) == ("Enabled", 4)
    assert (gpu.pcie_gen_current, gpu.pcie_gen_host_max, gpu.pcie_width_max) == (4, 4, 16)
    assert gpu.utilization_gpu_pct is None
    assert gpu.memory_total_mib == 81920 and gpu.memory_used_mib == 50
    assert gpu.retired_pages_correctable is None and gpu.remapped_rows_failure is None


def test_text_hopper_sram_dram_ecc_and_pending_remap() -> None:
    result = _parse("synthetic-nvidia-smi-q-h100-560-two-gpus.txt")
    assert [g.pci_bus_id for g in result.gpus] == ["00000000:18:00.0", "00000000:2A:00.0"]
    bad = result.gpus[1]
    assert bad.ecc_volatile_correctable_total == 3
    assert bad.ecc_aggregate_correctable_total == 17
    assert bad.ecc_aggregate_uncorrectable_total == 1
    assert (bad.remapped_rows_uncorrectable, bad.remapped_rows_pending) == (1, True)
    assert bad.remapped_rows_failure is False
    assert bad.pcie_width_current == 8 and bad.replay_counter == 12
    assert bad.clocks_event_reasons == ["sw_power_cap"]
    assert bad.power_draw_w == 118.02  # the instantaneous reading
    assert (bad.fabric_state, bad.fabric_status) == ("Completed", "Success")
    assert result.gpus[0].clocks_event_reasons == []


def test_old_xml_schema_single_double_bit_and_throttle() -> None:
    gpu = _parse("synthetic-nvidia-smi-q-x-v100-418-schema-v10.xml").gpus[0]
    assert (gpu.ecc_volatile_correctable_total, gpu.ecc_volatile_uncorrectable_total) == (2, 1)
    assert (gpu.ecc_aggregate_correctable_total, gpu.ecc_aggregate_uncorrectable_total) == (15, 1)
    assert (gpu.retired_pages_uncorrectable, gpu.retired_pages_pending) == (1, True)
    assert gpu.clocks_event_reasons == ["hw_slowdown", "hw_thermal_slowdown"]
    assert gpu.power_limit_w == 300.0 and gpu.power_draw_w == 257.24
    assert gpu.pcie_width_current == 8 and gpu.replay_counter == 12


def test_ecc_without_total_is_summed_and_na_is_null() -> None:
    text = ("==============NVSMI LOG==============\nDriver Version : 470.1\n"
            "GPU 00000000:07:00.0\n"
            "    ECC Errors\n        Volatile\n            Single Bit\n"
            "                Device Memory             : 2\n"
            "                Register File             : 1\n"
            "                Texture Memory            : N/A\n"
            "            Double Bit\n"
            "                Device Memory             : N/A\n")
    gpu = query.parse(text).gpus[0]
    assert gpu.ecc_volatile_correctable_total == 3
    assert gpu.ecc_volatile_uncorrectable_total is None
    assert gpu.ecc_aggregate_correctable_total is None


def test_srun_prefix_and_crlf_text() -> None:
    raw = (FIXTURES / "mockdata-nvidia-smi-q-v100-550.127.05-first-gpu.txt").read_text()
    text = "\r\n".join("3: " + line for line in raw.split("\n"))
    gpu = query.parse(text).gpus[0]
    assert gpu.pci_bus_id == "00000000:00:04.0" and gpu.temperature_c == 37


def test_truncated_xml_names_a_line() -> None:
    raw = (FIXTURES / "telegraf-nvidia-smi-q-x-a100-sxm4-80gb-mig.xml").read_text()
    with pytest.raises(ParseError) as caught:
        query.parse("\n".join(raw.split("\n")[:120]))
    assert caught.value.line is not None and "XML" in caught.value.message


def test_wrong_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="not nvidia-smi -q"):
        query.parse("| NVIDIA-SMI 550.127.05 | something else\nhello\n")


def test_detect() -> None:
    assert query.detect("<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n") == 0.95
    assert query.detect("+----+\n| NVIDIA-SMI 550.1  Driver Version: 550.1 |\n") == 0.0


def test_r610_kmd_and_cuda_umd_version_names() -> None:
    # Issue 36: R610 renamed `Driver Version` / `CUDA Version` to `KMD Version` / `CUDA UMD
    # Version` (NVIDIA's nvidia-smi docs, quoted in PrismML-Eng/Bonsai-demo PR 122). Without a
    # real `-q` capture of R610, the real R550 capture with the two keys renamed:
    raw = (FIXTURES / "mockdata-nvidia-smi-q-v100-550.127.05-first-gpu.txt").read_text()
    raw = raw.replace("Driver Version                            :",
                      "KMD Version                               :")
    raw = raw.replace("CUDA Version                              :",
                      "CUDA UMD Version                          :")
    result = query.parse(raw)
    assert (result.driver_version, result.cuda_version) == ("550.127.05", "12.4")
    assert result.gpus


def test_cuda_version_not_found_is_null() -> None:
    # A vGPU host driver prints `CUDA Version : Not Found` (bigstack-oss/cubecos issue 312,
    # driver 580.105.06): no CUDA version, not one called "Not Found".
    raw = (FIXTURES / "mockdata-nvidia-smi-q-v100-550.127.05-first-gpu.txt").read_text()
    raw = raw.replace("CUDA Version                              : 12.4",
                      "CUDA Version                              : Not Found")
    assert query.parse(raw).cuda_version is None
