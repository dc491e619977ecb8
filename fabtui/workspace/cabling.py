"""Design against cabling, read from the fabric: `Workspace.cabling` is the door.

Reads LLDP on every switch (`switch.lldp`; on InfiniBand one `ib.ibnetdiscover` from a node,
which discovers the whole subnet) and `nvidia-smi topo -m` on every node (`gpu.topo`), through
the workspace's transports (the simulated fabric on the demo), and compares them with the
topology (`fabtui.topology.cabling`). Side effects: runs those probes (read-only commands).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from fabtui.model.cabling import CablingFinding, CablingReport
from fabtui.model.element import device_of
from fabtui.model.parsed.ibnetdiscover import IbnetdiscoverOutput
from fabtui.model.parsed.lldp_neighbors import LldpNeighbors
from fabtui.model.parsed.nvidia_smi_topo import NvidiaSmiTopo
from fabtui.model.probe import ProbeDef, ProbeResult
from fabtui.model.topology import FabricKind
from fabtui.probes.targets import ProbeTarget, resolve
from fabtui.topology.cabling import (
    Heard,
    compare_cabling,
    ibnetdiscover_heard,
    lldp_heard,
    nic_slot_findings,
)

if TYPE_CHECKING:
    from fabtui.probes.runner import ProbeRunner
    from fabtui.topology.graph import FabricGraph


async def _sweep(runner: ProbeRunner, definition: ProbeDef, targets: Sequence[ProbeTarget],
                 limit: int) -> list[ProbeResult]:
    results = []
    async with contextlib.aclosing(runner.sweep(definition, list(targets), {},
                                                limit=limit)) as stream:
        async for result in stream:
            results.append(result)
    return results


def _usable(result: ProbeResult) -> bool:
    return result.error is None and result.parsed is not None


async def read_cabling(graph: FabricGraph, runner: ProbeRunner, catalog: Mapping[str, ProbeDef], *,
                       nodes: Sequence[str] = (), affinity: bool = True,
                       limit: int = 16) -> CablingReport:
    """Read the fabric through `runner` and compare it with `graph`'s design. `nodes`: judge
    only the cabling of these nodes (the switches they are cabled to are read); empty: all."""
    wanted = set(nodes)
    unknown = sorted(wanted - set(graph.nodes))
    if unknown:
        from fabtui.errors import RequestError

        raise RequestError(f"not a node of the fabric: {', '.join(unknown)}")
    heard: list[Heard] = []
    read: set[str] = set()
    unread: list[str] = []
    sources: list[str] = []
    infiniband = graph.topology.cluster.fabric is FabricKind.INFINIBAND
    if infiniband:
        first = next(iter(sorted(wanted))) if wanted else next(iter(graph.nodes), None)
        if first is not None:
            result = await runner.run(catalog["ib.ibnetdiscover"], first, {})
            if _usable(result):
                found, read = ibnetdiscover_heard(
                    graph, IbnetdiscoverOutput.model_validate(result.parsed))
                heard += found
                sources.append(f"ibnetdiscover from {first}")
            else:
                unread.append(f"ibnetdiscover from {first}: {result.error or 'no output'}")
    else:
        switches = sorted(graph.switches) if not wanted else sorted(
            {a.switch for (host, _), a in graph.attachments.items() if host in wanted})
        results = await _sweep(runner, catalog["switch.lldp"],
                               [resolve(graph, name, "switch") for name in switches], limit)
        for result in results:
            if _usable(result):
                read.add(result.target)
                heard += lldp_heard(graph, result.target,
                                    LldpNeighbors.model_validate(result.parsed))
            else:
                unread.append(f"{result.target}: {result.error or 'no LLDP table'}")
        sources.append(f"lldp on {len(read)} switches")
    findings, checked, matched = compare_cabling(
        graph, heard, read, "ibnetdiscover" if infiniband else "lldp")
    if wanted:
        findings = [f for f in findings
                    if any(c.split(":")[0] in wanted for c in f.components)]
    if affinity:
        hosts = sorted(wanted) if wanted else sorted(graph.nodes)
        results = await _sweep(runner, catalog["gpu.topo"],
                               [resolve(graph, host, "node") for host in hosts], limit)
        slots: list[CablingFinding] = []
        seen = 0
        for result in sorted(results, key=lambda r: r.target):
            if _usable(result):
                seen += 1
                slots += nic_slot_findings(graph, result.target,
                                           NvidiaSmiTopo.model_validate(result.parsed))
            else:
                unread.append(f"{result.target}: {result.error or 'no nvidia-smi topo -m'}")
        findings += slots
        sources.append(f"nvidia-smi topo -m on {seen} nodes")
    nics = {item.far: item.port for item in heard if device_of(item.far) in graph.nodes}
    return CablingReport(cluster=graph.topology.cluster.name, sources=sources,
                         ports_checked=checked, ports_matched=matched, findings=findings,
                         unread=sorted(unread), heard=dict(sorted(nics.items())))
