"""The `rail-optimized` generator: a whole fabric from a dozen numbers.

Nobody types 8,192 links. A rail-optimized Clos is regular: nodes come in groups (scalable units) of
`nodes_per_leaf`; in each group NIC r of every node lands on the rail-r leaf; every leaf spreads
`uplinks_per_leaf` uplinks round-robin over the spines of its pod; pods (if more than one) meet at
the super-spines. Multi-plane fabrics repeat the network once per plane, each NIC port in its plane.

The generator is deterministic: the same parameters always give the same names, ports, PCI addresses
and optic ids, so generated files diff cleanly and the simulated fabric is reproducible.
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabtui.model.topology import (
    Cluster,
    CredentialRef,
    FabricKind,
    Flavor,
    Gpu,
    Link,
    Name,
    Nic,
    Node,
    Plane,
    Role,
    Speed,
    Switch,
    Topology,
)
from fabtui.topology.pairing import rail_of_gpu
from fabtui.topology.platform import platform_of

GENERATORS = ("rail-optimized",)
MAX_GPUS = 262_144


class RailOptimizedParams(BaseModel):
    """Parameters of the rail-optimized generator. Every one has a range; see docs/topology.md."""

    model_config = ConfigDict(extra="forbid")

    name: Name = "fabric"
    description: str = ""
    fabric: FabricKind = FabricKind.ROCE
    nodes: int = Field(ge=1, le=32_768)
    gpus_per_node: int = Field(8, ge=0, le=32)
    rails: int = Field(8, ge=0, le=32)
    """Scale-out NICs per node in each plane; NIC r is on rail r."""
    planes: int = Field(1, ge=1, le=8)
    nodes_per_leaf: int = Field(32, ge=1, le=1024)
    """Nodes in a group (scalable unit): they share one leaf per rail."""
    rails_per_leaf: int = Field(1, ge=1, le=32)
    """Rails one leaf carries; small clusters put every rail on one switch."""
    spines: int = Field(0, ge=0, le=8192)
    """Spines per pod and plane."""
    uplinks_per_leaf: int = Field(0, ge=0, le=1024)
    pods: int = Field(1, ge=1, le=512)
    super_spines: int = Field(0, ge=0, le=8192)
    uplinks_per_spine: int = Field(0, ge=0, le=1024)
    host_speed: Speed = 400
    uplink_speed: Speed = 400
    host_mtu: int | None = Field(None, ge=576, le=65535)
    """Default: 9000 on RoCE/Ethernet, 4096 on InfiniBand."""
    switch_mtu: int | None = Field(None, ge=576, le=65535)
    """Default: 9216 on RoCE/Ethernet, 4096 on InfiniBand."""
    max_oversubscription: float = Field(1.0, ge=1.0, le=64.0)
    leaf_flavor: Flavor = Flavor.SONIC
    spine_flavor: Flavor | None = None
    credentials: CredentialRef | None = None
    gpu_model: str = "H100-SXM5-80GB"
    nic_model: str = "ConnectX-7"
    node_model: str | None = None
    switch_model: str | None = None
    numa_nodes: int = Field(2, ge=1, le=16)
    nvlink_domain_nodes: int = Field(0, ge=0, le=1024)
    """Nodes per multi-node NVLink domain, in node order (18 for a GB200/GB300 NVL72 rack of
    4-GPU trays); 0: each node's NVLink stays inside it (HGX)."""
    hostname_prefix: Name = "node"
    mgmt_network: str = "10.0.0.0/16"
    """Switch management addresses are handed out from this network in name order."""
    optics: bool = True
    """Give every link an optic id (for optic replacement and DOM tracking)."""

    @model_validator(mode="after")
    def _default_spine_layer(self) -> RailOptimizedParams:
        """More than one group of leaves and no spine layer asked for: give the fabric the
        non-blocking one a rail-optimized Clos has (one uplink per host port, one per spine),
        instead of groups that cannot reach each other. Named values are never changed."""
        named = self.model_fields_set & {"spines", "uplinks_per_leaf", "pods", "super_spines"}
        if named or self.nodes <= self.nodes_per_leaf or not self.rails:
            return self
        self.uplinks_per_leaf = min(self.nodes_per_leaf * self.rails_per_leaf, 1024)
        self.spines = self.uplinks_per_leaf
        return self


def check_params(params: RailOptimizedParams) -> list[tuple[str, str]]:
    """Cross-parameter rules; each problem is `(parameter, message)` so it can be located."""
    problems: list[tuple[str, str]] = []
    if params.rails and params.rails % params.rails_per_leaf:
        problems.append(("rails_per_leaf", f"must divide rails ({params.rails})"))
    if params.uplinks_per_leaf and not params.spines:
        problems.append(("spines", "uplinks_per_leaf > 0 needs at least one spine"))
    if params.spines and not params.uplinks_per_leaf:
        problems.append(("uplinks_per_leaf", "spines need uplinks: set uplinks_per_leaf > 0"))
    if params.uplinks_per_leaf and params.spines > params.uplinks_per_leaf:
        problems.append(("spines", f"{params.spines} spines but only {params.uplinks_per_leaf} "
                                   "uplinks per leaf: some spines would be unreachable"))
    if params.pods > 1 and not params.super_spines:
        problems.append(("pods", "more than one pod needs super_spines to join the pods"))
    if params.super_spines and not params.uplinks_per_spine:
        problems.append(("uplinks_per_spine", "super_spines need uplinks_per_spine > 0"))
    if params.super_spines and not params.spines:
        problems.append(("super_spines", "super-spines need spines below them"))
    if params.nodes * params.gpus_per_node > MAX_GPUS:
        problems.append(("nodes", f"{params.nodes * params.gpus_per_node} GPUs is over the "
                                  f"supported {MAX_GPUS}"))
    groups = math.ceil(params.nodes / params.nodes_per_leaf)
    if params.pods > groups:
        problems.append(("pods", f"{params.pods} pods but only {groups} groups of nodes"))
    try:
        network = ipaddress.ip_network(params.mgmt_network, strict=False)
    except ValueError:
        problems.append(("mgmt_network", f"{params.mgmt_network!r} is not a network such as "
                                         "10.0.0.0/16"))
    else:
        needed = _switch_count(params) + 10
        if network.num_addresses < needed:
            problems.append(("mgmt_network", f"too small for {needed - 10} switches"))
    return problems


def _switch_count(params: RailOptimizedParams) -> int:
    groups = math.ceil(params.nodes / params.nodes_per_leaf)
    leaves = groups * (params.rails // params.rails_per_leaf if params.rails else 0) * params.planes
    spines = params.spines * params.pods * params.planes
    return leaves + spines + params.super_spines * params.planes


# HGX-class GPU bus numbers (8-GPU baseboards); NICs sit on the bus just below their GPU's.
_HGX_GPU_BUS = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)
# A Grace compute tray (GB200/GB300: 2 Grace CPUs, 4 GPUs, 4 ConnectX-7): each device in a PCI
# domain of its own CPU, as `nvidia-smi` and `lspci` print them on such trays.
_GRACE_GPU_DOMAIN = (0x0008, 0x0009, 0x0018, 0x0019)
_GRACE_NIC_DOMAIN = (0x0000, 0x0002, 0x0010, 0x0012)


def _gpu_bus(index: int, count: int) -> int:
    if count <= len(_HGX_GPU_BUS):
        return _HGX_GPU_BUS[index]
    return 0x10 + index * (0xE0 // count)


def port_name(flavor: Flavor, index: int, fabric: FabricKind) -> str:
    """The name switch OS `flavor` gives its `index`-th front-panel port (0-based)."""
    if flavor is Flavor.SONIC:
        return f"Ethernet{index * 8}"
    if flavor is Flavor.NVUE:
        return f"swp{index + 1}"
    if flavor is Flavor.EOS:
        return f"Ethernet{index + 1}/1"
    if flavor is Flavor.ONYX:
        return f"IB1/{index + 1}" if fabric is FabricKind.INFINIBAND else f"Eth1/{index + 1}"
    if flavor is Flavor.NXOS:
        return f"Ethernet1/{index + 1}"
    return f"eth{index}"


class _Builder:
    """Accumulates the entities of one generated fabric."""

    def __init__(self, params: RailOptimizedParams) -> None:
        self.p = params
        self.infiniband = params.fabric is FabricKind.INFINIBAND
        self.host_mtu = params.host_mtu or (4096 if self.infiniband else 9000)
        self.switch_mtu = params.switch_mtu or (4096 if self.infiniband else 9216)
        self.spine_flavor = params.spine_flavor or params.leaf_flavor
        self.groups = math.ceil(params.nodes / params.nodes_per_leaf)
        self.groups_per_pod = math.ceil(self.groups / params.pods)
        self.leaves_per_group = params.rails // params.rails_per_leaf if params.rails else 0
        self.nodes: list[Node] = []
        self.switches: list[dict[str, Any]] = []
        self.links: list[Link] = []
        self.next_port: dict[str, int] = {}
        self.width = max(3, len(str(params.nodes)))
        self.gwidth = max(2, len(str(self.groups - 1)))

    # names ---------------------------------------------------------------------------------
    def hostname(self, n: int) -> str:
        return f"{self.p.hostname_prefix}{n + 1:0{self.width}d}"

    def plane_suffix(self, plane: int) -> str:
        return f"-p{plane}" if self.p.planes > 1 else ""

    def leaf_name(self, group: int, leaf: int, plane: int) -> str:
        if self.p.rails_per_leaf == 1:
            return f"leaf-g{group:0{self.gwidth}d}-r{leaf}{self.plane_suffix(plane)}"
        return f"leaf-g{group:0{self.gwidth}d}-{leaf}{self.plane_suffix(plane)}"

    def spine_name(self, pod: int, spine: int, plane: int) -> str:
        pod_part = f"pod{pod}-" if self.p.pods > 1 else ""
        return f"spine-{pod_part}{spine + 1:02d}{self.plane_suffix(plane)}"

    def super_name(self, index: int, plane: int) -> str:
        return f"superspine-{index + 1:02d}{self.plane_suffix(plane)}"

    # building ------------------------------------------------------------------------------
    def take_port(self, switch: str, flavor: Flavor) -> str:
        index = self.next_port.get(switch, 0)
        self.next_port[switch] = index + 1
        return port_name(flavor, index, self.p.fabric)

    def link(self, a: str, b: str, speed: int) -> None:
        optic = f"MT24{len(self.links) + 1:06d}" if self.p.optics else None
        self.links.append(Link(a=a, b=b, speed=speed, optic=optic))

    def add_switch(self, name: str, role: Role, flavor: Flavor, **extra: Any) -> None:
        self.switches.append({"name": name, "role": role, "flavor": flavor,
                              "mtu": self.switch_mtu, "credentials": self.p.credentials,
                              "model": self.p.switch_model, **extra})

    def build_node(self, n: int) -> Node:
        p = self.p
        all_rails = list(range(p.rails))
        more_rails = p.rails > p.gpus_per_node

        def pex(gpu: int) -> str:
            # GPUs that share a NIC share its PCIe switch; with more NICs than GPUs, the NICs of a
            # GPU sit under that GPU's switch.
            rail = rail_of_gpu(gpu, p.gpus_per_node, all_rails)
            return f"pex{gpu if more_rails or rail is None else rail}"

        platform = platform_of(p.gpu_model)
        # On Grace parts the GPU reaches its CPU over NVLink-C2C and the NIC hangs off the CPU's
        # PCIe: no PCIe switch joins them (their `topo -m` relation is NODE).
        grace = platform is not None and platform.grace
        tray = grace and p.gpus_per_node == len(_GRACE_GPU_DOMAIN) == p.rails and p.planes == 1
        gpus = []
        for i in range(p.gpus_per_node):
            bus = _gpu_bus(i, p.gpus_per_node)
            pci = f"{_GRACE_GPU_DOMAIN[i]:04x}:01:00.0" if tray else f"0000:{bus:02x}:00.0"
            gpus.append(Gpu(index=i, pci=pci, numa=i * p.numa_nodes // p.gpus_per_node,
                            model=p.gpu_model, pcie_switch=None if grace else pex(i)))
        nics = []
        for rail in range(p.rails):
            paired = [g for g in range(p.gpus_per_node)
                      if rail_of_gpu(g, p.gpus_per_node, all_rails) == rail]
            anchor: int | None
            if paired or not p.gpus_per_node:
                anchor = paired[0] if paired else None
                slot = 0
            else:  # more rails than GPUs: the NIC sits beside the GPU it serves
                anchor = rail * p.gpus_per_node // p.rails
                slot = rail - next(r for r in all_rails
                                   if r * p.gpus_per_node // p.rails == anchor)
            numa: int | None
            if anchor is None:
                bus, numa, switch = 0x20 + 2 * rail, rail * p.numa_nodes // p.rails, None
            else:
                bus = _gpu_bus(anchor, p.gpus_per_node) - 1 - slot
                numa, switch = gpus[anchor].numa, None if grace else pex(anchor)
            domain = _GRACE_NIC_DOMAIN[rail] if tray else 0
            bus = 0x03 if tray else bus
            for plane in range(p.planes):
                index = rail * p.planes + plane
                suffix = f"f{plane}" if p.planes > 1 else ""
                where = f"P{domain}p{bus}" if tray else f"p{bus}"
                if self.infiniband:
                    netdev = f"ib{where}s0{suffix}"
                else:
                    netdev = f"en{where}s0{suffix or 'f0'}np{plane}"
                ip = None if self.infiniband else \
                    f"10.{200 + index}.{n // 250}.{n % 250 + 1}"
                nics.append(Nic(name=f"mlx5_{index}", netdev=netdev, ip=ip,
                                pci=f"{domain:04x}:{bus:02x}:00.{plane}", numa=numa, rail=rail,
                                plane=f"plane{plane}" if p.planes > 1 else None,
                                speed=p.host_speed, mtu=self.host_mtu, pcie_switch=switch,
                                model=p.nic_model))
        domain_name = f"nvl-{n // p.nvlink_domain_nodes:02d}" if p.nvlink_domain_nodes else None
        return Node(hostname=self.hostname(n), model=p.node_model, gpus=tuple(gpus),
                    nics=tuple(nics), nvlink_domain=domain_name,
                    rack=f"rack-{n // p.nvlink_domain_nodes:02d}" if domain_name else None)

    def build(self) -> Topology:
        p = self.p
        self.nodes = [self.build_node(n) for n in range(p.nodes)]
        for plane in range(p.planes):
            self.build_plane(plane)
        planes = tuple(Plane(name=f"plane{i}") for i in range(p.planes)) if p.planes > 1 else ()
        network = ipaddress.ip_network(p.mgmt_network, strict=False)
        switches = []
        for offset, spec in enumerate(self.switches):
            if spec["role"] is Role.LEAF and p.uplink_speed != p.host_speed and p.uplinks_per_leaf:
                first_up = p.nodes_per_leaf * p.rails_per_leaf
                spec["ports"] = {port_name(spec["flavor"], first_up + u, p.fabric):
                                 {"speed": p.uplink_speed} for u in range(p.uplinks_per_leaf)}
            switches.append(Switch.model_validate(
                {k: v for k, v in spec.items() if v is not None}
                | {"mgmt": str(network.network_address + 10 + offset)}))
        cluster = Cluster(name=p.name, description=p.description, fabric=p.fabric,
                          max_oversubscription=p.max_oversubscription)
        return Topology(cluster=cluster, planes=planes, nodes=tuple(self.nodes),
                        switches=tuple(switches), links=tuple(self.links))

    def build_plane(self, plane: int) -> None:
        p = self.p
        plane_name = f"plane{plane}" if p.planes > 1 else None
        leaf_speed = p.host_speed
        # Leaves and host links, group by group.
        for group in range(self.groups):
            for leaf in range(self.leaves_per_group):
                name = self.leaf_name(group, leaf, plane)
                rails = list(range(leaf * p.rails_per_leaf, (leaf + 1) * p.rails_per_leaf))
                self.add_switch(name, Role.LEAF, p.leaf_flavor, rail=rails, group=group,
                                plane=plane_name, port_speed=leaf_speed)
                first = group * p.nodes_per_leaf
                for n in range(first, min(first + p.nodes_per_leaf, p.nodes)):
                    node = self.nodes[n]
                    for rail in rails:
                        nic = node.nics[rail * p.planes + plane]
                        port_index = (n - first) * p.rails_per_leaf + (rail - rails[0])
                        port = port_name(p.leaf_flavor, port_index, p.fabric)
                        self.link(f"{node.hostname}:{nic.name}", f"{name}:{port}", p.host_speed)
                self.next_port[name] = p.nodes_per_leaf * p.rails_per_leaf
        # Spines per pod, leaf uplinks round-robin over them.
        for pod in range(p.pods if p.spines else 0):
            spines = [self.spine_name(pod, s, plane) for s in range(p.spines)]
            for s in spines:
                self.add_switch(s, Role.SPINE, self.spine_flavor, plane=plane_name,
                                port_speed=p.uplink_speed)
            pod_groups = range(pod * self.groups_per_pod,
                               min((pod + 1) * self.groups_per_pod, self.groups))
            for group in pod_groups:
                for leaf in range(self.leaves_per_group):
                    name = self.leaf_name(group, leaf, plane)
                    for u in range(p.uplinks_per_leaf):
                        spine = spines[u % len(spines)]
                        self.link(f"{name}:{self.take_port(name, p.leaf_flavor)}",
                                  f"{spine}:{self.take_port(spine, self.spine_flavor)}",
                                  p.uplink_speed)
        # Super-spines join the pods.
        if p.super_spines:
            supers = [self.super_name(i, plane) for i in range(p.super_spines)]
            for s in supers:
                self.add_switch(s, Role.SUPER_SPINE, self.spine_flavor, plane=plane_name,
                                port_speed=p.uplink_speed)
            for pod in range(p.pods):
                for spine_index in range(p.spines):
                    spine = self.spine_name(pod, spine_index, plane)
                    for u in range(p.uplinks_per_spine):
                        sup = supers[u % len(supers)]
                        self.link(f"{spine}:{self.take_port(spine, self.spine_flavor)}",
                                  f"{sup}:{self.take_port(sup, self.spine_flavor)}",
                                  p.uplink_speed)


def rail_optimized(params: RailOptimizedParams) -> Topology:
    """Generate the explicit topology `params` describe. Call `check_params` first."""
    return _Builder(params).build()
