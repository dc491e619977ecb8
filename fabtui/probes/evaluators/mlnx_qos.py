"""A NIC's QoS state from `mlnx_qos`: recorded, not judged here (the fleet's intent judges it:
`fabtui drift`, runbook roce-qos-audit)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("mlnx-qos")
def mlnx_qos(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """The trust state and the PFC priorities, as values."""
    where = ctx.component()
    return [Metric(name="trust", value=after.trust, component=where),
            Metric(name="pfc_enabled", value=",".join(str(p) for p in after.pfc_enabled),
                   component=where)]
