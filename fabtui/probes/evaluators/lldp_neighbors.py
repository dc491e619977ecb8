"""LLDP neighbors against the topology: a cable on the wrong port shows up as the wrong neighbor.

For each port the topology cables, the neighbor LLDP reports must be the device and port at the
far end of that cable (host ports by RDMA device or netdev name, switch ports with EOS/NX-OS short
names expanded). A different neighbor fails (a swapped or mis-patched cable: on a rail-optimized
fabric, a NIC on the wrong rail); no neighbor on a cabled port warns (the port is down, or the far
end does not speak LLDP); a neighbor on a port the topology leaves empty warns (undocumented
cabling).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.element import device_of, split_key
from fabtui.model.probe import Metric, Verdict
from fabtui.model.topology import long_port_name
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.cabling import lldp_endpoint


@evaluator("lldp-neighbors")
def lldp_neighbors(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """One metric per port whose neighbor differs from the topology, plus the count that match."""
    switch = ctx.target.switch
    graph = ctx.graph
    if switch is None or graph is None:
        return [Metric(name="lldp_neighbors", value=len(after.neighbors),
                       component=ctx.component())]
    seen: dict[str, Any] = {}
    for neighbor in after.neighbors:
        seen.setdefault(long_port_name(neighbor.local_port), neighbor)
    cabled = sorted(split_key(key)[1] for key in graph.port_links
                    if device_of(key) == switch.name)
    metrics: list[Metric] = []
    matches = 0
    for port in cabled:
        if ctx.target.port is not None and long_port_name(ctx.target.port) != port:
            continue
        expected = graph.far_end(f"{switch.name}:{port}") or ""
        neighbor = seen.pop(port, None)
        where = ctx.component(port)
        if neighbor is None:
            metrics.append(Metric(name="lldp_neighbor", value=f"none (expected {expected})",
                                  component=where, verdict=Verdict.WARN))
            continue
        actual = lldp_endpoint(graph, neighbor)
        if actual == expected:
            matches += 1
            continue
        metrics.append(Metric(name="lldp_neighbor", value=f"{actual} (expected {expected})",
                              component=where, verdict=Verdict.FAIL))
    if ctx.target.port is None:
        for port, neighbor in sorted(seen.items()):
            metrics.append(Metric(name="lldp_neighbor",
                                  value=f"{lldp_endpoint(graph, neighbor)} (not in the topology)",
                                  component=ctx.component(port), verdict=Verdict.WARN))
    metrics.append(Metric(name="lldp_matches", value=matches, component=ctx.component()))
    return metrics
