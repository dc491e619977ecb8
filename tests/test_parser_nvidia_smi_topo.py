"""`nvidia-smi topo -m` / `-p2p`: matrix, affinity columns, legends, GPU-NIC affinity."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed.nvidia_smi_topo import NvidiaSmiTopo
from fabtui.parsers import nvidia_smi_topo as topo
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "nvidia-smi-topo"


def _parse(name: str) -> NvidiaSmiTopo:
    return topo.parse((FIXTURES / name).read_text())


def test_dgx1_inline_nics_tab_separated() -> None:
    result = _parse("felixfu-topo-m-dgx1-v100-4xmlx5.txt")
    assert result.matrix_type == "topology"
    assert result.devices[:2] == ["GPU0", "GPU1"] and result.devices[8:] == [
        "mlx5_0", "mlx5_2", "mlx5_1", "mlx5_3"]
    assert result.matrix["GPU0"]["GPU3"] == "NV2"
    assert result.matrix["GPU7"]["mlx5_3"] == "PIX"
    assert result.matrix["mlx5_1"]["GPU2"] == "PIX"
    assert result.matrix["GPU0"]["GPU0"] == "X"
    assert result.cpu_affinity["GPU4"] == "20-39,60-79"
    assert "mlx5_0" not in result.cpu_affinity
    assert result.numa_affinity == {} and result.nic_legend == {}
    assert result.gpu_nic_affinity["GPU2"].nic_devices == ["mlx5_1"]
    assert result.gpu_nic_affinity["GPU2"].connection == "PIX"
    assert result.legend["NV#"] == "Connection traversing a bonded set of # NVLinks"


def test_old_driver_soc_legend_and_phb_only_nic() -> None:
    result = _parse("felixfu-topo-matrix-2xK80-mlx4-old-legend.txt")
    assert result.devices == ["GPU0", "GPU1", "GPU2", "GPU3", "mlx4_0"]
    assert "SOC" in result.legend
    assert result.gpu_nic_affinity["GPU3"].connection == "PHB"
    assert result.cpu_affinity == {f"GPU{i}": "0-11" for i in range(4)}


def test_newer_driver_nic_legend_numa_and_gpu_numa_id() -> None:
    result = _parse("synthetic-topo-m-nic-legend-gpu-numa-id-tabs.txt")
    assert result.nic_legend["NIC4"] == "mlx5_bond_0"
    assert result.numa_affinity == {"GPU0": "0", "GPU1": "0", "GPU2": "1", "GPU3": "1"}
    assert result.gpu_numa_id["GPU3"] is None
    assert result.cpu_affinity["GPU2"] == "56-111,168-223"
    assert "NIC0" not in result.cpu_affinity
    affinity = result.gpu_nic_affinity["GPU3"]
    assert (affinity.nics, affinity.nic_devices, affinity.connection) == (
        ["NIC3"], ["mlx5_3"], "PIX")
    assert result.warnings == []


def test_srun_prefix_and_crlf() -> None:
    result = _parse("synthetic-topo-m-srun-prefix-crlf-pxb.txt")
    assert result.devices == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1"]
    assert result.gpu_nic_affinity["GPU1"].connection == "PXB"
    assert result.gpu_nic_affinity["GPU1"].nic_devices == ["mlx5_0"]
    assert result.numa_affinity["GPU3"] == "1"


def test_p2p_matrix_type_from_command_and_legend() -> None:
    result = _parse("mlengineering-topo-p2p-r-h100.txt")
    assert result.matrix_type == "p2p_read"
    assert result.matrix["GPU3"]["GPU5"] == "OK"
    assert result.legend["CNS"] == "Chipset not supported"
    assert result.gpu_nic_affinity == {}
    without_command = (FIXTURES / "mlengineering-topo-p2p-r-h100.txt").read_text() \
        .replace("$ nvidia-smi topo -p2p r\n", "")
    assert topo.parse(without_command).matrix_type == "p2p"


def test_gpu_only_matrix_has_no_nic_affinity() -> None:
    result = _parse("mlengineering-topo-m-h100-8gpu.txt")
    assert result.matrix["GPU7"]["GPU0"] == "NV18"
    assert result.numa_affinity["GPU4"] == "1"
    assert result.gpu_nic_affinity == {}


def test_closest_nic_ties_and_node_only() -> None:
    text = ("\tGPU0\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n"
            "GPU0\t X \tNODE\tNODE\t0-7\t0\n"
            "NIC0\tNODE\t X \tPIX\n"
            "NIC1\tNODE\tPIX\t X \n\n"
            "NIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n")
    affinity = topo.parse(text).gpu_nic_affinity["GPU0"]
    assert affinity.connection == "NODE" and affinity.nic_devices == ["mlx5_0", "mlx5_1"]


def test_single_gpu_header_and_markdown_quote() -> None:
    text = "> \tGPU0\tCPU Affinity\tNUMA Affinity\n> GPU0\t X \t0-15\tN/A\n"
    result = topo.parse(text)
    assert result.devices == ["GPU0"] and result.numa_affinity == {"GPU0": None}
    assert result.cpu_affinity == {"GPU0": "0-15"}


def test_short_row_is_reported() -> None:
    text = "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\n"
    result = topo.parse(text)
    assert result.matrix["GPU1"] == {"GPU0": "NV4"}
    assert any("1 of 2" in w for w in result.warnings)


def test_refusals() -> None:
    with pytest.raises(ParseError, match="no topology matrix header"):
        topo.parse("NIC statistics:\n     rx_packets: 1\n")
    with pytest.raises(ParseError) as caught:
        topo.parse("$ nvidia-smi topo -m\n\tGPU0\tGPU1\tCPU Affinity\n")
    assert caught.value.line == 3


def test_detect_is_distinctive() -> None:
    assert topo.detect((FIXTURES / "mlengineering-topo-m-a100-8gpu.txt").read_text()) >= 0.8
    assert topo.detect("| NVIDIA-SMI 550.127.05   Driver Version: 550.127.05 |") == 0.0
    assert topo.detect("GPU0: Pass\n") == 0.0


def test_table_lists_closest_nics() -> None:
    matrix, closest = topo.tables(_parse("synthetic-topo-m-nic-legend-gpu-numa-id-tabs.txt"))
    assert ("GPU0", "mlx5_0", "PIX") in closest.rows
    assert "GPU0  mlx5_0        PIX" in render_tables([matrix, closest])


def test_empty_affinity_cell_is_not_shifted_into_the_next_column() -> None:
    # Issue 36: a GPU row whose CPU Affinity cell is empty leaves no token, so whitespace
    # splitting moved the NUMA node into CPU Affinity. The real capture, one cell emptied:
    raw = (FIXTURES / "go-gpuallocator-issue17-topo-m-8x4090-2nic-tabs.txt").read_text()
    raw = raw.replace("\tSYS\t0-55,112-167\t0\t\tN/A", "\tSYS\t\t0\t\tN/A", 1)
    result = topo.parse(raw)
    assert result.cpu_affinity["GPU0"] is None and result.numa_affinity["GPU0"] is None
    assert any("row GPU0 has 2 of 3 values" in w for w in result.warnings)
    assert result.cpu_affinity["GPU1"] == "0-55,112-167" and result.numa_affinity["GPU1"] == "0"


def test_value_of_the_wrong_shape_is_warned_not_stored() -> None:
    raw = (FIXTURES / "sglang-issue11208-topo-m-gb200-gpu-numa-id.txt").read_text()
    raw = raw.replace("0,3-9,11-17             2", "0,3-9,11-17             NODE", 1)
    result = topo.parse(raw)
    assert result.gpu_numa_id["GPU0"] is None and result.gpu_numa_id["GPU1"] == "10"
    assert any("GPU NUMA ID 'NODE'" in w for w in result.warnings)


def test_a_matrix_cut_before_some_rows_says_which_columns_have_none() -> None:
    # sgl-project/sglang#13973: the excerpt ends inside GPU6's row; the header names GPU0-GPU7
    # and NIC0-NIC8. Before: six rows and no word of the missing eleven.
    cut = _parse("sglang-issue13973-topo-m-8gpu-9nic-rows-cut.txt")
    assert cut.devices == [f"GPU{i}" for i in range(6)]
    assert cut.warnings == [
        "column(s) GPU6, GPU7, NIC0, NIC1, NIC2, NIC3, NIC4, NIC5, NIC6, NIC7, NIC8 have no row: "
        "the capture ends before them; their own links and affinities are not known"]
    assert cut.cpu_affinity["GPU3"] == "24-47,120-143" and cut.numa_affinity["GPU4"] == "2"


def test_wrapped_legend_entries_and_an_empty_cell_before_gpu_numa_id() -> None:
    # noonghunna/club-3090#1125 (legend wrapped at 80 columns, 4-space indent) and #1229
    # (`0\t\tN/A`: an empty cell between NUMA Affinity and GPU NUMA ID).
    wrapped = _parse("club3090-issue1125-topo-m-markdown-indent-wrapped-legend.txt")
    assert wrapped.legend["SYS"].endswith("between NUMA nodes (e.g., QPI/UPI)")
    assert wrapped.matrix["GPU1"]["GPU0"] == "NODE" and wrapped.warnings == []
    tabs = _parse("club3090-issue1229-topo-m-2x5090-tabs-empty-cell.txt")
    assert (tabs.cpu_affinity["GPU1"], tabs.numa_affinity["GPU1"], tabs.gpu_numa_id["GPU1"]) == (
        "0-63", "0", None)
