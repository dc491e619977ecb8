"""Resolving a scenario's faults against a topology: which links, NICs, ports and GPUs they hit.

A fault names its component as an operator would (`leaf-g00-r3:Ethernet16`, `node003:mlx5_2`,
`node005:gpu3`, an optic id). Resolution turns that into the links and devices the simulation acts
on, and rejects components that do not exist or do not suit the fault, with the line to fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabtui.errors import InputError, Problem
from fabtui.model.element import device_of, split_key
from fabtui.model.topology import Role
from fabtui.sim.scenario import FaultKind, FaultSpec
from fabtui.topology.graph import FabricGraph
from fabtui.topology.pairing import gpu_map


@dataclass(frozen=True)
class Fault:
    """A fault and the topology entities it acts on."""

    spec: FaultSpec
    link: int | None = None
    """The link it acts on (optic, flap, hang, uplink, storm: the culprit NIC's link)."""
    host: str | None = None
    nic: str | None = None
    switch: str | None = None
    port: str | None = None
    """The switch port whose receiver degrades (optic-degrading) or that is down (uplink)."""
    gpu: int | None = None
    partner: str | None = None
    """rank-mapping: the NIC whose cable this NIC's cable was swapped with; cable-extra: the
    far end (`switch:port`) of the extra cable."""
    partner_host: str | None = None
    """rank-mapping: the node of `partner` (None: the same node as `host`)."""

    @property
    def kind(self) -> FaultKind:
        """The kind of fault."""
        return self.spec.fault

    def active(self, t: float) -> bool:
        """True while the fault is in effect."""
        return self.spec.active(t)


class FaultError(ValueError):
    """A fault component that does not fit the topology."""


def resolve_fault(graph: FabricGraph, spec: FaultSpec) -> Fault:
    """Find what `spec` acts on. Raises `FaultError` with a readable reason."""
    kind, text = spec.fault, spec.component.strip()
    if kind is FaultKind.INPUT_STALL:
        if text != "job":
            raise FaultError(f"input-stall stalls the whole job's input: its component is "
                             f"`job`, not {text!r}")
        return Fault(spec)
    if kind is FaultKind.SLOW_NODE and ":" in text:
        return _nvlink(graph, spec, text)  # one GPU: `node:gpuN`, resolved as NVLink faults are
    if kind in (FaultKind.SLOW_NODE, FaultKind.GDR_OFF, FaultKind.SM_FLAP):
        if text not in graph.nodes:
            raise FaultError(f"{kind.value} needs a node; {text!r} is not a node of the fabric")
        return Fault(spec, host=text)
    if kind is FaultKind.SWITCH_DOWN:
        if text not in graph.switches:
            raise FaultError(f"switch-down needs a switch; {text!r} is not a switch of the "
                             "fabric")
        return Fault(spec, switch=text)
    if kind is FaultKind.INTERFERENCE:
        switch = graph.switches.get(text)
        if switch is None or switch.role is not Role.LEAF:
            raise FaultError(f"interference needs a leaf switch; {text!r} is not one")
        return Fault(spec, switch=text)
    if kind is FaultKind.PFC_DEADLOCK:
        return _deadlock(graph, spec, text)
    if kind is FaultKind.NCCL_HANG:
        return _hang(graph, spec, text)
    if kind in (FaultKind.NVLINK_DOWN, FaultKind.NVLINK_ERRORS):
        return _nvlink(graph, spec, text)
    if kind is FaultKind.LINK_SPEED:
        if "speed_gbps" not in spec.params:
            raise FaultError("link-speed needs params.speed_gbps: the rate the link trained at")
        return _nic_fault(graph, spec, text)
    if kind is FaultKind.MISCONFIG:
        return _misconfig(graph, spec, text)
    if kind in (FaultKind.PFC_STORM, FaultKind.RANK_MAPPING, FaultKind.XMIT_WAIT,
                FaultKind.CABLE_MISSING):
        return _nic_fault(graph, spec, text)
    if kind is FaultKind.MISCABLED:
        host, nic, link = _nic(graph, text, kind)
        to_switch, to_port = _free_port(graph, str(spec.params.get("to", "")), kind)
        return Fault(spec, link=link, host=host, nic=nic, switch=to_switch, port=to_port)
    if kind is FaultKind.CABLE_EXTRA:
        near = _free_port(graph, text, kind)
        far = _free_port(graph, str(spec.params.get("to", "")), kind)
        if far == near:
            raise FaultError("cable-extra needs two different ports")
        return Fault(spec, switch=near[0], port=near[1], partner=f"{far[0]}:{far[1]}")
    if kind is FaultKind.NIC_SLOT:
        host, nic, link = _nic(graph, text, kind)
        gpu = spec.params.get("near_gpu")
        if not isinstance(gpu, int) or isinstance(gpu, bool) or \
                gpu not in {g.index for g in graph.nodes[host].gpus}:
            raise FaultError(f"nic-slot needs params.near_gpu: the index of a GPU of {host} "
                             "whose PCIe switch the card really sits under")
        return Fault(spec, link=link, host=host, nic=nic, gpu=gpu)
    return _link_fault(graph, spec, text)


def _misconfig(graph: FabricGraph, spec: FaultSpec, text: str) -> Fault:
    if not spec.params.get("setting") or "value" not in spec.params:
        raise FaultError("misconfig needs params.setting and params.value")
    if text in graph.switches:
        return Fault(spec, switch=text)
    if text in graph.nodes:
        return Fault(spec, host=text)
    host, nic, link = _nic(graph, text, spec.fault)
    return Fault(spec, link=link, host=host, nic=nic)


def _nic(graph: FabricGraph, text: str, kind: FaultKind) -> tuple[str, str, int]:
    device, port = split_key(text) if ":" in text else (text, "")
    nic = graph.find_nic(device, port) if port else None
    if nic is None:
        raise FaultError(f"{kind.value} needs a NIC such as node001:mlx5_0; {text!r} is not one")
    attachment = graph.attachments.get((device, nic.name))
    if attachment is None:
        raise FaultError(f"{device}:{nic.name} has no cable to a switch")
    return device, nic.name, attachment.link_index


def _free_port(graph: FabricGraph, text: str, kind: FaultKind) -> tuple[str, str]:
    """`switch:port` of a switch, on a port the topology cables nothing to."""
    device, port = split_key(text) if ":" in text else (text, "")
    if device not in graph.switches or not port:
        raise FaultError(f"{kind.value} needs a switch port such as leaf-g00-r3:Ethernet200; "
                         f"{text!r} is not one")
    if text in graph.port_links:
        raise FaultError(f"{kind.value}: {text} is cabled in the topology; name a port it "
                         "leaves empty")
    return device, port


def _nic_fault(graph: FabricGraph, spec: FaultSpec, text: str) -> Fault:
    host, nic, link = _nic(graph, text, spec.fault)
    if spec.fault is not FaultKind.RANK_MAPPING:
        return Fault(spec, link=link, host=host, nic=nic)
    partner_text = str(spec.params.get("with", ""))
    other_host, partner_name = split_key(partner_text) if ":" in partner_text else \
        (host, partner_text)
    partner = graph.find_nic(other_host, partner_name) if partner_name else None
    if partner is None or (other_host, partner.name) == (host, nic):
        raise FaultError(f"rank-mapping needs params.with: another NIC (mlx5_B of {host}, or "
                         f"nodeB:mlx5_B) whose cable was swapped with {host}:{nic}'s")
    if (other_host, partner.name) not in graph.attachments:
        raise FaultError(f"{other_host}:{partner.name} has no cable to a switch")
    return Fault(spec, link=link, host=host, nic=nic, partner=partner.name,
                 partner_host=None if other_host == host else other_host)


def _deadlock(graph: FabricGraph, spec: FaultSpec, text: str) -> Fault:
    """A loop leaf -> via -> to -> back -> leaf of switches cabled to each other in turn."""
    hops = [text, *(str(spec.params.get(key, "")) for key in ("via", "to", "back"))]
    for hop in hops:
        if hop not in graph.switches:
            raise FaultError("pfc-deadlock needs a leaf and params via / to / back naming the "
                             f"switches of the loop; {hop!r} is not a switch")
    for one, other in zip(hops, [*hops[1:], hops[0]], strict=True):
        cabled = {device_of(e) for index in graph.uplinks(one) + graph.downlinks(one)
                  for e in (graph.topology.links[index].a, graph.topology.links[index].b)}
        if other not in cabled:
            raise FaultError(f"pfc-deadlock: {one} and {other} are not cabled to each other")
    return Fault(spec, switch=text)


def _nvlink(graph: FabricGraph, spec: FaultSpec, text: str) -> Fault:
    """A node (every GPU's NVLinks) or `node:gpuN` (that GPU's)."""
    device, _, gpu_text = text.partition(":")
    node = graph.nodes.get(device)
    index = gpu_text.lower().removeprefix("gpu")
    if node is None or (gpu_text and (not index.isdigit() or
                                      int(index) not in {g.index for g in node.gpus})):
        raise FaultError(f"{spec.fault.value} needs a node or a GPU such as node001:gpu3; "
                         f"{text!r} is not one")
    return Fault(spec, host=device, gpu=int(index) if gpu_text else None)


def _hang(graph: FabricGraph, spec: FaultSpec, text: str) -> Fault:
    device, gpu_text = split_key(text)
    node = graph.nodes.get(device)
    index = gpu_text.lower().removeprefix("gpu")
    if node is None or not index.isdigit() or int(index) not in {g.index for g in node.gpus}:
        raise FaultError(f"nccl-hang needs the GPU of the stuck rank, such as node001:gpu3; "
                         f"{text!r} is not one")
    gpu = int(index)
    nics = [name for name, gpus in gpu_map(node).items() if gpu in gpus]
    if not nics or (device, nics[0]) not in graph.attachments:
        raise FaultError(f"{text}: no cabled NIC serves this GPU")
    link = graph.attachments[(device, nics[0])].link_index
    return Fault(spec, link=link, host=device, nic=nics[0], gpu=gpu)


def _link_fault(graph: FabricGraph, spec: FaultSpec, text: str) -> Fault:
    """optic-degrading, link-flap, uplink-down, dirty-connector: a switch port, a NIC (flap,
    connector), or an optic id."""
    kind = spec.fault
    if text in graph.optics:
        link = graph.optics[text]
        text = next(end for end in (graph.topology.links[link].a, graph.topology.links[link].b)
                    if device_of(end) in graph.switches)
    device, port = split_key(text) if ":" in text else (text, "")
    if device in graph.nodes and kind in (FaultKind.LINK_FLAP, FaultKind.DIRTY_CONNECTOR):
        host, nic, link = _nic(graph, text, kind)
        far = graph.far_end(f"{host}:{nic}") or ""
        switch, switch_port = split_key(far)
        return Fault(spec, link=link, host=host, nic=nic, switch=switch, port=switch_port)
    if device not in graph.switches or not port:
        raise FaultError(f"{kind.value} needs a switch port such as leaf-g00-r0:Ethernet0 (or "
                         f"an optic id); {text!r} is not one")
    cabled = graph.port_links.get(text)
    if cabled is None:
        raise FaultError(f"nothing is cabled to {text}")
    far = graph.far_end(text) or ""
    far_device, far_port = split_key(far)
    if kind is FaultKind.UPLINK_DOWN and far_device not in graph.switches:
        raise FaultError(f"uplink-down needs a switch-to-switch port; {text} faces {far}")
    on_host = far_device if far_device in graph.nodes else None
    return Fault(spec, link=cabled, switch=device, port=port, host=on_host,
                 nic=far_port if on_host else None)


def resolve_all(graph: FabricGraph, specs: list[FaultSpec], source: str,
                lines: list[int | None] | None = None) -> list[Fault]:
    """Resolve every fault; all problems at once, located at their timeline entries."""
    faults, problems = [], []
    for i, spec in enumerate(specs):
        try:
            faults.append(resolve_fault(graph, spec))
        except FaultError as exc:
            line = lines[i] if lines is not None and i < len(lines) else None
            problems.append(Problem(source, line, f"timeline[{i}] ({spec.fault.value}): {exc}"))
    if problems:
        raise InputError(problems)
    return faults
