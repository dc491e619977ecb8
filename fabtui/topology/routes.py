"""Paths between two ranks, including every equal-cost (ECMP) path the fabric offers.

Same node: the GPUs talk over NVLink and the network is not involved. Different nodes: each rank
sends through its rail NIC to its leaf; if both NICs land on the same leaf the path is one switch
hop, otherwise it climbs to the spines (and super-spines) and every shortest switch path, expanded
over parallel cables, is an ECMP member. Multi-plane nodes get one set of paths per plane.
"""

from __future__ import annotations

import itertools
from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.topology.graph import FabricGraph, LinkRef, NicPlacement, RankPlacement

MAX_LISTED_PATHS = 256
"""Paths enumerated per NIC pair; the ECMP width is still counted beyond this."""


class Hop(BaseModel):
    """One device on a path and the ports the traffic enters and leaves by."""

    model_config = ConfigDict(frozen=True)

    device: str
    in_port: str | None = None
    out_port: str | None = None

    def __str__(self) -> str:
        ports = " -> ".join(p for p in (self.in_port, self.out_port) if p)
        return f"{self.device}[{ports}]" if ports else self.device


class Path(BaseModel):
    """One ECMP member: the hops and the cables (by optic id or label) it crosses."""

    model_config = ConfigDict(frozen=True)

    plane: str | None
    hops: list[Hop]
    links: list[LinkRef]
    """The cables crossed, host to host."""


class RouteSet(BaseModel):
    """How traffic from rank `src` reaches rank `dst`."""

    model_config = ConfigDict(frozen=True)

    src: RankPlacement
    dst: RankPlacement
    kind: Literal["same-gpu", "nvlink", "same-leaf", "spine", "unreachable"]
    ecmp_width: int
    """Number of equal-cost paths (over all planes), even when more exist than are listed."""
    paths: list[Path]
    notes: list[str]


def routes(graph: FabricGraph, rank_a: int, rank_b: int) -> RouteSet:
    """Every path between two ranks. Raises `UnknownRank` for a rank outside the job."""
    src, dst = graph.placement(rank_a), graph.placement(rank_b)
    notes: list[str] = []
    if src.node == dst.node:
        kind: Literal["same-gpu", "nvlink"] = "same-gpu" if src.gpu == dst.gpu else "nvlink"
        if kind == "nvlink":
            notes.append(f"both ranks are on {src.node}: traffic stays on NVLink/NVSwitch")
        return RouteSet(src=src, dst=dst, kind=kind, ecmp_width=0, paths=[], notes=notes)

    paths: list[Path] = []
    width = 0
    leaves_same = True
    for a, b in _pairs(src.nics, dst.nics):
        if a.leaf is None or b.leaf is None:
            side = src.node if a.leaf is None else dst.node
            notes.append(f"{side}:{(a if a.leaf is None else b).nic} has no cable to a switch")
            continue
        found, count = _nic_paths(graph, src.node, a, dst.node, b)
        paths.extend(found)
        width += count
        leaves_same = leaves_same and a.leaf == b.leaf
    if not src.nics or not dst.nics:
        notes.append("a rank has no NIC for its GPU: check the node's NICs and rails")
    if width == 0:
        return RouteSet(src=src, dst=dst, kind="unreachable", ecmp_width=0, paths=paths,
                        notes=notes or ["no path between the two leaves"])
    if src.rails != dst.rails:
        notes.append(f"rails differ ({_rails(src)} vs {_rails(dst)}): traffic crosses the spine "
                     "layer, unless NCCL's PXN first moves it over NVLink onto the peer's rail")
    if width > len(paths):
        notes.append(f"{width} equal-cost paths; listing the first {len(paths)}")
    return RouteSet(src=src, dst=dst, kind="same-leaf" if leaves_same else "spine",
                    ecmp_width=width, paths=paths, notes=notes)


def _rails(placement: RankPlacement) -> str:
    return ",".join(str(r) for r in placement.rails) or "none"


def _pairs(a: list[NicPlacement], b: list[NicPlacement]) -> list[tuple[NicPlacement, NicPlacement]]:
    """Pair NICs plane by plane; single-plane nodes give one pair."""
    if not a or not b:
        return []
    pairs = [(x, y) for x in a for y in b if x.plane == y.plane]
    return pairs[: max(len(a), 1)] if pairs else [(a[0], b[0])]


def _nic_paths(graph: FabricGraph, src_node: str, a: NicPlacement, dst_node: str,
               b: NicPlacement) -> tuple[list[Path], int]:
    assert a.leaf is not None and b.leaf is not None and a.leaf_port and b.leaf_port
    first = graph.attachments[(src_node, a.nic)].link_index
    last = graph.attachments[(dst_node, b.nic)].link_index
    start = Hop(device=src_node, out_port=a.nic)
    end = Hop(device=dst_node, in_port=b.nic)
    if a.leaf == b.leaf:
        hop = Hop(device=a.leaf, in_port=a.leaf_port, out_port=b.leaf_port)
        return [Path(plane=a.plane, hops=[start, hop, end],
                     links=[graph.link_ref(first), graph.link_ref(last)])], 1
    import networkx as nx  # only path search needs it: `topo show` never pays for the import

    try:
        switch_paths = list(nx.all_shortest_paths(graph.switch_graph, a.leaf, b.leaf))
    except nx.NetworkXNoPath:
        return [], 0
    paths: list[Path] = []
    width = 0
    for switches in switch_paths:
        choices = [list(graph.switch_adjacency[u][v]) for u, v in itertools.pairwise(switches)]
        count = 1
        for keys in choices:
            count *= len(keys)
        width += count
        for combination in itertools.product(*choices):
            if len(paths) >= MAX_LISTED_PATHS:
                break
            paths.append(_expand(graph, switches, list(combination), start, end, a, b, first,
                                 last))
    return paths, width


def _expand(graph: FabricGraph, switches: list[str], keys: list[int], start: Hop, end: Hop,
            a: NicPlacement, b: NicPlacement, first: int, last: int) -> Path:
    hops = [start]
    for i, switch in enumerate(switches):
        in_port = a.leaf_port if i == 0 else _port(graph, keys[i - 1], switch)
        out_port = b.leaf_port if i == len(switches) - 1 else _port(graph, keys[i], switch)
        hops.append(Hop(device=switch, in_port=in_port, out_port=out_port))
    hops.append(end)
    return Path(plane=a.plane, hops=hops,
                links=[graph.link_ref(i) for i in (first, *keys, last)])


def _port(graph: FabricGraph, link_index: int, switch: str) -> str:
    for end in (graph.topology.links[link_index].a, graph.topology.links[link_index].b):
        device, _, port = end.partition(":")
        if device == switch:
            return port
    return "?"
