"""`ibswinfo.sh -d <device> [-T] [-o inventory|vitals|status]` (stanford-rc/ibswinfo).

Default output: a banner with the node description between `=====` rules, then `key | value`
lines (`part number`, `PSID`, `uptime (d-h:m:s)`, `PSU0 status` followed by indented `P/N`,
`S/N`, `DC power`, `fan status`, `power (W)`, `temperature (C)`, `fan#1 (rpm)`, ...). The `-o`
forms print `key : value` with dotted keys (`psu0.status`, `cur.temp (C)`,
`fan#1.speed (rpm)`). Every status that is not `OK` is listed in `problems`.
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.ibswinfo import IbSwitchInfo, SwitchPsu
from fabtui.parsers._switch_common import clean_lines, head, try_float, try_int
from fabtui.parsers.errors import ParseError

KIND = "ibswinfo"
MODEL = IbSwitchInfo
DESCRIPTION = ("ibswinfo.sh (unmanaged Mellanox IB switch): part/serial, firmware, PSUs, "
               "temperatures, fan speeds and status")

_KV = re.compile(r"^(?P<key>\S.*?|\s+\S.*?)\s+(?P<sep>[|:])\s(?P<value>.*?)\s*$")
_BANNER = re.compile(r"^={20,}\s*$")
_PSU = re.compile(r"^PSU(\d+) status$", re.IGNORECASE)
_DOTTED_PSU = re.compile(r"^psu(\d+)\.(status|dc|fan|power \(W\)|part_number|serial)$")
_FAN = re.compile(r"^fan#(\d+)(?:\.speed)? \(rpm\)$")
_QSFP = re.compile(r"^QSFP#(\d+)(?:\.temp)? \(C\)$")
_DHMS = re.compile(r"^(\d+)d-(\d+):(\d+):(\d+)$")
_FIELDS = {
    "part number": "part_number", "part_number": "part_number",
    "serial number": "serial_number", "serial": "serial_number",
    "product name": "product_name", "product_name": "product_name",
    "revision": "revision", "psid": "psid", "guid": "guid",
    "firmware version": "firmware_version", "fw_version": "firmware_version", "cpld": "cpld",
    "node_desription": "node_description", "node_description": "node_description",
    "fan status": "fan_status", "fans": "fan_status",
}
_PSU_FIELDS = {"status": "status", "p/n": "part_number", "s/n": "serial", "dc power": "dc_power",
               "fan status": "fan_status", "power (w)": "power_w", "dc": "dc_power",
               "fan": "fan_status", "part_number": "part_number", "serial": "serial"}


def detect(text: str) -> float:
    """How sure we are that `text` is ibswinfo output (0..1)."""
    cleaned = head(text)
    if re.search(r"(?m)^part number\s+\|", cleaned) and re.search(r"(?m)^(?:PSID|GUID)\s+\|",
                                                                   cleaned):
        return 0.95
    if re.search(r"(?m)^(?:PSU\d+ status|fan#\d+ \(rpm\)|temperature \(C\))\s+\|", cleaned):
        return 0.9
    if re.search(r"(?m)^(?:psu\d+\.(?:status|power \(W\))|cur\.temp \(C\)|fan#\d+\.speed "
                 r"\(rpm\)|node_desription)\s+:", cleaned):
        return 0.85
    return 0.0


def parse(text: str) -> IbSwitchInfo:
    """Parse ibswinfo output; raises `ParseError` when no ibswinfo field is found."""
    lines = clean_lines(text)
    fields: dict[str, Any] = {"psus": {}, "fans_rpm": {}, "module_temperatures_c": {}}
    psus: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    separators: set[str] = set()
    psu: str | None = None
    known = 0
    for number, line in enumerate(lines, start=1):
        if _BANNER.match(line) or not line.strip() or set(line.strip()) == {"-"}:
            continue
        match = _KV.match(line)
        if not match:
            if number > 1 and _BANNER.match(lines[number - 2]) and "node_description" not in fields:
                fields["node_description"] = line.strip()
            continue
        key, value = match.group("key"), match.group("value").strip()
        separators.add(match.group("sep"))
        indented = key.startswith(" ")
        key = key.strip()
        if indented and psu is not None:
            psus[psu][_PSU_FIELDS.get(key.lower(), key.lower())] = value
            known += 1
            continue
        psu_match = _PSU.match(key)
        if psu_match:
            psu = psu_match.group(1)
            psus.setdefault(psu, {})["status"] = value
            known += 1
            continue
        psu = None
        if _field(key, value, fields, psus):
            known += 1
        else:
            warnings.append(f"line {number}: unrecognised field {key!r}")
    if not known:
        raise ParseError(KIND, None, "no ibswinfo `key | value` field found")
    fields["psus"] = {index: _psu(values, warnings, index) for index, values in psus.items()}
    fields["view"] = _view(separators, fields)
    fields["problems"] = _problems(fields)
    return IbSwitchInfo(**fields, warnings=warnings)


def _field(key: str, value: str, fields: dict[str, Any], psus: dict[str, dict[str, Any]]) -> bool:
    """Store one top-level field; False when the key is unknown."""
    lowered = key.lower()
    dotted = _DOTTED_PSU.match(key)
    fan = _FAN.match(key)
    qsfp = _QSFP.match(key)
    if lowered in _FIELDS:
        fields[_FIELDS[lowered]] = value
    elif lowered == "ports":
        fields["ports"] = try_int(value)
    elif dotted:
        psus.setdefault(dotted.group(1), {})[_PSU_FIELDS.get(dotted.group(2).lower(),
                                                             dotted.group(2))] = value
    elif fan:
        rpm = try_int(value)
        if rpm is not None:
            fields["fans_rpm"][fan.group(1)] = rpm
    elif qsfp:
        temperature = try_float(value)
        if temperature is not None:
            fields["module_temperatures_c"][qsfp.group(1)] = temperature
    elif lowered.startswith("uptime"):
        _uptime(value, fields, seconds=lowered == "uptime (sec)")
    elif lowered in ("temperature (c)", "cur.temp (c)"):
        fields["temperature_c"] = try_float(value)
    elif lowered in ("max temp (c)", "max.temp (c)"):
        fields["max_temperature_c"] = try_float(value)
    elif lowered == "warn threshold (c)":
        low_high = re.match(r"(-?\d+(?:\.\d+)?)\s*/\s*(-?\d+(?:\.\d+)?)", value)
        if low_high:
            fields["temperature_warn_low_c"] = float(low_high.group(1))
            fields["temperature_warn_high_c"] = float(low_high.group(2))
    else:
        return False
    return True


def _uptime(value: str, fields: dict[str, Any], seconds: bool) -> None:
    if seconds:
        fields["uptime_s"] = try_int(value)
        return
    fields["uptime"] = value
    dhms = _DHMS.match(value)
    if dhms:
        days, hours, minutes, secs = (int(part) for part in dhms.groups())
        fields["uptime_s"] = ((days * 24 + hours) * 60 + minutes) * 60 + secs


def _psu(values: dict[str, Any], warnings: list[str], index: str) -> SwitchPsu:
    power = values.pop("power_w", None)
    known = {key: value for key, value in values.items() if key in SwitchPsu.model_fields}
    for key in set(values) - set(known):
        warnings.append(f"PSU{index}: unrecognised field {key!r}")
    return SwitchPsu(**known, power_w=try_int(power) if power is not None else None)


def _view(separators: set[str], fields: dict[str, Any]) -> str:
    if "|" in separators:
        return "full"
    if fields.get("firmware_version") or fields.get("part_number"):
        return "inventory"
    if fields.get("temperature_c") is not None or fields.get("fans_rpm") \
            or fields.get("uptime_s") is not None:
        return "vitals"
    return "status"


def _problems(fields: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    status = fields.get("fan_status")
    if status and status.upper() != "OK":
        problems.append(f"fan status: {status}")
    for fan, rpm in fields["fans_rpm"].items():
        if rpm == 0:
            problems.append(f"fan#{fan}: 0 rpm")
    for index, psu in fields["psus"].items():
        for name in ("status", "dc_power", "fan_status"):
            value = getattr(psu, name)
            if value and value.upper() != "OK":
                problems.append(f"PSU{index} {name}: {value}")
    return problems
