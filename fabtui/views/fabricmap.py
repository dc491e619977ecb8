"""`FabricMap`: the fabric as the live view lays it out, keyed the way probe results name things.

A live view asks the same few questions many times a second: which element a metric's component
names (`node006:mlx5_4`, `leaf-g00-r4:Ethernet40/lane2`, `node001:GPU3`), which elements roll up
into a node, a leaf or a host link, which layer an element counts in, and where an element is
drawn. They are answered here once, from the `FabricGraph`, so no screen holds topology logic.

A node's cell on a rail stands for its NICs on that rail, one per plane (a two-plane fabric's
ConnectX-8 has two ports on each rail); a multi-plane fabric draws one row of leaves per group
and plane (`g00 p0`, `g00 p1`) above the group's nodes.

Element keys are the topology's own names: a node (`node001`), a GPU (`node001:gpu3`), a NIC
(`node001:mlx5_3`), a switch (`leaf-g00-r3`), a switch port (`leaf-g00-r3:Ethernet24`), an optic
(its id in the topology), and a cable (`link:<index>`, shown as both ends: host links and spine
links).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from fabtui.gcpause import gc_paused
from fabtui.model.element import ElementRef, Kind
from fabtui.model.topology import Role
from fabtui.topology.graph import FabricGraph
from fabtui.topology.pairing import gpu_map

SET = "set:"
"""Prefix of a key that stands for many elements (see `FabricMap.set_members`)."""


class Layer(StrEnum):
    """The layers problems are counted in, bottom up (the header's order)."""

    GPUS = "GPUs"
    NICS = "NICs"
    HOST_LINKS = "host links"
    LEAVES = "leaves"
    SPINE_LINKS = "spine links"
    SPINES = "spines"


LAYER_OF = {Kind.GPU: Layer.GPUS, Kind.NIC: Layer.NICS, Kind.HOST_LINK: Layer.HOST_LINKS,
            Kind.LEAF: Layer.LEAVES, Kind.SPINE_LINK: Layer.SPINE_LINKS, Kind.SPINE: Layer.SPINES}
"""Kinds counted as a layer; nodes, ports and optics roll up into the layers above."""


@dataclass(frozen=True)
class HostCell:
    """One NIC's attachment on its rail: the NIC, its GPU(s), its cable, leaf port and optic
    (drawn in its node's cell on that rail, with the node's NICs of the other planes)."""

    node: str
    rail: int
    nic: str
    gpus: tuple[str, ...]
    link: str | None
    port: str | None
    leaf: str | None
    optic: str | None
    plane: str | None = None


@dataclass
class FabricMap:
    """The layout and indexes of one fabric (read-only once built; see the module docstring)."""

    name: str
    rails: list[int]
    nodes: list[str]
    spines: list[str]
    groups: list[tuple[str, dict[int, str]]]
    """(group label, rail -> leaf) in group order: one row of leaves per group, or per group
    and plane in a multi-plane fabric (`g00 p0`, `g00 p1`: the rows of one block of nodes
    are next to each other, see `row_block`)."""
    cells: dict[tuple[str, int], tuple[HostCell, ...]]
    """(node, rail) -> the node's NICs on that rail, one per plane in plane order (one in a
    single-plane fabric): what the node's cell on that rail stands for."""
    kinds: dict[str, Kind]
    members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Roll-up element -> the elements whose health it shows (a node: its NICs and GPUs; a host
    link: its NIC, port and optic; a switch: its ports; a spine link: both ends' ports)."""
    labels: dict[str, str] = field(default_factory=dict)
    """Element -> how it reads (a cable shows both ends)."""
    group_nodes: dict[str, list[str]] = field(default_factory=dict)
    leaf_uplinks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Leaf -> its spine links (`link:<i>`)."""
    job_nodes: list[str] = field(default_factory=list)
    """Nodes the job's ranks run on (the rank placement)."""
    super_spines: list[str] = field(default_factory=list)
    """The tier above the spines (multi-pod fabrics); `spines` holds the spines only."""
    leaf_groups: dict[str, str] = field(default_factory=dict)
    """Leaf -> the label of the group whose row of leaves it is drawn in (`g00`, `g00 p1`, or a
    plane's name: as long as a topology makes it, so a view that cuts it can say it whole)."""
    row_block: dict[str, str] = field(default_factory=dict)
    """Group label -> the key in `group_nodes` of the nodes drawn under its row of leaves
    (itself, but for a plane's row of leaves whose nodes are drawn under the first plane's)."""
    _optic_of_port: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, graph: FabricGraph) -> FabricMap:
        """The map of `graph`'s fabric.

        Built with the cyclic GC paused: a 1,024-node fabric is ~150k keys, tuples and cells,
        none in a cycle, and the collections they would trigger rescan the whole heap (half the
        build's time in a bare process, four fifths in a test worker's larger one).
        """
        with gc_paused():
            return cls._build(graph)

    @classmethod
    def _build(cls, graph: FabricGraph) -> FabricMap:
        topology = graph.topology
        kinds: dict[str, Kind] = {}
        members: dict[str, list[str]] = defaultdict(list)
        labels: dict[str, str] = {}
        optic_of_port: dict[str, str] = {}
        rails = sorted({nic.rail for node in graph.nodes.values() for nic in node.nics})
        plane_order = _plane_order(graph)
        cells: dict[tuple[str, int], tuple[HostCell, ...]] = {}
        shared: list[tuple[str, int]] = []  # cells of several NICs (one per plane)
        for hostname, node in graph.nodes.items():
            kinds[hostname] = Kind.NODE
            pairing = gpu_map(node)
            for gpu in node.gpus:
                key = str(ElementRef.gpu(hostname, gpu.index))
                kinds[key] = Kind.GPU
                members[hostname].append(key)
            for nic in node.nics:
                nic_key = f"{hostname}:{nic.name}"
                kinds[nic_key] = Kind.NIC
                members[hostname].append(nic_key)
                attachment = graph.attachments.get((hostname, nic.name))
                link = port = leaf = optic = None
                if attachment is not None:
                    link = str(ElementRef.link(attachment.link_index))
                    leaf, port = attachment.switch, f"{attachment.switch}:{attachment.port}"
                    optic = topology.links[attachment.link_index].optic
                    kinds[link], kinds[port] = Kind.HOST_LINK, Kind.PORT
                    labels[link] = f"{nic_key} <-> {port}"
                    members[link] += [nic_key, port]
                    members[leaf].append(port)
                    if optic:
                        kinds[optic] = Kind.OPTIC
                        members[link].append(optic)
                        optic_of_port[port] = optic
                gpus = tuple(str(ElementRef.gpu(hostname, i)) for i in pairing.get(nic.name, ()))
                cell = HostCell(hostname, nic.rail, nic_key, gpus, link, port, leaf, optic,
                                nic.plane)
                where = (hostname, nic.rail)
                found = cells.get(where)
                if found is None:
                    cells[where] = (cell,)
                else:
                    cells[where] = (*found, cell)
                    shared.append(where)
        for where in shared:  # first plane first (stable: one plane's NICs keep their order)
            cells[where] = tuple(sorted(cells[where], key=lambda c: plane_order[c.plane]))
        spines: list[str] = []
        super_spines: list[str] = []
        groups: dict[str, dict[int, str]] = {}
        leaf_planes = {s.plane for s in graph.switches.values() if s.role is Role.LEAF}
        for name, switch in graph.switches.items():
            if switch.role is Role.LEAF:
                kinds[name] = Kind.LEAF
                label = f"g{switch.group:02d}" if switch.group is not None else \
                    (switch.plane or "leaves")
                if switch.group is not None and switch.plane is not None and \
                        len(leaf_planes) > 1:  # a row of leaves per plane, not one for all
                    label += f" p{plane_order[switch.plane]}"
                for rail in switch.rail or (0,):
                    groups.setdefault(label, {}).setdefault(rail, name)
            else:
                kinds[name] = Kind.SPINE
                (super_spines if switch.role is Role.SUPER_SPINE else spines).append(name)
        leaf_uplinks: dict[str, list[str]] = defaultdict(list)
        for a, b, index in graph.switch_edges:
            link_key = str(ElementRef.link(index))
            cable = topology.links[index]
            kinds[link_key] = Kind.SPINE_LINK
            labels[link_key] = f"{cable.a} <-> {cable.b}"
            for switch_name, end in ((a, cable.a), (b, cable.b)):
                kinds[end] = Kind.PORT
                members[link_key].append(end)
                members[switch_name].append(end)
                if kinds.get(switch_name) is Kind.LEAF:
                    leaf_uplinks[switch_name].append(link_key)
            if cable.optic:
                kinds[cable.optic] = Kind.OPTIC
                members[link_key].append(cable.optic)
                optic_of_port.setdefault(cable.a, cable.optic)
                optic_of_port.setdefault(cable.b, cable.optic)
        group_list = sorted(groups.items())
        group_nodes: dict[str, list[str]] = defaultdict(list)
        leaf_group = {leaf: label for label, by_rail in group_list for leaf in by_rail.values()}
        for hostname in graph.nodes:
            label = next((leaf_group[c.leaf] for r in rails for c in cells.get((hostname, r), ())
                          if c.leaf in leaf_group), "")
            group_nodes[label].append(hostname)
        row_block = _row_blocks(group_list, group_nodes, cells, leaf_group)
        first_row: dict[str, int] = {}
        for index, (label, _) in enumerate(group_list):
            first_row.setdefault(row_block[label], index)
        group_list.sort(key=lambda g: first_row[row_block[g[0]]])  # a block's rows together
        job = list(graph.ranks_by_node)
        return cls(name=topology.cluster.name, rails=rails, nodes=list(graph.nodes),
                   spines=spines, groups=group_list, cells=cells, kinds=kinds,
                   members={k: tuple(v) for k, v in members.items()}, labels=labels,
                   group_nodes=dict(group_nodes),
                   leaf_uplinks={k: tuple(v) for k, v in leaf_uplinks.items()},
                   job_nodes=job, super_spines=super_spines, leaf_groups=leaf_group,
                   row_block=row_block, _optic_of_port=optic_of_port)

    # naming -------------------------------------------------------------------------------------
    def element_of(self, component: str) -> tuple[str, str | None]:
        """The element a metric's component names, and the lane it was read on (if any).

        `leaf:Ethernet0/lane2` is port `leaf:Ethernet0`, lane 2; `node001:GPU3` is GPU
        `node001:gpu3` (`ElementRef.parse`); a component the map does not know is returned
        unchanged.
        """
        if "/" not in component and "GPU" not in component:  # no lane, no NVML spelling:
            return component, None                              # already a key (most, at scale)
        ref = ElementRef.parse(component)
        return ref.key, None if ref.lane is None else str(ref.lane)

    def ref(self, text: str) -> ElementRef:
        """`text` read as an element of this fabric, its kind known when the map has it."""
        ref = ElementRef.parse(text)
        return ElementRef(ref.device, ref.part, ref.lane, self.kinds.get(ref.key))

    def optic_of(self, port: str) -> str | None:
        """The optic in the cable plugged into `port`, if the topology names one."""
        return self._optic_of_port.get(port)

    def label(self, key: str) -> str:
        """How element `key` reads for a person."""
        if key.startswith(SET):
            members = self.set_members(key)
            return f"{key.removeprefix(SET)} ({len(members)})"
        return self.labels.get(key, key)

    # sets: one picture cell standing for many elements (a fabric too big to draw one by one)
    def set_members(self, key: str) -> tuple[str, ...]:
        """The elements set `key` stands for (empty when it names none):
        `set:spines:A-B` / `set:super-spines:A-B` (1-based, inclusive), `set:leaves:rN` (every
        leaf of rail N), `set:uplinks:rN` (their spine links)."""
        _, _, rest = key.partition(SET)
        what, _, which = rest.partition(":")
        if what in ("spines", "super-spines"):
            first, _, last = which.partition("-")
            if not (first.isdigit() and last.isdigit()):
                return ()
            tier = self.spines if what == "spines" else self.super_spines
            return tuple(tier[int(first) - 1:int(last)])
        if what in ("leaves", "uplinks") and which[1:].isdigit():
            rail = int(which[1:])
            leaves = [by_rail[rail] for _, by_rail in self.groups if rail in by_rail]
            if what == "leaves":
                return tuple(leaves)
            return tuple(link for leaf in leaves for link in self.leaf_uplinks.get(leaf, ()))
        return ()

    def layer_members(self) -> dict[Layer, list[str]]:
        """Layer -> its elements, for problem counts."""
        result: dict[Layer, list[str]] = {layer: [] for layer in Layer}
        for key, kind in self.kinds.items():
            layer = LAYER_OF.get(kind)
            if layer is not None:
                result[layer].append(key)
        return result

    def find(self, text: str) -> list[str]:
        """Elements whose key or label contain `text` (exact matches first), for `/`."""
        text = text.strip()
        if not text:
            return []
        if text in self.kinds:
            return [text]
        lowered = text.lower()
        return [k for k in self.kinds if lowered in k.lower() or lowered in self.label(k).lower()]

    def attachments(self) -> Iterator[HostCell]:
        """Every NIC's attachment, node by node and rail by rail, every plane's."""
        return (cell for attached in self.cells.values() for cell in attached)

    def cell_of(self, key: str) -> HostCell | None:
        """The attachment an element is drawn in (its NIC, GPU, cable, port or optic's): in
        its node's cell on its rail (`node@rail`), whatever its plane."""
        for cell in self._cells_by_element().get(key, ()):
            return cell
        return None

    def _cells_by_element(self) -> dict[str, list[HostCell]]:
        cached: dict[str, list[HostCell]] | None = getattr(self, "_by_element", None)
        if cached is None:
            cached = defaultdict(list)
            for cell in self.attachments():
                for key in (cell.nic, *cell.gpus, cell.link, cell.port, cell.optic):
                    if key is not None:
                        cached[key].append(cell)
            self._by_element = cached
        return cached


def _plane_order(graph: FabricGraph) -> dict[str | None, int]:
    """Plane -> its index (`p0`, `p1`): the topology's `planes` in order, then any other plane
    its NICs or switches name, by name; no plane is -1 (first)."""
    order: dict[str | None, int] = {None: -1}
    for declared in graph.topology.planes:
        order.setdefault(declared.name, len(order) - 1)
    named = {n.plane for node in graph.nodes.values() for n in node.nics} | \
        {s.plane for s in graph.switches.values()}
    for plane in sorted(p for p in named if p is not None):
        order.setdefault(plane, len(order) - 1)
    return order


def _row_blocks(groups: list[tuple[str, dict[int, str]]], group_nodes: dict[str, list[str]],
                cells: dict[tuple[str, int], tuple[HostCell, ...]],
                leaf_group: dict[str, str]) -> dict[str, str]:
    """Group label -> the group whose nodes are drawn under its row of leaves: its own when
    some node is drawn under it; else the one most of the nodes cabled to its leaves are
    drawn under (a second plane's leaves serve the nodes drawn under the first plane's); else
    its own (leaves no node is cabled to)."""
    if all(label in group_nodes for label, _ in groups):  # every row has its nodes
        return {label: label for label, _ in groups}
    drawn_under = {node: label for label, nodes in group_nodes.items() for node in nodes}
    cabled: dict[str, Counter[str]] = defaultdict(Counter)
    for (node, _), attached in cells.items():
        for cell in attached:
            row = leaf_group.get(cell.leaf or "")
            if row is not None and row not in group_nodes:
                cabled[row][drawn_under[node]] += 1
    return {label: cabled[label].most_common(1)[0][0] if cabled.get(label) else label
            for label, _ in groups}


@dataclass(frozen=True)
class ViewFilter:
    """What the fabric screen shows: some nodes, some rails (None: all)."""

    text: str = ""
    nodes: frozenset[str] | None = None
    rails: frozenset[int] | None = None

    def shows_node(self, node: str) -> bool:
        return self.nodes is None or node in self.nodes

    def shows_rail(self, rail: int) -> bool:
        return self.rails is None or rail in self.rails


class FilterError(ValueError):
    """A filter that names nothing in the fabric (the message says what would)."""


def looks_like_filter(text: str) -> bool:
    """Whether what was typed at `/` is written as a filter (`rail:4`, `leaf:leaf-g00-r4`,
    `job`, a node range or glob) rather than a name to find."""
    text = text.strip()
    return text.startswith(("rail:", "leaf:")) or text in ("job", "job:") or \
        any(c in text for c in "[*?")


def parse_filter(fabric: FabricMap, graph: FabricGraph, text: str) -> ViewFilter:
    """A filter from what a user typed: `rail:N`, `leaf:NAME`, a node range or glob
    (`node[001-004]`, `node00*`), `job` (the job's nodes), or empty (everything).

    Raises `FilterError` when it matches nothing.
    """
    from fabtui.probes.targets import TargetError, resolve_set

    text = text.strip()
    if not text:
        return ViewFilter()
    if text in ("job", "job:"):
        if not fabric.job_nodes:
            raise FilterError("no job placement: the rank file places no ranks")
        return ViewFilter(text, frozenset(fabric.job_nodes), None)
    kind: Literal["nic", "node"] = "nic" if text.startswith(("rail:", "leaf:")) else "node"
    try:
        targets = resolve_set(graph, text, kind)
    except TargetError as exc:
        raise FilterError(str(exc)) from None
    nodes = frozenset(t.node.hostname for t in targets if t.node is not None)
    if kind == "node":
        return ViewFilter(text, nodes, None)
    rails = frozenset(t.nic.rail for t in targets if t.nic is not None)
    return ViewFilter(text, nodes, rails)


def visible_nodes(fabric: FabricMap, view: ViewFilter) -> Iterable[str]:
    """The nodes a filter shows, in fabric order."""
    return (n for n in fabric.nodes if view.shows_node(n))


def host_cells(fabric: FabricMap, key: str) -> tuple[HostCell, ...]:
    """What host cell `key` (`node@rail`) stands for: the node's NICs on the rail, one per
    plane (empty when `key` is no host cell)."""
    node, sep, rail = key.rpartition("@")
    return fabric.cells.get((node, int(rail)), ()) if sep and rail.isdigit() else ()


def selection_elements(fabric: FabricMap, key: str, focus: str | None = None,
                       rank: Callable[[str], int] | None = None) -> list[str]:
    """The elements a selection stands for: a host cell (`node@rail`) is its cable, NIC,
    GPU(s), leaf port and optic, plane by plane (the plane whose cable, else NIC, `rank`s
    highest first: the worst, for a face that passes its health's rank); `uplinks:LEAF` is
    the leaf's spine links; a set (`set:...`) its members; anything else is itself. `focus`
    (an element found by name) comes first."""
    if key.startswith("uplinks:"):
        found = list(fabric.leaf_uplinks.get(key.removeprefix("uplinks:"), ()))
    elif key.startswith(SET):
        found = list(fabric.set_members(key))
    elif attached := host_cells(fabric, key):
        if rank is not None and len(attached) > 1:
            attached = tuple(sorted(attached, key=lambda c: -rank(c.link or c.nic)))
        # a GPU both of a NIC's planes serve is named once
        found = list(dict.fromkeys(k for c in attached
                                   for k in (c.link, c.nic, *c.gpus, c.port, c.optic) if k))
    else:
        found = [key]
    if focus in found:
        found.remove(focus)
        found.insert(0, focus)
    return found


def identity(fabric: FabricMap, graph: FabricGraph, key: str) -> list[tuple[str, str]]:
    """What element `key` is in the topology, as (field, value) lines for a detail panel."""
    kind = fabric.kinds.get(key)
    lines: list[tuple[str, str]] = [("element", fabric.label(key)),
                                    ("kind", kind.value if kind else "?")]
    ref = ElementRef.parse(key)
    device, part = ref.device, ref.part
    if kind is Kind.NODE and (node := graph.nodes.get(key)):
        lines += [("model", node.model or "-"), ("rack", node.rack or "-"),
                  ("GPUs", str(len(node.gpus))), ("NICs", str(len(node.nics)))]
    elif kind is Kind.NIC and (nic := graph.find_nic(device, part)):
        attachment = graph.attachments.get((device, nic.name))
        lines += [("netdev", nic.netdev or "-"), ("rail", str(nic.rail)),
                  ("speed", f"{nic.speed}G"), ("pci", str(nic.pci))]
        if nic.plane is not None:
            lines.append(("plane", nic.plane))
        if attachment is not None:
            lines.append(("leaf port", f"{attachment.switch}:{attachment.port}"))
    elif kind in (Kind.LEAF, Kind.SPINE) and (switch := graph.switches.get(key)):
        lines += [("role", switch.role.value), ("flavor", switch.flavor.value),
                  ("rails", ",".join(map(str, switch.rail)) or "-"),
                  ("ports", str(len(fabric.members.get(key, ()))))]
        if switch.plane is not None:
            lines.append(("plane", switch.plane))
        if key in fabric.leaf_groups:  # whole: the matrix's row label may be cut to fit
            lines.append(("group", fabric.leaf_groups[key]))
    elif kind in (Kind.HOST_LINK, Kind.SPINE_LINK):
        link = graph.link_ref(ref.link_index or 0)
        lines += [("speed", f"{link.speed}G"), ("optic", link.optic or "-")]
    elif kind is Kind.PORT:
        lines.append(("far end", graph.far_end(key) or "-"))
    elif kind is Kind.GPU:
        lines.append(("node", device))
    return lines
