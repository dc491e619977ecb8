"""ibdev2netdev: plain and -v lines, padded states, multi-port devices, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import ibdev2netdev
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "ibdev2netdev"


def test_twelve_hcas() -> None:
    result = ibdev2netdev.parse((FIXTURES / "slurmv4-ibdev2netdev-12hca-roce.txt").read_text())
    assert len(result.devices) == 12 and len(result.entries) == 12
    assert result.devices["mlx5_0"].netdev == "enp25s0np0"
    assert result.devices["mlx5_10"].state == "Down"
    assert [d for d, e in result.devices.items() if e.netdev == "bond0"] == ["mlx5_3", "mlx5_9"]
    assert result.devices["mlx5_9"].port == 1


def test_verbose_lines() -> None:
    result = ibdev2netdev.parse((FIXTURES / "synthetic-ibdev2netdev-v-sriov-vfs.txt").read_text())
    vf = result.devices["mlx5_2"]
    assert (vf.pci_address, vf.part_id, vf.board_id, vf.description) == \
        ("0000:02:00.5", "MT4116", None, None)
    assert (vf.port_state, vf.state, vf.fw_version) == ("DOWN", "Down", "12.23.1020")
    cx6 = result.devices["mlx5_13"]
    assert cx6.board_id == "MCX653106A-ECAT"
    assert cx6.description is not None and cx6.description.endswith("dual-port QSFP56")
    assert (cx6.netdev, cx6.state, cx6.port_state) == ("ib4", "Up", "ACTIVE")


def test_dual_port_device_and_prefix() -> None:
    text = "host1: mlx4_0 port 2 ==> ib1 (Down)\nhost1: mlx4_0 port 1 ==> ib0 (Up)\n"
    result = ibdev2netdev.parse(text)
    assert result.devices["mlx4_0"].port == 1 and result.devices["mlx4_0"].netdev == "ib0"
    assert [e.port for e in result.entries] == [2, 1]


def test_refusals() -> None:
    with pytest.raises(ParseError):
        ibdev2netdev.parse("link mlx5_0/1 rx_write_requests 0\n")
    assert ibdev2netdev.detect("hca_id:\tmlx5_0\n") == 0.0
