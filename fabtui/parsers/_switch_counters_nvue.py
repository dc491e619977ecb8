"""NVIDIA Cumulus Linux NVUE `nv show interface <if> counters` for switch-counters. Not a parser.

Two layouts. Cumulus 5.0-5.4 print one flat table (`in-pkts 29025`, `in-bytes 3.37 MB`, ...).
5.5 and later print `carrier-transitions` then sections titled over `====` rules, each a table
with `Counter  Receive  Transmit` columns (Detailed, Drop, Error, Packet Size) or per priority
group / switch priority (Ingress Buffer, PFC). `nv show interface <if> counters errors`,
`... drops` and `... pktdist` print one such Counter/Receive/Transmit table alone. `n/a` is
null (and extra counters printed as `n/a`, i.e. not applicable in that direction, are left
out); sizes with units (`0 Bytes`, `3.37 MB`) become integers (1 kB = 1000 B; the printed text
is kept when it was rounded). `nv show interface --view counters` (text) and `nv show interface
counters -o json` cover every interface at once.
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
VIEW_COUNTERS = re.compile(r"(?m)^\s*Interface\s+MTU\s+RX_OK\s+RX_ERR\s+RX_DRP\s+RX_OVR\s+TX_OK\b")
"""`nv show interface --view counters`: one netstat-style row per interface."""
_VIEW_COLUMNS = {"RXOK": "rx_ok", "RXERR": "rx_err", "RXDRP": "rx_drp", "RXOVR": "rx_ovr",
                 "TXOK": "tx_ok", "TXERR": "tx_err", "TXDRP": "tx_drp", "TXOVR": "tx_ovr",
                 "MTU": "mtu"}
_NETSTAT_KEY = re.compile(r"^(rx|tx|in|out)-(okay|ok|pkts|errors?|err|drops?|drp|overruns?|ovr)$")
_NETSTAT_FIELD = {"okay": "ok", "ok": "ok", "pkts": "ok", "error": "err", "errors": "err",
                  "err": "err", "drop": "drp", "drops": "drp", "drp": "drp", "overrun": "ovr",
                  "overruns": "ovr", "ovr": "ovr"}
COMMAND = re.compile(r"\bnv\s+show\s+interface\s+(\S+)\s+counters\b(?:\s+(\w[\w-]*))?")


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


def parse(lines: list[str], command: str | None = None) -> tuple[InterfaceCounters, str, list[str]]:
    """The one interface's counters; returns (counters, view, warnings)."""
    entry: dict[str, Any] = {"other": {}, "printed": {}}
    warnings: list[str] = []
    data = load_json("\n".join(lines))
    if isinstance(data, dict):
        _json(data, entry, warnings, "")
        return InterfaceCounters(**entry), "nv-counters-json", warnings
    sectioned = any(re.match(r"^\s*=+\s*$", line) for line in lines)
    tables = find_tables(lines)
    for table in tables:
        _table(table, entry, warnings)
    for number, line in enumerate(lines, start=1):
        if line.strip() in ("...", "…"):
            warnings.append(f"line {number}: rows elided with '...' in the capture")
    if sectioned:
        view = "nv-counters"
    elif tables and all(_keys(t)[:3] == ["counter", "receive", "transmit"] for t in tables):
        view = f"nv-counters-{_subview(command, tables)}"
    else:
        view = "nv-counters-flat"
    return InterfaceCounters(**entry), view, warnings


def parse_view(lines: list[str]) -> tuple[dict[str, InterfaceCounters], list[str]]:
    """`nv show interface --view counters`: every interface's row; (interfaces, warnings).

    `Flg` holds the kernel's interface flags as netstat prints them (net-tools netstat(8)):
    `U` the interface is up (administratively), `R` it is running (link up), so a port without
    `R` is down and one without `U` was shut down."""
    interfaces: dict[str, InterfaceCounters] = {}
    warnings: list[str] = []
    for table in find_tables(lines):
        keys = [re.sub(r"[^0-9A-Za-z]", "", cell).upper() for cell in table.header]
        if not keys or keys[0] != "INTERFACE" or "RXOK" not in keys:
            continue
        for row in table.rows:
            name = row.cells[0].strip()
            entry: dict[str, Any] = {}
            for key, cell in zip(keys[1:], row.cells[1:], strict=True):
                if key == "FLG" and cell.strip():
                    entry.update(_flag_state(cell))
                elif key in _VIEW_COLUMNS:
                    try:
                        entry[_VIEW_COLUMNS[key]] = parse_int(cell)
                    except ValueError:
                        warnings.append(f"line {row.line}: {key}: unreadable value "
                                        f"{cell.strip()[:40]!r}")
            if name:
                interfaces[name] = InterfaceCounters(**entry)
    return interfaces, warnings


def _flag_state(flags: str) -> dict[str, str]:
    """netstat interface flags -> oper state (`R` running) and admin state (`U` up)."""
    return {"state": "up" if "R" in flags else "down",
            "admin_state": "up" if "U" in flags else "down"}


def parse_view_json(data: Any) -> tuple[dict[str, InterfaceCounters], list[str]] | None:
    """`nv show interface counters -o json`: `{ifname: {"counters": {"netstat": {"rx-okay": N,
    "tx-drop": N, ...}}}}` (the layout NVIDIA's sonic-mgmt NVUE wrapper reads); None when `data`
    is not that. Names other than the netstat ok/error/drop/overrun pairs go to `other`."""
    if not isinstance(data, dict) or not data:
        return None
    interfaces: dict[str, InterfaceCounters] = {}
    warnings: list[str] = []
    for name, body in data.items():
        netstat = body.get("counters", {}).get("netstat") if isinstance(body, dict) else None
        if not isinstance(netstat, dict):
            continue
        entry: dict[str, Any] = {"other": {}, "printed": {}}
        for key, value in netstat.items():
            if str(key).lower() in ("flags", "flg") and isinstance(value, str):
                entry.update(_flag_state(value))
                continue
            match = _NETSTAT_KEY.match(str(key).lower())
            side = {"in": "rx", "out": "tx"}.get(match.group(1), match.group(1)) if match else ""
            field = f"{side}_{_NETSTAT_FIELD[match.group(2)]}" if match else snake(str(key))
            if isinstance(value, bool) or not isinstance(value, int | float | str) \
                    or (match is None and not re.fullmatch(r"[\d.,]+", str(value))):
                continue  # not a counter (a name, a timestamp)
            _store(entry, field, str(value), warnings, 0, common=match is not None)
        interfaces[str(name)] = InterfaceCounters(**entry)
    return (interfaces, warnings) if interfaces else None


def _keys(table: Table) -> list[str]:
    return [cell.strip().lower() for cell in table.header]


def _subview(command: str | None, tables: list[Table]) -> str:
    """`errors`, `drops` or `pktdist`: from the command when shown, else from the row names."""
    match = COMMAND.search(command or "")
    if match and match.group(2):
        return match.group(2).lower()
    names = [row.cells[0].strip().lower() for table in tables for row in table.rows]
    if names and all(name.endswith("errors") for name in names):
        return "errors"
    if names and all(name.endswith("drops") for name in names):
        return "drops"
    if names and all(re.fullmatch(r"\d+(?:-\d+)?", name) for name in names):
        return "pktdist"
    return "table"


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
