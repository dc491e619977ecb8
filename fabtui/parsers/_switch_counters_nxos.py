"""Cisco NX-OS `show interface` for the switch-counters parser. Not a parser.

    Ethernet1/2 is down (Link not connected)
    admin state is up, Dedicated Interface
      MTU 1500 bytes, BW 1000000 Kbit , DLY 10 usec
      full-duplex, 25 Gb/s, media type is 25G
        admin fec state is auto, oper fec state is Fc-fec
      Load-Interval #1: 30 seconds
        30 seconds input rate 200 bits/sec, 0 packets/sec
      RX
        5432519 unicast packets  960110 multicast packets  6 broadcast packets
        6392635 input packets  827345973 bytes
        132 runts  12313 giants  2211122 CRC  4431412 no buffer
        10 input error  20 short frame  30 overrun   40 underrun  50 ignored
        ...
      TX
        ...
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.switch_counters import InterfaceCounters
from fabtui.parsers._switch_common import normalize_state, snake

HEADER = re.compile(
    r"^(?P<name>[A-Za-z][\w./:-]*) is (?P<status>up|down|[a-z][\w -]*?)"
    r"(?:\s*\((?P<reason>[^)]*)\))?(?:,\s*line protocol is (?P<protocol>\w+))?(?:,.*)?\s*$")
_SECTION = re.compile(r"^\s+(RX|TX|Rx|Tx)\s*$")
_ITEM = re.compile(r"(\d+)\s+([A-Za-z][A-Za-z/ .-]*?)(?=\s+\d|\s*$)")
_RATE = re.compile(r"^\s+\d+ (?:seconds?|minutes?) (input|output) rate (\d+) bits/sec, "
                   r"(\d+) packets/sec")
_SHORT_RATE = re.compile(r"^\s+(input|output) rate ([\d.]+) ([KMGT]?bps), (\d+) pps")
_UNIT = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}
_NAMES = {
    "rx": {"unicast packets": "rx_unicast", "multicast packets": "rx_multicast",
           "broadcast packets": "rx_broadcast", "input packets": "rx_ok", "bytes": "rx_bytes",
           "runts": "runts", "giants": "giants", "crc": "crc", "crc/fcs": "crc",
           "input error": "rx_err", "input errors": "rx_err", "input discard": "rx_drp",
           "input discards": "rx_drp", "rx pause": "rx_pause"},
    "tx": {"unicast packets": "tx_unicast", "multicast packets": "tx_multicast",
           "broadcast packets": "tx_broadcast", "output packets": "tx_ok", "bytes": "tx_bytes",
           "output error": "tx_err", "output errors": "tx_err", "output discard": "tx_drp",
           "output discards": "tx_drp", "tx pause": "tx_pause"},
}


def parse(lines: list[str]) -> tuple[dict[str, InterfaceCounters], list[str]]:
    """Every interface block of NX-OS `show interface`."""
    interfaces: dict[str, InterfaceCounters] = {}
    name: str | None = None
    entry: dict[str, Any] = {}
    side: str | None = None
    for line in lines:
        header = HEADER.match(line)
        if header:
            if name is not None:
                interfaces[name] = InterfaceCounters(**entry)
            name, entry, side = header.group("name"), _state(header), None
            continue
        if name is None or not line.strip():
            continue
        section = _SECTION.match(line)
        if section:
            side = section.group(1).lower()
            continue
        if side is not None and re.match(r"^\s+\d", line) and not _RATE.match(line):
            _counters(line, entry, side)
            continue
        side = None
        _line(line, entry)
    if name is not None:
        interfaces[name] = InterfaceCounters(**entry)
    return interfaces, []


def _state(header: re.Match[str]) -> dict[str, Any]:
    reason = header.group("reason")
    entry: dict[str, Any] = {"state": normalize_state(header.group("status")),
                             "state_reason": reason, "other": {}}
    if reason and "administratively down" in reason.lower():
        entry["admin_state"] = "down"
    return entry


def _line(line: str, entry: dict[str, Any]) -> None:
    text = line.strip()
    admin = re.match(r"admin state is (\w+)", text)
    if admin:
        entry["admin_state"] = normalize_state(admin.group(1))
        return
    description = re.match(r"Description:\s*(.*)$", text)
    if description:
        entry["description"] = description.group(1).strip()
        return
    mtu = re.match(r"MTU (\d+) bytes", text)
    if mtu:
        entry["mtu"] = int(mtu.group(1))
        return
    duplex = re.match(r"(?:full|half|auto)-duplex,\s*([^,]+)", text, re.IGNORECASE)
    if duplex:
        entry["speed"] = duplex.group(1).strip()
        return
    fec = re.search(r"oper fec state is (\S+)", text)
    if fec:
        entry["fec_mode"] = fec.group(1).rstrip(",")
        return
    cleared = re.match(r"Last clearing of \"show interface\" counters\s+(.*)$", text)
    if cleared:
        entry["last_cleared"] = cleared.group(1)
        return
    resets = re.match(r"(\d+) interface resets", text)
    if resets:
        entry["other"]["interface_resets"] = int(resets.group(1))
        return
    _rates(line, entry)


def _rates(line: str, entry: dict[str, Any]) -> None:
    """The first load interval's rates (NX-OS prints two; the first is the shorter one)."""
    rate = _RATE.match(line)
    if rate:
        side = "rx" if rate.group(1) == "input" else "tx"
        if entry.get(f"{side}_bps") is None:
            entry[f"{side}_bps"] = float(rate.group(2))
            entry[f"{side}_pps"] = float(rate.group(3))
        return
    for part in line.split(";"):
        short = _SHORT_RATE.match(part if part.startswith(" ") else " " + part.strip())
        if short:
            side = "rx" if short.group(1) == "input" else "tx"
            if entry.get(f"{side}_bps") is None:
                entry[f"{side}_bps"] = round(float(short.group(2))
                                             * _UNIT[short.group(3).lower()], 3)
                entry[f"{side}_pps"] = float(short.group(4))


def _counters(line: str, entry: dict[str, Any], side: str) -> None:
    for value, name in _ITEM.findall(line):
        lowered = re.sub(r"\s+", " ", name.strip()).lower()
        field = _NAMES[side].get(lowered)
        if field:
            entry[field] = int(value)
        else:
            entry["other"][f"{side}_{snake(name)}"] = int(value)
