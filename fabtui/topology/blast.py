"""Blast radius: if this component fails, who loses how much bandwidth.

A component is named as an on-call engineer would: a switch (`leaf-g00-r3`, `spine-01`), a node
(`node017`), a NIC port (`node017:mlx5_3`), a switch port (`leaf-g00-r3:Ethernet8`, which is an
uplink when it faces a spine), an optic id, or a link id. Failing it takes down a set of cables and
maybe switches; the answer lists, for every node, rank and rail that loses anything:

- **injection**: the fraction of its NIC bandwidth into the fabric that is gone (a dead NIC or leaf
  takes all of that NIC's share);
- **cross-leaf**: the fraction of its bandwidth to nodes behind *other* leaves that is gone, which
  also shrinks when the leaf loses uplinks (a dead spine or uplink).

Failing a spine-to-super-spine link reduces cross-pod capacity; that is reported as a note.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from fabtui.model.element import device_of, split_key
from fabtui.model.topology import Role
from fabtui.topology.graph import Attachment, FabricGraph, LinkRef
from fabtui.topology.pairing import gpu_map


class UnknownComponent(LookupError):
    """The name given matches nothing in the topology."""


@dataclass
class Component:
    """A resolved component: what it is and which cables and switches fail with it."""

    name: str
    kind: str
    links: set[int] = field(default_factory=set)
    switches: set[str] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)


class NodeImpact(BaseModel):
    """What one node loses."""

    model_config = ConfigDict(frozen=True)

    node: str
    nics_down: list[str]
    injection_lost: float
    cross_leaf_lost: float


class RankImpact(BaseModel):
    """What one rank loses (ranks placed as the graph's rank map says)."""

    model_config = ConfigDict(frozen=True)

    rank: int
    node: str
    gpu: int
    rails: list[int]
    injection_lost: float
    cross_leaf_lost: float


class RailImpact(BaseModel):
    """What one rail (in one plane) loses, as a fraction of that rail's capacity."""

    model_config = ConfigDict(frozen=True)

    rail: int
    plane: str | None
    nodes_affected: int
    injection_lost: float
    uplink_lost: float


class BlastRadius(BaseModel):
    """The answer to `fabtui topo blast COMPONENT`."""

    model_config = ConfigDict(frozen=True)

    component: str
    kind: str
    links_down: list[LinkRef]
    switches_down: list[str]
    nodes: list[NodeImpact]
    ranks: list[RankImpact]
    rails: list[RailImpact]
    notes: list[str]


def resolve(graph: FabricGraph, name: str) -> Component:
    """Find the component `name` refers to. Raises `UnknownComponent` with suggestions."""
    name = name.strip()
    topo = graph.topology
    if name in graph.switches:
        switch = graph.switches[name]
        return Component(name, switch.role.value, set(graph.switch_links(name)), {name})
    if name in graph.nodes:
        node = graph.nodes[name]
        links = {a.link_index for nic in node.nics
                 if (a := graph.attachments.get((name, nic.name))) is not None}
        return Component(name, "node", links, nodes={name})
    if ":" in name:
        device, port = split_key(name)
        if device in graph.nodes:
            nic = graph.find_nic(device, port)
            if nic is None:
                nic_names = ", ".join(n.name for n in graph.nodes[device].nics) or "none"
                raise UnknownComponent(f"{device} has no NIC {port!r} (NICs: {nic_names})")
            attachment = graph.attachments.get((device, nic.name))
            links = {attachment.link_index} if attachment else set()
            return Component(f"{device}:{nic.name}", "nic", links)
        if device in graph.switches:
            index = graph.port_links.get(name)
            if index is None:
                raise UnknownComponent(f"nothing is cabled to {name}")
            far = graph.far_end(name)
            far_device = device_of(far) if far else ""
            up = far_device in graph.switches and graph.tier(far_device) > graph.tier(device)
            return Component(name, "uplink" if up else "switch-port", {index})
    if name in graph.optics:
        return Component(name, "optic", {graph.optics[name]})
    if name in graph.link_ids:
        return Component(name, "link", {graph.link_ids[name]})
    candidates = [*graph.switches, *graph.nodes, *graph.optics, *graph.link_ids]
    close = difflib.get_close_matches(name, candidates, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownComponent(
        f"no component {name!r} in {topo.cluster.name}: name a switch, a node, a NIC port "
        f"(node:mlx5_0), a switch port (leaf:port), an optic id or a link id{hint}")


def blast_radius(graph: FabricGraph, name: str) -> BlastRadius:
    """What fails, and who loses what, when component `name` goes down."""
    component = resolve(graph, name)
    links = graph.topology.links
    dead_links = set(component.links)
    dead_switches = set(component.switches)

    def link_alive(index: int) -> bool:
        if index in dead_links:
            return False
        return not any(device_of(end) in dead_switches
                       for end in (links[index].a, links[index].b))

    # Leaves whose uplink capacity changes, and NICs whose own cable is gone.
    touched_leaves: set[str] = set()
    for index in dead_links:
        for end in (links[index].a, links[index].b):
            device = device_of(end)
            if device in graph.switches and graph.switches[device].role is Role.LEAF:
                touched_leaves.add(device)
    affected: dict[tuple[str, str], Attachment] = {}
    for leaf in touched_leaves:
        for attachment in graph.hosts_behind(leaf):
            affected[(attachment.node.hostname, attachment.nic.name)] = attachment
    for host in component.nodes:
        for nic in graph.nodes[host].nics:
            if (own := graph.attachments.get((host, nic.name))) is not None:
                affected[(host, nic.name)] = own

    uplink_fraction = {leaf: _uplink_remaining(graph, leaf, link_alive) for leaf in touched_leaves}

    def nic_state(host: str, nic_name: str) -> tuple[float, float]:
        """(injection remaining, cross-leaf remaining) of one NIC, as fractions of its speed."""
        attachment = graph.attachments.get((host, nic_name))
        if attachment is None:
            return 0.0, 0.0
        key = (host, nic_name)
        if key in affected and (host in component.nodes or not link_alive(attachment.link_index)):
            return 0.0, 0.0
        return 1.0, uplink_fraction.get(attachment.switch, 1.0)

    node_impacts: list[NodeImpact] = []
    rank_impacts: list[RankImpact] = []
    rail_loss: dict[tuple[int, str | None], list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for host in sorted({key[0] for key in affected}, key=_natural):
        node = graph.nodes[host]
        states = {nic.name: nic_state(host, nic.name) for nic in node.nics}
        total = sum(nic.speed for nic in node.nics) or 1
        inj = sum(nic.speed * states[nic.name][0] for nic in node.nics)
        cross = sum(nic.speed * states[nic.name][1] for nic in node.nics)
        down = [nic.name for nic in node.nics if states[nic.name][0] == 0.0
                and (host, nic.name) in affected]
        injection_lost, cross_lost = 1 - inj / total, 1 - cross / total
        if injection_lost <= 0 and cross_lost <= 0:
            continue
        node_impacts.append(NodeImpact(node=host, nics_down=down,
                                       injection_lost=round(injection_lost, 4),
                                       cross_leaf_lost=round(cross_lost, 4)))
        for nic in node.nics:
            lost_inj = 1 - states[nic.name][0]
            if lost_inj > 0 or states[nic.name][1] < 1:
                entry = rail_loss[(nic.rail, nic.plane)]
                entry[0] += nic.speed * lost_inj
                entry[2] += 1
        mapping = gpu_map(node)
        for slot in graph.ranks_by_node.get(host, []):
            mine = [nic for nic in node.nics if slot.gpu in mapping[nic.name]]
            speed = sum(nic.speed for nic in mine) or 1
            r_inj = 1 - sum(nic.speed * states[nic.name][0] for nic in mine) / speed
            r_cross = 1 - sum(nic.speed * states[nic.name][1] for nic in mine) / speed
            if r_inj > 0 or r_cross > 0:
                rank_impacts.append(RankImpact(rank=slot.rank, node=host, gpu=slot.gpu,
                                               rails=sorted({n.rail for n in mine}),
                                               injection_lost=round(r_inj, 4),
                                               cross_leaf_lost=round(r_cross, 4)))

    capacity = graph.rail_capacity
    for leaf in touched_leaves:
        switch = graph.switches[leaf]
        ups = graph.uplinks(leaf)
        lost = sum(graph.link_speed(i) for i in ups if not link_alive(i))
        for rail in switch.rail:
            rail_loss[(rail, switch.plane)][1] += lost / max(len(switch.rail), 1)
    rails = []
    by_plane_then_rail = sorted(rail_loss.items(), key=lambda kv: (kv[0][1] or "", kv[0][0]))
    for (rail, plane), (inj_lost, up_lost, count) in by_plane_then_rail:
        inj_cap, up_cap = capacity.get((rail, plane), (0, 0))
        if inj_lost <= 0 and up_lost <= 0:
            continue
        rails.append(RailImpact(rail=rail, plane=plane, nodes_affected=int(count),
                                injection_lost=round(inj_lost / inj_cap, 4) if inj_cap else 0.0,
                                uplink_lost=round(up_lost / up_cap, 4) if up_cap else 0.0))

    notes = _notes(graph, component)
    links_down = [graph.link_ref(i) for i in sorted(dead_links)]
    return BlastRadius(component=component.name, kind=component.kind, links_down=links_down,
                       switches_down=sorted(dead_switches), nodes=node_impacts,
                       ranks=rank_impacts, rails=rails, notes=notes)


def _uplink_remaining(graph: FabricGraph, leaf: str, alive: Callable[[int], bool]) -> float:
    ups = graph.uplinks(leaf)
    total = sum(graph.link_speed(i) for i in ups)
    if not total:
        return 1.0
    return sum(graph.link_speed(i) for i in ups if alive(i)) / total


def _notes(graph: FabricGraph, component: Component) -> list[str]:
    notes = []
    for switch in sorted(component.switches):
        if graph.switches[switch].role is not Role.LEAF:
            below = [s for s in graph.switch_adjacency[switch]
                     if graph.tier(s) < graph.tier(switch)]
            notes.append(f"{len(set(below))} switches below {switch} lose their links to it; "
                         "ECMP spreads their traffic over the remaining paths")
    for index in component.links:
        link = graph.topology.links[index]
        ends = [device_of(e) for e in (link.a, link.b)]
        if all(e in graph.switches for e in ends) and \
                min(graph.tier(e) for e in ends) >= Role.SPINE.tier:
            notes.append(f"{link.label}: cross-pod capacity through "
                         f"{min(ends, key=graph.tier)} is reduced")
    if component.kind in ("nic", "optic", "link", "switch-port") and not component.links:
        notes.append("this NIC has no cable in the topology, so nothing more is lost")
    return notes


def _natural(text: str) -> tuple[object, ...]:
    """Sort `node2` before `node10`."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))
