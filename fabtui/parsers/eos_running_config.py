"""Arista EOS `show running-config` (or a section of it): commands by section.

    ! Command: show running-config
    ! device: Site1-S1 (vEOS-lab, EOS-4.32.2F)
    hostname Site1-S1
    interface Ethernet1/1
       mtu 9000
    router bgp 65001
       address-family evpn
          neighbor EVPN-OVERLAY-PEERS activate
    end

EOS indents each level by three spaces and closes sections with `!` lines. A top-level line
followed by indented lines opens a section; one that is not is a top-level command. Comments
(`!`), blank lines and `end` are dropped.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.eos_running_config import EosRunningConfig
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "eos-running-config"
MODEL = EosRunningConfig
DESCRIPTION = "Arista EOS show running-config: commands by section, nested lines with parents"

_DEVICE = re.compile(r"^! device:\s*(?P<device>.+?)\s*$")


def detect(text: str) -> float:
    """How sure we are that `text` is an EOS running configuration (0..1)."""
    head = text[:8000]
    if re.search(r"(?m)^! Command: show running-config", head):
        return 0.95
    if re.search(r"(?m)^! device: \S+ \(.*EOS-", head):
        return 0.9
    return 0.0


def parse(text: str) -> EosRunningConfig:
    """Parse sections; raises `ParseError` at a line indented deeper than its parent allows,
    and when there is no command at all."""
    lines = [line.rstrip() for line in clean_lines(text)]
    device = None
    sections: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []  # (indent, line) of the open parents
    count = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        match = _DEVICE.match(stripped)
        if match is not None:
            device = match.group("device")
        if not stripped or stripped.startswith("!") or stripped == "end":
            continue
        indent = len(line) - len(line.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if indent and not stack:
            raise ParseError(KIND, number, f"indented line outside any section: "
                                           f"{stripped[:60]!r}")
        count += 1
        if not stack:
            sections.setdefault(stripped, [])
            stack.append((indent, stripped))
            continue
        top = stack[0][1]
        path = " / ".join([p for _, p in stack[1:]] + [stripped])
        sections[top].append(path)
        stack.append((indent, stripped))
    if count == 0:
        raise ParseError(KIND, None, "no configuration line")
    # A top-level line with nothing under it is a command of its own, not a section.
    out: dict[str, list[str]] = {"": []}
    for head, body in sections.items():
        if body or head.startswith("interface "):
            out[head] = body
        else:
            out[""].append(head)
    return EosRunningConfig(device=device, sections=out)
