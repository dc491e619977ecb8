"""Dropped packets per switch port and queue over the window, and what each queue sent (its
transmit progress: a deadlocked lossless queue sends nothing)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("queue-counters")
def queue_counters(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Dropped packets per queue over the window; packets and bytes sent per second."""
    metrics = []
    for name in target_ports(ctx, after.ports):
        old_port = before.ports.get(name) if before is not None else None
        if before is not None and old_port is None:
            continue
        for queue, stats in after.ports[name].items():
            old = old_port.get(queue) if old_port is not None else None
            if before is not None and old is None:
                continue
            wanted = ("drop_packets", "packets", "bytes")
            metrics += counter_metrics(
                {k: getattr(old, k) for k in wanted} if old is not None else None,
                {k: getattr(stats, k) for k in wanted}, port_component(ctx, f"{name}/{queue}"),
                ctx.interval, deltas=("drop_packets",), rates=("packets", "bytes"))
    return metrics
