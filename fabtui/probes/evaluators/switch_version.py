"""What a switch runs, from `show version`: recorded, not judged here (the selection database
judges the combination: `fabtui fleet check`)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("switch-version")
def switch_version(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """The network OS with its version, and the model, as values."""
    where = ctx.component()
    return [Metric(name="os", value=f"{after.os} {after.version or '?'}", component=where),
            Metric(name="model", value=after.model, component=where)]
