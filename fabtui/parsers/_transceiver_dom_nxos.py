"""Cisco NX-OS `show interface transceiver [details]` for transceiver-dom. Not a parser.

    Ethernet3/1
        transceiver is present
        type is 10Gbase-SR
        name is CISCO-FINISAR
        part number is FTLX8571D3BCL-C2
        ...
    Lane Number:2 Network Lane
               SFP Detail Diagnostics Information (internal calibration)
      ----------------------------------------------------------------------------
                    Current              Alarms                  Warnings
                    Measurement     High        Low         High          Low
      ----------------------------------------------------------------------------
      Temperature   35.66 C        75.00 C     -5.00 C     70.00 C        0.00 C
      Tx Power     -14.05 dBm --    1.69 dBm  -11.30 dBm   -1.30 dBm     -7.30 dBm

Thresholds are printed High Alarm, Low Alarm, High Warning, Low Warning. A flag after the value
(`++` high alarm, `+` high warning, `-` low warning, `--` low alarm) is kept in `alarms`.
Without `details` only the inventory lines are printed; entries then have empty DOM maps.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.transceiver_dom import TransceiverDom
from fabtui.parsers._transceiver_dom_common import (
    FLAGS,
    DomBuilder,
    measurement_field,
    threshold_name,
)

PORT = re.compile(r"^(?P<port>(?:Ethernet|Eth)\d+(?:/\d+)+)\s*$")
_PRESENT = re.compile(r"^\s+transceiver is (?P<state>not present|present)", re.IGNORECASE)
_FIELD = re.compile(r"^\s+(?P<key>[A-Za-z][\w /.()-]*?) is (?P<value>.*?)\s*$")
_LANES = re.compile(r"^\s+number of lanes\s+(\d+)", re.IGNORECASE)
_LANE = re.compile(r"^\s*Lane Number\s*:\s*(\d+)", re.IGNORECASE)
_ROW = re.compile(r"^\s+(Temperature|Voltage|Current|Tx Bias|Tx Power|Rx Power)\s+"
                  r"((?:N/A|[-+]?\d).*)$", re.IGNORECASE)
_MEASUREMENT = {"temperature": "temperature", "voltage": "voltage", "current": "tx_bias",
                "tx bias": "tx_bias", "tx power": "tx_power", "rx power": "rx_power"}
_UNITS = ("C", "V", "mA", "dBm", "W", "mW", "uA")
_NUMBER_UNIT = re.compile(r"^([-+]?\d+(?:\.\d+)?)(C|V|mA|dBm|mW|uA)?$")
_ORDER = (("high", "alarm"), ("low", "alarm"), ("high", "warning"), ("low", "warning"))
_IDENTITY = {"name": "vendor", "part number": "part_number", "serial number": "serial",
             "revision": "revision", "type": "media_type"}


def parse(lines: list[str]) -> tuple[dict[str, TransceiverDom], bool, list[str]]:
    """Every port block; the flag says whether any DOM table was printed."""
    builders: dict[str, DomBuilder] = {}
    warnings: list[str] = []
    current: DomBuilder | None = None
    lane = "1"
    saw_dom = False
    for number, line in enumerate(lines, start=1):
        port = PORT.match(line)
        if port:
            current = builders.setdefault(port.group("port"), DomBuilder())
            lane = "1"
            continue
        if current is None or not line.strip():
            continue
        lane_match = _LANE.match(line)
        if lane_match:
            lane = lane_match.group(1)
            continue
        row = _ROW.match(line)
        if row:
            saw_dom = True
            if not _dom_row(current, _MEASUREMENT[row.group(1).lower()], lane, row.group(2)):
                warnings.append(f"line {number}: unreadable {row.group(1)} row skipped")
            continue
        _inventory(current, line)
    result: dict[str, TransceiverDom] = {}
    for name, builder in builders.items():
        if builder.threshold_conflict:
            warnings.append(f"{name}: thresholds differ between lanes; the first are kept")
        result[name] = builder.build()
    return result, saw_dom, warnings


def _inventory(builder: DomBuilder, line: str) -> None:
    present = _PRESENT.match(line)
    if present:
        builder.values["present"] = present.group("state").lower() == "present"
        return
    lanes = _LANES.match(line)
    if lanes:
        builder.details["number of lanes"] = lanes.group(1)
        return
    field = _FIELD.match(line)
    if not field:
        return
    key, value = field.group("key").strip(), field.group("value").strip()
    target = _IDENTITY.get(key.lower())
    if target:
        builder.values[target] = value or None
    else:
        builder.details[key] = value


def _tokens(text: str) -> list[tuple[float | None, str | None]]:
    """`-14.05 dBm --  1.69 dBm N/A` -> [(-14.05, None), (None, "--"), (1.69, None), (None, None)].

    Each item is a measurement (number, or None for N/A) or a flag (None, flag).
    """
    items: list[tuple[float | None, str | None]] = []
    for token in text.split():
        if token in _UNITS:
            continue
        if token in FLAGS:
            items.append((None, token))
        elif token.upper() in ("N/A", "NA"):
            items.append((None, None))
        else:
            match = _NUMBER_UNIT.match(token)
            if not match:
                raise ValueError(token)
            items.append((float(match.group(1)), None))
    return items


def _dom_row(builder: DomBuilder, measurement: str, lane: str, text: str) -> bool:
    try:
        items = _tokens(text)
    except ValueError:
        return False
    if not items or items[0][1] is not None:
        return False
    value = items[0][0]
    field = measurement_field(measurement)
    module_level = measurement in ("temperature", "voltage")
    if module_level:
        builder.module(field, value)
    else:
        builder.lane(field, lane, value)
    rest = items[1:]
    if rest and rest[0][1] is not None:
        builder.flag(field, None if module_level else lane, rest[0][1])
        rest = rest[1:]
    for (side, level), (number, _flag) in zip(_ORDER, rest, strict=False):
        builder.threshold(threshold_name(measurement, side, level), number)
    return True
