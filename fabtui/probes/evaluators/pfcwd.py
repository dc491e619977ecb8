"""SONiC's PFC watchdog per queue: storms now, storms detected, and what the watchdog dropped."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("pfcwd")
def pfcwd(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """SONiC's PFC watchdog per queue: a queue `stormed` now (its PFC is being ignored and
    its traffic dropped), storms detected and not yet restored, and its drops."""
    metrics = []
    for name, queue in after.queues.items():
        port, _, index = name.rpartition(":")
        if not port or target_ports(ctx, [port]) == []:
            continue
        where = port_component(ctx, f"{port}/q{index}")
        if queue.status is not None:
            metrics.append(Metric(name="stormed", value=int(queue.status == "stormed"),
                                  component=where))
        if queue.storms_detected is not None:
            metrics.append(Metric(name="storms_detected", value=queue.storms_detected,
                                  component=where))
        if queue.tx_drop is not None or queue.rx_drop is not None:
            metrics.append(Metric(name="drops", value=(queue.tx_drop or 0) +
                                  (queue.rx_drop or 0), component=where))
    return metrics
