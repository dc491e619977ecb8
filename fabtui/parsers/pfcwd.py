"""SONiC `show pfcwd stats` and `show pfcwd config` (the PFC watchdog, sonic-utilities pfcwd).

          QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    ...
    -----------  -----------  -------------------------  ------------  ------------
    Ethernet0:3      stormed                        1/0       100/300       100/300

    Changed polling interval to 600ms
         PORT    ACTION    DETECTION TIME    RESTORATION TIME    HISTORY
    ---------  --------  ----------------  ------------------  ---------
    Ethernet0      drop               600                 600    disable

The watchdog declares a storm on a queue that stays paused for the detection time (200 ms by
default), then ignores its PFC and applies the action (drop by default) until the pause has
stopped for the restoration time. Paired columns are `A/B` cells; N/A cells read as null.
Older releases print the config table without HISTORY.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.pfcwd import Pfcwd, PfcwdPort, PfcwdQueue
from fabtui.model.table import Table as DataTable
from fabtui.model.table import left, right
from fabtui.parsers._switch_common import Table, clean_lines, head, iter_tables
from fabtui.parsers.errors import ParseError

KIND = "pfcwd"
MODEL = Pfcwd
DESCRIPTION = "SONiC `show pfcwd stats` / `show pfcwd config`: PFC watchdog storms per queue"

_STATS = re.compile(r"(?m)^\s*QUEUE\s+STATUS\s+STORM DETECTED/RESTORED\b")
_CONFIG = re.compile(r"(?m)^\s*PORT\s+ACTION\s+DETECTION TIME\s+RESTORATION TIME\b")
_POLL = re.compile(r"Changed polling interval to (\d+)\s*ms")
_PAIRS = {"STORM DETECTED/RESTORED": ("storms_detected", "storms_restored"),
          "TX OK/DROP": ("tx_ok", "tx_drop"), "RX OK/DROP": ("rx_ok", "rx_drop"),
          "TX LAST OK/DROP": ("tx_last_ok", "tx_last_drop"),
          "RX LAST OK/DROP": ("rx_last_ok", "rx_last_drop")}


def detect(text: str) -> float:
    """How sure we are that `text` is pfcwd output (0..1)."""
    cleaned = head(text)
    if _STATS.search(cleaned) or _CONFIG.search(cleaned):
        return 0.95
    return 0.0


def _int(cell: str) -> int | None:
    text = cell.strip().replace(",", "")
    return int(text) if text.isdigit() else None


def parse(text: str) -> Pfcwd:
    """Parse the watchdog's stats and/or config tables; raises `ParseError` without either."""
    result = Pfcwd()
    found = False
    # One table at a time: a long capture of many polls never holds every table's cells.
    for table in iter_tables(clean_lines(text)):
        key = table.key()
        if key[:3] == ["QUEUE", "STATUS", "STORM DETECTED/RESTORED"]:
            _stats(table, result)
        elif key[:2] == ["PORT", "ACTION"]:
            _config(table, result)
        else:
            continue
        found = True
    if not found:
        raise ParseError(KIND, None, "no `QUEUE STATUS STORM DETECTED/RESTORED` or "
                                     "`PORT ACTION DETECTION TIME` table found")
    poll = _POLL.search(text)
    result.poll_interval_ms = int(poll.group(1)) if poll else None
    return result


def _stats(table: Table, result: Pfcwd) -> None:
    columns = table.key()
    for row in table.rows:
        queue = row.cells[0].strip()
        entry = PfcwdQueue()
        for column, cell in zip(columns[1:], row.cells[1:], strict=True):
            if column == "STATUS":
                entry.status = None if cell.strip() in ("", "N/A") else cell.strip()
            elif column in _PAIRS:
                first, _, second = cell.strip().partition("/")
                a, b = _PAIRS[column]
                setattr(entry, a, _int(first))
                setattr(entry, b, _int(second))
                if _int(first) is None and first.strip() not in ("N/A", ""):
                    result.warnings.append(f"line {row.line}: {queue} {column}: unreadable "
                                           f"{cell.strip()[:30]!r}")
        result.queues[queue] = entry


def _config(table: Table, result: Pfcwd) -> None:
    columns = table.key()
    for row in table.rows:
        cells = dict(zip(columns, (c.strip() for c in row.cells), strict=True))
        result.ports[cells["PORT"]] = PfcwdPort(
            action=cells.get("ACTION") or None,
            detection_time_ms=_int(cells.get("DETECTION TIME", "")),
            restoration_time_ms=_int(cells.get("RESTORATION TIME", "")),
            history=cells.get("HISTORY") or None)


def tables(result: Pfcwd) -> list[DataTable]:
    """Queues with their state and counters; ports with their watchdog settings."""
    out = []
    if result.queues:
        columns = [left("queue"), left("status"), right("detected"), right("restored"),
                   right("tx_drop"), right("rx_drop")]
        out.append(DataTable.build(columns, [
            (name, q.status, q.storms_detected, q.storms_restored, q.tx_drop, q.rx_drop)
            for name, q in result.queues.items()]))
    if result.ports:
        columns = [left("port"), left("action"), right("detection_ms"), right("restoration_ms")]
        out.append(DataTable.build(columns, [
            (name, p.action, p.detection_time_ms, p.restoration_time_ms)
            for name, p in result.ports.items()]))
    return out
