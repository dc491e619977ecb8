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
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator

from fabtui.model.parsed.ibnetdiscover import IbLink, IbLinkEnd, IbnetdiscoverOutput, IbNode
from fabtui.model.table import Table, left
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import KeptLines, Streamed, row_defaults, with_rows
from fabtui.parsers.text import clean_line_stream, clean_lines, split_lines

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


_END_FIELDS = ("type", "lid", "port", "guid", "name", "node_id")
_LINK = row_defaults(IbLink)
_Block = tuple[str, int | None, str | None, str | None, str | None]
"""A node block as its links see it: type, LID, GUID, name, node id."""


def _end(type_: str | None, lid: int | None, port: int | None, guid: str | None,
         name: str | None, node_id: str | None = None) -> dict[str, object]:
    """A link end as `IbLinkEnd.model_dump(mode="json")` writes it."""
    return {"type": type_, "lid": lid, "port": port, "guid": guid, "name": name,
            "node_id": node_id}


def _link(local: dict[str, object], remote: dict[str, object] | None, width: str | None,
          speed: str | None, number: int) -> dict[str, object]:
    """A link as `IbLink.model_dump(mode="json")` writes it, not yet flagged or paired."""
    return {**_LINK, "local": local, "remote": remote, "width": width, "speed": speed,
            "line": number}


def _ports_link(line: str, number: int) -> dict[str, object] | None:
    """The link of a `-p` line, or None when it is not one."""
    match = _P_LINK.match(line)
    if match:
        g = match.groups()
        return _link(_end(g[0], int(g[1]), int(g[2]), g[3], g[10]),
                     _end(g[6], int(g[7]), int(g[8]), g[9], g[11]), g[4], g[5], number)
    match = _P_PORT.match(line)
    if match:
        g = match.groups()
        return _link(_end(g[0], int(g[1]), int(g[2]), g[3], g[6]), None, g[4], g[5], number)
    return None


def _topology_link(line: str, number: int, block: _Block) -> dict[str, object] | None:
    """The link of a `[port](guid) "peer-id"[port](guid) # ... lid N 4xEDR` line of `block`."""
    match = _T_LINK.match(line)
    if not match:
        return None
    kind, block_lid, guid, name, node_id = block
    comment = _T_COMMENT.match((match.group(6) or "").strip())
    local_lid = int(comment.group(1)) if comment and comment.group(1) else block_lid
    local = _end(kind, local_lid, int(match.group(1)), match.group(2) or guid, name, node_id)
    peer_id = match.group(3)
    remote = _end(_TYPES.get(peer_id[:1].lower()), int(comment.group(3)) if comment else None,
                  int(match.group(4)), match.group(5) or peer_id[2:],
                  comment.group(2) if comment else None, peer_id)
    return _link(local, remote, comment.group(4) if comment else None,
                 comment.group(5) if comment else None, number)


def _end_key(end: dict[str, object]) -> tuple[str, object]:
    """What pairs an end with its mirror: LID (or name) and port."""
    lid, name = end["lid"], end["name"]
    return (str(lid) if lid is not None else name or "", end["port"])  # type: ignore[return-value]


class _Reader:
    """State while reading: the current node block, nodes so far, and of the links only their
    lines (re-read when written) and what flagging and pairing need.

    A big fabric prints hundreds of thousands of links: a model per link cost ~25x its text.
    """

    def __init__(self) -> None:
        self.kept = KeptLines()
        self.blocks: list[_Block] = []
        self.block_of = array("q")  # per kept line: its node block's index; -1 for a `-p` line
        self.reverse_of = array("q")  # per kept line: the index of its mirror; -1 for none
        self.seen: dict[tuple[tuple[str, object], tuple[str, object]], int] = {}
        self.pairs: Counter[tuple[str | None, str | None]] = Counter()  # (width, speed)
        self.connected: Counter[tuple[str | None, str | None]] = Counter()
        self.nodes: dict[tuple[str, str], IbNode] = {}
        self.block: IbNode | None = None
        self.block_lid: int | None = None
        self.attrs: dict[str, str] = {}
        self.format: str | None = None

    def node(self, end: dict[str, object]) -> IbNode:
        """The node an end belongs to (created on first sight)."""
        kind = end["type"] or "CA"
        key = (kind, end["name"] or end["node_id"] or end["guid"] or f"lid {end['lid']}")
        found = self.nodes.get(key)  # type: ignore[arg-type]
        if found is None:
            found = IbNode.model_validate({"type": kind, **{name: end[name] for name in
                                                            ("name", "guid", "lid", "node_id")}})
            self.nodes[key] = found  # type: ignore[index]
        return found

    def add(self, link: dict[str, object], line: str, block: int) -> None:
        """Record a link (its line, block, mirror, width and speed) and the nodes at its ends."""
        index = len(self.kept)
        self.kept.add(link["line"], line)  # type: ignore[arg-type]
        self.block_of.append(block)
        local, remote = link["local"], link["remote"]
        pair = (link["width"], link["speed"])
        self.pairs[pair] += 1  # type: ignore[index]
        self.node(local)  # type: ignore[arg-type]
        mirror = -1
        if remote is not None:
            self.node(remote)  # type: ignore[arg-type]
            if pair[0]:
                self.connected[pair] += 1  # type: ignore[index]
            there, here = _end_key(remote), _end_key(local)  # type: ignore[arg-type]
            found = self.seen.get((there, here))
            if found is not None:
                mirror = found
            else:
                self.seen.setdefault((here, there), index)
        self.reverse_of.append(mirror)

    def node_line(self, line: str) -> bool:
        """A topology node line (`Switch 36 "S-..." # "desc" ... lid 1`) or a `-l` line."""
        match = _NODE.match(line)
        listed = None if match else _LIST.match(line)
        if listed:
            node = self.node(_end(_TYPES[listed.group(1).lower()], None, None, listed.group(2),
                                  listed.group(6)))
            node.ports, node.devid, node.vendid = (int(listed.group(3)), listed.group(4),
                                                   listed.group(5))
            return True
        if not match:
            return False
        lid = re.search(r"\blid\s+(\d+)", match.group(5) or "")
        declared = (self.attrs.get("switchguid") or self.attrs.get("caguid")
                    or self.attrs.get("rtguid"))
        guid = declared or match.group(3)[2:]
        end = _end(_TYPES[match.group(1).lower()], int(lid.group(1)) if lid else None, None,
                   guid, match.group(4), match.group(3))
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
            node.lid = end["lid"]  # type: ignore[assignment]
        self.block, self.block_lid, self.attrs = node, end["lid"], {}  # type: ignore[assignment]
        self.blocks.append((node.type, self.block_lid, node.guid, node.name, node.node_id))
        return True

    def line(self, line: str, number: int) -> None:
        """Dispatch one line."""
        attr = _ATTR.match(line)
        if attr:
            self.attrs[attr.group(1)] = attr.group(2)
            return
        link = _ports_link(line, number)
        if link is not None:
            self.add(link, line, -1)
            self.format = self.format or "ports"
        elif self.node_line(line):
            self.format = self.format or ("list" if _LIST.match(line) else "topology")
        elif self.block is not None:
            link = _topology_link(line, number, self.blocks[-1])
            if link is not None:
                self.add(link, line, len(self.blocks) - 1)
                self.format = "topology"

    def links(self, width: str | None, speed: str | None) -> Iterator[dict[str, object]]:
        """Every link, re-read from its line, flagged against `width`/`speed` and paired."""
        for index, (number, line) in enumerate(self.kept):
            block = self.block_of[index]
            link = _ports_link(line, number) if block < 0 else \
                _topology_link(line, number, self.blocks[block])
            assert link is not None  # it was read from this very line
            reason = _reason(link["width"], link["speed"], width, speed)  # type: ignore[arg-type]
            if reason:
                link["degraded"], link["degraded_reason"] = True, reason
            mirror = self.reverse_of[index]
            if mirror >= 0:
                link["reverse_of"] = mirror
            yield link


def _rank(speed: str | None) -> int:
    """Speed generation order; unknown (`???`) is -1."""
    text = (speed or "").upper()
    return _SPEEDS.index(text) if text in _SPEEDS else -1


def _lanes(width: str | None) -> int:
    """`4x` -> 4; unknown -> 0."""
    match = re.match(r"(\d+)", width or "")
    return int(match.group(1)) if match else 0


def _reason(link_width: str | None, link_speed: str | None, width: str | None,
            speed: str | None) -> str | None:
    """Why a link of `link_width`/`link_speed` is below the capture's `width`/`speed`, if it is."""
    if width is None and speed is None:  # nothing to compare with: no link has a width
        return None
    reasons = []
    if link_width is not None and _lanes(link_width) < _lanes(width):
        reasons.append(f"width {link_width} below {width}")
    if link_speed is not None and _rank(link_speed) < 0:
        reasons.append(f"speed {link_speed} unknown")
    elif link_speed is not None and _rank(link_speed) < _rank(speed):
        reasons.append(f"speed {link_speed} below {speed}")
    return "; ".join(reasons) or None


def _reference(reader: _Reader) -> tuple[str | None, str | None]:
    """The most common width/speed of connected links (of all links with a width if none is
    connected): the reference links are flagged against."""
    pool = reader.connected or Counter({pair: count for pair, count in reader.pairs.items()
                                        if pair[0]})
    if not pool:
        return None, None
    return pool.most_common(1)[0][0]


def parse(text: str) -> IbnetdiscoverOutput:
    """Parse ibnetdiscover output; raises `ParseError` when neither a link nor a node is found."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[IbnetdiscoverOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way, never holding them); the
    links are re-read from their kept lines when written."""
    reader = _Reader()
    for number, line in enumerate(clean_line_stream(lines), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            reader.line(line, number)
    if not len(reader.kept) and not reader.nodes:
        raise ParseError(KIND, None, "no ibnetdiscover port line, node line or link found")
    width, speed = _reference(reader)
    degraded = sum(count for (link_width, link_speed), count in reader.pairs.items()
                   if _reason(link_width, link_speed, width, speed))
    nodes = list(reader.nodes.values())
    head = IbnetdiscoverOutput(
        format=reader.format or "topology", links=[],
        switches=[n for n in nodes if n.type == "SW"], cas=[n for n in nodes if n.type == "CA"],
        routers=[n for n in nodes if n.type == "RT"], expected_width=width,
        expected_speed=speed, degraded_links=degraded)
    return with_rows(head, "links", IbLink, lambda: reader.links(width, speed))


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
