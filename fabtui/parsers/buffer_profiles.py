"""SONiC `mmuconfig -l` (sonic-utilities `scripts/mmuconfig`): buffer pools and profiles.

    Pool: ingress_lossless_pool           Profile: pg_lossless_400000_5m_profile
    ----  -------                         ----------  ---------------------
    mode  dynamic                         dynamic_th  0
    type  ingress                         pool        ingress_lossless_pool
    ----  -------                         xon         18432
                                          xoff        159744
                                          size        178176
                                          ----------  ---------------------

Each block is a title line (`Pool: NAME`, `Profile: NAME`, `Pool for namespace asic0: NAME` on
a multi-ASIC switch, or `Lossless traffic pattern:`) over a two-column table between rules.
A lossless profile's `xoff` is the headroom above the pause point (fabtui/topology/headroom.py
says what a cable needs); `-vv` adds `Total pools: N` lines, which are skipped.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.buffer_profiles import BufferEntry, BufferProfiles
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "buffer-profiles"
MODEL = BufferProfiles
DESCRIPTION = "SONiC `mmuconfig -l`: buffer pools and profiles (lossless headroom xon/xoff/size)"

_TITLE = re.compile(r"^(?P<what>Pool|Profile)(?: for namespace (?P<ns>\S+))?:\s*(?P<name>\S+)\s*$")
_PATTERN = re.compile(r"^Lossless traffic pattern:\s*$")
_RULE = re.compile(r"^-+\s+-+\s*$")
_ROW = re.compile(r"^(?P<key>[A-Za-z_][\w]*)\s+(?P<value>\S.*?)\s*$")


def detect(text: str) -> float:
    """How sure we are that `text` is `mmuconfig -l` output (0..1)."""
    head = text[:20000]
    if re.search(r"(?m)^\s*Profile(?: for namespace \S+)?:\s*\S+\s*$", head) and \
            re.search(r"(?m)^\s*pool\s+\S+", head):
        return 0.9
    if re.search(r"(?m)^\s*Pool(?: for namespace \S+)?:\s*\S+\s*$", head) and \
            re.search(r"(?m)^\s*mode\s+(?:dynamic|static)\s*$", head):
        return 0.85
    return 0.0


def parse(text: str) -> BufferProfiles:
    """Parse every pool and profile block; raises `ParseError` when there is none, or when a
    block's size, xon, xoff or threshold is not a number (names the line)."""
    pools: dict[str, tuple[str | None, dict[str, int | str]]] = {}
    profiles: dict[str, tuple[str | None, dict[str, int | str]]] = {}
    pattern: dict[str, int | str] = {}
    lines = clean_lines(text)
    current: dict[str, int | str] | None = None
    rules = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        title = _TITLE.match(line)
        if title:
            fields: dict[str, int | str] = {}
            ns = title.group("ns")
            key = f"{ns}/{title.group('name')}" if ns else title.group("name")
            table = pools if title.group("what") == "Pool" else profiles
            table[key] = (ns, fields)
            current, rules = fields, 0
            continue
        if _PATTERN.match(line):
            current, rules = pattern, 0
            continue
        if current is None:
            continue
        if _RULE.match(line):
            rules += 1
            if rules == 2:
                current = None
            continue
        row = _ROW.match(line)
        if row is None or rules != 1:
            continue
        name, value = row.group("key"), row.group("value")
        if name in ("size", "xon", "xoff", "dynamic_th", "static_th", "xon_offset",
                    "default_dynamic_th", "over_subscribe_ratio"):
            try:
                current[name] = int(value)
            except ValueError:
                raise ParseError(KIND, number, f"{name} is {value[:30]!r}, not a number "
                                 "of bytes") from None
        else:
            current[name] = value
    if not pools and not profiles:
        raise ParseError(KIND, None, "no `Pool: NAME` or `Profile: NAME` block found")
    return BufferProfiles(
        pools={k: BufferEntry(namespace=ns, fields=f) for k, (ns, f) in pools.items()},
        profiles={k: BufferEntry(namespace=ns, fields=f) for k, (ns, f) in profiles.items()},
        lossless_pattern=pattern)
