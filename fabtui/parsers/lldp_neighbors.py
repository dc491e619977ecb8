"""LLDP neighbor tables: which device and port is really cabled to each local port.

Read, in every layout the switch CLIs and lldpd print:

- SONiC `show lldp table` (tabulate columns `LocalPort RemoteDevice RemotePortID Capability
  RemotePortDescr`, cells may be empty or hold spaces, `Total entries displayed:` footer; the
  Enterprise SONiC variant draws one unbroken dash line) and `show lldp neighbors` (lldpctl
  blocks);
- Arista EOS `show lldp neighbors` (table-change header, `Port  Neighbor Device ID  Neighbor
  Port ID  TTL`, with or without the dash line, which may not line up) and `show lldp neighbors
  detail` (`Interface Et1 detected N LLDP neighbors:` blocks);
- Cisco NX-OS (and IOS) `show lldp neighbors` (capability legend, `Device ID  Local Intf
  Hold-time  Capability  Port ID`; long device ids wrap onto their own line; ids and capability
  cells may hold spaces) and `show lldp neighbors detail` (`Chassis id:` blocks);
- lldpd `lldpcli show neighbors [details|summary]` / `lldpctl` (`Interface: eth0, via: LLDP,
  RID: 1, Time: ...` blocks; TTL under Chassis in old versions, under Port in new ones; CDP
  neighbors too) and `lldpctl -f keyvalue` (`lldp.eth0.chassis.name=...`);
- Cumulus: NVUE `nv show interface lldp`, `nv show interface lldp-detail`, `nv show interface
  <if> lldp [neighbor [<id>]]` (the local port then comes from the command line), NCLU
  `net show lldp`.

The lldpd subtype word before ids (`ifname swp1`, `mac 0c:42:..`, `local 523`) is split off into
`port_id_subtype`. Capability lines of the LLDP-MED section, and the `Port ID` of EOS's link
aggregation TLV, are not the neighbor's. Launcher prefixes, mail quoting, CRLF, tabs, prompts and
command lines are tolerated. `lldpcli show interfaces|statistics|chassis` (this host's own data)
are refused.

This module detects the layout and dispatches; each flavor's readers are in
`_lldp_neighbors_sonic.py`, `_lldp_neighbors_eos.py`, `_lldp_neighbors_nxos.py`,
`_lldp_neighbors_lldpd.py` (lldpctl blocks and keyvalue) and `_lldp_neighbors_cumulus.py` (NVUE,
NCLU), on what `_lldp_neighbors_common.py` shares.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from fabtui.model.parsed.lldp_neighbors import LldpNeighbor, LldpNeighbors
from fabtui.model.table import Table, left, right
from fabtui.parsers._lldp_neighbors_common import LLDP_KIND, Result, first
from fabtui.parsers._lldp_neighbors_cumulus import (
    NCLU_HEADER,
    NV_BRIEF,
    NV_COMMAND,
    NV_TREE_KEY,
    NVUE_HEADER,
    NVUE_NEIGHBOR_HEADER,
    parse_nclu_table,
    parse_nvue_interface,
    parse_nvue_neighbor_table,
    parse_nvue_table,
)
from fabtui.parsers._lldp_neighbors_eos import (
    EOS_DETAIL,
    EOS_HEADER,
    EOS_STATS,
    parse_eos_detail,
    parse_eos_table,
)
from fabtui.parsers._lldp_neighbors_lldpd import (
    KEYVALUE,
    LLDPD_FIELD,
    LLDPD_IFACE,
    LLDPD_OTHER,
    LLDPD_TITLE,
    parse_blocks,
    parse_keyvalue,
)
from fabtui.parsers._lldp_neighbors_nxos import (
    NXOS_CHASSIS,
    NXOS_HEADER,
    NXOS_LOCAL,
    parse_nxos_detail,
    parse_nxos_table,
)
from fabtui.parsers._lldp_neighbors_sonic import SONIC_HEADER, parse_sonic_table
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed, with_rows
from fabtui.parsers.text import clean_line_stream, clean_lines, split_lines

KIND = LLDP_KIND
MODEL = LldpNeighbors
DESCRIPTION = ("LLDP neighbors: SONiC show lldp table|neighbors, EOS/NX-OS show lldp neighbors "
               "[detail], lldpcli show neighbors / lldpctl [-f keyvalue], NVUE nv show interface "
               "lldp")


def _lines(text: str) -> list[str]:
    """Cleaned lines (launcher prefixes, quoting, CRLF gone), tabs expanded."""
    return [line.expandtabs(8).rstrip() for line in clean_lines(text)]


# Detection ---------------------------------------------------------------------------------------

_STRONG: tuple[tuple[re.Pattern[str], float], ...] = (
    (SONIC_HEADER, 0.95), (EOS_HEADER, 0.95), (EOS_DETAIL, 0.95), (NXOS_HEADER, 0.9),
    (LLDPD_TITLE, 0.9), (NVUE_HEADER, 0.85), (NCLU_HEADER, 0.85),
    (NVUE_NEIGHBOR_HEADER, 0.8),
)


def detect(text: str) -> float:
    """How sure we are that `text` is an LLDP neighbor listing (0..1)."""
    lines = _lines(text[:50000])
    best = 0.0
    keyvalue = 0
    for line in lines:
        for pattern, score in _STRONG:
            if score > best and pattern.match(line):
                best = score
        if KEYVALUE.match(line):
            keyvalue += 1
        elif best < 0.9 and LLDPD_IFACE.match(line) and re.search(r",\s*via:|\(via ", line):
            best = 0.9
    if keyvalue >= 2:
        best = max(best, 0.95)
    elif keyvalue == 1:
        best = max(best, 0.6)
    head = "\n".join(lines)
    if best < 0.85 and re.search(r"(?m)^\s*Local Port id\s*:", head) and \
            re.search(r"(?mi)^\s*Chassis id\s*:", head):
        best = 0.9
    if best < 0.8 and re.search(r"(?m)^\s*Interface:\s*\S", head) and \
            sum(1 for line in lines if LLDPD_FIELD.match(line)) >= 2:
        best = 0.85
    if best < 0.7 and sum(1 for line in lines if EOS_STATS.match(line)) >= 2:
        best = 0.7
    if best < 0.7 and NV_COMMAND.search(head) and \
            any(NV_BRIEF.match(line) or NV_TREE_KEY.match(line) for line in lines):
        best = 0.7
    if best < 0.4 and any(LLDPD_OTHER.match(line) for line in lines):
        best = 0.4
    return best


# Dispatch ----------------------------------------------------------------------------------------

def parse(text: str) -> LldpNeighbors:
    """Parse any supported LLDP neighbor listing; raises `ParseError` when there is none."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(normalised: Iterable[str]) -> Streamed[LldpNeighbors]:
    """Parse normalised lines (`fabtui parse` reads files this way, never holding the text);
    the neighbors are written from their tuples, never a model each."""
    lines = [line.expandtabs(8).rstrip() for line in clean_line_stream(normalised)]
    if not any(line.strip() for line in lines):
        raise ParseError(KIND, None, "the input is empty")
    reader = _choose(lines)
    result = reader(lines)
    neighbors = result.all()
    if result.total is not None and result.total != len(neighbors):
        result.warnings.append(f"footer says {result.total} entries but {len(neighbors)} "
                               "neighbors were read")
    head = LldpNeighbors(flavor=result.flavor, view=result.view, neighbors=[],
                         total_entries=result.total, warnings=result.warnings)
    return with_rows(head, "neighbors", LldpNeighbor,
                     lambda: (neighbor._asdict() for neighbor in neighbors))


def _choose(lines: list[str]) -> Callable[[list[str]], Result]:
    """The reader for the layout the lines are in, or `ParseError`."""
    if sum(1 for line in lines if KEYVALUE.match(line)) >= 1:
        return parse_keyvalue
    if first(lines, EOS_DETAIL) is not None:
        return parse_eos_detail
    if first(lines, NXOS_LOCAL) is not None and first(lines, NXOS_CHASSIS) is not None:
        return parse_nxos_detail
    other = first(lines, LLDPD_OTHER)
    if other is not None and first(lines, LLDPD_TITLE) is None:
        raise ParseError(KIND, other + 1, f"this is lldpcli `{lines[other].strip()}` output "
                                          "(this host's own data), not its neighbors")
    if first(lines, LLDPD_TITLE) is not None or \
            (first(lines, LLDPD_IFACE) is not None and
             any(LLDPD_FIELD.match(line) for line in lines)):
        return parse_blocks
    tables: list[tuple[int, Callable[[list[str]], Result]]] = []
    for pattern, reader in ((SONIC_HEADER, parse_sonic_table), (EOS_HEADER, parse_eos_table),
                            (NXOS_HEADER, parse_nxos_table), (NVUE_HEADER, parse_nvue_table),
                            (NCLU_HEADER, parse_nclu_table),
                            (NVUE_NEIGHBOR_HEADER, parse_nvue_neighbor_table)):
        index = first(lines, pattern)
        if index is not None:
            tables.append((index, reader))
    if tables:
        return min(tables, key=lambda item: item[0])[1]
    if any(NV_BRIEF.match(line) or NV_TREE_KEY.match(line) for line in lines) and \
            any(NV_COMMAND.search(line) for line in lines):
        return parse_nvue_interface
    raise ParseError(KIND, None, "no LLDP neighbor table or neighbor block found")


# Table for `fabtui parse --table` ----------------------------------------------------------------

def tables(result: LldpNeighbors) -> list[Table]:
    """One row per neighbor: local port, device, port id, description, capabilities, TTL."""
    columns = [left("local_port", "LOCAL PORT"), left("device", "DEVICE"),
               left("port_id", "PORT ID"), left("port_description", "PORT DESCR"),
               left("capabilities", "CAP"), right("ttl", "TTL")]
    rows = [(n.local_port, n.device, n.port_id, n.port_description, n.capabilities, n.ttl)
            for n in result.neighbors]
    footer = f"{len(result.neighbors)} neighbors ({result.flavor} {result.view})"
    return [Table.build(columns, rows, notes=[footer])]
