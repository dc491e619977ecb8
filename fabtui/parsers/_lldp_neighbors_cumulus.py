"""Cumulus Linux (NVUE and NCLU) LLDP views for the lldp-neighbors parser. Not a parser.

- NVUE `nv show interface lldp` (Interface, Speed, Type, Remote Host, Remote Port);
- NVUE `nv show interface <if> lldp neighbor` (Neighbor, Remote IP, Model, SW Version, Remote
  Port) and `nv show interface <if> lldp [neighbor <id>]` (`[neighbor] name` rows, or a key/value
  tree): the local port comes from the command line;
- NCLU `net show lldp` (LocalPort, Speed, Mode, RemoteHost, RemotePort).

`nv show interface lldp-detail` prints lldpctl blocks (`_lldp_neighbors_lldpd.py`).
"""

from __future__ import annotations

import re

from fabtui.parsers._lldp_neighbors_common import (
    DASHES,
    LLDP_KIND,
    Draft,
    Neighbor,
    Result,
    first_int,
    header_index,
    read_column_table,
    value_of,
)
from fabtui.parsers.errors import ParseError

NVUE_HEADER = re.compile(r"^\s*Interface\s+.*\bRemote Host\s+Remote Port\b")
NCLU_HEADER = re.compile(r"^\s*LocalPort\s+.*\bRemoteHost\s+RemotePort\b")
NVUE_NEIGHBOR_HEADER = re.compile(r"^\s*Neighbor\s+Remote IP\b.*\bRemote Port\b")
NV_COMMAND = re.compile(r"\bnv\s+show\s+interface\s+(?!lldp\b|lldp-detail\b)(\S+)\s+lldp\b"
                        r"(?:\s+neighbor(?:\s+(\S+))?)?")
NV_BRIEF = re.compile(r"^\s*\[neighbor\]\s+(\S.*?)\s*$")
NV_TREE_KEY = re.compile(r"^\s*(?:system-name|chassis-id)\s+\S")


_NV_TREE_FIELDS = {("chassis", "system-name"): "device", ("chassis", "chassis-id"): "chassis_id",
                   ("chassis", "management-address-ipv4"): "management_address",
                   ("port", "name"): "port_id", ("port", "description"): "port_description",
                   ("port", "type"): "port_id_subtype", ("port", "ttl"): "ttl"}


def parse_nvue_table(lines: list[str]) -> Result:
    """NVUE `nv show interface lldp`: Interface, Speed, Type, Remote Host, Remote Port."""
    header = header_index(lines, NVUE_HEADER)
    names = {"interface": "local_port", "remote host": "device", "remote port": "port_id"}
    drafts, warnings, total, _ = read_column_table(lines, header, names)
    return Result("nvue", "table", [d.build() for d in drafts], warnings, total)


def parse_nclu_table(lines: list[str]) -> Result:
    """Cumulus NCLU `net show lldp`: LocalPort, Speed, Mode, RemoteHost, RemotePort."""
    header = header_index(lines, NCLU_HEADER)
    names = {"localport": "local_port", "remotehost": "device", "remoteport": "port_id"}
    drafts, warnings, total, _ = read_column_table(lines, header, names)
    return Result("nvue", "table", [d.build() for d in drafts], warnings, total)


def parse_nvue_neighbor_table(lines: list[str]) -> Result:
    """NVUE `nv show interface X lldp neighbor`: Neighbor, Remote IP, Model, SW Version, Remote
    Port; the local port is only on the command line."""
    header = header_index(lines, NVUE_NEIGHBOR_HEADER)
    local, _ = _nv_command(lines, "`nv show interface <port> lldp neighbor`")
    names = {"neighbor": "device", "remote ip": "management_address", "remote port": "port_id"}
    drafts, warnings, total, _ = read_column_table(lines, header, names, {"local_port": local})
    return Result("nvue", "table", [d.build() for d in drafts], warnings, total)


def _nv_command(lines: list[str], what: str) -> tuple[str, str | None]:
    """(local port, neighbor id) from the `nv show interface X lldp ...` command line."""
    for line in lines:
        match = NV_COMMAND.search(line)
        if match:
            return match.group(1), match.group(2)
    raise ParseError(LLDP_KIND, None, f"{what} does not print the local port; include the "
                                      "`nv show interface <port> lldp ...` command line")


def parse_nvue_interface(lines: list[str]) -> Result:
    """`nv show interface X lldp` (`[neighbor] name` rows) and `nv show interface X lldp neighbor
    NAME` (an indented key/value tree)."""
    local, neighbor_id = _nv_command(lines, "`nv show interface <port> lldp`")
    brief = [(i, m.group(1)) for i, line in enumerate(lines) if (m := NV_BRIEF.match(line))]
    if brief:
        neighbors = [Neighbor(local_port=local, device=value_of(name), port_id=None)
                     for _, name in brief]
        return Result("nvue", "table", neighbors)
    values: dict[str, str | None] = {}
    parent = ""
    for line in lines:
        match = re.match(r"^( *)(\S+)(?:\s+(\S.*?))?\s*$", line)
        if match is None or DASHES.match(line):
            continue
        indent, key, value = len(match.group(1)), match.group(2), match.group(3)
        if indent == 0:
            parent = key
            continue
        name = _NV_TREE_FIELDS.get((parent, key))
        if name is not None and indent == 2 and name not in values:
            values[name] = value_of(value)
    draft = Draft(local_port=local, line=1, device=values.get("device") or neighbor_id,
                  chassis_id=values.get("chassis_id"), port_id=values.get("port_id"),
                  port_id_subtype=values.get("port_id_subtype"),
                  port_description=values.get("port_description"),
                  management_address=values.get("management_address"),
                  ttl=first_int(values.get("ttl")))
    return Result("nvue", "detail", [draft.build()])
