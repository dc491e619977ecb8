"""InfiniBand port counters (PMA) from `perfquery`: errors as deltas, congestion and data as
rates.

Counter names: the IBTA PortCounters (shared/reference/fabric-diagnostics.md sections 3.2 and
3.4).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators.base import EvalContext, evaluator

_IB_DELTAS = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
              "PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
              "PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors",
              "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
              "PortLocalPhysicalErrors", "PortMalformedPktErrors", "PortBufferOverrunErrors")
_IB_RATES = ("PortXmitWait", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts")


@evaluator("perfquery")
def perfquery(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """IB port error counters as deltas; PortXmitWait (congestion) and data as rates."""
    metrics = []
    previous = {(p.lid, p.port, p.counter_set): p for p in before.ports} if before else {}
    for port in after.ports:
        old = previous.get((port.lid, port.port, port.counter_set))
        if before is not None and old is None:
            continue
        metrics += counter_metrics(old.counters if old else None, port.counters,
                                   _component(ctx, port.lid, port.port), ctx.interval,
                                   deltas=_IB_DELTAS, rates=_IB_RATES)
    return metrics


def _component(ctx: EvalContext, lid: int | None, port: int | None) -> str:
    """The NIC for a local read (`nic.perfquery`); for a read by LID from a host
    (`ib.perfquery`), the port it addressed: `node001:lid4/port5` (the host it ran on, then
    the LID and port; the runbook names the topology port)."""
    if ctx.target.kind == "node" and lid is not None:
        return ctx.component(f"lid{lid}/port{port}")
    return ctx.component()
