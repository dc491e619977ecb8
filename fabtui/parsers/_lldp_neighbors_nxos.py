"""Cisco NX-OS (and IOS) `show lldp neighbors [detail]` for the lldp-neighbors parser. Not a parser.

- `show lldp neighbors`: a capability legend, then `Device ID  Local Intf  Hold-time  Capability
  Port ID`; long device ids wrap onto their own line; ids and capability cells may hold spaces.
- `show lldp neighbors detail`: `Chassis id:` blocks (`not advertised` values are None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabtui.parsers._lldp_neighbors_common import (
    INT,
    LLDP_KIND,
    TOTAL,
    Draft,
    Neighbor,
    Result,
    header_index,
    table_rows,
    tokens_of,
    value_of,
)
from fabtui.parsers.errors import ParseError

NXOS_HEADER = re.compile(r"^\s*Device ID\s+Local Intf\s+Hold-time\s+Capability\s+Port ID\s*$")
NXOS_CHASSIS = re.compile(r"^\s*Chassis id\s*:", re.I)
NXOS_LOCAL = re.compile(r"^\s*Local Port id\s*:", re.I)
_CAPABILITY_CODES = re.compile(r"^[BRTCWPSO](?:,?[BRTCWPSO])*,?$")
_NXOS_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ]*?)\s*:\s*(.*?)\s*$")


@dataclass
class _NxosLayout:
    """Header positions of the NX-OS table."""

    hold: int
    port: int


def parse_nxos_table(lines: list[str]) -> Result:
    """NX-OS / IOS `show lldp neighbors`, with device ids wrapped onto their own line."""
    header = header_index(lines, NXOS_HEADER)
    layout = _NxosLayout(lines[header].find("Hold-time"), lines[header].find("Port ID"))
    neighbors: list[Neighbor] = []
    warnings: list[str] = []
    total = None
    pending: str | None = None
    for number, kind, line in table_rows(lines, header):
        if kind == "total":
            total = int(TOTAL.match(line).group(1))  # type: ignore[union-attr]
            break
        if kind == "elided":
            warnings.append(f"line {number}: rows elided (`...`)")
        if kind != "row":
            continue
        draft = _nxos_row(line, number, layout)
        if draft is None:
            if pending is not None:
                warnings.append(f"line {number - 1}: device id without a row: {pending[:80]}")
            pending = line.strip()
            continue
        if draft.device is None:
            draft.device, pending = pending, None
        elif pending is not None:
            warnings.append(f"line {number - 1}: device id without a row: {pending[:80]}")
            pending = None
        neighbors.append(draft.build())
    if pending is not None:
        warnings.append(f"device id `{pending[:80]}` at the end has no row (truncated?)")
    if not neighbors and total is None:
        raise ParseError(LLDP_KIND, header + 1, "`show lldp neighbors` header without rows or "
                                                "the `Total entries displayed` footer "
                                                "(truncated?)")
    if total is None:
        warnings.append("no `Total entries displayed` footer (truncated?)")
    return Result("nxos", "table", neighbors, warnings, total)


def _nxos_row(line: str, number: int, layout: _NxosLayout) -> Draft | None:
    """One row (or the second half of a wrapped one: no device id before the local port)."""
    tokens = tokens_of(line)
    holds = [i for i in range(1, len(tokens)) if INT.match(tokens[i].group())
             and i + 1 < len(tokens)]
    if not holds:
        return None
    hold = min(holds, key=lambda i: abs(tokens[i].start() - layout.hold))
    offset = tokens[hold].start() - layout.hold
    rest = tokens[hold + 1:]
    caps: list[re.Match[str]] = []
    for token in rest[:-1] if layout.port < 0 else rest:
        near_port = layout.port >= 0 and token.start() >= layout.port + offset - 1
        if near_port or not _CAPABILITY_CODES.match(token.group()):
            break
        caps.append(token)
    port_tokens = rest[len(caps):]
    device = line[tokens[0].start():tokens[hold - 2].end()] if hold >= 2 else None
    port_id = line[port_tokens[0].start():port_tokens[-1].end()] if port_tokens else None
    capabilities = line[caps[0].start():caps[-1].end()] if caps else None
    return Draft(local_port=tokens[hold - 1].group(), line=number, device=value_of(device),
                 port_id=value_of(port_id), capabilities_text=capabilities,
                 ttl=int(tokens[hold].group()))


def parse_nxos_detail(lines: list[str]) -> Result:
    """NX-OS `show lldp neighbors detail`: blocks starting at `Chassis id:`."""
    result = Result("nxos", "detail")
    blocks: list[tuple[int, dict[str, str]]] = []
    for number, line in enumerate(lines, start=1):
        total = TOTAL.match(line)
        if total:
            result.total = int(total.group(1))
            continue
        match = _NXOS_KEY.match(line)
        if match is None:
            continue
        key, value = match.group(1).lower(), match.group(2)
        if key == "chassis id":
            blocks.append((number, {}))
        if blocks and key not in blocks[-1][1]:
            blocks[-1][1][key] = value
    for number, fields in blocks:
        local = value_of(fields.get("local port id"))
        if local is None:
            result.warnings.append(f"line {number}: neighbor without `Local Port id` skipped")
            continue
        management = value_of(fields.get("management address")) or \
            value_of(fields.get("management address ipv6"))
        result.neighbors.append(Neighbor(
            local_port=local, device=value_of(fields.get("system name")),
            port_id=value_of(fields.get("port id")),
            port_description=value_of(fields.get("port description")),
            chassis_id=value_of(fields.get("chassis id")),
            capabilities=value_of(fields.get("enabled capabilities")),
            management_address=management))
    return result
