"""ibnetdiscover: -p port lines, topology file, degraded links, mirrors, nodes, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import ibnetdiscover
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "ibnetdiscover"


def test_ports_report_with_degraded_ports() -> None:
    result = ibnetdiscover.parse((FIXTURES / "infiniband-exporter-ibnetdiscover-p.txt").read_text())
    assert result.format == "ports" and len(result.links) == 9
    first = result.links[0]
    assert (first.local.type, first.local.lid, first.local.port) == ("CA", 134, 1)
    assert first.local.guid == "0x7cfe9003003b4bde" and first.local.name == "o0001 HCA-1"
    assert first.remote is not None
    assert (first.remote.type, first.remote.lid, first.remote.port) == ("SW", 1719, 10)
    assert first.remote.name == "ib-i1l1s01"
    assert (first.width, first.speed, first.degraded) == ("4x", "EDR", False)
    assert (result.expected_width, result.expected_speed) == ("4x", "EDR")
    degraded = [(k.local.name, k.speed) for k in result.links if k.degraded]
    assert degraded == [("ib-i4l1s01", "???"), ("ib-i7l2s01", "SDR")]
    assert result.degraded_links == 2 and result.links[7].remote is None
    assert result.links[3].reverse_of == 0
    assert {n.name for n in result.switches} == {"ib-i1l1s01", "ib-i4l1s01", "ib-i1l2s01",
                                                 "ib-i7l2s01"}
    assert len(result.cas) == 3


def test_topology_redacted_switch_block() -> None:
    result = ibnetdiscover.parse((FIXTURES / "blog-ibnetdiscover-qm9700-redacted.txt").read_text())
    assert result.format == "topology" and len(result.links) == 5
    switch = result.switches[0]
    assert switch.name == "MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1"
    assert (switch.ports, switch.lid, switch.devid) == (129, 1, "0xd2f2")
    last = result.links[-1]
    assert (last.local.port, last.width, last.speed) == (6, "2x", "NDR")
    assert last.remote is not None and last.remote.name == "tj01-4090-node009 mlx5_2"
    assert last.remote.lid == 11
    assert [c.name for c in result.cas][1] == "tj01-4090-node004 mlx5_2"
    assert result.degraded_links == 0


def test_topology_ca_blocks_and_width_degradation() -> None:
    result = ibnetdiscover.parse(
        (FIXTURES / "synthetic-ibnetdiscover-topology-leaf-spine-degraded.txt").read_text())
    assert (result.expected_width, result.expected_speed) == ("4x", "HDR")
    reasons = {(k.local.name, k.local.port): k.degraded_reason for k in result.links if k.degraded}
    assert reasons[("MF0;leaf-1:MQM8790/U1", 22)] == "width 1x below 4x"
    assert reasons[("node02 mlx5_0", 1)] == "speed EDR below HDR"
    ca_link = result.links[6]
    assert (ca_link.local.type, ca_link.local.lid, ca_link.reverse_of) == ("CA", 5, 0)
    assert ca_link.local.guid == "c42a10300a1b2c4"


def test_list_form_and_crlf() -> None:
    text = ('Switch\t: 0x7cfe900300b07320 ports 36 devid 0xcb20 vendid 0x2c9 "ib-i1l2s01"\r\n'
            'Ca\t: 0x7cfe9003003b4bde ports 1 devid 0x1017 vendid 0x2c9 "o0001 HCA-1"\r\n')
    result = ibnetdiscover.parse(text)
    assert result.format == "list" and result.links == []
    assert result.switches[0].ports == 36 and result.cas[0].name == "o0001 HCA-1"


def test_refusals() -> None:
    with pytest.raises(ParseError):
        ibnetdiscover.parse("#\n# Topology file: generated on Mon\n#\n")
    assert ibnetdiscover.detect("mlx5_0 port 1 ==> ib0 (Up)\n") == 0.0
