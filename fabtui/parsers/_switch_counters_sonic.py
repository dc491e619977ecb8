"""SONiC `show interfaces counters` (portstat) for the switch-counters parser. Not a parser.

Handles every portstat table form, by its header: the default (`IFACE STATE RX_OK RX_BPS
RX_UTIL ...`), `-a`/`--printall` (adds RX_PPS/TX_PPS and TRIM columns), `errors`, `rates`,
`trim`, `rif`, the pre-2019 form (`Iface ... RX_RATE`), `-j` JSON (upper-case or CamelCase
keys), and `detailed <port>` (dotted-leader `name....... value` lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fabtui.model.parsed.switch_counters import InterfaceCounters
from fabtui.parsers._switch_common import (
    Table,
    find_tables,
    normalize_state,
    parse_int,
    snake,
    try_float,
)

_INT_COLUMNS = {
    "RXOK": "rx_ok", "RXERR": "rx_err", "RXDRP": "rx_drp", "RXOVR": "rx_ovr",
    "TXOK": "tx_ok", "TXERR": "tx_err", "TXDRP": "tx_drp", "TXOVR": "tx_ovr",
    "TRIM": "trim_packets", "TRIMPKTS": "trim_packets",
    "TRIMTX": "trim_tx_packets", "TRIMTXPKTS": "trim_tx_packets",
    "TRIMDRP": "trim_drop_packets", "TRIMDRPPKTS": "trim_drop_packets",
}
_NAME_COLUMNS = ("IFACE", "INTERFACE", "PORT")
_BYTE_RATE = re.compile(r"^([-\d.,]+)\s*([KMGT]?B)/s$", re.IGNORECASE)
_MULTIPLIER = {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
_DOTTED = re.compile(r"^\s*(\S.*?)\.{3,}\s*(.*?)\s*$")
_PERIOD = re.compile(r"rates are calculated within (\d+) seconds? period", re.IGNORECASE)
_CACHED = re.compile(r"Last cached time(?: for \S+)? was (.+?)\s*$")
_COUNTER_HEADER = ("RXOK", "RXERR", "TRIMPKTS")


@dataclass
class SonicResult:
    """What the SONiC reader found."""

    view: str
    interfaces: dict[str, InterfaceCounters]
    warnings: list[str] = field(default_factory=list)
    period_s: int | None = None
    last_cached: str | None = None
    header_line: int | None = None


def column_key(name: str) -> str:
    """`RX_OK`, `RxOk`, `rx_ok` -> `RXOK`: one spelling for table headers and JSON keys."""
    return re.sub(r"[^0-9A-Za-z]", "", name).upper()


def is_counters_table(table: Table) -> bool:
    """A portstat counters table (not fec-stats, not a histogram)."""
    keys = [column_key(cell) for cell in table.header]
    return (bool(keys) and keys[0] in _NAME_COLUMNS
            and any(k in keys for k in _COUNTER_HEADER)
            and not any(k.startswith(("FEC", "BIN")) for k in keys))


def _view(keys: list[str]) -> str:
    """Which portstat form a header is."""
    if "RXOK" not in keys and "TRIMPKTS" in keys:
        return "counters-trim"
    if "RXOK" not in keys:
        return "counters-errors"
    if "RXERR" not in keys:
        return "counters-rates"
    if "STATE" not in keys and "RXDRP" not in keys:
        return "counters-rif"
    if "RXPPS" in keys and ("TRIM" in keys or "RXDRP" in keys):
        return "counters-all"
    return "counters"


def byte_rate(value: str) -> float | None:
    """`"2000.00 MB/s"` -> 2.0e9 bytes/s (portstat divides by 1000); N/A -> None."""
    match = _BYTE_RATE.match(value.strip().replace(",", ""))
    if match:
        return round(float(match.group(1)) * _MULTIPLIER[match.group(2).upper()], 3)
    return try_float(value)


def _apply(entry: dict[str, Any], key: str, value: str) -> str | None:
    """Store one portstat cell in `entry`; returns a warning text when it is unreadable."""
    if key == "DESC":
        entry["description"] = value.strip() or None
        return None
    if key == "STATE":
        entry["state"] = normalize_state(value)
        if value.strip().upper() == "X":
            entry["admin_state"] = "down"
        elif value.strip().upper() in ("U", "D"):
            entry["admin_state"] = "up"
        return None
    try:
        if key in _INT_COLUMNS:
            entry[_INT_COLUMNS[key]] = parse_int(value)
        elif key in ("RXBPS", "RXRATE", "TXBPS", "TXRATE"):
            side = key[:2].lower()
            rate = byte_rate(value)
            entry[f"{side}_bytes_per_s"] = rate
            entry[f"{side}_bps"] = None if rate is None else round(rate * 8, 3)
        elif key in ("RXPPS", "TXPPS"):
            entry[f"{key[:2].lower()}_pps"] = try_float(value.strip().removesuffix("/s"))
        elif key in ("RXUTIL", "TXUTIL"):
            entry[f"{key[:2].lower()}_util"] = try_float(value.strip().removesuffix("%"))
        else:
            entry.setdefault("other", {})[snake(key)] = parse_int(value)
    except ValueError:
        return f"{key}: unreadable value {value.strip()[:40]!r}"
    return None


def _from_table(table: Table) -> tuple[dict[str, InterfaceCounters], list[str]]:
    keys = [column_key(cell) for cell in table.header]
    interfaces: dict[str, InterfaceCounters] = {}
    warnings: list[str] = []
    for row in table.rows:
        name = row.cells[0].strip()
        if not name:
            warnings.append(f"line {row.line}: row without an interface name skipped")
            continue
        entry: dict[str, Any] = {}
        for key, cell in zip(keys[1:], row.cells[1:], strict=True):
            problem = _apply(entry, key, cell)
            if problem:
                warnings.append(f"line {row.line}: {problem}")
        interfaces[name] = InterfaceCounters(**entry)
    return interfaces, warnings


def parse_tables(lines: list[str]) -> SonicResult | None:
    """The portstat table(s) in `lines`, or None when there is none.

    A capture pasted through a web page or some terminals comes double-spaced (a blank line
    after every line, header and rule included); it is read with those blanks taken out."""
    tables = [t for t in find_tables(lines) if is_counters_table(t)]
    if not tables and _double_spaced(lines):
        tables = [t for t in find_tables([line for line in lines if line.strip()])
                  if is_counters_table(t)]
    if not tables:
        return None
    result = SonicResult(view=_view([column_key(c) for c in tables[0].header]), interfaces={},
                         header_line=tables[0].header_line)
    for table in tables:
        interfaces, warnings = _from_table(table)
        for name, counters in interfaces.items():
            known = result.interfaces.get(name)
            # Several views in one capture (counters, then errors): keep every printed value.
            result.interfaces[name] = counters if known is None else known.model_copy(
                update=counters.model_dump(exclude_none=True, exclude_defaults=True))
        result.warnings.extend(warnings)
    for line in lines:
        period = _PERIOD.search(line)
        if period:
            result.period_s = int(period.group(1))
        cached = _CACHED.search(line)
        if cached:
            result.last_cached = cached.group(1)
    return result


def _double_spaced(lines: list[str]) -> bool:
    """Most non-blank lines are followed by a blank one."""
    filled = [i for i, line in enumerate(lines[:-1]) if line.strip()]
    return len(filled) >= 3 and sum(1 for i in filled if not lines[i + 1].strip()) \
        >= 0.8 * len(filled)


def parse_json(data: Any) -> SonicResult | None:
    """`portstat -j` / `show interfaces counters --json`: `{port: {"RX_OK": "8", ...}}`."""
    if not isinstance(data, dict) or not data:
        return None
    interfaces: dict[str, InterfaceCounters] = {}
    warnings: list[str] = []
    keys_seen: set[str] = set()
    for name, fields in data.items():
        if not isinstance(fields, dict):
            continue
        entry: dict[str, Any] = {}
        for raw_key, value in fields.items():
            key = column_key(str(raw_key))
            keys_seen.add(key)
            problem = _apply(entry, key, str(value) if value is not None else "N/A")
            if problem:
                warnings.append(f"{name}: {problem}")
        interfaces[str(name)] = InterfaceCounters(**entry)
    if not interfaces or not keys_seen & {"RXOK", "RXERR", "TRIMPKTS"}:
        return None
    return SonicResult(view="counters-json", interfaces=interfaces, warnings=warnings)


# ----------------------------------------------------------------------------- detailed

_DETAILED_NAMES = {
    "total packets received without errors": "rx_ok",
    "unicast packets received": "rx_unicast",
    "multicast packets received": "rx_multicast",
    "broadcast packets received": "rx_broadcast",
    "undersize received": "runts",
    "total packets transmitted successfully": "tx_ok",
    "unicast packets transmitted": "tx_unicast",
    "multicast packets transmitted": "tx_multicast",
    "broadcast packets transmitted": "tx_broadcast",
    "trimmed packets": "trim_packets",
    "packets trimmed": "trim_packets",
    "trimmed sent packets": "trim_tx_packets",
    "trimmed dropped packets": "trim_drop_packets",
}
_SIZE_BUCKET = re.compile(r"^Packets (Received|Transmitted) (\S+) Octets$", re.IGNORECASE)
_DIRECTIONAL = re.compile(r"^(.*?) (Received|Transmitted)$", re.IGNORECASE)


def is_detailed(lines: list[str]) -> bool:
    """`show interfaces counters detailed`: several `... Received/Transmitted ....` lines."""
    hits = sum(1 for line in lines if _DOTTED.match(line)
               and re.search(r"(Received|Transmitted|Packets)\b", line))
    return hits >= 3


def _detailed_key(name: str) -> tuple[str, bool]:
    """The field for a detailed counter name; the flag says it is a common field."""
    lowered = re.sub(r"\s+", " ", name.strip()).lower()
    if lowered in _DETAILED_NAMES:
        return _DETAILED_NAMES[lowered], True
    bucket = _SIZE_BUCKET.match(name.strip())
    if bucket:
        side = "rx" if bucket.group(1).lower() == "received" else "tx"
        return f"{side}_pkts_{snake(bucket.group(2))}_octets", False
    directional = _DIRECTIONAL.match(name.strip())
    if directional:
        side = "rx" if directional.group(2).lower() == "received" else "tx"
        return f"{side}_{snake(directional.group(1))}", False
    return snake(name), False


def parse_detailed(lines: list[str]) -> tuple[InterfaceCounters, list[str]]:
    """The dotted-leader `name........ value` lines of one port."""
    entry: dict[str, Any] = {}
    other: dict[str, int | None] = {}
    warnings: list[str] = []
    for number, line in enumerate(lines, start=1):
        match = _DOTTED.match(line)
        if not match:
            continue
        name, value = match.group(1), match.group(2)
        if name.lower().startswith("time since counters last cleared"):
            entry["last_cleared"] = None if value in ("", "None", "N/A") else value
            continue
        key, common = _detailed_key(name)
        try:
            parsed = parse_int(value)
        except ValueError:
            warnings.append(f"line {number}: {name.strip()}: not an integer {value[:40]!r}")
            continue
        if common:
            entry[key] = parsed
        else:
            other[key] = parsed
    entry["other"] = other
    return InterfaceCounters(**entry), warnings
