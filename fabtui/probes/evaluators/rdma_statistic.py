"""RDMA hardware counters per link from `rdma statistic show` (iproute2), judged as
`_rdma.py` says."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators._rdma import RDMA_DELTAS, RDMA_RATES, mine
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("rdma-statistic")
def rdma_statistic(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per link (`mlx5_0/1`): retransmit and sequence errors as deltas, CNP/ECN as rates."""
    metrics = []
    for link, counters in after.links.items():
        if not mine(ctx, link.split("/")[0]):
            continue
        old = before.links.get(link) if before is not None else None
        if before is not None and old is None:
            continue
        metrics += counter_metrics(old, counters, ctx.component(), ctx.interval,
                                   deltas=RDMA_DELTAS, rates=RDMA_RATES)
    return metrics
