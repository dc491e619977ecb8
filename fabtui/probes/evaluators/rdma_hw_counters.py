"""RDMA hardware counters per device and port from a hw_counters dump (`show_counters`),
judged as `rdma statistic` is (`_rdma.py`)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators._rdma import RDMA_DELTAS, RDMA_RATES, mine
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("rdma-hw-counters")
def rdma_hw_counters(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """The same judgement from a hw_counters dump, per device and port."""
    metrics = []
    for device, data in after.devices.items():
        if not mine(ctx, device):
            continue
        for port, counters in data.ports.items():
            old = None
            if before is not None:
                previous = before.devices.get(device)
                old = previous.ports.get(port) if previous is not None else None
                if old is None:
                    continue
            metrics += counter_metrics(old, counters, ctx.component(), ctx.interval,
                                       deltas=RDMA_DELTAS, rates=RDMA_RATES)
    return metrics
