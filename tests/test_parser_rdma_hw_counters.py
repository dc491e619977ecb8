"""RDMA sysfs counters: show_counters, grep/tail dumps of hw_counters, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import rdma_hw_counters
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "rdma-hw-counters"


def test_show_counters_bond_under_congestion() -> None:
    text = (FIXTURES / "cnnotes-show_counters-mlx5_bond_0-cnp-ecn-out_of_sequence.txt").read_text()
    result = rdma_hw_counters.parse(text)
    counters = result.devices["mlx5_bond_0"].ports["1"]
    assert len(counters) == 30
    assert counters["np_cnp_sent"] == 1052612505
    assert counters["np_ecn_marked_roce_packets"] == 21278189006
    assert counters["out_of_sequence"] == 1811101
    assert counters["resp_cqe_error"] == 3293504
    assert counters["rx_write_requests"] == 2402134794


def test_sysfs_grep_and_tail() -> None:
    result = rdma_hw_counters.parse(
        (FIXTURES / "synthetic-sysfs-grep-and-tail-hw_counters.txt").read_text())
    assert result.devices["mlx5_0"].ports["1"]["local_ack_timeout_err"] == 14
    assert result.devices["mlx5_0"].ports["1"]["np_cnp_sent"] == 880213
    assert result.devices["mlx5_1"].ports["1"] == {"np_cnp_sent": 0, "rp_cnp_handled": 77,
                                                   "out_of_sequence": 0}


def test_unknown_device_and_thousands_separators() -> None:
    text = "Port 1 hw counters:\r\nnp_cnp_sent: 1,234\r\nout_of_sequence: 5\r\n"
    result = rdma_hw_counters.parse(text)
    assert result.devices["unknown"].ports["1"] == {"np_cnp_sent": 1234, "out_of_sequence": 5}


def test_ethtool_output_is_not_claimed() -> None:
    text = "NIC statistics:\n     rx_packets: 1\n     np_cnp_sent: 2\n"
    assert rdma_hw_counters.detect(text) == 0.0
    with pytest.raises(ParseError):
        rdma_hw_counters.parse("hello\nworld\n")


def test_show_counters_cm_blocks_are_kept_apart() -> None:
    result = rdma_hw_counters.parse(
        (FIXTURES / "synthetic-show_counters-hw-and-cm-counters.txt").read_text())
    device = result.devices["mlx5_0"]
    assert device.ports["1"] == {"np_cnp_sent": 12, "out_of_sequence": 3}
    assert device.cm_counters["1"]["cm_tx_msgs/req"] == 9
    assert device.cm_counters["1"]["cm_tx_retries/req"] == 1


def test_missing_device_message() -> None:
    with pytest.raises(ParseError, match="Device mlx5_9 not found"):
        rdma_hw_counters.parse("# show_counters mlx5_9\nDevice mlx5_9 not found\n")
