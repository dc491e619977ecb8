"""Validation rules over a whole fabric. Each finding names its rule, component and `file:line`.

Rules (ids are stable; scripts and runbooks match on them):

| rule | severity | what it catches |
|---|---|---|
| `duplicate-name` | error | two nodes/switches, NICs or GPUs with one name or index |
| `duplicate-port` | error | two cables plugged into one port |
| `duplicate-address` | error | a management address or PCI address used twice |
| `duplicate-optic` | error | one optic id on two links |
| `dangling-link-end` | error | a link end naming no known switch, node or NIC |
| `rail-symmetry` | error | NIC i not landing on a rail-i leaf of its node's group (or plane) |
| `uplink-symmetry` | warning | a leaf whose uplinks differ from its peers' or are spread unevenly |
| `oversubscription` | warning | a leaf whose downlink:uplink ratio exceeds the design maximum |
| `gpu-nic-affinity` | error | a NIC on another NUMA node / PCIe switch than the GPU it serves |
| `speed-mismatch` | error | a link whose ends (or the link itself) disagree on speed |
| `mtu-mismatch` | error/warning | a host MTU above its switch port's, or switch ends that differ |
| `unconnected-nic` | warning | a scale-out NIC with no cable |
| `host-to-host-link` | warning | two NICs cabled directly to each other |
| `tier-violation` | warning | leaf-to-leaf or spine-to-spine cables |
| `node-shape` | warning | a node with a different GPU or NIC count from most nodes |
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import NamedTuple

from fabtui.gcpause import gc_paused
from fabtui.model.element import device_of, split_key
from fabtui.model.findings import Finding, Severity
from fabtui.model.topology import Link, Node, Role
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import LoadedTopology, Origin
from fabtui.topology.pairing import gpu_map


def validate(loaded: LoadedTopology, graph: FabricGraph | None = None) -> list[Finding]:
    """Run every rule; findings come back in file order, errors before warnings on one line."""
    graph = graph or FabricGraph(loaded.topology)
    checker = _Checker(loaded, graph)
    with gc_paused():
        findings = [f for rule in _RULES for f in rule(checker)]
    return sorted(findings, key=lambda f: (_line_key(f.location), f.severity.rank, f.rule))


def _line_key(location: str | None) -> tuple[str, int]:
    if not location:
        return ("", 0)
    source, _, line = location.rpartition(":")
    return (source, int(line)) if line.isdigit() else (location, 0)


class _Checker:
    """Shared lookups for the rules, and a helper to build findings."""

    def __init__(self, loaded: LoadedTopology, graph: FabricGraph) -> None:
        self.loaded = loaded
        self.topo = loaded.topology
        self.graph = graph
        self.dangling = set(graph.dangling)
        self.node_index: dict[str, int] = {}
        for i, node in enumerate(self.topo.nodes):
            self.node_index.setdefault(node.hostname, i)

    def finding(self, rule: str, severity: Severity, component: str, origin: Origin,
                message: str) -> Finding:
        return Finding(rule=rule, severity=severity, component=component,
                       location=origin.where(), message=message)

    def nic_origin(self, hostname: str, nic_name: str) -> Origin:
        i = self.node_index[hostname]
        node = self.topo.nodes[i]
        j = next((j for j, n in enumerate(node.nics) if n.name == nic_name), 0)
        return self.loaded.origins.node(i).child("nics", j)

    def link_origin(self, index: int) -> Origin:
        return self.loaded.origins.link(index)

    def switch_origin(self, name: str) -> Origin:
        for i, switch in enumerate(self.topo.switches):
            if switch.name == name:
                return self.loaded.origins.switch(i)
        raise KeyError(name)  # pragma: no cover - callers pass known switches


def _duplicates(c: _Checker) -> Iterator[Finding]:
    seen: dict[str, tuple[str, Origin]] = {}
    entries = [(n.hostname, "node", c.loaded.origins.node, i) for i, n in enumerate(c.topo.nodes)]
    entries += [(s.name, "switch", c.loaded.origins.switch, i)
                for i, s in enumerate(c.topo.switches)]
    for name, kind, origin_of, i in entries:
        if name in seen:
            first_kind, first = seen[name]
            yield c.finding("duplicate-name", Severity.ERROR, name, origin_of(i),
                            f"{kind} {name} is already defined at {first.where()} "
                            f"(as a {first_kind})")
        else:
            seen[name] = (kind, origin_of(i))

    addresses: dict[str, tuple[str, Origin]] = {}
    owners = [(s.name, s.mgmt, c.loaded.origins.switch, i) for i, s in enumerate(c.topo.switches)]
    owners += [(n.hostname, n.mgmt, c.loaded.origins.node, i) for i, n in enumerate(c.topo.nodes)]
    for owner, address, origin_of, i in owners:
        if address is None:
            continue
        if address in addresses:
            other, where = addresses[address]
            yield c.finding("duplicate-address", Severity.ERROR, owner,
                            origin_of(i).child("mgmt"), f"management address {address} of "
                            f"{owner} is also {other}'s ({where.where()})")
        else:
            addresses[address] = (owner, origin_of(i).child("mgmt"))
    for i, node in enumerate(c.topo.nodes):
        yield from _node_duplicates(c, node, i)
    yield from _duplicate_ips(c)


def _duplicate_ips(c: _Checker) -> Iterator[Finding]:
    seen: dict[str, str] = {}
    for i, node in enumerate(c.topo.nodes):
        for j, nic in enumerate(node.nics):
            if nic.ip is None:
                continue
            owner = f"{node.hostname}:{nic.name}"
            if nic.ip in seen:
                yield c.finding("duplicate-address", Severity.ERROR, owner,
                                c.loaded.origins.node(i).child("nics", j, "ip"),
                                f"{owner} has IP {nic.ip}, already used by {seen[nic.ip]}")
            else:
                seen[nic.ip] = owner


def _node_duplicates(c: _Checker, node: Node, i: int) -> Iterator[Finding]:
    hostname = node.hostname
    gpu_seen: set[int] = set()
    for k, gpu in enumerate(node.gpus):
        if gpu.index in gpu_seen:
            yield c.finding("duplicate-name", Severity.ERROR, f"{hostname} GPU{gpu.index}",
                            c.loaded.origins.node(i).child("gpus", k, "index"),
                            f"{hostname} lists GPU {gpu.index} twice")
        gpu_seen.add(gpu.index)
    names: dict[str, int] = {}
    for j, nic in enumerate(node.nics):
        for key in filter(None, (nic.name, nic.netdev)):
            if key in names and names[key] != j:
                yield c.finding("duplicate-name", Severity.ERROR, f"{hostname}:{nic.name}",
                                c.loaded.origins.node(i).child("nics", j),
                                f"{hostname} has two NICs called {key}")
            names.setdefault(key, j)
    pci: dict[str, str] = {}
    devices = [(f"GPU{g.index}", g.pci, "gpus", k) for k, g in enumerate(node.gpus)]
    devices += [(n.name, n.pci, "nics", j) for j, n in enumerate(node.nics)]
    for label, address, section, k in devices:
        if address in pci:
            yield c.finding("duplicate-address", Severity.ERROR, f"{hostname}:{label}",
                            c.loaded.origins.node(i).child(section, k, "pci"),
                            f"{hostname} {label} has PCI address {address}, already used by "
                            f"{pci[address]}")
        else:
            pci[address] = label


def _ports_and_optics(c: _Checker) -> Iterator[Finding]:
    used: dict[str, int] = {}
    optics: dict[str, int] = {}
    for index, link in enumerate(c.topo.links):
        for end in (link.a, link.b):
            key = _normal_end(c.graph, end)
            if key in used:
                first = c.link_origin(used[key]).where()
                yield c.finding("duplicate-port", Severity.ERROR, key, c.link_origin(index),
                                f"{key} already has a cable ({first}); one port takes one cable")
            else:
                used[key] = index
        if link.optic:
            if link.optic in optics:
                first = c.link_origin(optics[link.optic]).where()
                yield c.finding("duplicate-optic", Severity.ERROR, link.optic,
                                c.link_origin(index),
                                f"optic {link.optic} is already on another link ({first})")
            else:
                optics[link.optic] = index


def _normal_end(graph: FabricGraph, end: str) -> str:
    device, _, port = end.partition(":")
    if device in graph.switches:
        return end
    nic = graph.find_nic(device, port)
    return f"{device}:{nic.name}" if nic is not None else end


def _dangling(c: _Checker) -> Iterator[Finding]:
    for index in c.dangling:
        link = c.topo.links[index]
        for end in (link.a, link.b):
            device, port = split_key(end)
            if device in c.graph.switches:
                continue
            if device in c.graph.nodes:
                if c.graph.find_nic(device, port) is not None:
                    continue
                nics = ", ".join(n.name for n in c.graph.nodes[device].nics) or "none"
                why = f"node {device} has no NIC {port} (its NICs: {nics})"
            else:
                why = f"no node or switch is called {device}"
            yield c.finding("dangling-link-end", Severity.ERROR, end, c.link_origin(index),
                            f"link end {end} is dangling: {why}")


def _rail_symmetry(c: _Checker) -> Iterator[Finding]:
    by_node: dict[str, list[tuple[int, str, int, int | None]]] = defaultdict(list)
    for (host, nic_name), att in c.graph.attachments.items():
        switch = c.graph.switches[att.switch]
        by_node[host].append((att.link_index, nic_name, att.nic.rail, switch.group))
        where = c.link_origin(att.link_index)
        component = f"{host}:{nic_name}"
        if switch.role is not Role.LEAF:
            yield c.finding("rail-symmetry", Severity.ERROR, component, where,
                            f"{component} is cabled to {switch.role.value} {switch.name}; "
                            "hosts belong on leaves")
            continue
        if switch.rail and att.nic.rail not in switch.rail:
            rails = ",".join(str(r) for r in switch.rail)
            yield c.finding("rail-symmetry", Severity.ERROR, component, where,
                            f"{component} is rail {att.nic.rail} but lands on "
                            f"{switch.name}:{att.port}, a rail-{rails} leaf: NIC i must land on "
                            f"the rail-i leaf of its group (miscabled?)")
        if att.nic.plane and switch.plane and att.nic.plane != switch.plane:
            yield c.finding("rail-symmetry", Severity.ERROR, component, where,
                            f"{component} is in {att.nic.plane} but lands on {switch.name} in "
                            f"{switch.plane}")
    for host, entries in by_node.items():
        groups = Counter(g for *_, g in entries if g is not None)
        if len(groups) < 2:
            continue
        home, _ = groups.most_common(1)[0]
        for index, nic_name, _rail, group in entries:
            if group is not None and group != home:
                att = c.graph.attachments[(host, nic_name)]
                yield c.finding("rail-symmetry", Severity.ERROR, f"{host}:{nic_name}",
                                c.link_origin(index),
                                f"{host}:{nic_name} lands on {att.switch} in group {group}, but "
                                f"{host}'s other NICs are in group {home}")


def _uplinks(c: _Checker) -> Iterator[Finding]:
    leaves = [s for s in c.graph.switches.values() if s.role is Role.LEAF]
    has_spines = any(s.role is not Role.LEAF for s in c.graph.switches.values())
    if not leaves or not has_spines:
        return
    shape: dict[str, tuple[int, int]] = {}
    for leaf in leaves:
        ups = c.graph.uplinks(leaf.name)
        shape[leaf.name] = (len(ups), sum(c.graph.link_speed(i) for i in ups))
    by_plane: dict[str | None, Counter[tuple[int, int]]] = defaultdict(Counter)
    for leaf in leaves:
        by_plane[leaf.plane][shape[leaf.name]] += 1
    for leaf in leaves:
        count, capacity = shape[leaf.name]
        usual, peers = by_plane[leaf.plane].most_common(1)[0]
        origin = c.switch_origin(leaf.name)
        if (count, capacity) != usual and peers > 1:
            severity = Severity.ERROR if count == 0 else Severity.WARNING
            yield c.finding("uplink-symmetry", severity, leaf.name, origin,
                            f"{leaf.name} has {count} uplinks ({capacity} Gb/s); most leaves have "
                            f"{usual[0]} ({usual[1]} Gb/s): traffic through it gets less spine "
                            "bandwidth")
        per_spine = Counter(o for o in _up_neighbours(c.graph, leaf.name))
        if len(per_spine) > 1 and max(per_spine.values()) - min(per_spine.values()) > 1:
            spread = ", ".join(f"{s}: {n}" for s, n in sorted(per_spine.items()))
            yield c.finding("uplink-symmetry", Severity.WARNING, leaf.name, origin,
                            f"{leaf.name} spreads its uplinks unevenly over spines ({spread}): "
                            "ECMP hashes flows evenly, so the thin spine saturates first")
        down = sum(c.graph.link_speed(i) for i in c.graph.host_links.get(leaf.name, []))
        if capacity and down / capacity > c.topo.cluster.max_oversubscription + 1e-9:
            yield c.finding("oversubscription", Severity.WARNING, leaf.name, origin,
                            f"{leaf.name} is oversubscribed {down / capacity:.2f}:1 ({down} Gb/s "
                            f"down, {capacity} Gb/s up); the design allows "
                            f"{c.topo.cluster.max_oversubscription:g}:1")


def _up_neighbours(graph: FabricGraph, leaf: str) -> Iterator[str]:
    for index in graph.uplinks(leaf):
        link = graph.topology.links[index]
        for end in (link.a, link.b):
            device = device_of(end)
            if device != leaf:
                yield device


def _affinity(c: _Checker) -> Iterator[Finding]:
    for node in c.graph.nodes.values():
        gpus = {g.index: g for g in node.gpus}
        mapping = gpu_map(node)
        for nic in node.nics:
            for index in mapping[nic.name]:
                gpu = gpus.get(index)
                if gpu is None:
                    continue
                component = f"{node.hostname}:{nic.name}"
                if nic.numa is not None and gpu.numa is not None and nic.numa != gpu.numa:
                    why = (f"is on NUMA node {nic.numa}, GPU {index} on NUMA node {gpu.numa}: "
                           "GPUDirect RDMA crosses the CPU interconnect (SYS) and runs at about "
                           "half speed")
                elif nic.pcie_switch and gpu.pcie_switch and nic.pcie_switch != gpu.pcie_switch:
                    why = (f"is under PCIe switch {nic.pcie_switch}, GPU {index} under "
                           f"{gpu.pcie_switch}: GPUDirect RDMA goes through the CPU host bridge "
                           "instead of staying under one PCIe switch (PIX)")
                else:
                    continue
                yield c.finding("gpu-nic-affinity", Severity.ERROR, component,
                                c.nic_origin(node.hostname, nic.name),
                                f"{component} serves GPU {index} but {why}")


def _speed_mtu(c: _Checker) -> Iterator[Finding]:
    switches, find_nic = c.graph.switches, c.graph.find_nic
    infiniband = c.topo.cluster.fabric.value == "infiniband"
    for index, link in enumerate(c.topo.links):
        if index in c.dangling:
            continue
        ends = []
        for end in (link.a, link.b):
            device, _, port = end.partition(":")
            switch = switches.get(device)
            if switch is not None:
                ends.append(_End(end, switch.port_speed_of(port), switch.port_mtu_of(port), False))
            elif (nic := find_nic(device, port)) is not None:
                ends.append(_End(f"{device}:{nic.name}", nic.speed, nic.mtu, True))
        speeds = {e.label: e.speed for e in ends if e.speed is not None}
        if link.speed is not None:
            speeds["the link"] = link.speed
        if len(set(speeds.values())) > 1:
            said = ", ".join(f"{k} {v}G" for k, v in speeds.items())
            yield c.finding("speed-mismatch", Severity.ERROR, link.label, c.link_origin(index),
                            f"speeds disagree across {link.label}: {said}")
        if any(e.mtu is not None for e in ends):
            yield from _mtu(c, index, link, ends, infiniband)


class _End(NamedTuple):
    label: str
    speed: int | None
    mtu: int | None
    is_host: bool


def _mtu(c: _Checker, index: int, link: Link, ends: list[_End],
         infiniband: bool) -> Iterator[Finding]:
    host_ends = [e for e in ends if e.is_host and e.mtu]
    switch_ends = [e for e in ends if not e.is_host and e.mtu]
    for h in host_ends:
        for sw in switch_ends:
            if not infiniband and h.mtu and sw.mtu and h.mtu > sw.mtu:
                yield c.finding("mtu-mismatch", Severity.ERROR, link.label, c.link_origin(index),
                                f"{h.label} MTU {h.mtu} is above {sw.label} MTU {sw.mtu}: "
                                "full-size frames are dropped")
    if len(switch_ends) == 2 and switch_ends[0].mtu != switch_ends[1].mtu:
        yield c.finding("mtu-mismatch", Severity.WARNING, link.label, c.link_origin(index),
                        f"MTU differs across {link.label}: {switch_ends[0].label} "
                        f"{switch_ends[0].mtu}, {switch_ends[1].label} {switch_ends[1].mtu}")
    if link.mtu is not None:
        for e in ends:
            if e.mtu is not None and e.mtu < link.mtu:
                yield c.finding("mtu-mismatch", Severity.ERROR, link.label, c.link_origin(index),
                                f"the link is declared MTU {link.mtu} but {e.label} is {e.mtu}")


def _cabling(c: _Checker) -> Iterator[Finding]:
    if c.topo.links:
        for node in c.graph.nodes.values():
            for nic in node.nics:
                component = f"{node.hostname}:{nic.name}"
                if (node.hostname, nic.name) in c.graph.attachments or \
                        component in c.graph.port_links:
                    continue  # cabled (to a host, if not a switch: reported below)
                yield c.finding("unconnected-nic", Severity.WARNING, component,
                                c.nic_origin(node.hostname, nic.name),
                                f"{component} (rail {nic.rail}) has no cable: the GPU it serves "
                                "has no direct path into the fabric")
    for index in c.graph.host_to_host:
        link = c.topo.links[index]
        yield c.finding("host-to-host-link", Severity.WARNING, link.label, c.link_origin(index),
                        f"{link.label} joins two NICs directly, bypassing the fabric")
    for u, v, index in c.graph.switch_edges_once():
        if c.graph.tier(u) == c.graph.tier(v):
            link = c.topo.links[index]
            role = c.graph.switches[u].role.value
            yield c.finding("tier-violation", Severity.WARNING, link.label, c.link_origin(index),
                            f"{link.label} joins two {role} switches; a Clos cables each tier "
                            "only to the next")


def _node_shape(c: _Checker) -> Iterator[Finding]:
    if len(c.topo.nodes) < 3:
        return
    shapes = Counter((len(n.gpus), len(n.nics)) for n in c.topo.nodes)
    (gpus, nics), count = shapes.most_common(1)[0]
    if count <= len(c.topo.nodes) // 2:
        return
    for i, node in enumerate(c.topo.nodes):
        if (len(node.gpus), len(node.nics)) != (gpus, nics):
            yield c.finding("node-shape", Severity.WARNING, node.hostname, c.loaded.origins.node(i),
                            f"{node.hostname} has {len(node.gpus)} GPUs and {len(node.nics)} "
                            f"NICs; most nodes have {gpus} and {nics}")


_RULES = (_duplicates, _ports_and_optics, _dangling, _rail_symmetry, _uplinks, _affinity,
          _speed_mtu, _cabling, _node_shape)
