"""`ibnetdiscover [-p | -l]` (infiniband-diags).

`-p` (ports report), one line per port; a port without a peer has no `- ...` part::

    CA  134  1 0x7cfe9003003b4bde 4x EDR - SW 1719 10 0x7cfe9003009ce5b0 ( 'o1 HCA-1' - 'sw1' )
    SW 2052 37 0x506b4b03005c2740 4x ???                                    'ib-i4l1s01'

Default topology file: `vendid=`/`devid=`/`...guid=` lines, a node line, then one line per
connected port::

    Switch  129 "S-9c05..."         # "MF0;...:MQM9700/U1" enhanced port 0 lid 1 lmc 0
    [1]     "H-b83f..."[1](b83f...)         # "node005 mlx5_2" lid 22 2xNDR
    Ca      2 "H-0002c903000a0d7e"          # "node1 mlx4_0"
    [1](2c903000a0d7f)      "S-0002c903000bf1a0"[1]  # lid 3 lmc 0 "MF0;sw:SX6036/U1" lid 1 4xFDR

`-l`: `Switch : 0x... ports 36 devid 0x... vendid 0x... "name"`. Lines such as `...omitted`
(elisions) and comments are skipped. A link is flagged degraded when its width or speed is below
the capture's most common one (speed `???` counts as unknown, i.e. degraded).
"""

from __future__ import annotations

import re
from collections import Counter

from fabtui.model.parsed.ibnetdiscover import IbLink, IbLinkEnd, IbnetdiscoverOutput, IbNode
from fabtui.model.table import Table, left
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "ibnetdiscover"
MODEL = IbnetdiscoverOutput
DESCRIPTION = "ibnetdiscover [-p|-l]: InfiniBand fabric links and nodes, degraded links"

_END = r"(CA|SW|RT)\s+(\d+)\s+(\d+)\s+(\S+)"
_P_LINK = re.compile(r"^\s*" + _END + r"\s+(\S+)\s+(\S+)\s+-\s+" + _END +
                     r"\s+\(\s*'(.*?)'\s+-\s+'(.*)'\s*\)\s*$")
_P_PORT = re.compile(r"^\s*" + _END + r"\s+(\S+)\s+(\S+)\s+'(.*)'\s*$")
_NODE = re.compile(r'^\s*(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"(.*)"(.*))?$')
_T_LINK = re.compile(r'^\s*\[(\d+)\](?:\[[^\]]*\])*(?:\(([^)]*)\))?\s+"([^"]+)"\[(\d+)\]'
                     r"(?:\[[^\]]*\])*(?:\(([^)]*)\))?\s*(?:#\s*(.*))?$")
_T_COMMENT = re.compile(r'^(?:lid\s+(\d+)\s+lmc\s+\d+\s+)?"(.*)"\s+lid\s+(\d+)\s+(\d+x)(\S+)\s*$',
                        re.I)
_LIST = re.compile(r'^\s*(Switch|Ca|Router)\s*:\s*(\S+)\s+ports\s+(\d+)\s+devid\s+(\S+)\s+'
                   r'vendid\s+(\S+)\s+"(.*)"\s*$')
_ATTR = re.compile(r"^\s*(vendid|devid|sysimgguid|switchguid|caguid|rtguid)\s*=\s*(\S+?)"
                   r"(?:\(.*\))?\s*$")
_TYPES = {"switch": "SW", "ca": "CA", "rt": "RT", "router": "RT", "s": "SW", "h": "CA", "r": "RT"}
_SPEEDS = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR", "GDR")


def detect(text: str) -> float:
    """How sure we are that `text` is ibnetdiscover output (0..1)."""
    lines = clean_lines(text[:40000])
    ports = sum(1 for line in lines if _P_LINK.match(line) or _P_PORT.match(line))
    nodes = sum(1 for line in lines if _NODE.match(line) or _LIST.match(line))
    links = sum(1 for line in lines if _T_LINK.match(line))
    head = "\n".join(lines)
    if ports >= 2 or (ports and _P_LINK.search(head) is not None):
        return 0.95
    if nodes and (links or re.search(r"(?m)^\s*vendid=", head)):
        return 0.95
    if "# Topology file:" in head or nodes >= 2:
        return 0.8
    return 0.0


class _Reader:
    """State while reading: the current node block, links and nodes so far."""

    def __init__(self) -> None:
        self.links: list[IbLink] = []
        self.nodes: dict[tuple[str, str], IbNode] = {}
        self.block: IbNode | None = None
        self.block_lid: int | None = None
        self.attrs: dict[str, str] = {}
        self.format: str | None = None

    def node(self, end: IbLinkEnd) -> IbNode:
        """The node an end belongs to (created on first sight)."""
        kind = end.type or "CA"
        key = (kind, end.name or end.node_id or end.guid or f"lid {end.lid}")
        found = self.nodes.get(key)
        if found is None:
            found = IbNode(type=kind, name=end.name, guid=end.guid, lid=end.lid,
                           node_id=end.node_id)
            self.nodes[key] = found
        return found

    def add(self, link: IbLink) -> None:
        """Record a link and the nodes at its ends."""
        self.links.append(link)
        self.node(link.local)
        if link.remote is not None:
            self.node(link.remote)

    def ports_line(self, line: str, number: int) -> bool:
        """A `-p` line."""
        match = _P_LINK.match(line)
        if match:
            g = match.groups()
            local = IbLinkEnd(type=g[0], lid=int(g[1]), port=int(g[2]), guid=g[3], name=g[10])
            remote = IbLinkEnd(type=g[6], lid=int(g[7]), port=int(g[8]), guid=g[9], name=g[11])
            self.add(IbLink(local=local, remote=remote, width=g[4], speed=g[5], line=number))
            return True
        match = _P_PORT.match(line)
        if match:
            g = match.groups()
            local = IbLinkEnd(type=g[0], lid=int(g[1]), port=int(g[2]), guid=g[3], name=g[6])
            self.add(IbLink(local=local, remote=None, width=g[4], speed=g[5], line=number))
            return True
        return False

    def node_line(self, line: str) -> bool:
        """A topology node line (`Switch 36 "S-..." # "desc" ... lid 1`) or a `-l` line."""
        match = _NODE.match(line)
        listed = None if match else _LIST.match(line)
        if listed:
            end = IbLinkEnd(type=_TYPES[listed.group(1).lower()], guid=listed.group(2),
                            name=listed.group(6))
            node = self.node(end)
            node.ports, node.devid, node.vendid = (int(listed.group(3)), listed.group(4),
                                                   listed.group(5))
            return True
        if not match:
            return False
        lid = re.search(r"\blid\s+(\d+)", match.group(5) or "")
        declared = (self.attrs.get("switchguid") or self.attrs.get("caguid")
                    or self.attrs.get("rtguid"))
        guid = declared or match.group(3)[2:]
        end = IbLinkEnd(type=_TYPES[match.group(1).lower()], name=match.group(4), guid=guid,
                        lid=int(lid.group(1)) if lid else None, node_id=match.group(3))
        node = self.node(end)
        if declared:
            # The node may have been created earlier from a peer's link line (port GUID or id
            # digits); its own block's `switchguid=`/`caguid=` is the node GUID.
            node.guid = declared
        node.ports = int(match.group(2))
        node.vendid = self.attrs.get("vendid")
        node.devid = self.attrs.get("devid")
        node.sysimgguid = self.attrs.get("sysimgguid")
        if node.lid is None:
            node.lid = end.lid
        self.block, self.block_lid, self.attrs = node, end.lid, {}
        return True

    def topology_link(self, line: str, number: int) -> bool:
        """A `[port](guid) "peer-id"[port](guid) # ... lid N 4xEDR` line of a node block."""
        match = _T_LINK.match(line)
        if not match or self.block is None:
            return False
        comment = _T_COMMENT.match((match.group(6) or "").strip())
        local_lid = int(comment.group(1)) if comment and comment.group(1) else self.block_lid
        local = IbLinkEnd(type=self.block.type, lid=local_lid, port=int(match.group(1)),
                          guid=match.group(2) or self.block.guid, name=self.block.name,
                          node_id=self.block.node_id)
        peer_id = match.group(3)
        remote = IbLinkEnd(type=_TYPES.get(peer_id[:1].lower()), port=int(match.group(4)),
                           guid=match.group(5) or peer_id[2:], node_id=peer_id,
                           name=comment.group(2) if comment else None,
                           lid=int(comment.group(3)) if comment else None)
        self.add(IbLink(local=local, remote=remote, width=comment.group(4) if comment else None,
                        speed=comment.group(5) if comment else None, line=number))
        return True

    def line(self, line: str, number: int) -> None:
        """Dispatch one line."""
        attr = _ATTR.match(line)
        if attr:
            self.attrs[attr.group(1)] = attr.group(2)
        elif self.ports_line(line, number):
            self.format = self.format or "ports"
        elif self.node_line(line):
            self.format = self.format or ("list" if _LIST.match(line) else "topology")
        elif self.topology_link(line, number):
            self.format = "topology"


def _rank(speed: str | None) -> int:
    """Speed generation order; unknown (`???`) is -1."""
    text = (speed or "").upper()
    return _SPEEDS.index(text) if text in _SPEEDS else -1


def _lanes(width: str | None) -> int:
    """`4x` -> 4; unknown -> 0."""
    match = re.match(r"(\d+)", width or "")
    return int(match.group(1)) if match else 0


def _flag(links: list[IbLink]) -> tuple[str | None, str | None]:
    """Mark links below the most common width/speed; returns that reference pair."""
    connected = [(k.width, k.speed) for k in links if k.remote is not None and k.width]
    pool = connected or [(k.width, k.speed) for k in links if k.width]
    if not pool:
        return None, None
    width, speed = Counter(pool).most_common(1)[0][0]
    for link in links:
        reasons = []
        if link.width is not None and _lanes(link.width) < _lanes(width):
            reasons.append(f"width {link.width} below {width}")
        if link.speed is not None and _rank(link.speed) < 0:
            reasons.append(f"speed {link.speed} unknown")
        elif link.speed is not None and _rank(link.speed) < _rank(speed):
            reasons.append(f"speed {link.speed} below {speed}")
        if reasons:
            link.degraded, link.degraded_reason = True, "; ".join(reasons)
    return width, speed


def _pair(links: list[IbLink]) -> None:
    """Point each link at its earlier mirror (same two ends, swapped)."""
    def key(end: IbLinkEnd) -> tuple[str, int | None]:
        return (str(end.lid) if end.lid is not None else end.name or "", end.port)

    seen: dict[tuple[tuple[str, int | None], tuple[str, int | None]], int] = {}
    for index, link in enumerate(links):
        if link.remote is None:
            continue
        mirror = seen.get((key(link.remote), key(link.local)))
        if mirror is not None:
            link.reverse_of = mirror
        else:
            seen.setdefault((key(link.local), key(link.remote)), index)


def parse(text: str) -> IbnetdiscoverOutput:
    """Parse ibnetdiscover output; raises `ParseError` when neither a link nor a node is found."""
    reader = _Reader()
    for number, line in enumerate(clean_lines(text), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            reader.line(line, number)
    if not reader.links and not reader.nodes:
        raise ParseError(KIND, None, "no ibnetdiscover port line, node line or link found")
    width, speed = _flag(reader.links)
    _pair(reader.links)
    nodes = list(reader.nodes.values())
    return IbnetdiscoverOutput(
        format=reader.format or "topology", links=reader.links,
        switches=[n for n in nodes if n.type == "SW"], cas=[n for n in nodes if n.type == "CA"],
        routers=[n for n in nodes if n.type == "RT"], expected_width=width,
        expected_speed=speed, degraded_links=sum(1 for link in reader.links if link.degraded))


def tables(result: IbnetdiscoverOutput) -> list[Table]:
    """One row per link line: both ends, width, speed and the degraded flag."""
    def end(e: IbLinkEnd | None) -> str | None:
        if e is None:
            return None
        return f"{e.type or '?'} lid {e.lid if e.lid is not None else '?'} port {e.port} " \
               f"'{e.name or ''}'"

    columns = [left("local", "LOCAL"), left("width", "WIDTH"), left("speed", "SPEED"),
               left("remote", "REMOTE"), left("degraded", "DEGRADED")]
    return [Table.build(columns, [(end(k.local), k.width, k.speed, end(k.remote),
                                   k.degraded_reason) for k in result.links])]
