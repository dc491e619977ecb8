"""Arista EOS `show interfaces` for the switch-counters parser. Not a parser.

    Ethernet1 is up, line protocol is up (connected)
      Description: "Test interface Et1"
      Ethernet MTU 9214 bytes, BW 1000000 kbit
      Full-duplex, 1Gb/s, auto negotiation: off, uni-link: n/a
      2 link status changes since last clear
      5 minutes input rate 7.39 kbps (0.0% with framing overhead), 6 packets/sec
         5280 packets input, 381190 bytes
         Received 1 broadcasts, 273 multicast
         0 runts, 0 giants
         0 input errors, 0 CRC, 0 alignment, 0 symbol, 0 input discards
         0 PAUSE input
         ...
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.switch_counters import InterfaceCounters
from fabtui.parsers._switch_common import normalize_state, snake

HEADER = re.compile(
    r"^(?P<name>\S+) is (?P<status>[^,]+), line protocol is (?P<protocol>[^\s(]+)"
    r"(?:\s*\((?P<reason>[^)]*)\))?")
_RATE = re.compile(
    r"^\s+\S+ \S+ (?P<dir>input|output) rate (?P<value>[\d.]+) (?P<unit>[kKMGT]?bps)"
    r"(?: \((?P<util>[\d.]+)% with framing overhead\))?, (?P<pps>\d+) packets/sec")
_UNIT = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}
_ITEM = re.compile(r"^(\d+)\s+(.+)$")
_CAST = re.compile(r"^\s+(Received|Sent) (\d+) broadcasts, (\d+) multicast")
_RX_NAMES = {
    "packets input": "rx_ok", "bytes": "rx_bytes", "runts": "runts", "giants": "giants",
    "input errors": "rx_err", "crc": "crc", "alignment": "alignment_errors",
    "symbol": "symbol_errors", "input discards": "rx_drp", "pause input": "rx_pause",
}
_TX_NAMES = {
    "packets output": "tx_ok", "bytes": "tx_bytes", "output errors": "tx_err",
    "output discards": "tx_drp", "pause output": "tx_pause",
}


def parse(lines: list[str]) -> tuple[dict[str, InterfaceCounters], list[str]]:
    """Every interface block of `show interfaces`."""
    interfaces: dict[str, InterfaceCounters] = {}
    name: str | None = None
    entry: dict[str, Any] = {}
    side = "rx"
    for line in lines:
        header = HEADER.match(line)
        if header:
            if name is not None:
                interfaces[name] = InterfaceCounters(**entry)
            name, entry, side = header.group("name"), _state(header), "rx"
            continue
        if name is None or not line.strip():
            continue
        side = _line(line, entry, side)
    if name is not None:
        interfaces[name] = InterfaceCounters(**entry)
    return interfaces, []


def _state(header: re.Match[str]) -> dict[str, Any]:
    status = header.group("status").strip().lower()
    return {"state": normalize_state(header.group("protocol")),
            "admin_state": "down" if "administratively" in status else "up",
            "state_reason": header.group("reason"), "other": {}}


def _line(line: str, entry: dict[str, Any], side: str) -> str:
    """Read one indented line into `entry`; returns the counter direction now in force."""
    text = line.strip()
    description = re.match(r"Description:\s*\"?(.*?)\"?$", text)
    if description:
        entry["description"] = description.group(1)
        return side
    mtu = re.search(r"\bMTU (\d+) bytes", text)
    if mtu and entry.get("mtu") is None:
        entry["mtu"] = int(mtu.group(1))
    duplex = re.match(r"\S+-duplex,\s*([^,]+)", text, re.IGNORECASE)
    if duplex:
        entry["speed"] = duplex.group(1).strip()
    flaps = re.match(r"(\d+) link status changes", text)
    if flaps:
        entry["link_flaps"] = int(flaps.group(1))
        return side
    cleared = re.match(r"Last clearing of \"show interface\" counters\s+(.*)$", text)
    if cleared:
        entry["last_cleared"] = cleared.group(1)
        return side
    rate = _RATE.match(line)
    if rate:
        _rate(rate, entry)
        return side
    cast = _CAST.match(line)
    if cast:
        prefix = "rx" if cast.group(1) == "Received" else "tx"
        entry[f"{prefix}_broadcast"] = int(cast.group(2))
        entry[f"{prefix}_multicast"] = int(cast.group(3))
        return side
    if re.match(r"^\s+\d", line):
        return _counters(text, entry, side)
    return side


def _rate(match: re.Match[str], entry: dict[str, Any]) -> None:
    side = "rx" if match.group("dir") == "input" else "tx"
    entry[f"{side}_bps"] = round(float(match.group("value")) * _UNIT[match.group("unit").lower()],
                                 3)
    entry[f"{side}_pps"] = float(match.group("pps"))
    if match.group("util") is not None:
        entry[f"{side}_util"] = float(match.group("util"))


def _counters(text: str, entry: dict[str, Any], side: str) -> str:
    """`0 input errors, 0 CRC, ...`: each `N name` item; `packets input/output` sets the side."""
    for item in text.split(","):
        match = _ITEM.match(item.strip())
        if not match:
            continue
        value, name = int(match.group(1)), match.group(2).strip()
        lowered = name.lower()
        if lowered in ("packets input", "pause input", "input errors", "input discards"):
            side = "rx"
        elif lowered in ("packets output", "pause output", "output errors", "output discards"):
            side = "tx"
        names = _RX_NAMES if side == "rx" else _TX_NAMES
        if lowered in names:
            entry[names[lowered]] = value
        else:
            entry["other"][f"{side}_{snake(name)}"] = value
    return side
