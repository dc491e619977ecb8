"""Small files read with `grep -H` (sysfs values, /etc/nccl.conf): recorded, not judged here
(`fabtui drift` compares them with the intent)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("file-values")
def file_values(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Each file's first line, and each KEY=VALUE setting, as values."""
    where = ctx.component()
    metrics = [Metric(name=path, value=lines[0] if lines else None, component=where)
               for path, lines in after.files.items()]
    metrics += [Metric(name=key, value=value, component=where)
                for key, value in after.settings.items()]
    return metrics
