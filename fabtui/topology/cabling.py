"""Design against cabling: compare what the switches hear (LLDP, ibnetdiscover) and how the
nodes place their NICs (`nvidia-smi topo -m`) with the topology, and say the exact fix.

Pure functions over parsed readings and the `FabricGraph`; no I/O (the workspace reads the
fabric: `fabtui.workspace.cabling`). Names are the topology's: a neighbour heard by its netdev
(`enp57s0f0np0`) or, on InfiniBand, by the node description rdma-ndd sets by default
(`%h %d`: `node007 mlx5_2`, rdma-core `rdma-ndd(8)`) is mapped to `node007:mlx5_2`.

How differences become fixes: a switch port hearing another endpoint than the design's is a
mis-plugged cable. Two ports that each hear the other's endpoint are one swap (the usual install
mistake: swap back). Any other such port is a move (its endpoint belongs on another port: the
wrong leaf when that port is on another switch, else the wrong port). A designed port that hears
nothing, whose endpoint is heard nowhere, is a missing cable (or a dark link: the evidence
cannot tell those apart, the fix says to check both). A heard cable the design does not have is
extra. Only switches that were read are judged; the report lists what could not be read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fabtui.model.cabling import CablingFinding
from fabtui.model.element import device_of, split_key
from fabtui.model.parsed.ibnetdiscover import IbnetdiscoverOutput
from fabtui.model.parsed.lldp_neighbors import LldpNeighbor, LldpNeighbors
from fabtui.model.parsed.nvidia_smi_topo import NvidiaSmiTopo
from fabtui.model.topology import long_port_name
from fabtui.topology.graph import FabricGraph
from fabtui.topology.pairing import gpu_map
from fabtui.topology.platform import PCIE_PATHS, platform_of


@dataclass(frozen=True)
class Heard:
    """One cable as a switch reports it: its port and the endpoint at the far end."""

    port: str
    """`switch:port` in topology names."""
    far: str
    """`device:port` at the other end, in topology names where the design knows them."""
    evidence: str


# readings -> Heard ----------------------------------------------------------------------------
def lldp_heard(graph: FabricGraph, switch: str, parsed: LldpNeighbors) -> list[Heard]:
    """What LLDP on `switch` reports, one entry per local port (the first neighbour heard)."""
    found: dict[str, Heard] = {}
    for neighbor in parsed.neighbors:
        port = f"{switch}:{long_port_name(neighbor.local_port)}"
        if port not in found:
            found[port] = Heard(port, lldp_endpoint(graph, neighbor), f"lldp on {switch}")
    return list(found.values())


def lldp_endpoint(graph: FabricGraph, neighbor: LldpNeighbor) -> str:
    """`device:port` in topology names for what LLDP reports (a host's NIC by RDMA name)."""
    device = neighbor.device or neighbor.chassis_id or "?"
    if device not in graph.nodes and device not in graph.switches:
        device = device.split(".")[0]  # an FQDN system name
    if device in graph.nodes:
        for candidate in (neighbor.port_id, neighbor.port_description):
            nic = graph.find_nic(device, candidate) if candidate else None
            if nic is not None:
                return f"{device}:{nic.name}"
    return f"{device}:{long_port_name(neighbor.port_id or neighbor.port_description or '?')}"


_IB_SWITCH_NAME = re.compile(r"^(?:MF0;)?([^:;]+)")


def _ib_switch(graph: FabricGraph, description: str | None) -> str | None:
    """The topology switch a node description names (`MF0;leaf-g00-r0:MQM9700/U1`)."""
    text = (description or "").strip()
    if text in graph.switches:
        return text
    found = _IB_SWITCH_NAME.match(text)
    return found.group(1) if found and found.group(1) in graph.switches else None


def _ib_port(graph: FabricGraph, switch: str, number: int | None) -> str:
    """The topology name of port `number` of an IB switch: the designed port with that number
    (`IB1/5` for 5), else a designed port's name with its number replaced (`IB1/30`), else
    `port30`."""
    pattern = None
    for key in graph.port_links:
        device, port = split_key(key)
        found = re.search(r"(\d+)$", port)
        if device == switch and found:
            if int(found.group(1)) == number:
                return port
            pattern = pattern or port
    if pattern is not None and number is not None:
        return re.sub(r"\d+$", str(number), pattern)
    return f"port{number}"


def ibnetdiscover_heard(graph: FabricGraph,
                        parsed: IbnetdiscoverOutput) -> tuple[list[Heard], set[str]]:
    """Every switch port line of an ibnetdiscover capture, and the switches it covers (an
    InfiniBand subnet is discovered whole, from any host)."""
    heard: dict[str, Heard] = {}
    switches = {name for node in parsed.switches
                if (name := _ib_switch(graph, node.name)) is not None}
    for link in parsed.links:
        if link.remote is None or link.local.type != "SW":
            continue
        switch = _ib_switch(graph, link.local.name)
        if switch is None:
            continue
        port = f"{switch}:{_ib_port(graph, switch, link.local.port)}"
        remote = link.remote
        if remote.type == "SW":
            far_switch = _ib_switch(graph, remote.name)
            far = f"{far_switch}:{_ib_port(graph, far_switch, remote.port)}" if far_switch \
                else f"{remote.name or remote.guid}:{remote.port}"
        else:
            host, _, device = (remote.name or "").strip().partition(" ")
            nic = graph.find_nic(host, device.strip()) if host in graph.nodes else None
            far = f"{host}:{nic.name}" if nic else f"{remote.name or remote.guid}"
        heard.setdefault(port, Heard(port, far, "ibnetdiscover"))
    return list(heard.values()), switches


# the comparison ---------------------------------------------------------------------------------
def _nic_words(graph: FabricGraph, endpoint: str) -> str:
    """`node007 mlx5_2` for a NIC, the endpoint itself otherwise."""
    device, port = split_key(endpoint)
    return f"{device} {port}" if device in graph.nodes else endpoint


def with_ranks(graph: FabricGraph, finding: CablingFinding) -> CablingFinding:
    """`finding` with the ranks whose GPUs send through the NICs it names."""
    ranks = set()
    for component in finding.components:
        host, nic = split_key(component)
        node = graph.nodes.get(host)
        found = graph.find_nic(host, nic) if node is not None else None
        if node is None or found is None:
            continue
        gpus = set(gpu_map(node).get(found.name, ()))
        ranks |= {slot.rank for slot in graph.ranks_by_node.get(host, []) if slot.gpu in gpus}
    return finding.model_copy(update={"ranks": sorted(ranks)}) if ranks else finding


def compare_cabling(graph: FabricGraph, heard: Iterable[Heard], read: set[str],
                    source: str = "lldp") -> tuple[list[CablingFinding], int, int]:
    """(findings, ports checked, ports matched) of the switch ports of `read` against the
    design: see the module docstring for how differences become fixes. `source` names the
    reading in a finding about a port nothing was heard on (`lldp`, `ibnetdiscover`)."""
    design = {key: far for key in graph.port_links if device_of(key) in read
              and (far := graph.far_end(key)) is not None}
    at: dict[str, Heard] = {}
    for item in heard:
        if device_of(item.port) in read:
            at.setdefault(item.port, item)
    where: dict[str, list[str]] = {}
    for port, item in at.items():
        where.setdefault(item.far, []).append(port)
    wrong = {port: item for port, item in at.items() if item.far != design.get(port)}
    findings: list[CablingFinding] = []
    done: set[frozenset[str]] = set()

    for port, item in sorted(wrong.items()):
        pair = frozenset((port, item.far))
        if pair in done:
            continue
        home = graph.far_end(item.far)
        other = wrong.get(home or "")
        if home and other is not None and other.far == design.get(port) and port < home:
            done |= {pair, frozenset((home, other.far))}
            findings.append(_swap(graph, port, item, home, other))
        elif home and other is not None and other.far == design.get(port):
            continue  # the swap is reported from its first port
        else:
            done.add(pair)
            findings.append(_misplaced(graph, port, item, design.get(port), home, at))

    for port, far in sorted(design.items()):
        if port in at or frozenset((port, far)) in done:
            continue
        if where.get(far):
            continue  # heard elsewhere: a move, reported above
        done.add(frozenset((port, far)))
        if device_of(far) in read and far in at:
            continue
        findings.append(CablingFinding(
            rule="missing", components=[port, far],
            message=f"nothing is heard on {port}; the design cables {_nic_words(graph, far)} "
                    "there, and it is heard on no other port",
            fix=f"plug the cable of {_nic_words(graph, far)} into {port} (if it is plugged: "
                "the link is dark; check both ends are up" +
                (" and send LLDP)" if source == "lldp" else ")"),
            evidence=f"{source} on {device_of(port)}" if source == "lldp" else source))
    checked = len(set(design) | set(at))
    matched = sum(1 for port, item in at.items() if design.get(port) == item.far)
    return [with_ranks(graph, f) for f in findings], checked, matched


def _swap(graph: FabricGraph, port: str, item: Heard, home: str,
          other: Heard) -> CablingFinding:
    """`port` hears `item.far`, whose designed port `home` hears `port`'s designed endpoint."""
    one, two = other.far, item.far  # the endpoints designed at port and at home
    one_host, one_nic = split_key(one)
    two_host, two_nic = split_key(two)
    components = [port, home, one, two]
    lands = f"{_nic_words(graph, one)} lands on {home} and {_nic_words(graph, two)} on {port}"
    if one_host == two_host and one_host in graph.nodes:
        fix = (f"swap the cables of {one_host} {one_nic} and {two_nic} at {one_host} "
               f"(so that {one_nic} reaches {port} and {two_nic} reaches {home})")
    else:
        fix = (f"swap the cables in {port} and {home} (at the switches: "
               f"{_nic_words(graph, one)} belongs in {port}, {_nic_words(graph, two)} "
               f"in {home})")
    return CablingFinding(rule="swap", components=components,
                          message=f"swapped cables: {lands}", fix=fix,
                          evidence=f"{item.evidence}; {other.evidence}")


def _misplaced(graph: FabricGraph, port: str, item: Heard, designed: str | None,
               home: str | None, at: Mapping[str, Heard]) -> CablingFinding:
    """`port` hears `item.far`, which the design has elsewhere (`home`) or nowhere."""
    far_words = _nic_words(graph, item.far)
    instead = f" instead of {_nic_words(graph, designed)}" if designed else ""
    known = device_of(item.far) in graph.nodes or device_of(item.far) in graph.switches
    if home is None and designed is None:
        return CablingFinding(
            rule="extra", components=[port, item.far],
            message=f"{port} hears {far_words}, a cable the design does not have",
            fix=f"remove the cable between {port} and {item.far}, or add it to the topology",
            evidence=item.evidence)
    if home is None and designed is not None and known:
        # The far end sits on a spare port: the cable's other end was plugged elsewhere.
        rule = "wrong-port" if device_of(item.far) == device_of(designed) else "wrong-leaf"
        return CablingFinding(
            rule=rule, components=[port, item.far, designed],
            message=f"{port} hears {far_words} (a port the design leaves empty){instead}",
            fix=f"move the far end of the cable in {port} from {item.far} to {designed}",
            evidence=item.evidence)
    if home is None:
        return CablingFinding(
            rule="unknown-peer", components=[port, item.far, *([designed] if designed else [])],
            message=f"{port} hears {far_words} (a device the design does not know){instead}",
            fix=f"re-cable {port} to {_nic_words(graph, designed or '?')} as designed; "
                f"{item.far} belongs to no cable of the topology",
            evidence=item.evidence)
    rule = "wrong-leaf" if device_of(home) != device_of(port) else "wrong-port"
    where = "on the wrong switch" if rule == "wrong-leaf" else "on the wrong port"
    empty = "" if home in at else f" ({home} hears nothing)"
    return CablingFinding(
        rule=rule, components=[item.far, port, home, *([designed] if designed else [])],
        message=f"the cable of {far_words} lands on {port}{instead}, {where}: the design "
                f"has it on {home}{empty}",
        fix=f"move the cable of {far_words} from {port} to {home}",
        evidence=item.evidence)


# GPU-NIC affinity -------------------------------------------------------------------------------
def nic_slot_findings(graph: FabricGraph, host: str,
                      parsed: NvidiaSmiTopo) -> list[CablingFinding]:
    """Each NIC of `host` not beside the GPU(s) the design pairs it with, as `nvidia-smi topo
    -m` shows: on x86 HGX the pair must share a PCIe switch (PIX or PXB); a Grace platform's
    NICs hang off the CPU by design and are not judged here."""
    node = graph.nodes.get(host)
    if node is None or not parsed.matrix:
        return []
    platform = platform_of(node.gpus[0].model) if node.gpus else None
    if platform is not None and platform.grace:
        return []
    allowed = platform.gpu_nic_paths if platform is not None else PCIE_PATHS
    by_name = {name: device for device, name in parsed.nic_legend.items()}
    findings = []
    for nic in node.nics:
        row = parsed.matrix.get(by_name.get(nic.name, nic.name), {})
        designed = gpu_map(node).get(nic.name, ())
        codes = {gpu: row.get(f"GPU{gpu}", "").strip() for gpu in designed}
        if not row or not designed or all(code in allowed for code in codes.values()):
            continue
        near = [int(column[3:]) for column, code in row.items()
                if column.startswith("GPU") and column[3:].isdigit() and code.strip() in allowed]
        gpus = ", ".join(f"GPU{g}" for g in designed)
        relation = ", ".join(f"GPU{g} {code or '?'}" for g, code in codes.items())
        beside = f"sits by {', '.join(f'GPU{g}' for g in near)}" if near else \
            "shares a PCIe switch with no GPU"
        where = f"{nic.pcie_switch} " if nic.pcie_switch else ""
        numa = f"NUMA {nic.numa}" if nic.numa is not None else "its GPU's NUMA node"
        findings.append(CablingFinding(
            rule="nic-slot", components=[f"{host}:{nic.name}", *(f"{host}:gpu{g}"
                                                                 for g in designed)],
            message=f"{host} {nic.name} {beside}, not by {gpus} as designed ({relation}): "
                    "GPUDirect RDMA for that GPU crosses the host bridge",
            fix=f"move the card of {host} {nic.name} to the slot under {gpus}'s PCIe switch "
                f"({where}{numa}); if this server model is built so, correct the design "
                f"(the NIC's pcie_switch, numa and gpus)",
            evidence=f"nvidia-smi topo -m on {host}"))
    return [with_ranks(graph, f) for f in findings]
