"""lldp-neighbors: the cabling truth per port, in every layout switches and lldpd print."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import lldp_neighbors as lldp
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "lldp-neighbors"


def _read(name: str) -> str:
    with (FIXTURES / name).open(encoding="utf-8", newline="") as handle:
        return handle.read()


def _rows(text: str) -> list[tuple[str, str | None, str | None]]:
    return [(n.local_port, n.device, n.port_id) for n in lldp.parse(text).neighbors]


# SONiC --------------------------------------------------------------------------------------------

def test_sonic_table_cells_with_spaces_and_empty_cells() -> None:
    result = lldp.parse(_read("sonic-cmdref-show-lldp-table.txt"))
    assert (result.flavor, result.view, result.total_entries) == ("sonic", "table", 3)
    eth0 = result.neighbors[2]
    assert (eth0.local_port, eth0.device, eth0.port_id) == \
        ("eth0", "swtor-b2lab2-1610", "GigabitEthernet 0/2")
    assert eth0.port_description is None and eth0.capabilities == "OBR"
    assert result.neighbors[0].port_description == "T0-2:hundredGigE1/29"


def test_sonic_table_two_neighbors_on_one_port() -> None:
    result = lldp.parse(_read("sonic-utilities-test-show-lldp-table-two-macs-one-port.txt"))
    assert [(n.local_port, n.port_id, n.port_description, n.capabilities)
            for n in result.neighbors] == [
        ("Ethernet0", "00:00:00:00:00:01", "First MAC", "BR"),
        ("Ethernet0", "00:00:00:00:00:02", "Second MAC", "R")]


def test_sonic_table_empty_is_an_answer() -> None:
    result = lldp.parse(_read("synthetic-sonic-show-lldp-table-empty.txt"))
    assert result.neighbors == [] and result.total_entries == 0 and result.warnings == []


def test_sonic_table_truncated_is_refused_at_the_header() -> None:
    with pytest.raises(ParseError) as caught:
        lldp.parse(_read("synthetic-sonic-show-lldp-table-truncated.txt"))
    assert caught.value.line == 3
    cut = _read("synthetic-sonic-show-lldp-table-truncated.txt") + \
        "Ethernet0    spine-01        Ethernet1/1        BR            Ethernet1/1\n"
    result = lldp.parse(cut)
    assert len(result.neighbors) == 1 and any("footer" in w for w in result.warnings)


SIM_SONIC = """Capability codes: (R) Router, (B) Bridge, (O) Other
LocalPort    RemoteDevice  RemotePortID   Capability  RemotePortDescr
-----------  ------------  -------------  ----------  ---------------
Ethernet0    node001       enp218s0f0np0  O           mlx5_7
Ethernet64   spine-01      Ethernet29/1   BR          Ethernet29/1
--------------------------------------------------
Total entries displayed:  2
"""

SIM_EOS = """Last table change time   : 0:12:51 ago
Number of table inserts  : 2
Number of table deletes  : 0
Number of table drops    : 0
Number of table age-outs : 0

Port          Neighbor Device ID       Neighbor Port ID    TTL
---------- ------------------------ ---------------------- ---
Et1/1      leaf-g00-r0              Ethernet72             120
Et2/1      leaf-g00-r0              Ethernet88             120
"""


def test_demo_switch_layouts() -> None:
    """The simulated switch (fabtui/sim/switch_cli.py) prints these layouts."""
    sonic = lldp.parse(SIM_SONIC)
    assert [(n.local_port, n.device, n.port_id, n.port_description) for n in sonic.neighbors] \
        == [("Ethernet0", "node001", "enp218s0f0np0", "mlx5_7"),
            ("Ethernet64", "spine-01", "Ethernet29/1", "Ethernet29/1")]
    assert _rows(SIM_EOS) == [("Et1/1", "leaf-g00-r0", "Ethernet72"),
                              ("Et2/1", "leaf-g00-r0", "Ethernet88")]
    assert lldp.detect(SIM_SONIC) > 0.9 and lldp.detect(SIM_EOS) > 0.9


def test_enterprise_sonic_unbroken_dash_line() -> None:
    text = ("LocalPort           RemoteDevice        RemotePortID         Capability     "
            "RemotePortDescr\n" + "-" * 91 + "\n"
            "Ethernet0           sonic               Ethernet0            BR             "
            "Ethernet0\n" + "-" * 91 + "\nTotal entries displayed:  1\n")
    assert _rows(text) == [("Ethernet0", "sonic", "Ethernet0")]


def test_sonic_neighbors_blocks() -> None:
    result = lldp.parse(_read("sonic-cmdref-show-lldp-neighbors.txt"))
    assert (result.flavor, result.view) == ("sonic", "detail")
    first, second = result.neighbors
    assert (first.port_id, first.port_id_subtype, first.ttl) == \
        ("GigabitEthernet 0/2", "ifname", 20)
    assert first.capabilities == "Repeater, Bridge, Router"
    assert (second.local_port, second.port_id, second.port_id_subtype) == \
        ("Ethernet116", "hundredGigE1/2", "local")
    assert (second.chassis_id, second.management_address) == ("4c:76:25:e7:f0:c0", "10.11.162.40")


# EOS ----------------------------------------------------------------------------------------------

def test_eos_misaligned_dash_line() -> None:
    assert _rows(_read("ntc-arista-eos-show-lldp-neighbors-header-line.txt"))[2:] == [
        ("Et3/1", "tg104.sjc.aristanetworks.com", "Ethernet3/2"),
        ("Ma1/1", "dc1-rack11-tor1.sjc", "1/1")]


def test_eos_prompt_crlf_long_ids_and_spaces() -> None:
    result = lldp.parse(_read("synthetic-eos-show-lldp-neighbors-prompt-crlf-long-id.txt"))
    assert [(n.device, n.port_id, n.ttl) for n in result.neighbors] == [
        ("gpu-node-0042.cluster.example.com", "0c42.a1c0.77e8", 120),
        ("gpu-node-0043", "enp24s0f0np0", 120),
        ("core sw 3", "GigabitEthernet 0/3", 120)]


def test_eos_pdsh_prefix_and_no_neighbors() -> None:
    text = "".join(f"leaf3: {line}\n" for line in SIM_EOS.splitlines())
    assert _rows(text)[0] == ("Et1/1", "leaf-g00-r0", "Ethernet72")
    empty = SIM_EOS.split("Et1/1")[0]
    assert lldp.parse(empty).neighbors == []


def test_eos_detail() -> None:
    result = lldp.parse(_read("ntc-arista-eos-show-lldp-neighbors-detail.txt"))
    assert (result.flavor, result.view, len(result.neighbors)) == ("eos", "detail", 19)
    vmx = result.neighbors[4]
    assert (vmx.local_port, vmx.device, vmx.port_id, vmx.port_description) == \
        ("Management1", "vmx1", "fxp0", "fxp0")
    assert (vmx.management_address, vmx.ttl, vmx.capabilities) == \
        ("10.0.0.31", 120, "Bridge, Router")
    mac = next(n for n in result.neighbors if n.device == "aci-compute")
    assert (mac.port_id, mac.port_id_subtype, mac.port_description) == \
        ("0050.56ac.4cd9", "mac", "ens192")
    # the link-aggregation TLV's `Port ID : 1000010` is not the neighbor's port
    last = result.neighbors[-1]
    assert (last.local_port, last.port_id) == ("Ethernet52/1", "Ethernet50/1")
    assert [n.port_id_subtype for n in result.neighbors if n.device == "MX"] == ["local"]


# NX-OS / IOS --------------------------------------------------------------------------------------

def test_nxos_wrapped_device_ids_and_empty_capabilities() -> None:
    result = lldp.parse(_read("ntc-cisco-nxos-show-lldp-neighbors-multiline.txt"))
    assert result.total_entries == 15 and len(result.neighbors) == 15
    first, fw = result.neighbors[0], result.neighbors[3]
    assert (first.local_port, first.device, first.port_id, first.capabilities) == \
        ("mgmt0", "dcx3.org.local", "Gi1/0/37", "B")
    assert (fw.local_port, fw.device, fw.port_id, fw.capabilities) == \
        ("Eth1/5", "fw1-clinical-partner", "ethernet1/9", None)
    assert result.neighbors[7].device == "cr-ebc.org.local"


def test_nxos_capability_with_space_and_footer_mismatch() -> None:
    result = lldp.parse(_read("ntc-cisco-nxos-show-lldp-neighbors.txt"))
    assert (result.neighbors[3].capabilities, result.neighbors[3].port_id) == \
        ("BR T", "Ethernet1/3")
    assert result.total_entries == 3 and any("footer" in w for w in result.warnings)


def test_nxos_device_with_spaces() -> None:
    assert _rows(_read("ntc-cisco-nxos-show-lldp-neighbors-name-with-space.txt"))[0] == \
        ("Eth1/5", "Office Access Point", "wlan0")


def test_ios_table_with_blank_lines() -> None:
    text = """Capability codes:
    (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device
    (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other

Device ID           Local Intf     Hold-time  Capability      Port ID
R2                  Gi0/0          120        R               Gi0/0
SEP001122334455     Gi1/0/5        180        B,T             Port 1

Total entries displayed: 2
"""
    result = lldp.parse(text)
    assert [(n.device, n.port_id, n.capabilities, n.ttl) for n in result.neighbors] == [
        ("R2", "Gi0/0", "R", 120), ("SEP001122334455", "Port 1", "B,T", 180)]


def test_nxos_detail_not_advertised() -> None:
    result = lldp.parse(_read("ntc-cisco-nxos-show-lldp-neighbors-detail2.txt"))
    pure = result.neighbors[1]
    assert (pure.local_port, pure.device, pure.port_id, pure.port_description) == \
        ("Eth101/1/10", "pure-storage", "1a51.4800.0001", "eth0")
    assert pure.management_address is None and pure.capabilities == "B"


# lldpd --------------------------------------------------------------------------------------------

def test_lldpcli_srun_crlf_cdp_and_lldp_med() -> None:
    result = lldp.parse(_read("synthetic-lldpcli-srun-crlf-cdp-and-two-neighbors.txt"))
    assert result.flavor == "lldpd"
    leaf, cdp, mac = result.neighbors
    assert (leaf.local_port, leaf.device, leaf.port_id, leaf.port_id_subtype) == \
        ("ens108np0", "leaf-g00-r0", "Ethernet8", "local")
    assert (leaf.capabilities, leaf.ttl, leaf.port_description) == ("Bridge, Router", 120, "etp2a")
    assert (cdp.local_port, cdp.protocol, cdp.port_id) == ("ens108np0", "CDPv2", "Ethernet1/17")
    assert (mac.port_id, mac.port_id_subtype, mac.port_description) == \
        ("98:03:9b:a1:00:19", "mac", None)


def test_lldpd_old_via_form_and_no_neighbors() -> None:
    old = """LLDP neighbors
-------------------------------------------------------------------------------
Interface: eth0 (via LLDP), RID: 1, Time: 0 day, 00:09:04
 Chassis:
  ChassisID:    mac 00:1f:29:00:00:01
  SysName:      switch1
 Port:
  PortID:       local 5
  PortDescr:    GigabitEthernet1/0/5
"""
    neighbor = lldp.parse(old).neighbors[0]
    assert (neighbor.device, neighbor.port_id, neighbor.protocol) == ("switch1", "5", "LLDP")
    none = "-" * 79 + "\nLLDP neighbors:\n" + "-" * 79 + "\n"
    assert lldp.parse(none).neighbors == []


def test_keyvalue_and_several_neighbors_per_interface() -> None:
    result = lldp.parse(_read("netbox-agent-lldpctl-keyvalue-qfx.txt"))
    assert (result.view, result.neighbors[0].port_id, result.neighbors[0].port_id_subtype) == \
        ("keyvalue", "512", "local")
    text = ("lldp.eth0.via=LLDP\nlldp.eth0.chassis.name=a\nlldp.eth0.port.ifname=swp1\n"
            "lldp.eth0.via=LLDP\nlldp.eth0.chassis.name=b\nlldp.eth0.port.mac=0c:42:a1:00:00:01\n"
            "lldp.eth0.100.via=LLDP\nlldp.eth0.100.chassis.name=c\n")
    assert _rows(text) == [("eth0", "a", "swp1"), ("eth0", "b", "0c:42:a1:00:00:01"),
                           ("eth0.100", "c", None)]


# NVUE ---------------------------------------------------------------------------------------------

def test_nvue_views() -> None:
    table = lldp.parse(_read("nvue-ref-nv-show-interface-lldp.txt"))
    assert table.neighbors[1].model_dump(include={"local_port", "device", "port_id"}) == \
        {"local_port": "swp1", "device": "server01", "port_id": "48:b0:2d:76:ee:8e"}
    detail = lldp.parse(_read("nvue-ref-nv-show-interface-lldp-detail.txt"))
    assert detail.flavor == "nvue" and detail.neighbors[1].port_description == "eth1"
    assert detail.neighbors[0].capabilities is None  # LLDP-MED `Capability:` lines are not taken
    tree = lldp.parse(_read("nvue-ref-nv-show-interface-swp51-lldp-neighbor-spine01.txt"))
    assert (tree.neighbors[0].local_port, tree.neighbors[0].device, tree.neighbors[0].port_id) \
        == ("swp51", "spine01", "swp1")


def test_nvue_neighbor_table_needs_the_command_line() -> None:
    text = _read("nvue-ref-nv-show-interface-swp51-lldp-neighbor.txt")
    assert _rows(text) == [("swp51", "spine01", "swp1")]
    with pytest.raises(ParseError, match="command line"):
        lldp.parse(text.split("\n", 1)[1])


# Refusals, detection, table -----------------------------------------------------------------------

def test_refusals() -> None:
    with pytest.raises(ParseError) as caught:
        lldp.parse(_read("cumulus-59-doc-lldpcli-show-statistics.txt"))
    assert caught.value.line == 3
    with pytest.raises(ParseError, match="not its neighbors"):
        lldp.parse("LLDP interfaces:\nInterface:    eth0, via: unknown\n  Chassis:\n"
                   "    ChassisID:    mac 00:00:00:00:00:01\n  Port:\n    PortID: mac 00\n")
    with pytest.raises(ParseError, match="empty"):
        lldp.parse(" \n\n")
    with pytest.raises(ParseError, match="no LLDP"):
        lldp.parse("NIC statistics:\n     rx_packets: 1\n")


def test_markdown_quoted_capture() -> None:
    quoted = "".join(f"> {line}\n" for line in SIM_SONIC.splitlines())
    assert _rows(quoted)[1] == ("Ethernet64", "spine-01", "Ethernet29/1")


def test_detection_ignores_other_tools() -> None:
    assert lldp.detect("NIC statistics:\n     rx_packets: 1\n") == 0.0
    assert lldp.detect("swp43   LLDP Neighbor:      bcm-switch-1, swp43\n") == 0.0


def test_table_rendering() -> None:
    rendered = render_tables(lldp.tables(lldp.parse(SIM_SONIC)))
    assert rendered.splitlines()[0].split() == ["LOCAL", "PORT", "DEVICE", "PORT", "ID", "PORT",
                                                "DESCR", "CAP", "TTL"]
    assert "Ethernet64" in rendered and "2 neighbors" in rendered
