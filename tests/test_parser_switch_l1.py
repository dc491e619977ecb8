"""switch-l1: Cumulus Linux `l1-show`."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import switch_l1
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "switch-l1"


def test_sample_fields() -> None:
    text = (FIXTURES / "cumulus-l1-show-swp43-sn2410.txt").read_text(encoding="utf-8")
    port = switch_l1.parse(text).ports["swp43"]
    assert (port.vendor, port.part_number, port.module_type) == ("Mellanox", "MCP2M00-A003",
                                                                 "25g-cr")
    assert (port.link_kernel, port.link_hardware) == ("up", "up")
    assert (port.configured_fec, port.fec, port.mtu) == ("Auto", "None", 9216)
    assert port.tx_power_mw == [] and port.rx_power_mw == []
    assert (port.eyes, port.grade) == ([79], [5451])
    assert port.lldp_neighbor == "bcm-switch-1, swp43"
    assert port.troubleshooting_info == "No issue was observed."


def test_lane_lists_and_down_link() -> None:
    text = ("Port:  swp1\n  Operational State\n"
            "      Link Status: Kernel: Down           Hardware: Down\n"
            "      RX Power (mW): 0.0001, 0.7682, 0.6895, 0.7236\n"
            "  Port Hardware State:\n      Eyes: 0, 81, 80, 82        Grade: 0, 5102, 4988, 5333\n")
    port = switch_l1.parse(text).ports["swp1"]
    assert port.link_hardware == "down"
    assert port.rx_power_mw == [0.0001, 0.7682, 0.6895, 0.7236]
    assert port.eyes == [0, 81, 80, 82] and port.grade[3] == 5333


def test_refusal() -> None:
    with pytest.raises(ParseError, match="no `Port:"):
        switch_l1.parse("  Module Info\n")
