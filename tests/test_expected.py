"""Expected figures from the topology: the formulas with the demo fabric's numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.topology.expected import (
    NodeShape,
    expected_busbw,
    expected_rdma_gbps,
    gpu_generation,
    ib_retry_window_s,
    node_shape,
    pause_share,
)
from fabtui.topology.loader import load_topology

HGX_400G = NodeShape(gpus=8, nics=8, nic_speed_gbps=400, gpu="H100")


def busbw(collective: str, nodes: int, shape: NodeShape = HGX_400G) -> float:
    found = expected_busbw(collective, nodes, shape)
    assert found is not None
    return found.value


def test_alltoall_follows_the_maintainers_formula_not_half_of_all_reduce() -> None:
    # B (n-1)/(n-G) with B = 48 GB/s per GPU: 2 nodes 48 x 15/8, 8 nodes 48 x 63/56.
    assert busbw("alltoall", 2) == pytest.approx(90.0)
    assert busbw("alltoall", 8) == pytest.approx(54.0)
    # The maintainer's N/(N-1) shortcut (nccl-tests #130) is within 7 % of it.
    assert busbw("alltoall", 2) / (48 * 2) == pytest.approx(0.94, abs=0.01)
    assert busbw("alltoall", 8) / (48 * 8 / 7) == pytest.approx(0.98, abs=0.01)
    gate = expected_busbw("alltoall", 8, HGX_400G)
    assert gate is not None and gate.fail < 120 / 2  # the old gate failed every healthy fabric
    assert "(64-1)/(64-8)" in gate.basis


def test_ring_collectives_are_bounded_by_the_nodes_nics() -> None:
    for collective in ("all_reduce", "all_gather", "reduce_scatter"):
        assert busbw(collective, 2) == pytest.approx(384.0)
        assert busbw(collective, 8) == pytest.approx(384.0)
    half = NodeShape(gpus=8, nics=4, nic_speed_gbps=400, gpu="H100")
    assert busbw("all_reduce", 2, half) == pytest.approx(192.0)
    assert busbw("alltoall", 2, half) == pytest.approx(45.0)  # 24 GB/s per GPU
    slow = NodeShape(gpus=8, nics=8, nic_speed_gbps=200, gpu="H100")
    assert busbw("sendrecv", 2, slow) == pytest.approx(24.0)
    assert busbw("sendrecv", 2) == pytest.approx(48.0)


def test_single_node_figures_come_from_the_gpu_models_nvlink() -> None:
    h100 = expected_busbw("all_reduce", 1, HGX_400G)
    h200 = expected_busbw("all_reduce", 1, NodeShape(8, 8, 400, "H200"))
    a100 = expected_busbw("all_reduce", 1, NodeShape(8, 8, 200, "A100"))
    assert h100 is not None and h200 is not None and a100 is not None
    assert h100.value == pytest.approx(476.0) and h100.fail == 460
    assert h200.value == pytest.approx(475.0) and h200.fail == 431  # measured, own gate
    # No B200 figure: 952 GB/s was the H100 NVLS ratio carried over (tests/test_platforms.py).
    assert expected_busbw("all_reduce", 1, NodeShape(8, 8, 400, "B200")) is None
    b200 = expected_busbw("all_gather", 1, NodeShape(8, 8, 400, "B200"))
    assert b200 is not None and b200.value == pytest.approx(720.0)  # NCCL's SM100 NVLink model
    assert a100.value == pytest.approx(240.0) and a100.fail == pytest.approx(192.0)  # no NVLS
    assert busbw("all_gather", 1) == pytest.approx(360.0)
    assert expected_busbw("all_reduce", 1, NodeShape(8, 8, 400, None)) is None
    assert expected_busbw("broadcast", 2, HGX_400G) is None


def test_the_shape_comes_from_the_topology() -> None:
    topology = load_topology(Path("topology/demo.yaml"))
    shape = node_shape(topology.topology.nodes)
    assert shape == HGX_400G
    assert gpu_generation("NVIDIA H200 141GB HBM3e") == "H200"
    assert gpu_generation("Tesla V100") is None


def test_roce_write_bandwidth_ceiling_is_below_line_rate() -> None:
    assert expected_rdma_gbps(400).value == pytest.approx(392.1, abs=0.1)
    assert expected_rdma_gbps(200).value == pytest.approx(196.1, abs=0.1)
    assert expected_rdma_gbps(400).fail == pytest.approx(313.7, abs=0.1)


def test_link_flap_tolerance_follows_the_nccl_version_and_environment() -> None:
    assert ib_retry_window_s("2.21.5+cuda12.4") == pytest.approx(8.59, abs=0.01)
    assert ib_retry_window_s("2.23.4") == pytest.approx(34.36, abs=0.01)
    assert ib_retry_window_s(None) == pytest.approx(8.59, abs=0.01)
    assert ib_retry_window_s("2.27.5", {"NCCL_IB_TIMEOUT": "22"}) == pytest.approx(137.4, abs=0.1)
    assert ib_retry_window_s("2.18.3", {"NCCL_IB_TIMEOUT": "20", "NCCL_IB_RETRY_CNT": "3"}) == \
        pytest.approx(17.18, abs=0.01)
    assert ib_retry_window_s("2.18.3", {"NCCL_IB_TIMEOUT": "junk"}) == pytest.approx(8.59, abs=0.01)


def test_pause_share_scales_with_link_speed() -> None:
    # A pause frame at 65535 quanta x 512 bit times: 83.9 us at 400G, 336 us at 100G.
    assert pause_share(11_920, 400) == pytest.approx(1.0, abs=0.001)
    assert pause_share(2_980, 100) == pytest.approx(1.0, abs=0.001)
    assert pause_share(2_980, 400) == pytest.approx(0.25, abs=0.001)
    assert pause_share(100_000, 400) == 1.0
