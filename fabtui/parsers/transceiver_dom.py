"""Optical transceiver DOM from switch CLIs: SONiC, Arista EOS, Cisco NX-OS.

Inputs, by flavor (detected from the output's shape):

- sonic: `show interfaces transceiver eeprom [--dom] [<port>]` (sfpshow; also `sfputil show
  eeprom --dom`): QSFP/QSFP-DD/OSFP `ChannelMonitorValues` (RX1Power..RX8Power, TXnBias,
  TXnPower) and SFP `MonitorData`, with their threshold sections;
- eos: `show interfaces transceiver` (one row per lane-interface) and `... detail` (per
  measurement tables with high/low alarm/warn thresholds);
- nxos: `show interface transceiver details` (per lane DOM tables with thresholds and alarm
  flags) and `show interface transceiver` (inventory only: entries carry the module identity
  and empty DOM maps, so a capture without DOM still says what is plugged where).

Values are in dBm (optical power), mA (bias), °C and V. `-inf` dBm is null and the lane is
listed in `los_lanes` (receive) or `tx_off_lanes` (transmit).
"""

from __future__ import annotations

import re

from fabtui.model.parsed.transceiver_dom import TransceiverDom, TransceiverDomReport
from fabtui.model.table import Table, left, right
from fabtui.parsers import _transceiver_dom_eos as eos
from fabtui.parsers import _transceiver_dom_nxos as nxos
from fabtui.parsers import _transceiver_dom_sonic as sonic
from fabtui.parsers._switch_common import clean_lines, command_of, head
from fabtui.parsers.errors import ParseError

KIND = "transceiver-dom"
MODEL = TransceiverDomReport
DESCRIPTION = ("transceiver DOM (optical power, bias, temperature, thresholds): SONiC `show "
               "interfaces transceiver eeprom --dom`, EOS `show interfaces transceiver "
               "[detail]`, NX-OS `show interface transceiver [details]`")

_SONIC = re.compile(r"(?m)^\S+:\s+SFP (?:EEPROM )?(?:detected|Not detected|is not applicable)")
_EOS_LEGEND = re.compile(r"mA: milliamperes|dBm: decibels \(milliwatts\)")
_EOS_TABLE = re.compile(r"(?m)^Port\s+\(Celsius\)\s+\(Volts\)")
_EOS_DETAIL = re.compile(r"(?m)^\s+High Alarm\s+High Warn\s+Low Alarm\s+Low Warn")
_NXOS = re.compile(r"(?m)^\s+transceiver is (?:not )?present\b")


def _flavor(text: str) -> tuple[str | None, float]:
    if _SONIC.search(text):
        return "sonic", 0.95
    if _NXOS.search(text):
        return "nxos", 0.95
    if _EOS_TABLE.search(text) or _EOS_DETAIL.search(text):
        return "eos", 0.9
    if _EOS_LEGEND.search(text) and re.search(r"Rx Power|Tx Power", text):
        return "eos", 0.8
    return None, 0.0


def detect(text: str) -> float:
    """How sure we are that `text` is transceiver DOM/inventory output (0..1)."""
    return _flavor(head(text))[1]


def parse(text: str) -> TransceiverDomReport:
    """Parse transceiver DOM output; raises `ParseError` when no port is found."""
    lines = clean_lines(text)
    flavor, _score = _flavor("\n".join(lines))
    interfaces: dict[str, TransceiverDom]
    if flavor == "sonic":
        interfaces, warnings = sonic.parse(lines)
        view = "eeprom"
    elif flavor == "nxos":
        interfaces, saw_dom, warnings = nxos.parse(lines)
        view = "nxos-details" if saw_dom else "nxos-inventory"
    elif flavor == "eos":
        detail = eos.is_detail(lines)
        interfaces, warnings = eos.parse_detail(lines) if detail else eos.parse_table(lines)
        view = "eos-detail" if detail else "eos-table"
    else:
        raise ParseError(KIND, None, "not transceiver output: no SONiC `SFP EEPROM`, NX-OS "
                                     "`transceiver is present` or EOS DOM table found")
    if not interfaces:
        raise ParseError(KIND, None, f"{flavor} transceiver layout but no port in it "
                                     "(truncated?)")
    return TransceiverDomReport(flavor=flavor, view=view, command=command_of(lines),
                                interfaces=interfaces, warnings=warnings)


def _lanes(values: dict[str, float | None]) -> str:
    return " ".join("-" if v is None else f"{v:g}" for v in values.values()) or "-"


def tables(result: TransceiverDomReport) -> list[Table]:
    """Per port: temperature, voltage, Rx/Tx power and bias per lane, dark lanes."""
    columns = [left("port"), right("temp_c"), right("volt_v"), left("rx_dbm"), left("tx_dbm"),
               left("bias_ma"), left("los")]
    rows = [(name, dom.temperature_c, dom.voltage_v, _lanes(dom.rx_power_dbm),
             _lanes(dom.tx_power_dbm), _lanes(dom.tx_bias_ma), ",".join(dom.los_lanes) or None)
            for name, dom in result.interfaces.items()]
    return [Table.build(columns, rows, title=[f"{result.flavor} ({result.view})"])]
