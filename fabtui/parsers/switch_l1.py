"""Cumulus Linux `l1-show <swp>`: module, configured and operational layer-1 state of a port.

    Port:  swp43
      Module Info
          Vendor Name: Mellanox               PN: MCP2M00-A003
      Operational State
          Link Status: Kernel: Up             Hardware: Up
          Speed: Kernel: 25G                  Hardware: 25G
          TX Power (mW): None
          LLDP Neighbor:      bcm-switch-1, swp43
      Port Hardware State:
          Eyes: 79                            Grade: 5451

Lines hold one or more `Key: value` pairs separated by wide gaps; a value that is itself
`Sub: value` (Link Status, Speed) starts a nested key. Power and eye values may list one
number per lane.
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.switch_l1 import L1Port, SwitchL1
from fabtui.parsers._switch_common import clean_lines, head, normalize_state, try_int
from fabtui.parsers.errors import ParseError

KIND = "switch-l1"
MODEL = SwitchL1
DESCRIPTION = "Cumulus Linux `l1-show <swp>`: module, link, FEC, optical power, SerDes eyes"

_PORT = re.compile(r"^Port:\s+(\S+)\s*$")
_SECTION = re.compile(r"^\s{1,4}([A-Z][\w ]+?):?\s*$")
_PAIR = re.compile(r"^([^:]+?):\s*(.*)$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_FIELDS = {
    ("module info", "vendor name"): "vendor", ("module info", "pn"): "part_number",
    ("module info", "identifier"): "identifier", ("module info", "type"): "module_type",
    ("configured state", "admin"): "admin", ("configured state", "speed"): "configured_speed",
    ("configured state", "autoneg"): "configured_autoneg",
    ("configured state", "fec"): "configured_fec",
    ("operational state", "link status/kernel"): "link_kernel",
    ("operational state", "link status/hardware"): "link_hardware",
    ("operational state", "speed/kernel"): "speed_kernel",
    ("operational state", "speed/hardware"): "speed_hardware",
    ("operational state", "autoneg"): "autoneg", ("operational state", "fec"): "fec",
    ("operational state", "topo file neighbor"): "topo_neighbor",
    ("operational state", "lldp neighbor"): "lldp_neighbor",
    ("port hardware state", "compliance code"): "compliance_code",
    ("port hardware state", "cable type"): "cable_type",
    ("port hardware state", "speed"): "hardware_speed",
    ("port hardware state", "autodetect"): "autodetect",
    ("port hardware state", "troubleshooting info"): "troubleshooting_info",
}


def detect(text: str) -> float:
    """How sure we are that `text` is `l1-show` output (0..1)."""
    cleaned = head(text)
    if re.search(r"(?m)^Port:\s+\S+\s*$", cleaned) and re.search(
            r"(?m)^\s+(?:Module Info|Operational State|Port Hardware State:?)\s*$", cleaned):
        return 0.9
    return 0.0


def parse(text: str) -> SwitchL1:
    """Parse `l1-show`; raises `ParseError` when no `Port:` block is found."""
    sections: dict[str, dict[str, dict[str, str]]] = {}
    port: str | None = None
    section = ""
    for line in clean_lines(text):
        header = _PORT.match(line)
        if header:
            port = header.group(1)
            sections[port] = {}
            section = ""
            continue
        if port is None or not line.strip():
            continue
        title = _SECTION.match(line)
        if title and ":" not in line.strip().rstrip(":"):
            section = title.group(1).strip()
            sections[port].setdefault(section, {})
            continue
        _pairs(line, sections[port].setdefault(section, {}))
    if not sections:
        raise ParseError(KIND, None, "no `Port: <swp>` block found")
    return SwitchL1(ports={name: _port(values) for name, values in sections.items()})


def _pairs(line: str, into: dict[str, str]) -> None:
    """`Key: value    Key2: value2` (and `Key: Sub: v    Sub2: v2`) into `into`."""
    parent: str | None = None
    last: str | None = None
    for chunk in re.split(r"\s{2,}", line.strip()):
        pair = _PAIR.match(chunk)
        if not pair:
            if last is not None:
                into[last] = f"{into[last]} {chunk}".strip()
            continue
        key, value = pair.group(1).strip(), pair.group(2).strip()
        nested = _PAIR.match(value)
        if nested and last is None and not re.match(r"^\d", value):
            parent = key
            key, value = f"{key}/{nested.group(1).strip()}", nested.group(2).strip()
        elif parent is not None:
            key = f"{parent}/{key}"
        into[key] = value
        last = key


def _numbers(value: str | None) -> list[str]:
    if value is None or value.strip().lower() in ("none", "n/a", ""):
        return []
    return _NUMBER.findall(value)


def _port(sections: dict[str, dict[str, str]]) -> L1Port:
    fields: dict[str, Any] = {"sections": sections}
    for section, pairs in sections.items():
        for key, value in pairs.items():
            field = _FIELDS.get((section.lower(), key.lower()))
            if field:
                fields[field] = value
            if key.lower() == "mtu":
                fields["mtu"] = try_int(value)
            elif key.lower().startswith("tx power"):
                fields["tx_power_mw"] = [float(n) for n in _numbers(value)]
            elif key.lower().startswith("rx power"):
                fields["rx_power_mw"] = [float(n) for n in _numbers(value)]
            elif key.lower() == "eyes":
                fields["eyes"] = [int(float(n)) for n in _numbers(value)]
            elif key.lower() == "grade":
                fields["grade"] = [int(float(n)) for n in _numbers(value)]
    for link in ("link_kernel", "link_hardware"):
        if fields.get(link) is not None:
            fields[link] = normalize_state(fields[link])
    return L1Port(**fields)
