"""SONiC `show queue counters` (queuestat): packets, bytes and drops per port and queue.

    For namespace :
         Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes
    ---------  -----  --------------  ---------------  -----------  ------------
    Ethernet0    UC0               0                0            0             0
    Ethernet0   MC10              83               96           74             9
    Ethernet0  ALL20             N/A              N/A          N/A           N/A

One table per port (older releases print no `For namespace` line; after `sonic-clear queue
counters` each table is preceded by `Ethernet0 Last cached time was ...`). Newer releases add
trimming, WRED/ECN and rate columns; `--voq` has a `Voq` column and `Credit-WD-Del/pkts`.
`--json` gives `{port: {queue: {"totalpacket": ..., "droppacket": ...}}}`.

`show queue wredcounters` (queuestat `--wredcounters`, SONiC's ECN and WRED statistics) prints
the same table with `WredDrp/pkts WredDrp/bytes EcnMarked/pkts EcnMarked/bytes` in place of the
packet and drop columns (`N/A` where the platform does not count them); those land in `other`
as `wreddrp_pkts`, `wreddrp_bytes`, `ecnmarked_pkts`, `ecnmarked_bytes` (its `--json` keys
`wreddroppacket`, `ecnmarkedpacket`, ... are renamed to the same).
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.queue_counters import QueueCounters, QueueStats
from fabtui.model.table import Table as DataTable
from fabtui.model.table import left, right
from fabtui.parsers._switch_common import (
    Table,
    clean_lines,
    head,
    iter_tables,
    load_json,
    parse_int,
    snake,
    try_float,
)
from fabtui.parsers.errors import ParseError

KIND = "queue-counters"
MODEL = QueueCounters
DESCRIPTION = ("SONiC `show queue counters` (queuestat): packets/bytes/drops per port and queue, "
               "and `show queue wredcounters` (WRED drops, ECN-marked packets)")

_HEADER = re.compile(r"(?m)^\s*Port\s+(?:TxQ|Voq)\s+(?:Counter/pkts\s+Counter/bytes|WredDrp/pkts"
                     r"|EcnMarked/pkts)\b")
_JSON = re.compile(r'"(?:totalpacket|ecnmarkedpacket|wreddroppacket)"\s*:')
_NAMESPACE = re.compile(r"^For namespace\s*(\S*?)\s*:\s*$")
_CACHED = re.compile(r"^(\S+) Last cached time(?: for (\S+))? was (.+?)\s*$")
_FIELDS = {"COUNTER/PKTS": "packets", "COUNTER/BYTES": "bytes", "DROP/PKTS": "drop_packets",
           "DROP/BYTES": "drop_bytes"}
_JSON_FIELDS = {"totalpacket": "packets", "totalbytes": "bytes", "droppacket": "drop_packets",
                "dropbytes": "drop_bytes"}
_JSON_WRED = {"wreddroppacket": "wreddrp_pkts", "wreddropbytes": "wreddrp_bytes",
              "ecnmarkedpacket": "ecnmarked_pkts", "ecnmarkedbytes": "ecnmarked_bytes"}
"""`show queue wredcounters --json` keys, named as the table's columns are."""


def detect(text: str) -> float:
    """How sure we are that `text` is queuestat output (0..1)."""
    cleaned = head(text)
    if _HEADER.search(cleaned):
        return 0.95
    if _JSON.search(cleaned) and re.search(r'"(?:droppacket|ecnmarkedbytes|wreddropbytes)"',
                                           cleaned):
        return 0.85
    return 0.0


def parse(text: str) -> QueueCounters:
    """Parse queuestat output; raises `ParseError` when no queue table is found."""
    lines = clean_lines(text)
    result = QueueCounters(ports={}, voq=False)
    first: int | None = None  # the first queue table's header line
    for table in iter_tables(lines):  # one at a time: a long capture never holds every row
        if table.key()[:2] not in (["PORT", "TXQ"], ["PORT", "VOQ"]):
            continue
        first = table.header_line if first is None else first
        result.voq = result.voq or table.key()[1] == "VOQ"
        _rows(table, result)
    if first is None:
        data = load_json(text)
        if isinstance(data, dict):
            from_json = _from_json(data)
            if from_json is not None:
                return from_json
        raise ParseError(KIND, None, "no `Port TxQ Counter/pkts ...` (or `... EcnMarked/pkts`) "
                         "queue table found")
    if not result.ports:
        raise ParseError(KIND, first, "queue table without rows (truncated?)")
    for line in lines:
        namespace = _NAMESPACE.match(line.strip())
        if namespace and namespace.group(1) and namespace.group(1) not in result.namespaces:
            result.namespaces.append(namespace.group(1))
        cached = _CACHED.match(line.strip())
        if cached:
            result.last_cached[cached.group(1)] = cached.group(3)
            if cached.group(2) and cached.group(2) not in result.namespaces:
                result.namespaces.append(cached.group(2))
    return result


def _value(column: str, cell: str) -> int | float | None:
    """Counts are integers; rate columns (`Pkts/s`, `Bits/s`) may be fractional."""
    try:
        return parse_int(cell)
    except ValueError:
        if column in _FIELDS or column in _JSON_FIELDS:
            raise
        value = try_float(cell.strip().removesuffix("/s"))
        if value is None and cell.strip() not in ("", "N/A"):
            raise
        return value


def _rows(table: Table, result: QueueCounters) -> None:
    columns = table.key()[2:]
    for row in table.rows:
        port, queue = row.cells[0].strip(), row.cells[1].strip()
        entry: dict[str, Any] = {"other": {}}
        for column, cell in zip(columns, row.cells[2:], strict=True):
            try:
                value = _value(column, cell)
            except ValueError:
                result.warnings.append(f"line {row.line}: {port} {queue} {column}: unreadable "
                                       f"{cell.strip()[:30]!r}")
                value = None
            if column in _FIELDS:
                entry[_FIELDS[column]] = value
            else:
                entry["other"][snake(column)] = value
        result.ports.setdefault(port, {})[queue] = QueueStats(**entry)


def _from_json(data: dict[str, Any]) -> QueueCounters | None:
    result = QueueCounters(ports={})
    for port, queues in data.items():
        if not isinstance(queues, dict):
            continue
        for queue, fields in queues.items():
            if not isinstance(fields, dict) or not ({"totalpacket", *_JSON_WRED} & set(fields)):
                continue
            result.voq = result.voq or "creditWDPkts" in fields
            entry: dict[str, Any] = {"other": {}}
            for name, raw in fields.items():
                text = "N/A" if raw is None else str(raw)
                try:
                    value = _value(name, text)
                except ValueError:
                    result.warnings.append(f"{port} {queue} {name}: unreadable {text[:30]!r}")
                    value = None
                if name in _JSON_FIELDS:
                    entry[_JSON_FIELDS[name]] = value
                elif name in _JSON_WRED:
                    entry["other"][_JSON_WRED[name]] = value
                else:
                    entry["other"][snake(name)] = value
            result.ports.setdefault(str(port), {})[str(queue)] = QueueStats(**entry)
        if isinstance(queues, dict) and isinstance(queues.get("cached_time"), str):
            result.last_cached[str(port)] = queues["cached_time"]
    return result if result.ports else None


def tables(result: QueueCounters) -> list[DataTable]:
    """One row per port and queue with packets, bytes and drops."""
    columns = [left("port"), left("queue"), right("packets"), right("bytes"),
               right("drop_pkts"), right("drop_bytes")]
    rows = [(port, queue, s.packets, s.bytes, s.drop_packets, s.drop_bytes)
            for port, queues in result.ports.items() for queue, s in queues.items()]
    return [DataTable.build(columns, rows)]
