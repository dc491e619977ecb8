"""An EOS switch's running configuration: recorded, not judged here (`fabtui drift` compares
it with the rendered intent, configs/templates/eos-qos.cfg.j2)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("eos-running-config")
def eos_running_config(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """How many lines the configuration holds at the top level and in its sections."""
    where = ctx.component()
    return [Metric(name="sections", value=len(after.sections) - 1, component=where),
            Metric(name="lines", value=sum(len(v) for v in after.sections.values()),
                   component=where)]
