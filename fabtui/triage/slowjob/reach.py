"""What a job can touch, joined once: rank -> node -> GPU -> NIC -> rail -> leaf port -> leaf ->
uplink -> spine port, by element key.

The walk asks this join, never the topology directly: which rail a port belongs to (to compare
it with its sibling rails), which ports are a leaf's uplinks and which spine ports face them,
which optic a link carries. Built from the `FabricGraph` and its rank placement (the demo's
8-per-node order, a rank file, or Slurm's placement through `topology.jobplace`). No side
effects.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from fabtui.model.element import device_of
from fabtui.topology.graph import FabricGraph, UnknownRank


@dataclass(frozen=True)
class Port:
    """A switch port or NIC end the job's traffic crosses."""

    key: str
    layer: str
    """`nic`, `leaf port` (host-facing or uplink), `spine port`."""
    rail: int | None
    switch: str | None
    """The switch the port is on (None for a NIC)."""
    link: int
    far: str | None
    optic: str | None
    uplink: bool = False
    """A leaf port cabled to a spine."""


@dataclass
class Reach:
    """The join (see the module's docstring)."""

    graph: FabricGraph
    rank_node: dict[int, str] = field(default_factory=dict)
    rank_gpu: dict[int, str] = field(default_factory=dict)
    """Rank -> `node:gpuN`."""
    rank_nics: dict[int, list[str]] = field(default_factory=dict)
    """Rank -> `node:mlx5_N` keys of the NICs it sends through."""
    ports: dict[str, Port] = field(default_factory=dict)
    """Every NIC, leaf port and spine port on the job's path, by key."""
    leaf_rail: dict[str, int] = field(default_factory=dict)
    leaf_ports: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    """Leaf -> its host-facing ports the job uses and its uplinks."""
    spine_ports: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def rails_of(self, ranks: Iterable[int]) -> set[int]:
        """The rails the NICs of `ranks` sit on."""
        return {port.rail for r in ranks for key in self.rank_nics.get(r, [])
                if (port := self.ports.get(key)) is not None and port.rail is not None}

    def on_rail(self, rail: int) -> list[Port]:
        """Every NIC and port of one rail (spine ports by the leaf they face)."""
        return [p for p in self.ports.values() if p.rail == rail]

    def optic_of(self, key: str) -> str | None:
        """The optic recorded on the cable plugged into `key`."""
        port = self.ports.get(key)
        return port.optic if port is not None else self.graph.optic_at(key)


def build_reach(graph: FabricGraph, ranks: Iterable[int] | None = None) -> Reach:
    """The join for `ranks` (default: every rank of the graph's placement)."""
    reach = Reach(graph)
    wanted = list(ranks) if ranks is not None else list(range(len(graph.ranks)))
    links = graph.topology.links
    leaves: set[str] = set()
    for rank in wanted:
        try:
            place = graph.placement(rank)
        except UnknownRank:
            continue
        reach.rank_node[rank] = place.node
        reach.rank_gpu[rank] = f"{place.node}:gpu{place.gpu}"
        keys = []
        for nic in place.nics:
            key = f"{place.node}:{nic.nic}"
            keys.append(key)
            if key in reach.ports or not nic.leaf or not nic.leaf_port:
                continue
            attachment = graph.attachments.get((place.node, nic.nic))
            if attachment is None:
                continue
            port_key = f"{nic.leaf}:{nic.leaf_port}"
            reach.ports[key] = Port(key, "nic", nic.rail, None, attachment.link_index,
                                    port_key, nic.optic)
            reach.ports[port_key] = Port(port_key, "leaf port", nic.rail, nic.leaf,
                                         attachment.link_index, key, nic.optic)
            reach.leaf_ports[nic.leaf].append(port_key)
            leaves.add(nic.leaf)
        reach.rank_nics[rank] = keys
    for leaf in sorted(leaves):
        rails = Counter(p.rail for k in reach.leaf_ports[leaf] if (p := reach.ports[k]).rail
                        is not None)
        rail = rails.most_common(1)[0][0] if rails else None
        if rail is not None:
            reach.leaf_rail[leaf] = rail
        for index in graph.uplinks(leaf):
            link = links[index]
            near, far = (link.a, link.b) if device_of(link.a) == leaf else (link.b, link.a)
            reach.ports[near] = Port(near, "leaf port", rail, leaf, index, far, link.optic,
                                     uplink=True)
            reach.ports[far] = Port(far, "spine port", rail, device_of(far), index, near,
                                    link.optic, uplink=True)
            reach.leaf_ports[leaf].append(near)
            reach.spine_ports[device_of(far)].append(far)
    return reach
