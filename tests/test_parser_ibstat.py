"""ibstat / ibstatus: CA and port fields, state words and codes, rate text, prefixes, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import ibstat
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "ibstat"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_ibstat_cx3_fdr10_ca_and_port_fields() -> None:
    result = ibstat.parse(_read("felixfu-ibstat-cx3-fdr10.txt"))
    assert result.tool == "ibstat"
    ca = result.cas["mlx4_0"]
    assert (ca.node_type, ca.ca_type, ca.number_of_ports) == ("CA", "MT4099", 1)
    assert ca.firmware_version == "2.42.5000"
    assert ca.node_guid == "0x0002c90300ea9940"
    assert ca.system_image_guid == "0x0002c90300ea9943"
    port = ca.ports["1"]
    assert (port.state, port.physical_state) == ("Active", "LinkUp")
    assert port.rate == 40.0 and port.rate_info == "FDR10" and port.width is None
    assert (port.base_lid, port.lmc, port.sm_lid) == (7, 0, 4)
    assert port.capability_mask == "0x0251486a"
    assert port.port_guid == "0x0002c90300ea9941"
    assert port.link_layer == "InfiniBand"


def test_ibstatus_codes_hex_lids_and_rate_text() -> None:
    result = ibstat.parse(_read("blog-ibstatus-cx7-ndr200-2x.txt"))
    assert result.tool == "ibstatus"
    port = result.cas["mlx5_7"].ports["1"]
    assert (port.state, port.state_code) == ("Active", 4)
    assert (port.physical_state, port.physical_state_code) == ("LinkUp", 5)
    assert port.rate == 200.0 and port.rate_info == "2X NDR" and port.width == "2X"
    assert port.base_lid == 0x6C and port.sm_lid == 4
    assert port.link_layer == "InfiniBand"


def test_ibstatus_crlf_two_ports_down_port() -> None:
    result = ibstat.parse(_read("synthetic-ibstatus-2ports-down-crlf.txt"))
    ports = result.cas["mlx5_0"].ports
    assert list(ports) == ["1", "2"]
    assert (ports["2"].state, ports["2"].state_code) == ("Down", 1)
    assert ports["2"].physical_state == "Disabled"
    assert ports["2"].base_lid == 0xFFFF


def test_a_port_whose_link_has_not_trained_has_no_rate() -> None:
    """Real ibstat prints `Rate: 10` on a Down / Disabled port (the B300 host capture): that is
    the port's reset value, not its speed, so it must not read as a 10 Gb/s link; the ports
    that are up keep their rate."""
    result = ibstat.parse(_read("github-b300-host-ibstat-cx8-mt4131-cx7-mt4129.txt"))
    ports = {name: ca.ports["1"] for name, ca in result.cas.items()}
    down = [p for p in ports.values() if p.physical_state == "Disabled"]
    assert down and all(p.state == "Down" for p in down)
    assert all((p.rate, p.rate_info, p.width) == (None, None, None) for p in down)
    assert {p.rate for p in ports.values() if p.physical_state == "LinkUp"} == {100.0}
    text = _read("synthetic-ibstatus-2ports-down-crlf.txt")  # ibstatus: `10 Gb/sec (4X SDR)`
    both = ibstat.parse(text).cas["mlx5_0"].ports
    assert (both["1"].rate, both["1"].rate_info) == (100.0, "4X EDR")
    assert (both["2"].rate, both["2"].rate_info, both["2"].width) == (None, None, None)


def test_pdsh_prefix_ethernet_port_and_rate_2_5() -> None:
    result = ibstat.parse(_read("synthetic-ibstat-pdsh-2ca-down-and-roce.txt"))
    assert list(result.cas) == ["mlx5_0", "mlx5_1"]
    assert result.cas["mlx5_0"].ports["1"].state == "Down"
    roce = result.cas["mlx5_1"].ports["1"]
    assert roce.link_layer == "Ethernet" and roce.rate == 2.5


def test_single_port_form_and_launcher_prefix() -> None:
    text = "0: CA: 'mlx5_3'\n0: Port 1:\n0: State: Active\n0: Physical state: LinkUp\n" \
           "0: Rate: 400\n0: Link layer: InfiniBand\n"
    assert ibstat.detect(text) >= 0.3
    port = ibstat.parse(text).cas["mlx5_3"].ports["1"]
    assert (port.state, port.rate, port.link_layer) == ("Active", 400.0, "InfiniBand")


def test_truncated_and_wrong_kind_are_refused() -> None:
    with pytest.raises(ParseError) as caught:
        ibstat.parse("$ ibstat\nCA 'mlx5_0'\n")
    assert caught.value.line == 2
    with pytest.raises(ParseError):
        ibstat.parse("NIC statistics:\n     rx_packets: 1\n")
    assert ibstat.detect("hca_id:\tmlx5_0\n\tfw_ver:\t\t1.2.3\n") == 0.0
