"""`show version` on SONiC (sonic-utilities show/main.py) and Arista EOS.

    SONiC Software Version: SONiC.HEAD.32-21ea29a      Arista DCS-7280SR3K-48YC8-F
    Distribution: Debian 9.8                           Hardware version: 11.02
    Platform: x86_64-mlnx_msn2700-r0                   Serial number: JPE21043549
    HwSKU: Mellanox-SN2700                             Software image version: 4.31.1F
    Model Number: MSN2700-CS2FO                        Architecture: x86_64

SONiC's Docker image table after the `Docker images:` line is skipped; EOS names its model on
the first line (`Arista MODEL`, or `cEOSLab` alone in a container).
"""

from __future__ import annotations

import re

from fabtui.model.parsed.switch_version import SwitchVersion
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "switch-version"
MODEL = SwitchVersion
DESCRIPTION = "show version (SONiC, Arista EOS): network OS, its version, platform, model"

_FIELD = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ()/-]*?):\s*(?P<value>.*?)\s*$")


def detect(text: str) -> float:
    """How sure we are that `text` is a switch's `show version` (0..1)."""
    head = text[:6000]
    if re.search(r"(?m)^\s*SONiC Software Version:", head):
        return 0.95
    if re.search(r"(?m)^\s*Software image version:", head) and \
            re.search(r"(?m)^\s*(?:Arista \S+|cEOS\w*)\s*$", head):
        return 0.95
    return 0.0


def parse(text: str) -> SwitchVersion:
    """Parse the `Key: value` lines; raises `ParseError` when neither SONiC's nor EOS's
    version line is there."""
    fields: dict[str, str] = {}
    first = None
    for raw in clean_lines(text):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("Docker images:"):
            break
        if first is None:
            first = line
        match = _FIELD.match(line)
        if match is not None:
            fields.setdefault(match.group("key"), match.group("value"))
    if "SONiC Software Version" in fields:
        image = fields["SONiC Software Version"]
        return SwitchVersion(os="SONiC", version=image.removeprefix("SONiC.") or None,
                             model=fields.get("Model Number") or fields.get("HwSKU") or None,
                             platform=fields.get("Platform") or None,
                             hwsku=fields.get("HwSKU") or None,
                             serial=fields.get("Serial Number") or None, fields=fields)
    if "Software image version" in fields:
        model = first.removeprefix("Arista ").strip() if first else None
        return SwitchVersion(os="EOS", version=fields["Software image version"].split()[0],
                             model=model or None, serial=fields.get("Serial number") or None,
                             fields=fields)
    raise ParseError(KIND, None, "no 'SONiC Software Version' or 'Software image version' "
                     "line: not a SONiC or EOS show version")
