"""Dropped packets per switch port and queue over the window, and what each queue sent (its
transmit progress: a deadlocked lossless queue sends nothing); from `show queue wredcounters`,
the packets each queue marked ECN (`delta.ecnmarked_pkts`) and WRED dropped
(`delta.wreddrp_pkts`) over the window, reported: `ecn_evidence` (fabtui/probes/ecn.py) judges
them beside the leaf's pause."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("queue-counters")
def queue_counters(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Dropped packets per queue over the window; packets and bytes sent per second; ECN marks
    and WRED drops per queue over the window where the table has them."""
    metrics = []
    for name in target_ports(ctx, after.ports):
        old_port = before.ports.get(name) if before is not None else None
        if before is not None and old_port is None:
            continue
        for queue, stats in after.ports[name].items():
            old = old_port.get(queue) if old_port is not None else None
            if before is not None and old is None:
                continue
            metrics += counter_metrics(
                _fields(old) if old is not None else None, _fields(stats),
                port_component(ctx, f"{name}/{queue}"), ctx.interval,
                deltas=("drop_packets", *_WRED), rates=("packets", "bytes"))
    return metrics


_WRED = ("ecnmarked_pkts", "wreddrp_pkts")
"""`show queue wredcounters` columns (in `other`) read as counters."""


def _fields(stats: Any) -> dict[str, int | None]:
    found: dict[str, int | None] = {k: getattr(stats, k) for k in ("drop_packets", "packets",
                                                                   "bytes")}
    for key in _WRED:
        value = stats.other.get(key)
        if key in stats.other:
            found[key] = int(value) if isinstance(value, int | float) else None
    return found
