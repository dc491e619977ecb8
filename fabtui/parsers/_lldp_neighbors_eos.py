"""Arista EOS `show lldp neighbors [detail]` for the lldp-neighbors parser. Not a parser.

- `show lldp neighbors`: the table-change header, then `Port  Neighbor Device ID  Neighbor Port ID
  TTL`, with or without the dash line, which may not line up; device and port ids may hold
  spaces. Rows are kept as their lines (`EosRows`) and read again when iterated.
- `show lldp neighbors detail`: `Interface Et1 detected N LLDP neighbors:` blocks, one
  `Neighbor chassis/port, age N seconds` block per neighbor with `- Item: value` lines (the
  `Port ID` of the link aggregation TLV is not the neighbor's).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator

from fabtui.parsers._lldp_neighbors_common import (
    INT,
    Draft,
    Neighbor,
    Result,
    finish_block,
    first_int,
    header_index,
    table_rows,
    tokens_of,
    value_of,
)

EOS_HEADER = re.compile(r"^\s*Port\s+Neighbor Device ID\s+Neighbor Port ID\s+TTL\s*$")
EOS_STATS = re.compile(r"^\s*(?:Last table change time|Number of table (?:inserts|deletes))\s*:")
EOS_DETAIL = re.compile(r"^\s*Interface\s+(\S+)\s+detected\s+(\d+)\s+LLDP\s+neighbors?:?\s*$")
_EOS_SUBTYPES = {"interface name": "ifname", "mac address": "mac", "locally assigned": "local",
                 "interface alias": "ifalias", "network address": "ip"}
_EOS_ITEM = re.compile(r"^\s*-\s+([^:]+?)\s*(?::\s*(.*?))?\s*$")
_EOS_SUB = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(.*?)\s*$")
_EOS_NEIGHBOR = re.compile(r"^\s*Neighbor\s+\S+.*,\s*age\b")


def _unquote(text: str) -> str:
    """EOS detail quotes strings (`"Ethernet1"`); one pair of outer quotes goes."""
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1]
    return text


def parse_eos_table(lines: list[str]) -> Result:
    """EOS `show lldp neighbors`: port, device id, port id (either may hold spaces), TTL."""
    header = header_index(lines, EOS_HEADER)
    candidates = [lines[header].find("Neighbor Port ID")]
    warnings: list[str] = []
    neighbors = EosRows(candidates)
    for number, kind, line in table_rows(lines, header):
        if kind == "underline":
            segments = [m.start() for m in re.finditer(r"-+", line)]
            if len(segments) == 4:
                candidates.append(segments[2])
            continue
        if kind == "elided":
            warnings.append(f"line {number}: rows elided (`...`)")
            continue
        if kind != "row":
            continue
        if _eos_row(line, candidates) is None:
            warnings.append(f"line {number}: unrecognised row skipped: {line.strip()[:80]}")
        else:
            neighbors.add(line)
    return Result("eos", "table", [], warnings, rows=neighbors)


class EosRows:
    """The rows of an EOS table, kept as their lines and read again when iterated: a row's
    line is already held, a neighbor tuple with its cut strings cost ~5x it again."""

    def __init__(self, candidates: list[int]) -> None:
        self.candidates = candidates  # grows as dash lines are read: each row keeps its count
        self.lines: list[str] = []
        self.known = array("H")

    def add(self, line: str) -> None:
        """Keep a row read with the port id starts known so far."""
        self.lines.append(line)
        self.known.append(len(self.candidates))

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[Neighbor]:
        for line, known in zip(self.lines, self.known, strict=True):
            neighbor = _eos_row(line, self.candidates[:known])
            assert neighbor is not None  # it was read from this very line
            yield neighbor


def _eos_row(line: str, port_id_starts: list[int]) -> Neighbor | None:
    """One EOS row; the split between device id and port id is the token nearest to where the
    header (or its dashes) puts the port id column, when either holds spaces."""
    tokens = tokens_of(line)
    if len(tokens) < 4 or not INT.match(tokens[-1].group()):
        return None
    middle = tokens[1:-1]
    split = 1
    if len(middle) > 2:
        split = min(range(1, len(middle)),
                    key=lambda i: min(abs(middle[i].start() - c) for c in port_id_starts))
    device = line[middle[0].start():middle[split - 1].end()]
    port_id = line[middle[split].start():middle[-1].end()]
    return Neighbor(local_port=tokens[0].group(), device=value_of(device),
                    port_id=value_of(port_id), ttl=int(tokens[-1].group()))


def parse_eos_detail(lines: list[str]) -> Result:
    """`show lldp neighbors detail` on EOS: `Interface X detected N LLDP neighbors:`, then one
    `Neighbor chassis/port, age N seconds` block per neighbor with `- Item: value` lines."""
    result = Result("eos", "detail")
    interface: str | None = None
    draft: Draft | None = None
    item = ""
    announced = 0
    for number, line in enumerate(lines, start=1):
        match = EOS_DETAIL.match(line)
        if match:
            finish_block(draft, result)
            draft, interface, item = None, match.group(1), ""
            announced += int(match.group(2))
            continue
        if interface is not None and _EOS_NEIGHBOR.match(line):
            finish_block(draft, result)
            draft, item = Draft(local_port=interface, line=number), ""
            continue
        if draft is None:
            continue
        item_match = _EOS_ITEM.match(line)
        if item_match:
            item = item_match.group(1).lower()
            _eos_item(draft, item, item_match.group(2) or "")
            continue
        sub = _EOS_SUB.match(line)
        if sub:
            _eos_sub(draft, item, sub.group(1).lower(), sub.group(2))
    finish_block(draft, result)
    if announced != len(result.neighbors):
        result.warnings.append(f"the interfaces announce {announced} neighbors but "
                               f"{len(result.neighbors)} were read")
    return result


def _eos_item(draft: Draft, item: str, value: str) -> None:
    """A `- Item: value` line."""
    if item == "port id type":
        words = re.sub(r"\s*\(\d+\)\s*$", "", value).strip()
        draft.port_id_subtype = _EOS_SUBTYPES.get(words.lower(), value_of(words))
    elif item == "time to live":
        draft.ttl = first_int(value)
    elif item == "port description":
        draft.port_description = value_of(_unquote(value))
    elif item == "system name":
        draft.device = value_of(_unquote(value))


def _eos_sub(draft: Draft, item: str, key: str, value: str) -> None:
    """An indented `Key : value` line under the current `- Item`."""
    if item == "chassis id type" and key == "chassis id":
        draft.chassis_id = value_of(_unquote(value))
    elif item == "port id type" and key == "port id":
        draft.port_id = value_of(_unquote(value))
    elif item == "system capabilities" and key == "enabled capabilities":
        draft.capabilities_text = value_of(value)
    elif item.startswith("management address") and key == "management address":
        draft.management_address = draft.management_address or value_of(value)
