"""transceiver-dom: SONiC sfpshow/sfputil, EOS `show interfaces transceiver [detail]`, NX-OS
`show interface transceiver [details]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed.transceiver_dom import TransceiverDomReport
from fabtui.parsers import registry, transceiver_dom
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "transceiver-dom"


def _parse(name: str) -> TransceiverDomReport:
    return transceiver_dom.parse((FIXTURES / name).read_text(encoding="utf-8"))


def test_sonic_qsfpdd_eight_lanes_and_thresholds() -> None:
    result = _parse("sonic-show-interfaces-transceiver-eeprom-dom-qsfpdd.txt")
    assert result.flavor == "sonic"
    dom = result.interfaces["Ethernet8"]
    assert dom.present is True
    assert list(dom.rx_power_dbm) == [str(lane) for lane in range(1, 9)]
    assert dom.rx_power_dbm["3"] == -22.9243
    assert dom.tx_bias_ma["3"] == 0.0 and dom.tx_bias_ma["8"] == 8.224
    assert (dom.temperature_c, dom.voltage_v) == (44.9883, 3.2999)
    assert dom.thresholds["rx_power_low_alarm_dbm"] == -11.9044
    assert dom.thresholds["temperature_high_warning_c"] == 75.0
    assert dom.thresholds["voltage_low_alarm_v"] == 2.9696
    assert dom.thresholds["tx_bias_high_alarm_ma"] == 14.996
    assert (dom.vendor, dom.part_number, dom.serial) == ("INNOLIGHT", "C-DQ8FNM010-N00",
                                                         "INKAO2900002A")
    assert dom.los_lanes == []


def test_sonic_inf_lanes_are_null_and_listed() -> None:
    result = _parse("synthetic-sonic-eeprom-dom-osfp-los-lanes.txt")
    dom = result.interfaces["Ethernet0"]
    assert dom.rx_power_dbm["3"] is None and dom.rx_power_dbm["7"] is None
    assert dom.los_lanes == ["3", "7"]
    assert dom.tx_power_dbm["7"] is None and dom.tx_off_lanes == ["7"]
    assert dom.media_type == "800GBASE-DR8 (Cl 124)"
    assert result.interfaces["Ethernet8"].present is False
    assert result.interfaces["Ethernet8"].rx_power_dbm == {}


def test_sonic_sfp_forms() -> None:
    qsfp = _parse("sonic-show-interfaces-transceiver-eeprom-dom-sfp.txt").interfaces["Ethernet0"]
    assert qsfp.rx_power_dbm == {"1": 0.3802, "2": -0.4871, "3": -0.086, "4": 0.383}
    assert qsfp.media_type == "40G Active Cable (XLPPI)"
    sfp = _parse("synthetic-sonic-eeprom-dom-sfp-monitordata.txt").interfaces["Ethernet48"]
    assert sfp.rx_power_dbm == {"1": -2.3457} and sfp.tx_power_dbm == {"1": -2.1204}
    assert sfp.thresholds["rx_power_low_alarm_dbm"] == -20.0
    assert sfp.thresholds["temperature_low_alarm_c"] == -13.0
    old = _parse("synthetic-sonic-sfputil-old-channelstatus.txt").interfaces["Ethernet12"]
    assert old.los_lanes == ["4"] and old.rx_power_dbm["4"] == -40.0
    assert (old.vendor, old.identifier) == ("FINISAR CORP", "QSFP+")


def test_sonic_inf_with_space_and_prefix() -> None:
    text = ("0: Ethernet4: SFP EEPROM detected\n0:         Vendor Name: ACME\n"
            "0:         ChannelMonitorValues:\n0:                 RX1Power: -inf dBm\n"
            "0:                 RX2Power: -1.5 dBm\n")
    dom = transceiver_dom.parse(text).interfaces["Ethernet4"]
    assert dom.rx_power_dbm == {"1": None, "2": -1.5}
    assert dom.los_lanes == ["1"]


def test_eos_table_and_detail() -> None:
    table = _parse("arista-eos-show-interfaces-transceiver.txt")
    assert table.view == "eos-table"
    lane = table.interfaces["Et3/17/2"]
    assert (lane.temperature_c, lane.voltage_v, lane.tx_bias_ma["1"]) == (35.61, 3.21, 36.94)
    assert (lane.tx_power_dbm["1"], lane.rx_power_dbm["1"]) == (-0.2, -0.2)
    assert table.interfaces["Et3/1/1"].tx_power_dbm == {"1": None}
    assert table.interfaces["Et5/29/1"].temperature_c is None
    assert table.interfaces["Et3/1/1"].last_update == "0:00:06 ago"
    detail = _parse("arista-eos-show-interfaces-transceiver-detail.txt")
    assert detail.view == "eos-detail"
    et61 = detail.interfaces["Et6/1"]
    assert et61.rx_power_dbm == {"1": -0.9}
    assert et61.thresholds["rx_power_low_alarm_dbm"] == -11.5
    assert et61.thresholds["rx_power_low_warning_dbm"] == -10.5
    assert et61.thresholds["temperature_high_warning_c"] == 75.0
    assert detail.interfaces["Et29/1"].thresholds["tx_bias_high_alarm_ma"] == 38.3


def test_nxos_details_flags_lanes_and_inventory() -> None:
    result = _parse("cisco-nxos-show-interface-transceiver-details.txt")
    assert result.view == "nxos-details"
    eth = result.interfaces["Ethernet3/2"]
    assert eth.tx_bias_ma == {"1": 0.43} and eth.rx_power_dbm == {"1": -33.97}
    levels = {(a.measurement, a.level) for a in eth.alarms}
    assert ("rx_power_dbm", "low-alarm") in levels and ("tx_bias_ma", "low-alarm") in levels
    assert eth.thresholds["rx_power_low_alarm_dbm"] == -13.9
    assert eth.thresholds["rx_power_high_warning_dbm"] == -1.0
    assert result.interfaces["Ethernet3/1"].tx_bias_ma == {"1": None}
    cfp = result.interfaces["Ethernet4/1"]
    assert cfp.rx_power_dbm == {"2": -1.77, "3": -1.57} and cfp.temperature_c == 40.44
    lanes = _parse("synthetic-nxos-transceiver-details-qsfp-lanes.txt")
    qsfp = lanes.interfaces["Ethernet1/49"]
    assert qsfp.rx_power_dbm["2"] == -40.0
    assert [(a.lane, a.level) for a in qsfp.alarms] == [("2", "low-alarm"), ("4", "low-warning")]
    assert lanes.interfaces["Ethernet1/50"].present is False
    inventory = _parse("cisco-nxos-show-interface-transceiver-400g.txt")
    assert inventory.view == "nxos-inventory"
    module = inventory.interfaces["Ethernet1/35"]
    assert (module.media_type, module.serial) == ("QSFP-DD-400G-FR4", "IND282502DJ")
    assert module.rx_power_dbm == {} and module.details["host lane count"] == "8"


def test_refusals() -> None:
    with pytest.raises(ParseError, match="not transceiver output"):
        transceiver_dom.parse("Ethernet1 is up, line protocol is up\n")
    with pytest.raises(ParseError):
        transceiver_dom.parse("")
    counters = Path(__file__).parent / "fixtures" / "switch-counters"
    for path in counters.glob("*.txt"):
        assert transceiver_dom.detect(path.read_text()) == 0.0, path.name


def test_detected_with_crlf_and_table() -> None:
    text = (FIXTURES / "arista-eos-show-interfaces-transceiver.txt").read_text()
    crlf = text.replace("\n", "\r\n")
    assert registry.detect(crlf)[0][0] == "transceiver-dom"
    assert transceiver_dom.parse(crlf).interfaces["Et3/17/3"].rx_power_dbm == {"1": -0.72}
    rendered = render_tables(transceiver_dom.tables(transceiver_dom.parse(crlf)))
    assert "Et3/17/3" in rendered
