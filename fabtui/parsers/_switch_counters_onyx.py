"""NVIDIA/Mellanox Onyx (MLNX-OS) `show interfaces ethernet` for switch-counters. Not a parser.

Plain text: one block per port (`Eth1/1` or `Eth1/1:`), `  Key : value` lines, then `Rx` and
`Tx` sections of `  <count>   <name>` lines. `| json-print` gives the same keys as a JSON list
of objects with a `header` (the port) and nested `Rx`/`Tx` objects. Onyx prints `N\\A` for
missing text values.
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.switch_counters import InterfaceCounters
from fabtui.parsers._switch_common import normalize_state, parse_int, snake

HEADER = re.compile(r"^(?P<name>(?:Eth|IB|Mpo|Po|Ib)\d+(?:/\d+){1,2})\s*:?\s*$")
_SECTION = re.compile(r"^\s*(Rx|Tx|RX|TX)\s*:?\s*$")
_COUNT = re.compile(r"^\s+(\d[\d,]*)\s+(\S.*?)\s*$")
_KEYED = re.compile(r"^\s+([^:]+?)\s*:\s*(.*?)\s*$")
_RATE = re.compile(r"(\d+)\s*bits/sec,\s*(\d+)\s*bytes/sec,\s*(\d+)\s*packets/sec")
_COUNTERS = {
    "packets": "ok", "unicast packets": "unicast", "multicast packets": "multicast",
    "broadcast packets": "broadcast", "bytes": "bytes", "error packets": "err",
    "discard packets": "drp", "pause packets": "pause",
}
_RX_ONLY = {
    "fcs errors": ("crc", "fcs"), "symbol errors": ("symbol_errors",),
    "undersize packets": ("runts",), "oversize packets": ("giants",),
}


def _missing(value: str) -> bool:
    return value.strip().lower() in ("", "n\\a", "n/a", "na", "none")


def _keyed(key: str, value: str, entry: dict[str, Any]) -> None:
    """Store one `Key: value` setting of a port."""
    lowered = key.strip().lower()
    if lowered == "admin state":
        entry["admin_state"] = normalize_state(value)
    elif lowered == "operational state":
        entry["state"] = normalize_state(value)
    elif lowered == "description":
        entry["description"] = None if _missing(value) else value
    elif lowered == "mtu":
        mtu = re.match(r"(\d+)", value.strip())
        entry["mtu"] = int(mtu.group(1)) if mtu else None
    elif lowered == "fec":
        entry["fec_mode"] = None if _missing(value) else value.strip()
    elif lowered == "actual speed":
        entry["speed"] = None if _missing(value) else value.strip()
    elif lowered.startswith("last clearing of"):
        entry["last_cleared"] = value.strip()
    elif "ingress rate" in lowered or "egress rate" in lowered:
        rate = _RATE.search(value)
        if rate:
            side = "rx" if "ingress" in lowered else "tx"
            entry[f"{side}_bps"] = float(rate.group(1))
            entry[f"{side}_bytes_per_s"] = float(rate.group(2))
            entry[f"{side}_pps"] = float(rate.group(3))


def _counter(side: str, name: str, value: int | None, entry: dict[str, Any]) -> None:
    lowered = re.sub(r"\s+", " ", name.strip()).lower()
    if lowered in _COUNTERS:
        entry[f"{side}_{_COUNTERS[lowered]}"] = value
    elif side == "rx" and lowered in _RX_ONLY:
        for field in _RX_ONLY[lowered]:
            entry[field] = value
    else:
        entry["other"][f"{side}_{snake(name)}"] = value


def parse_text(lines: list[str]) -> tuple[dict[str, InterfaceCounters], list[str]]:
    """Every `EthX/Y` block of the plain-text form."""
    interfaces: dict[str, InterfaceCounters] = {}
    warnings: list[str] = []
    name: str | None = None
    entry: dict[str, Any] = {}
    side: str | None = None
    for number, line in enumerate(lines, start=1):
        header = HEADER.match(line)
        if header:
            if name is not None:
                interfaces[name] = InterfaceCounters(**entry)
            name, entry, side = header.group("name"), {"other": {}}, None
            continue
        if name is None or not line.strip():
            continue
        section = _SECTION.match(line)
        if section:
            side = section.group(1).lower()
            continue
        count = _COUNT.match(line)
        if side is not None and count:
            _counter(side, count.group(2), int(count.group(1).replace(",", "")), entry)
            continue
        keyed = _KEYED.match(line)
        if keyed and side is None:
            _keyed(keyed.group(1), keyed.group(2), entry)
        elif side is not None and re.match(r"^\s+\S", line):
            warnings.append(f"line {number}: unrecognised {side} line skipped")
    if name is not None:
        interfaces[name] = InterfaceCounters(**entry)
    return interfaces, warnings


def parse_json(data: Any) -> tuple[dict[str, InterfaceCounters], list[str]] | None:
    """The `| json-print` form: a list of port objects (or an object of them)."""
    items = data if isinstance(data, list) else [data] if isinstance(data, dict) else []
    interfaces: dict[str, InterfaceCounters] = {}
    warnings: list[str] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("header"), str):
            continue
        entry: dict[str, Any] = {"other": {}}
        for key, value in item.items():
            if key in ("Rx", "Tx") and isinstance(value, dict):
                _json_counters(key.lower(), value, entry, warnings, item["header"])
            elif isinstance(value, str):
                _keyed(key, value, entry)
        interfaces[item["header"]] = InterfaceCounters(**entry)
    return (interfaces, warnings) if interfaces else None


def _json_counters(side: str, values: dict[str, Any], entry: dict[str, Any],
                   warnings: list[str], port: str) -> None:
    for name, raw in values.items():
        try:
            value = parse_int(str(raw))
        except ValueError:
            warnings.append(f"{port}: {side} {name}: not an integer {str(raw)[:40]!r}")
            continue
        _counter(side, str(name), value, entry)
