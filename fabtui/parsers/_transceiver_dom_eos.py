"""Arista EOS `show interfaces transceiver [detail]` for transceiver-dom. Not a parser.

The plain form is one table (Port, Temp, Voltage, Bias Current, Optical Tx/Rx Power, Last
Update). The `detail` form prints one table per measurement (Temperature, Voltage, Current,
Tx Power, Rx Power), each row a port with its value and four thresholds in the order of the
header (High Alarm, High Warn, Low Alarm, Low Warn). EOS names each lane as an interface
(Et3/17/1, Et3/17/2, ...), so every row is its own entry and its values are lane "1".
"""

from __future__ import annotations

import re

from fabtui.model.parsed.transceiver_dom import TransceiverDom
from fabtui.parsers._switch_common import rule_spans, split_unit
from fabtui.parsers._transceiver_dom_common import (
    FLAGS,
    DomBuilder,
    measurement_field,
    threshold_name,
)

_MEASUREMENTS = (("temperature", "temperature"), ("voltage", "voltage"),
                 ("current", "tx_bias"), ("bias", "tx_bias"), ("tx power", "tx_power"),
                 ("rx power", "rx_power"))
_THRESHOLD_ORDER = re.compile(r"(High|Low)\s+(Alarm|Warn)", re.IGNORECASE)
_TABLE_ORDER = ("temperature", "voltage", "tx_bias", "tx_power", "rx_power")


def is_detail(lines: list[str]) -> bool:
    """The detail form has `High Alarm ... Threshold` headers."""
    return any(_THRESHOLD_ORDER.search(line) for line in lines) and \
        any("Threshold" in line for line in lines)


def _value(builder: DomBuilder, measurement: str, text: str, lane: str = "1") -> bool:
    """Store a live value; False when `text` is not a number or N/A."""
    try:
        number, _unit, infinite = split_unit(text)
    except ValueError:
        return False
    field = measurement_field(measurement)
    if measurement in ("temperature", "voltage"):
        builder.module(field, number)
    else:
        builder.lane(field, lane, number, infinite)
    return True


def _table_columns(header: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """What each column of the plain table holds, from its stacked header (EOS order when the
    header cannot be read)."""
    cells = [" ".join(parts).lower() for parts in zip(*(
        [line[lo:hi].strip() for lo, hi in spans] for line in header), strict=True)] \
        if header else []
    columns: list[str] = []
    for cell in cells[1:]:
        if "temp" in cell:
            columns.append("temperature")
        elif "volt" in cell:
            columns.append("voltage")
        elif "bias" in cell or "current" in cell:
            columns.append("tx_bias")
        elif "tx" in cell and "power" in cell:
            columns.append("tx_power")
        elif "rx" in cell and "power" in cell:
            columns.append("rx_power")
        elif "channel" in cell or "lane" in cell:
            columns.append("lane")
        else:
            columns.append("other")
    if not {"temperature", "rx_power"} <= set(columns):
        return [*_TABLE_ORDER, "other"]
    return columns


def parse_table(lines: list[str]) -> tuple[dict[str, TransceiverDom], list[str]]:
    """The plain `show interfaces transceiver` table."""
    builders: dict[str, DomBuilder] = {}
    warnings: list[str] = []
    columns: list[str] | None = None
    header: list[str] = []
    for number, line in enumerate(lines, start=1):
        spans = rule_spans(line)
        if spans is not None:
            columns = _table_columns(header[-3:], spans)
            continue
        if columns is None:
            if line.strip():
                header.append(line)
            continue
        tokens = line.split()
        if not tokens:
            continue
        measured = [c for c in columns if c != "other"]
        if len(tokens) < 1 + len(measured):
            warnings.append(f"line {number}: short row skipped")
            continue
        builder = builders.setdefault(tokens[0], DomBuilder())
        if not _table_row(builder, columns, tokens[1:]):
            warnings.append(f"line {number}: unreadable row skipped")
    return {name: builder.build() for name, builder in builders.items()}, warnings


def _table_row(builder: DomBuilder, columns: list[str], tokens: list[str]) -> bool:
    """One row: measurements in column order, then the `Last Update` text."""
    lane = "1"
    if "lane" in columns:
        lane = tokens[columns.index("lane")]
    values = [(c, t) for c, t in zip(columns, tokens, strict=False) if c not in ("lane", "other")]
    if not all(_value(builder, measurement, text, lane) for measurement, text in values):
        return False
    rest = " ".join(tokens[len([c for c in columns if c != "other"]):])
    builder.values["last_update"] = None if rest in ("", "N/A", "n/a") else rest
    return True


def parse_detail(lines: list[str]) -> tuple[dict[str, TransceiverDom], list[str]]:
    """The `detail` form: per-measurement tables with thresholds."""
    builders: dict[str, DomBuilder] = {}
    warnings: list[str] = []
    measurement: str | None = None
    order: list[tuple[str, str]] = []
    header: list[str] = []
    for number, line in enumerate(lines, start=1):
        if rule_spans(line) is not None:
            measurement, order = _header(header[-3:])
            header = []
            continue
        tokens = line.split()
        if not tokens:
            continue
        if measurement is None or not _is_row(tokens):
            header.append(line)
            continue
        builder = builders.setdefault(tokens[0], DomBuilder())
        if not _detail_row(builder, measurement, order, tokens[1:]):
            warnings.append(f"line {number}: unreadable {measurement} row skipped")
    result = {name: builder.build() for name, builder in builders.items()}
    return result, warnings


def _is_row(tokens: list[str]) -> bool:
    """A data row: a port name, then a number or N/A."""
    if len(tokens) < 2:
        return False
    try:
        split_unit(tokens[1])
    except ValueError:
        return False
    return not tokens[0].startswith("(")


def _header(header: list[str]) -> tuple[str | None, list[tuple[str, str]]]:
    """Which measurement a table holds, and the order of its threshold columns."""
    text = " ".join(header).lower()
    measurement = next((name for key, name in _MEASUREMENTS if key in text), None)
    order = [(side.lower(), "alarm" if kind.lower() == "alarm" else "warning")
             for side, kind in _THRESHOLD_ORDER.findall(" ".join(header))]
    if len(order) != 4:
        order = [("high", "alarm"), ("high", "warning"), ("low", "alarm"), ("low", "warning")]
    return measurement, order


def _detail_row(builder: DomBuilder, measurement: str, order: list[tuple[str, str]],
                tokens: list[str]) -> bool:
    if not _value(builder, measurement, tokens[0]):
        return False
    rest = tokens[1:]
    if rest and rest[0] in FLAGS:
        lane = None if measurement in ("temperature", "voltage") else "1"
        builder.flag(measurement_field(measurement), lane, rest[0])
        rest = rest[1:]
    for (side, level), text in zip(order, rest, strict=False):
        try:
            value, _unit, _inf = split_unit(text)
        except ValueError:
            return False
        builder.threshold(threshold_name(measurement, side, level), value)
    return True
