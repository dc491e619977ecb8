"""`FabricGraph`: the topology as something to ask questions of.

The switch fabric (leaves, spines, super-spines and the cables between them) is a multigraph,
one edge per cable, so parallel uplinks stay distinct ECMP members: plain adjacency dictionaries
answer the lookups, and the networkx view (`switch_graph`, for path search) is built on first use,
so commands that only count and look up (`topo show`, bare `fabtui`) never import networkx.
Hosts hang off it through their NIC attachments, kept in dictionaries: a NIC has one cable, and
keeping hosts out of the path search means no route can ever run through a server.

Questions the rest of the product asks: where a rank runs (node, GPU, NIC, rail, leaf port, spines),
what is at the far end of a NIC or a switch port, and which links a switch or node owns. Routing
and blast radius build on these (`routes.py`, `blast.py`).
"""

from __future__ import annotations

from collections import defaultdict
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel, ConfigDict

from fabtui.gcpause import gc_paused
from fabtui.model.element import split_key
from fabtui.model.topology import Link, Nic, Node, Role, Switch, Topology
from fabtui.topology.pairing import gpu_map, nics_of_gpu
from fabtui.topology.ranks import RankSlot, default_ranks

if TYPE_CHECKING:
    import networkx as nx


class Attachment(NamedTuple):
    """A NIC and the switch port its cable lands on."""

    node: Node
    nic: Nic
    link_index: int
    switch: str
    port: str


class LinkRef(BaseModel):
    """A cable as reports show it: both ends, speed and the optic carrying it."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    speed: int
    optic: str | None = None
    id: str | None = None

    def __str__(self) -> str:
        optic = f" (optic {self.optic})" if self.optic else ""
        return f"{self.a} <-> {self.b}{optic}"


class NicPlacement(BaseModel):
    """One NIC a rank sends through, and where its cable goes."""

    model_config = ConfigDict(frozen=True)

    nic: str
    netdev: str | None
    rail: int
    plane: str | None
    speed: int
    leaf: str | None
    leaf_port: str | None
    optic: str | None
    spines: list[str]
    """Spines reachable from the leaf (its uplink neighbours)."""


class RankPlacement(BaseModel):
    """Everything about where a rank runs, from GPU to spine."""

    model_config = ConfigDict(frozen=True)

    rank: int
    node: str
    gpu: int
    gpu_pci: str | None
    numa: int | None
    nics: list[NicPlacement]

    @property
    def rails(self) -> list[int]:
        """Rails of the NICs this rank uses."""
        return sorted({n.rail for n in self.nics})


class UnknownRank(LookupError):
    """A rank number outside the job's placement."""


class FabricGraph:
    """Indexes and a switch multigraph over one `Topology` (read-only once built)."""

    def __init__(self, topology: Topology, ranks: list[RankSlot] | None = None) -> None:
        self.topology = topology
        self.nodes: dict[str, Node] = {}
        for node in topology.nodes:
            self.nodes.setdefault(node.hostname, node)
        self.switches: dict[str, Switch] = {}
        for switch in topology.switches:
            self.switches.setdefault(switch.name, switch)
        self._ranks = ranks

        self.switch_adjacency: dict[str, dict[str, list[int]]] = {s: {} for s in self.switches}
        """Switch -> cabled switch -> link indexes, both directions sharing one list (in the
        order networkx would keep them, so its view and these lookups agree)."""
        self.switch_edges: list[tuple[str, str, int]] = []
        """Every switch-to-switch cable as (a end's switch, b end's switch, link index)."""
        self.attachments: dict[tuple[str, str], Attachment] = {}
        """(hostname, NIC name) -> where its cable lands."""
        self.port_links: dict[str, int] = {}
        """`device:port` -> index of the link plugged in there (the first, if doubly used)."""
        self.host_links: dict[str, list[int]] = defaultdict(list)
        """Switch -> links to hosts (downlinks of a leaf)."""
        self.dangling: list[int] = []
        """Links with an end that names no known device or NIC."""
        self.host_to_host: list[int] = []
        """Links joining two NICs directly."""
        self._nic_index: dict[tuple[str, str], Nic] = {}
        for node in self.nodes.values():
            for nic in node.nics:
                self._nic_index.setdefault((node.hostname, nic.name), nic)
                if nic.netdev:
                    self._nic_index.setdefault((node.hostname, nic.netdev), nic)
        with gc_paused():
            self._build_links(topology.links)

    # construction -----------------------------------------------------------------------------
    def _build_links(self, links: tuple[Link, ...]) -> None:
        edges: list[tuple[str, str, int]] = []
        nic_index = self._nic_index
        switches = self.switches
        port_links = self.port_links
        for index, link in enumerate(links):
            a_dev, _, a_port = link.a.partition(":")
            b_dev, _, b_port = link.b.partition(":")
            port_links.setdefault(link.a, index)
            port_links.setdefault(link.b, index)
            # A known NIC wins over a switch of the same name (a duplicate-name finding).
            a_nic = nic_index.get((a_dev, a_port))
            b_nic = nic_index.get((b_dev, b_port))
            a_switch = a_nic is None and a_dev in switches
            b_switch = b_nic is None and b_dev in switches
            if (not a_switch and a_nic is None) or (not b_switch and b_nic is None):
                self.dangling.append(index)
            elif not a_switch and not b_switch:
                self.host_to_host.append(index)
            elif a_switch and b_switch:
                edges.append((a_dev, b_dev, index))
            elif a_switch or b_switch:
                host, nic, switch, port = (b_dev, b_nic, a_dev, a_port) if a_switch else \
                    (a_dev, a_nic, b_dev, b_port)
                assert nic is not None
                key = (host, nic.name)
                port_links.setdefault(f"{host}:{nic.name}", index)
                if key not in self.attachments:
                    self.attachments[key] = Attachment(self.nodes[host], nic, index, switch, port)
                    self.host_links[switch].append(index)
        adjacency = self.switch_adjacency
        for u, v, link_index in edges:
            keys = adjacency[u].get(v)
            if keys is None:
                keys = adjacency[u][v] = adjacency[v][u] = []
            keys.append(link_index)
        self.switch_edges = edges

    @cached_property
    def switch_graph(self) -> nx.MultiGraph:
        """The switch fabric as a networkx multigraph (edge key = link index), for path search."""
        import networkx as nx

        graph = nx.MultiGraph()
        graph.add_nodes_from(self.switches)
        graph.add_edges_from(self.switch_edges)
        return graph

    def switch_edges_once(self) -> list[tuple[str, str, int]]:
        """Every switch cable once, as `switch_graph.edges(keys=True)` lists them."""
        seen: set[str] = set()
        result: list[tuple[str, str, int]] = []
        for switch, neighbours in self.switch_adjacency.items():
            for other, keys in neighbours.items():
                if other not in seen:
                    result.extend((switch, other, key) for key in keys)
            seen.add(switch)
        return result

    def _cabled(self, switch: str) -> list[tuple[str, int]]:
        """(switch at the far end, link index) for each cable of `switch` to a switch."""
        return [(other, key) for other, keys in self.switch_adjacency[switch].items()
                for key in keys]

    # lookups ----------------------------------------------------------------------------------
    @cached_property
    def optics(self) -> dict[str, int]:
        """Optic id -> link index."""
        return {link.optic: i for i, link in enumerate(self.topology.links) if link.optic}

    @cached_property
    def nic_ips(self) -> dict[str, tuple[str, str]]:
        """NIC IP -> (hostname, NIC name): the IPv4-mapped RoCE GIDs of an NCCL completion error
        (`localGid`, `remoteGids`) name the NICs of the failed path by it."""
        return {nic.ip: (node.hostname, nic.name) for node in self.nodes.values()
                for nic in node.nics if nic.ip}

    @cached_property
    def link_ids(self) -> dict[str, int]:
        """Explicit link id -> link index."""
        return {link.id: i for i, link in enumerate(self.topology.links) if link.id}

    def link_speed(self, index: int) -> int:
        """Speed of link `index` in Gb/s: as cabled, else as the switch port is configured."""
        link = self.topology.links[index]
        if link.speed:
            return link.speed
        for end in (link.a, link.b):
            device, port = split_key(end)
            if device in self.switches:
                speed = self.switches[device].port_speed_of(port)
                if speed:
                    return speed
            elif (nic := self.find_nic(device, port)) is not None:
                return nic.speed
        return 0

    def link_ref(self, index: int) -> LinkRef:
        """Link `index` as reports show it."""
        link = self.topology.links[index]
        return LinkRef(a=link.a, b=link.b, speed=self.link_speed(index), optic=link.optic,
                       id=link.id)

    @cached_property
    def rail_capacity(self) -> dict[tuple[int, str | None], tuple[int, int]]:
        """(rail, plane) -> (host NIC capacity, capacity of that rail's leaf uplinks), in Gb/s.

        A leaf shared by several rails counts its uplinks to each rail in equal shares.
        """
        injection: dict[tuple[int, str | None], int] = defaultdict(int)
        for attachment in self.attachments.values():
            injection[(attachment.nic.rail, attachment.nic.plane)] += attachment.nic.speed
        uplink: dict[tuple[int, str | None], float] = defaultdict(float)
        for switch in self.switches.values():
            if switch.role is Role.LEAF and switch.rail:
                up = sum(self.link_speed(i) for i in self.uplinks(switch.name))
                for rail in switch.rail:
                    uplink[(rail, switch.plane)] += up / len(switch.rail)
        return {key: (injection.get(key, 0), int(uplink.get(key, 0)))
                for key in set(injection) | set(uplink)}

    def tier(self, switch: str) -> int:
        """1 leaf, 2 spine, 3 super-spine."""
        return self.switches[switch].role.tier

    def uplinks(self, switch: str) -> list[int]:
        """Links from `switch` to switches of a higher tier."""
        mine = self.tier(switch)
        return [key for other, key in self._cabled(switch) if self.tier(other) > mine]

    def downlinks(self, switch: str) -> list[int]:
        """Links from `switch` to switches of a lower tier."""
        mine = self.tier(switch)
        return [key for other, key in self._cabled(switch) if self.tier(other) < mine]

    def switch_links(self, switch: str) -> list[int]:
        """Every link of `switch`, to hosts and to switches."""
        return [key for _, key in self._cabled(switch)] + \
            self.host_links.get(switch, [])

    def neighbours_above(self, switch: str) -> list[str]:
        """Switches of a higher tier cabled to `switch`, in name order."""
        mine = self.tier(switch)
        return sorted({o for o in self.switch_adjacency[switch] if self.tier(o) > mine})

    def far_end(self, endpoint: str) -> str | None:
        """The `device:port` at the other end of the cable plugged into `endpoint`."""
        device, port = split_key(endpoint)
        nic = self.find_nic(device, port)
        if nic is not None:
            endpoint = f"{device}:{nic.name}"
        index = self.port_links.get(endpoint)
        if index is None:
            return None
        link = self.topology.links[index]
        if endpoint == link.a:
            return link.b
        if endpoint == link.b:
            return link.a
        # The link was written with the NIC's netdev; compare on the normalised name.
        return link.b if self._normalise(link.a) == endpoint else link.a

    def find_nic(self, hostname: str, name: str) -> Nic | None:
        """The NIC of `hostname` called `name` (RDMA device or netdev name), if any."""
        return self._nic_index.get((hostname, name))

    def _normalise(self, endpoint: str) -> str:
        device, port = split_key(endpoint)
        nic = self.find_nic(device, port)
        return f"{device}:{nic.name}" if nic is not None else endpoint

    def attachment_of(self, endpoint: str) -> Attachment | None:
        """Where the NIC at `endpoint` (`node:mlx5_3`, or its netdev `node:eth3`) is cabled."""
        device, port = split_key(endpoint)
        nic = self.find_nic(device, port)
        return self.attachments.get((device, nic.name)) if nic is not None else None

    def link_at(self, endpoint: str) -> int | None:
        """The index of the link plugged into `endpoint` (a NIC, by either name, or a switch
        port), if any."""
        index = self.port_links.get(self._normalise(endpoint))
        if index is None:
            attachment = self.attachment_of(endpoint)
            index = attachment.link_index if attachment is not None else None
        return index

    def optic_at(self, endpoint: str) -> str | None:
        """The optic recorded on the link plugged into `endpoint` (a NIC or a port), if any."""
        index = self.link_at(endpoint)
        return self.topology.links[index].optic if index is not None else None

    def nics_of_gpu(self, hostname: str, gpu_index: int) -> tuple[Nic, ...]:
        """The NICs GPU `gpu_index` of `hostname` sends through, in the node's NIC order (none
        for an unknown node)."""
        node = self.nodes.get(hostname)
        return nics_of_gpu(node, gpu_index) if node is not None else ()

    def hosts_behind(self, leaf: str) -> list[Attachment]:
        """NIC attachments cabled to `leaf`, in link order."""
        by_link = {a.link_index: a for a in self._attachments_by_switch.get(leaf, [])}
        return [by_link[i] for i in self.host_links.get(leaf, []) if i in by_link]

    @cached_property
    def _attachments_by_switch(self) -> dict[str, list[Attachment]]:
        result: dict[str, list[Attachment]] = defaultdict(list)
        for attachment in self.attachments.values():
            result[attachment.switch].append(attachment)
        return result

    # ranks ------------------------------------------------------------------------------------
    @cached_property
    def ranks(self) -> list[RankSlot]:
        """The job's rank placement: the rank file given, or 8-per-node order."""
        return self._ranks if self._ranks is not None else default_ranks(self.topology)

    def placement(self, rank: int) -> RankPlacement:
        """Where `rank` runs. Raises `UnknownRank` if the job has no such rank."""
        if not 0 <= rank < len(self.ranks):
            raise UnknownRank(f"rank {rank} is outside the job: ranks are 0-{len(self.ranks) - 1}")
        slot = self.ranks[rank]
        node = self.nodes[slot.node]
        gpu = next((g for g in node.gpus if g.index == slot.gpu), None)
        mapping = gpu_map(node)
        nics = []
        for nic in node.nics:
            if slot.gpu not in mapping[nic.name]:
                continue
            attachment = self.attachments.get((node.hostname, nic.name))
            leaf = attachment.switch if attachment else None
            link = self.topology.links[attachment.link_index] if attachment else None
            nics.append(NicPlacement(
                nic=nic.name, netdev=nic.netdev, rail=nic.rail, plane=nic.plane, speed=nic.speed,
                leaf=leaf, leaf_port=attachment.port if attachment else None,
                optic=link.optic if link else None,
                spines=self.neighbours_above(leaf) if leaf else []))
        return RankPlacement(rank=rank, node=node.hostname, gpu=slot.gpu,
                             gpu_pci=gpu.pci if gpu else None, numa=gpu.numa if gpu else None,
                             nics=nics)

    @cached_property
    def ranks_by_node(self) -> dict[str, list[RankSlot]]:
        """Node -> the ranks it runs."""
        result: dict[str, list[RankSlot]] = defaultdict(list)
        for slot in self.ranks:
            result[slot.node].append(slot)
        return result
