"""`ethtool -i NETDEV` (ethtool.c dump_drvinfo): driver, version, firmware, bus.

    driver: mlx5_core
    version: 23.10-1.1.9
    firmware-version: 28.39.3560 (MT_0000000838)
    bus-info: 0000:e6:00.0

With MLNX_OFED or DOCA-OFED installed, mlx5_core's `version` is the OFED release; the in-box
driver prints the kernel release there. The firmware line carries the PSID in brackets.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.ethtool_info import EthtoolInfo
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "ethtool-info"
MODEL = EthtoolInfo
DESCRIPTION = "ethtool -i NETDEV: driver, driver version (OFED/DOCA or kernel), firmware, PSID"

_LINE = re.compile(r"^(?P<key>[a-z][a-z-]*):\s?(?P<value>.*?)\s*$")
_FIRMWARE = re.compile(r"^(?P<fw>\S+)(?:\s+\((?P<psid>[^)]*)\))?")


def detect(text: str) -> float:
    """How sure we are that `text` is `ethtool -i` output (0..1)."""
    head = text[:4000]
    if re.search(r"(?m)^driver: \S+", head) and re.search(r"(?m)^bus-info:", head):
        return 0.95
    if re.search(r"(?m)^driver: \S+", head) and "firmware-version:" in head:
        return 0.8
    return 0.0


def parse(text: str) -> EthtoolInfo:
    """Parse the `key: value` lines; raises `ParseError` when there is no `driver:` line or a
    line is not `key: value`."""
    fields: dict[str, str] = {}
    for number, raw in enumerate(clean_lines(text), start=1):
        line = raw.strip()
        if not line:
            continue
        match = _LINE.match(line)
        if match is None:
            raise ParseError(KIND, number, f"not 'key: value': {line[:80]!r}")
        fields[match.group("key")] = match.group("value")
    if "driver" not in fields:
        raise ParseError(KIND, None, "no 'driver:' line: not ethtool -i output")
    firmware = psid = None
    printed = fields.get("firmware-version") or None
    if printed:
        found = _FIRMWARE.match(printed)
        if found is not None:
            firmware, psid = found.group("fw"), found.group("psid")
    return EthtoolInfo(driver=fields["driver"], version=fields.get("version") or None,
                       firmware_version=printed, firmware=firmware, psid=psid or None,
                       bus_info=fields.get("bus-info") or None, fields=fields)
