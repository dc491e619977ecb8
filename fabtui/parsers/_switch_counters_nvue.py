"""NVIDIA Cumulus Linux NVUE `nv show interface <if> counters` for switch-counters. Not a parser.

Two layouts. Cumulus 5.0-5.4 print one flat table (`in-pkts 29025`, `in-bytes 3.37 MB`, ...).
5.5 and later print `carrier-transitions` then sections titled over `====` rules, each a table
with `Counter  Receive  Transmit` columns (Detailed, Drop, Error, Packet Size) or per priority
group / switch priority (Ingress Buffer, PFC). `n/a` is null (and extra counters printed as
`n/a`, i.e. not applicable in that direction, are left out); sizes with units (`0 Bytes`,
`3.37 MB`) become integers (1 kB = 1000 B; the printed text is kept when it was rounded).
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.switch_counters import InterfaceCounters
from fabtui.parsers._switch_common import Table, find_tables, load_json, parse_int, snake

_SIZE = re.compile(r"^([\d.,]+)\s*(bytes?|b|kb|mb|gb|tb|kib|mib|gib|tib)?$", re.IGNORECASE)
_SCALE = {"": 1, "b": 1, "byte": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9,
          "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_FLAT = {
    "carrier-transitions": "link_flaps", "in-bytes": "rx_bytes", "in-drops": "rx_drp",
    "in-errors": "rx_err", "in-pkts": "rx_ok", "out-bytes": "tx_bytes", "out-drops": "tx_drp",
    "out-errors": "tx_err", "out-pkts": "tx_ok",
}
_PAIRED = {
    "broadcast packets": "broadcast", "multicast packets": "multicast",
    "unicast packets": "unicast", "total octets": "bytes", "total packets": "ok",
    "total drops": "drp", "total errors": "err",
}
_RX_ONLY = {
    "fcs errors": ("crc", "fcs"), "symbol errors": ("symbol_errors",),
    "alignment errors": ("alignment_errors",), "undersize errors": ("runts",),
    "oversize errors": ("giants",),
}
COMMAND = re.compile(r"\bnv\s+show\s+interface\s+(\S+)\s+counters\b")


def size_value(text: str) -> tuple[int | None, bool]:
    """`"3.37 MB"` -> (3370000, True); `"0 Bytes"` -> (0, False); `n/a` -> (None, False).

    The flag says the printed value was scaled (so the integer is rounded). ValueError when the
    text is not a count or size.
    """
    cleaned = text.strip()
    if cleaned.lower() in ("", "n/a", "-", "none"):
        return None, False
    match = _SIZE.match(cleaned)
    if not match:
        raise ValueError(f"{text!r} is not a count")
    unit = (match.group(2) or "").lower()
    number = match.group(1).replace(",", "")
    if _SCALE[unit] == 1:
        return parse_int(number), False
    return round(float(number) * _SCALE[unit]), True


def _store(entry: dict[str, Any], field: str, text: str, warnings: list[str], line: int,
           common: bool = True) -> None:
    try:
        value, scaled = size_value(text)
    except ValueError:
        warnings.append(f"line {line}: {field}: unreadable value {text.strip()[:40]!r}")
        return
    if common:
        entry[field] = value
        if scaled:
            entry["printed"][field] = text.strip()
    elif value is not None:
        entry["other"][field] = value


def parse(lines: list[str]) -> tuple[InterfaceCounters, str, list[str]]:
    """The one interface's counters; returns (counters, view, warnings)."""
    entry: dict[str, Any] = {"other": {}, "printed": {}}
    warnings: list[str] = []
    data = load_json("\n".join(lines))
    if isinstance(data, dict):
        _json(data, entry, warnings, "")
        return InterfaceCounters(**entry), "nv-counters-json", warnings
    sectioned = any(re.match(r"^\s*=+\s*$", line) for line in lines)
    for table in find_tables(lines):
        _table(table, entry, warnings)
    for number, line in enumerate(lines, start=1):
        if line.strip() in ("...", "…"):
            warnings.append(f"line {number}: rows elided with '...' in the capture")
    return InterfaceCounters(**entry), "nv-counters" if sectioned else "nv-counters-flat", warnings


def _table(table: Table, entry: dict[str, Any], warnings: list[str]) -> None:
    keys = [cell.strip().lower() for cell in table.header]
    if len(keys) >= 2 and keys[1] == "operational":
        for row in table.rows:
            name = row.cells[0].strip()
            field = _FLAT.get(name)
            _store(entry, field or snake(name), row.cells[1], warnings, row.line,
                   common=field is not None)
        return
    if keys[:3] == ["counter", "receive", "transmit"]:
        for row in table.rows:
            _paired(row.cells, entry, warnings, row.line)
        return
    prefix = _group_prefix(keys[0])
    for row in table.rows:
        group = snake(row.cells[0])
        for key, cell in zip(keys[1:], row.cells[1:], strict=True):
            _store(entry, f"{prefix}{group}_{snake(key)}", cell, warnings, row.line,
                   common=False)


def _group_prefix(first_column: str) -> str:
    """Key prefix for per-group tables: `priority-group` -> `pg`, `switch-priority` -> `prio`."""
    if "group" in first_column:
        return "pg"
    if "priority" in first_column or first_column in ("tc", "traffic-class"):
        return "prio"
    return snake(first_column) + "_"


def _paired(cells: list[str], entry: dict[str, Any], warnings: list[str], line: int) -> None:
    name = re.sub(r"\s+", " ", cells[0].strip()).lower()
    receive, transmit = cells[1], cells[2]
    if name in _PAIRED:
        suffix = _PAIRED[name]
        _store(entry, f"rx_{suffix}", receive, warnings, line)
        _store(entry, f"tx_{suffix}", transmit, warnings, line)
        return
    if name in _RX_ONLY:
        for field in _RX_ONLY[name]:
            _store(entry, field, receive, warnings, line)
        _store(entry, f"tx_{snake(name)}", transmit, warnings, line, common=False)
        return
    key = snake(name)
    if re.fullmatch(r"\d+(?:_\d+)?", key):
        key = f"pkts_{key}"
    _store(entry, f"rx_{key}", receive, warnings, line, common=False)
    _store(entry, f"tx_{key}", transmit, warnings, line, common=False)


def _json(data: dict[str, Any], entry: dict[str, Any], warnings: list[str], prefix: str) -> None:
    """`nv show interface <if> counters -o json`: the flat names, nested objects flattened."""
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            _json(value, entry, warnings, f"{name}-")
            continue
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            continue
        field = _FLAT.get(name)
        _store(entry, field or snake(name), str(value), warnings, 0, common=field is not None)
