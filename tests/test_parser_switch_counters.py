"""switch-counters: SONiC portstat, EOS/NX-OS `show interface(s)`, NVUE, Onyx.

The fixtures (tests/fixtures/switch-counters) are checked field by field by the generic test;
these assertions pin the values that matter for triage and the variations real captures show.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed.switch_counters import SwitchCounters
from fabtui.parsers import registry, switch_counters
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "switch-counters"


def _parse(name: str) -> SwitchCounters:
    return switch_counters.parse((FIXTURES / name).read_text(encoding="utf-8"))


SONIC_ERRORS = """\
    IFACE    STATE    RX_ERR    RX_DRP    RX_OVR    TX_ERR    TX_DRP    TX_OVR
-----------  -------  --------  --------  --------  --------  --------  --------
  Ethernet0        U         0         4         0         0         0         0
 Ethernet12        X       N/A       N/A       N/A       N/A       N/A       N/A
"""


def test_sonic_errors_view_with_prompt() -> None:
    result = _parse("sonic-cmdref-show-interface-counters-errors.txt")
    assert result.flavor == "sonic"
    assert result.view == "counters-errors"
    assert result.command == "show interface counters errors"
    assert list(result.interfaces) == ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"]
    assert result.interfaces["Ethernet0"].rx_drp == 4
    assert result.interfaces["Ethernet8"].rx_drp == 1
    assert result.interfaces["Ethernet0"].state == "up"
    assert result.interfaces["Ethernet0"].rx_ok is None


def test_sonic_printall_rates_trim_and_na() -> None:
    result = _parse("sonic-show-interfaces-counters-all.txt")
    assert result.view == "counters-all"
    eth0 = result.interfaces["Ethernet0"]
    assert eth0.state == "down"
    assert (eth0.rx_ok, eth0.rx_err, eth0.rx_drp, eth0.rx_ovr) == (8, 10, 100, None)
    assert eth0.rx_bytes_per_s == 2.0e9 and eth0.rx_bps == 1.6e10
    assert eth0.rx_pps == 247000.0 and eth0.rx_util == 64.0
    eth4 = result.interfaces["Ethernet4"]
    assert eth4.state is None
    assert eth4.rx_drp == 1000
    assert eth4.rx_bytes_per_s == 204800.0
    assert (eth4.trim_packets, eth4.trim_tx_packets, eth4.trim_drop_packets) == (100, 50, 50)
    assert result.interfaces["Ethernet8"].trim_packets == 20000
    assert result.interfaces["Ethernet9"].trim_packets is None


def test_sonic_old_header_and_pdsh_crlf() -> None:
    old = _parse("synthetic-sonic-portstat-old-iface-rx-rate.txt")
    assert old.interfaces["Ethernet0"].rx_drp == 12034
    assert old.interfaces["Ethernet0"].rx_bps is None
    cleared = _parse("synthetic-sonic-counters-pdsh-crlf-cleared.txt")
    assert cleared.last_cached == "2025-03-04 10:21:07.512345"
    assert cleared.interfaces["Ethernet0"].tx_drp == 2311
    assert cleared.interfaces["Ethernet8"].rx_err == 114
    assert cleared.interfaces["Ethernet24"].state == "down"
    assert cleared.interfaces["Ethernet24"].admin_state == "down"
    assert "Reminder:" not in " ".join(cleared.interfaces)


def test_sonic_detailed_port_from_command_line_or_unknown() -> None:
    named = _parse("synthetic-sonic-counters-detailed-with-prompt.txt")
    eth = named.interfaces["Ethernet64"]
    assert (eth.rx_ok, eth.tx_ok, eth.rx_multicast) == (4217884, 4197699, 1880)
    assert eth.other["rx_pkts_4096_9216_octets"] == 4112907
    assert eth.other["rx_overruns"] is None
    unnamed = _parse("sonic-show-interfaces-counters-detailed.txt")
    assert list(unnamed.interfaces) == ["unknown"]
    assert unnamed.warnings and "unknown" in unnamed.warnings[0]
    assert unnamed.interfaces["unknown"].other["wred_total_dropped_packets"] == 101


def test_sonic_json() -> None:
    result = _parse("synthetic-sonic-counters-json.json")
    assert result.view == "counters-json"
    assert result.interfaces["Ethernet0"].rx_ok == 48123007
    assert result.interfaces["Ethernet0"].rx_drp == 1204
    assert result.interfaces["Ethernet4"].tx_ovr is None


@pytest.mark.parametrize("prefix", ["[1,0]<stdout>: ", "0: ", "leaf7: ", "> "])
def test_sonic_line_prefixes_and_quoting(prefix: str) -> None:
    text = "".join(prefix + line + "\n" for line in SONIC_ERRORS.splitlines())
    assert registry.detect(text)[0][0] == "switch-counters"
    result = switch_counters.parse(text)
    assert result.interfaces["Ethernet0"].rx_drp == 4
    assert result.interfaces["Ethernet12"].rx_err is None
    assert result.interfaces["Ethernet12"].admin_state == "down"


def test_sonic_trailing_prompt_is_not_a_row() -> None:
    result = switch_counters.parse(SONIC_ERRORS + "admin@sonic:~$\n")
    assert list(result.interfaces) == ["Ethernet0", "Ethernet12"]


def test_eos_show_interfaces() -> None:
    result = _parse("arista-eos-show-interfaces.txt")
    assert result.flavor == "eos"
    mgmt = result.interfaces["Management0"]
    assert (mgmt.rx_ok, mgmt.rx_bytes, mgmt.rx_drp, mgmt.tx_ok) == (884, 108713, 47, 878)
    assert mgmt.rx_bps == 426.0 and mgmt.link_flaps == 3
    assert result.interfaces["Ethernet1"].description == "Test interface Et1"
    assert result.interfaces["Ethernet3"].mtu == 9214
    assert result.interfaces["Loopback0"].rx_ok is None
    synthetic = _parse("synthetic-eos-show-interfaces-crc-errdisabled.txt")
    port = synthetic.interfaces["Ethernet49/1"]
    assert (port.rx_err, port.crc, port.symbol_errors, port.tx_pause) == (4417, 4417, 1209, 310)
    assert port.rx_bps == 41.2e9 and port.rx_util == 41.6
    down = synthetic.interfaces["Ethernet50/1"]
    assert (down.state, down.admin_state, down.state_reason) == ("down", "up", "errdisabled")


def test_nxos_show_interface() -> None:
    result = _parse("cisco-nxos-show-interface.txt")
    assert result.flavor == "nxos"
    eth = result.interfaces["Ethernet1/1"]
    assert (eth.rx_ok, eth.rx_err, eth.rx_drp, eth.crc) == (6392635, 10, 111, 2211122)
    assert (eth.runts, eth.giants, eth.rx_pause, eth.tx_pause) == (132, 12313, 122, 69)
    assert (eth.tx_ok, eth.tx_err, eth.tx_drp) == (138299756, 555, 33)
    assert eth.other["rx_no_buffer"] == 4431412
    assert eth.other["rx_stomped_crc"] == 133
    assert eth.rx_bps == 200.0 and eth.tx_bps == 5320.0
    assert result.interfaces["Ethernet1/49"].fec_mode == "Fc-fec"
    xcvr = result.interfaces["Ethernet1/54"]
    assert (xcvr.state, xcvr.admin_state, xcvr.state_reason) == ("down", "down",
                                                                 "XCVR not inserted")
    assert result.interfaces["Vlan1"].admin_state == "down"


def test_nvue_sectioned_and_flat() -> None:
    sectioned = _parse("cumulus-nvue-nv-show-interface-swp1-counters.txt")
    assert sectioned.flavor == "nvue" and sectioned.view == "nv-counters"
    swp1 = sectioned.interfaces["swp1"]
    assert (swp1.link_flaps, swp1.rx_ok, swp1.crc, swp1.fcs, swp1.rx_drp) == (4, 0, 0, 0, 0)
    assert swp1.other["pg7_rx_buffer_discards"] == 0
    assert "tx_fcs_errors" not in swp1.other
    flat = _parse("cumulus-nvue-nv-show-interface-swp1-counters-older-flat.txt")
    swp1 = flat.interfaces["swp1"]
    assert (swp1.rx_ok, swp1.tx_ok, swp1.link_flaps) == (29025, 43945, 4)
    assert swp1.rx_bytes == 3_370_000
    assert swp1.printed == {"rx_bytes": "3.37 MB", "tx_bytes": "4.28 MB"}
    assert any("elided" in warning for warning in flat.warnings)


def test_nvue_json_and_unknown_interface() -> None:
    text = ('{\n  "carrier-transitions": 2,\n  "in-pkts": 29025,\n  "in-errors": 3,\n'
            '  "out-drops": 1\n}\n')
    result = switch_counters.parse(text)
    assert result.view == "nv-counters-json"
    swp = result.interfaces["unknown"]
    assert (swp.rx_ok, swp.rx_err, swp.tx_drp, swp.link_flaps) == (29025, 3, 1, 2)


def test_onyx_json_and_text() -> None:
    js = _parse("onyx-show-interfaces-ethernet-json-print.json")
    assert js.flavor == "onyx" and js.view == "onyx-json"
    eth = js.interfaces["Eth1/1"]
    assert (eth.state, eth.admin_state, eth.speed, eth.fec_mode) == ("down", "up", "40 Gbps",
                                                                     "auto")
    assert eth.other["tx_hoq_discard_packets"] == 0
    assert eth.description is None
    text = _parse("synthetic-onyx-show-interfaces-ethernet-text.txt")
    eth = text.interfaces["Eth1/1"]
    assert (eth.rx_ok, eth.rx_err, eth.rx_drp, eth.tx_ok) == (8123340190, 17, 2311, 7991204420)
    assert eth.rx_bps == 41.2e9 and eth.rx_bytes_per_s == 5.15e9
    assert text.interfaces["Eth1/2"].admin_state == "down"


def test_crlf_and_tabs() -> None:
    text = SONIC_ERRORS.replace("\n", "\r\n")
    assert switch_counters.parse(text).interfaces["Ethernet0"].rx_drp == 4
    eos = (FIXTURES / "arista-eos-show-interfaces.txt").read_text().replace("     ", "\t")
    assert switch_counters.parse(eos).interfaces["Management0"].rx_drp == 47


def test_truncated_and_wrong_kind_are_refused() -> None:
    header_only = "\n".join(SONIC_ERRORS.splitlines()[:2]) + "\n"
    with pytest.raises(ParseError) as caught:
        switch_counters.parse(header_only)
    assert caught.value.line == 1
    with pytest.raises(ParseError):
        switch_counters.parse("")
    pfc = (Path(__file__).parent / "fixtures" / "pfc-counters" / "sonic-show-pfc-counters.txt")
    with pytest.raises(ParseError, match="not switch interface counters"):
        switch_counters.parse(pfc.read_text())
    assert switch_counters.detect(pfc.read_text()) == 0.0


def test_other_sonic_tables_are_not_claimed() -> None:
    for kind in ("fec-stats", "queue-counters", "pfc-counters"):
        for path in (Path(__file__).parent / "fixtures" / kind).glob("*.txt"):
            assert switch_counters.detect(path.read_text()) == 0.0, path.name


def test_table_renders() -> None:
    rendered = render_tables(switch_counters.tables(_parse("cisco-nxos-show-interface.txt")))
    assert "Ethernet1/1" in rendered and "2211122" in rendered


# ---- issue 9: real-world variation ------------------------------------------------------------

def test_nvue_counters_errors_drops_and_pktdist_tables() -> None:
    errors = _parse("cumulus-59-nv-show-interface-swp1-counters-errors.txt")
    assert (errors.flavor, errors.view, list(errors.interfaces)) == \
        ("nvue", "nv-counters-errors", ["swp1"])
    swp1 = errors.interfaces["swp1"]
    assert (swp1.rx_err, swp1.tx_err, swp1.crc, swp1.runts, swp1.giants) == (0, 0, 0, 0, 0)
    assert swp1.other == {"rx_jabber_errors": 0, "rx_length_errors": 0}  # `n/a` left out
    drops = _parse("nvue-ref-nv-show-interface-swp1-counters-drops.txt").interfaces["swp1"]
    assert (drops.rx_drp, drops.tx_drp, drops.other["tx_queue_drops"]) == (0, 0, 0)
    assert "tx_acl_drops" not in drops.other
    pktdist = _parse("nvue-ref-nv-show-interface-swp1-counters-pktdist.txt")
    assert pktdist.view == "nv-counters-pktdist"
    assert pktdist.interfaces["swp1"].other["rx_pkts_4096_16383"] == 0


def test_nvue_errors_table_values_without_the_command_line() -> None:
    # The real layout with counts put in, and no prompt: still NVUE, view from the row names.
    text = (FIXTURES / "cumulus-59-nv-show-interface-swp1-counters-errors.txt").read_text()
    text = text.split("\n", 1)[1].replace("FCS Errors        0", "FCS Errors        17") \
        .replace("Total Errors      0        0", "Total Errors      17       3")
    assert registry.detect(text)[0][0] == "switch-counters"
    result = switch_counters.parse(text)
    assert result.view == "nv-counters-errors"
    port = result.interfaces["unknown"]
    assert (port.crc, port.fcs, port.rx_err, port.tx_err) == (17, 17, 17, 3)
    assert any("keyed as 'unknown'" in warning for warning in result.warnings)


def test_sonic_state_column_in_real_captures() -> None:
    multi = _parse("sonic-utilities-pr1013-counters-multi-asic-states-u-x.txt").interfaces
    assert [(n, p.state, p.admin_state) for n, p in multi.items()][:3] == \
        [("Ethernet0", "up", "up"), ("Ethernet4", "up", "up"), ("Ethernet8", "down", "down")]
    words = _parse("sonic-utilities-pr130-portstat-state-up-down-words.txt").interfaces
    assert (words["Ethernet0"].state, words["Ethernet4"].state) == ("down", "up")
    assert words["Ethernet0"].admin_state is None  # `DOWN` does not say which
    errors = _parse("sonic-utilities-pr900-counters-errors-with-state.txt")
    assert errors.view == "counters-errors"
    assert errors.interfaces["Ethernet0"].state == "up" and \
        errors.interfaces["Ethernet0"].rx_drp == 4


def test_sonic_double_spaced_paste_and_desc_column() -> None:
    spaced = _parse("sonic-buildimage-issue19644-counters-double-spaced-util-over-100.txt")
    assert list(spaced.interfaces) == ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"]
    port = spaced.interfaces["Ethernet0"]
    assert (port.state, port.rx_ok, port.rx_util, port.rx_drp) == \
        ("up", 1_910_629_135, 101.81, 1)
    assert spaced.last_cached == "2024-02-27T22:49:51.688583"
    text = (FIXTURES / "sonic-issue234-portstat-a-desc-column.txt").read_text()
    assert registry.detect(text)[0][0] == "switch-counters"
    desc = switch_counters.parse(text)
    port = desc.interfaces["Ethernet1"]
    assert (port.state, port.description, port.rx_ok, port.rx_pps, port.rx_drp) == \
        ("up", None, 692_947, 318571.42, None)
    old = _parse("sonic-utilities-pr508-counters-pps-columns-misaligned.txt").interfaces
    assert (old["Ethernet0"].state, old["Ethernet0"].admin_state, old["Ethernet1"].tx_ok) == \
        ("down", "down", 69)


def test_nvue_view_counters_every_interface_and_state_from_flags() -> None:
    result = _parse("cumulus-59-nv-show-interface-view-counters-all-ports.txt")
    assert (result.flavor, result.view, len(result.interfaces)) == ("nvue", "nv-view-counters", 31)
    swp1 = result.interfaces["swp1"]
    assert (swp1.rx_ok, swp1.tx_ok, swp1.mtu, swp1.state, swp1.admin_state) == \
        (721, 1091, 9000, "up", "up")
    assert result.interfaces["vlan10"].rx_drp == 20
    # A port the kernel lists without `R` (running) has no link; without `U` it was shut.
    text = (FIXTURES / "cumulus-59-nv-show-interface-view-counters-all-ports.txt").read_text()
    row = "swp1            9000   721    0       0       0       1091   0       0       0       "
    text = text.replace(row + "BMsRU", row + "BMsU ")
    text = text.replace("BMsRU\nswp3", "BMs  \nswp3")
    ports = switch_counters.parse(text).interfaces
    assert (ports["swp1"].state, ports["swp1"].admin_state) == ("down", "up")
    assert (ports["swp2"].state, ports["swp2"].admin_state) == ("down", "down")


def test_nvue_all_interfaces_json() -> None:
    # Layout of `nv show interface counters -o json` as NVIDIA's sonic-mgmt NVUE wrapper reads
    # it (`[ifname]["counters"]["netstat"]["tx-drop"]`); no published capture was found.
    text = ('{"swp1": {"counters": {"netstat": {"rx-okay": 721, "rx-error": 2, "rx-drop": 0,'
            ' "tx-okay": 1091, "tx-drop": 4, "flags": "BMsU"}}}, "eth0": {"link": {}}}')
    assert registry.detect(text)[0][0] == "switch-counters"
    result = switch_counters.parse(text)
    assert (result.flavor, result.view, list(result.interfaces)) == \
        ("nvue", "nv-view-counters-json", ["swp1"])
    swp1 = result.interfaces["swp1"]
    assert (swp1.rx_ok, swp1.rx_err, swp1.tx_ok, swp1.tx_drp) == (721, 2, 1091, 4)
    assert (swp1.state, swp1.admin_state, result.warnings) == ("down", "up", [])


def test_sonic_trillion_counters_on_down_ports() -> None:
    ports = _parse("sonic-utilities-pr676-portstat-huge-counters-state-d.txt").interfaces
    eth0 = ports["Ethernet0"]
    assert (eth0.state, eth0.admin_state) == ("down", "up")
    assert (eth0.rx_ok, eth0.rx_err, eth0.tx_ovr) == \
        (2_114_316_102_605, 1_348_839_001_261, 365_833_058_905)
    assert all(p.state == "down" for p in ports.values()) and len(ports) == 4


def test_nxos_counters_blocks_each_keep_their_own_columns() -> None:
    # Issue 36: NX-OS prints `show interface counters` as four (five on a subinterface)
    # two-column blocks; a block whose header was not known was read under the previous
    # block's columns, so OutMcastPkts/OutBcastPkts overwrote OutOctets/OutUcastPkts.
    result = _parse("genieparser-nxos-show-interface-counters-golden1.txt")
    port = result.interfaces["Eth1/33"]
    assert (port.rx_bytes, port.rx_unicast, port.rx_multicast, port.rx_broadcast) == (
        1162614, 14178, 64, 0)
    assert (port.tx_bytes, port.tx_unicast, port.tx_multicast, port.tx_broadcast) == (
        12199396, 23366, 65, 1)
    assert result.command == "show interface Eth1/33 counters" and result.warnings == []
    sub = _parse("genieparser-nxos-show-interface-counters-golden3.txt").interfaces["Eth1/1.1"]
    assert (sub.rx_ok, sub.tx_ok, sub.tx_bytes, sub.tx_unicast) == (1778, 1778, 0, 0)


def test_nxos_errors_stomped_crc_is_not_read_as_in_discards() -> None:
    port = _parse("genieparser-nxos-show-interface-counters-errors-stomped-crc.txt") \
        .interfaces["Eth1/1"]
    assert port.rx_drp == 0 and port.other["stomped_crc"] == 13450


def test_nxos_svi_counters_detected_with_dash_cells() -> None:
    text = (FIXTURES / "genieparser-nxos-show-interface-counters-golden2.txt").read_text()
    assert registry.detect(text)[0][0] == "switch-counters"
    vlan = switch_counters.parse(text).interfaces["Vlan2"]
    assert vlan.rx_bytes == 21719007220 and vlan.rx_multicast is None


def test_unknown_block_header_ends_the_table_with_a_warning() -> None:
    text = (FIXTURES / "genieparser-nxos-show-interface-counters-golden1.txt").read_text()
    text = text.replace("OutMcastPkts                     OutBcastPkts",
                        "OutFancyPkts                     OutOtherPkts")
    result = switch_counters.parse(text)
    port = result.interfaces["Eth1/33"]
    assert (port.tx_bytes, port.tx_unicast, port.tx_multicast) == (12199396, 23366, None)
    assert any("table header not understood" in w for w in result.warnings)
