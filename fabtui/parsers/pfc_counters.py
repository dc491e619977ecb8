"""SONiC `show pfc counters` (pfcstat): PFC0-PFC7 frames per port, received and sent.

    Port Rx    PFC0    PFC1 ...          Port Tx    PFC0 ...
  ---------  ------  ------            ---------  ------
  Ethernet0   1,200     201            Ethernet0   1,210

`show pfc counters --history` prints one row per port and priority: pause transitions, total
and most recent pause time (US, or MS in some releases; stored in microseconds) and the time of
the last pause. Multi-ASIC switches repeat the tables per namespace; all rows are merged.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.pfc_counters import PfcCounters, PfcHistory
from fabtui.model.table import Table as DataTable
from fabtui.model.table import left, right
from fabtui.parsers._switch_common import (
    Table,
    clean_lines,
    head,
    iter_tables,
    parse_int,
)
from fabtui.parsers.errors import ParseError

KIND = "pfc-counters"
MODEL = PfcCounters
DESCRIPTION = "SONiC `show pfc counters [--history]` (pfcstat): PFC0-7 frames per port, Rx/Tx"

_HEADER = re.compile(r"(?m)^\s*Port (?:Rx|Tx)\s+PFC0\s+PFC1\b")
_HISTORY = re.compile(r"(?m)^\s*Port\s+Priority\s+RX Pause Transitions\b")
_CACHED = re.compile(r"Last cached time(?: for \S+)? was (.+?)\s*$")
_HISTORY_COLUMNS = {
    "RX PAUSE TRANSITIONS": "rx_pause_transitions",
    "TOTAL RX PAUSE TIME US": "total_rx_pause_time_us",
    "TOTAL RX PAUSE TIME MS": "total_rx_pause_time_us",
    "RECENT RX PAUSE TIME US": "recent_rx_pause_time_us",
    "RECENT RX PAUSE TIME MS": "recent_rx_pause_time_us",
    "RECENT RX PAUSE TIMESTAMP": "recent_rx_pause_timestamp",
}


def detect(text: str) -> float:
    """How sure we are that `text` is pfcstat output (0..1)."""
    cleaned = head(text)
    if _HEADER.search(cleaned) or _HISTORY.search(cleaned):
        return 0.95
    return 0.0


def parse(text: str) -> PfcCounters:
    """Parse pfcstat output; raises `ParseError` when no PFC table is found."""
    lines = clean_lines(text)
    result = PfcCounters()
    found = False
    for table in iter_tables(lines):
        key = table.key()
        if key and key[0] in ("PORT RX", "PORT TX") and "PFC0" in key:
            found = True
            _counters(table, result.rx if key[0] == "PORT RX" else result.tx, result.warnings)
        elif key[:2] == ["PORT", "PRIORITY"]:
            found = True
            _history(table, result)
    if not found:
        raise ParseError(KIND, None, "no `Port Rx/Tx  PFC0 ... PFC7` or `--history` table found")
    if not (result.rx or result.tx or result.history):
        raise ParseError(KIND, None, "PFC table without rows (truncated?)")
    for line in lines:
        cached = _CACHED.search(line)
        if cached:
            result.last_cached = cached.group(1)
    return result


def _counters(table: Table, into: dict[str, dict[str, int | None]],
              warnings: list[str]) -> None:
    priorities = [cell.strip() for cell in table.header[1:]]
    for row in table.rows:
        port = row.cells[0].strip()
        values: dict[str, int | None] = {}
        for priority, cell in zip(priorities, row.cells[1:], strict=True):
            try:
                values[priority] = parse_int(cell)
            except ValueError:
                warnings.append(f"line {row.line}: {port} {priority}: not an integer "
                                f"{cell.strip()[:30]!r}")
                values[priority] = None
        into[port] = values


def _history(table: Table, result: PfcCounters) -> None:
    columns = [_HISTORY_COLUMNS.get(name) for name in table.key()[2:]]
    in_ms = [name.endswith(" MS") for name in table.key()[2:]]
    for row in table.rows:
        port, priority = row.cells[0].strip(), row.cells[1].strip()
        fields: dict[str, int | str | None] = {}
        for field, millis, cell in zip(columns, in_ms, row.cells[2:], strict=True):
            if field is None:
                continue
            if field == "recent_rx_pause_timestamp":
                fields[field] = None if cell.strip() in ("", "N/A") else cell.strip()
                continue
            try:
                value = parse_int(cell)
            except ValueError:
                result.warnings.append(f"line {row.line}: {port} {priority}: not an integer "
                                       f"{cell.strip()[:30]!r}")
                value = None
            fields[field] = value * 1000 if millis and value is not None else value
        result.history.setdefault(port, {})[priority] = PfcHistory.model_validate(fields)


def tables(result: PfcCounters) -> list[DataTable]:
    """Rx and Tx PFC frames per port and priority, then the pause history."""
    out: list[DataTable] = []
    for title, data in (("Rx", result.rx), ("Tx", result.tx)):
        if not data:
            continue
        priorities = sorted({p for values in data.values() for p in values})
        out.append(DataTable.build([left("port", f"Port {title}"), *(right(p) for p in priorities)],
                               [(port, *(values.get(p) for p in priorities))
                                for port, values in data.items()]))
    history = [(port, priority, hist.rx_pause_transitions, hist.total_rx_pause_time_us,
                hist.recent_rx_pause_time_us, hist.recent_rx_pause_timestamp)
               for port, priorities_hist in result.history.items()
               for priority, hist in priorities_hist.items()]
    if history or not out:
        out.append(DataTable.build([left("port"), left("priority"), right("transitions"),
                                right("total_us"), right("recent_us"), left("at")], history))
    return out
