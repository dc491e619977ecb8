"""RDMA devices and their link state from `ibdev2netdev`: every device the topology expects
on the node must be there and Up."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("ibdev2netdev")
def ibdev2netdev(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Every RDMA device the topology expects on this node must be Up."""
    node = ctx.target.node
    expected = {nic.name for nic in node.nics} if node is not None else set()
    metrics = []
    for device, entry in sorted(after.devices.items()):
        up = (entry.state or "").lower() == "up"
        relevant = not expected or device in expected
        metrics.append(Metric(name="device.state", value=entry.state or "unknown",
                              component=ctx.component(device),
                              verdict=Verdict.FAIL if relevant and not up else Verdict.OK))
    for missing in sorted(expected - set(after.devices)):
        metrics.append(Metric(name="device.present", value=False,
                              component=ctx.component(missing), verdict=Verdict.FAIL))
    return metrics
