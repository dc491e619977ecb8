"""Default `nvidia-smi` table: header layouts, GPU blocks, N/A values, processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed.nvidia_smi import NvidiaSmiTable
from fabtui.parsers import nvidia_smi as smi
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "nvidia-smi"


def _parse(name: str) -> NvidiaSmiTable:
    return smi.parse((FIXTURES / name).read_text())


def test_550_layout_eight_gpus() -> None:
    result = _parse("mockdata-nvidia-smi-8xV100-550.127.05.txt")
    assert (result.driver_version, result.cuda_version) == ("550.127.05", "12.4")
    assert [g.index for g in result.gpus] == list(range(8))
    first, last = result.gpus[0], result.gpus[7]
    assert first.bus_id == "00000000:00:04.0" and last.bus_id == "00000000:00:0B.0"
    assert (first.temperature_c, first.power_draw_w, first.power_cap_w) == (37, 45.0, 300.0)
    assert (last.temperature_c, last.power_draw_w) == (36, 44.0)
    assert first.volatile_uncorrectable_ecc == 0
    assert first.fan_pct is None and first.mig_mode is None  # both printed N/A
    assert (first.memory_used_mib, first.memory_total_mib) == (1, 16384)
    assert result.processes == [] and result.warnings == []


def test_470_layout_mig_table_and_gi_ci_processes() -> None:
    result = _parse("synthetic-nvidia-smi-470-a100-mig-processes.txt")
    assert result.timestamp == "Tue Aug 16 09:41:07 2022"
    assert len(result.gpus) == 2
    assert result.gpus[0].mig_mode == "Enabled" and result.gpus[0].utilization_pct is None
    assert result.gpus[1].volatile_uncorrectable_ecc == 2
    (process,) = result.processes
    assert (process.gpu, process.pid, process.type, process.used_memory_mib) == (
        1, 48213, "C", 20339)
    assert process.gi_id is None


def test_418_layout_with_mpirun_prefix() -> None:
    result = _parse("synthetic-nvidia-smi-418-mpirun-tag-output.txt")
    assert result.driver_version == "418.67" and len(result.gpus) == 2
    assert result.gpus[1].volatile_uncorrectable_ecc is None  # N/A
    assert result.gpus[1].compute_mode == "E. Process"
    assert [p.pid for p in result.processes] == [11429, 11430]
    assert result.processes[0].process_name == "/usr/bin/python3"


def test_crlf_and_err_values() -> None:
    raw = (FIXTURES / "mockdata-nvidia-smi-8xV100-550.127.05.txt").read_text()
    raw = raw.replace("| N/A   37C    P0             45W /  300W |",
                      "| ERR!  ERR!   P0            ERR! /  300W |")
    result = smi.parse(raw.replace("\n", "\r\n"))
    assert result.gpus[0].temperature_c is None and result.gpus[0].power_draw_w is None
    assert result.gpus[0].power_cap_w == 300.0 and len(result.gpus) == 8


def test_refusals() -> None:
    with pytest.raises(ParseError) as caught:
        smi.parse("$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the "
                  "NVIDIA driver.\n")
    assert caught.value.line == 2
    with pytest.raises(ParseError, match="no GPU block"):
        smi.parse("+---+\n| NVIDIA-SMI 550.1   Driver Version: 550.1   CUDA Version: 12.4 |\n")


def test_detect() -> None:
    assert smi.detect((FIXTURES / "mockdata-nvidia-smi-8xV100-550.127.05.txt").read_text()) > 0.9
    assert smi.detect("==============NVSMI LOG==============\nDriver Version : 1\n") == 0.0


def test_r610_kmd_and_cuda_umd_version_header() -> None:
    # Issue 36: R610 renamed the header's `Driver Version` / `CUDA Version`; without them the
    # whole table was refused ("no GPU block").
    for name in ("sglang-issue27487-r610-b200-kmd-umd-version.txt",
                 "mistralrs-pr2287-r610-rtx5070-kmd-umd-version.txt"):
        result = _parse(name)
        assert (result.nvidia_smi_version, result.driver_version, result.cuda_version) == (
            "610.43.02", "610.43.02", "13.3")
        assert result.gpus and result.warnings == []
    b200 = _parse("sglang-issue27487-r610-b200-kmd-umd-version.txt").gpus
    assert [(g.name, g.power_cap_w, g.memory_total_mib) for g in b200] == [
        ("NVIDIA B200", 1000.0, 183359)] * 2


def test_cuda_version_printed_na_is_null() -> None:
    result = _parse("k8s-dra-driver-openshift-550.54.14-a100-mig-cuda-na.txt")
    assert result.driver_version == "550.54.14" and result.cuda_version is None


def test_mig_devices_table_rows() -> None:
    # Issue 36: the MIG devices table was skipped, losing each instance's memory and ECC.
    result = _parse("dra-openshift-readme-570.148.08-a100-80gb-mig-4-devices.txt")
    assert [(m.gi_id, m.ci_id, m.mig_device) for m in result.mig_devices] == [
        (1, 0, 0), (5, 0, 1), (13, 0, 2), (14, 0, 3)]
    first = result.mig_devices[0]
    assert (first.memory_used_mib, first.memory_total_mib) == (107, 40192)
    assert (first.bar1_used_mib, first.bar1_total_mib) == (0, 65535)
    assert (first.sm_count, first.volatile_uncorrectable_ecc) == (42, 0)
    assert first.shared == {"CE": 3, "ENC": 0, "DEC": 2, "OFA": 0, "JPG": 0}
    shared_memory = _parse("github-mig-580.126.09-a100-shared-memory-usage.txt").mig_devices
    assert [(m.gi_id, m.ci_id, m.memory_total_mib) for m in shared_memory] == [
        (2, 0, 20096), (3, 0, 9984), (3, 1, 9984), (9, 0, 4864)]


def test_mig_row_with_missing_cells_warns_instead_of_guessing() -> None:
    raw = (FIXTURES / "dra-openshift-readme-570.148.08-a100-80gb-mig-4-devices.txt").read_text()
    raw = raw.replace("| 42      0 |  3   0    2    0    0 |", "| 42 |  3   0    2 |", 1)
    result = smi.parse(raw)
    assert result.mig_devices[0].sm_count is None
    assert result.mig_devices[0].shared == dict.fromkeys(("CE", "ENC", "DEC", "OFA", "JPG"))
    assert any("MIG device row" in w for w in result.warnings)
