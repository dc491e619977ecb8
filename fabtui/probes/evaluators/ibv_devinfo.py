"""Port state and active MTU of verbs devices from `ibv_devinfo`."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators._hca_ports import hca_ports, state_metric
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("ibv_devinfo")
def ibv_devinfo(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Port state and active MTU (NCCL over RDMA wants 4096)."""
    metrics = []
    for where, port, active, _nic in hca_ports(ctx, after.devices):
        metrics.append(state_metric(where, port, active))
        if port.active_mtu is not None:
            small = active and port.active_mtu < 4096
            metrics.append(Metric(name="port.active_mtu", value=port.active_mtu,
                                  component=where, limit=4096,
                                  verdict=Verdict.WARN if small else Verdict.OK))
    return metrics
