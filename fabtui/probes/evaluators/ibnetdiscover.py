"""The subnet as discovered: nodes and links, degraded links (width or speed below the fabric's
most common one) warn; the rest is evidence (LIDs, GUIDs and names for the runbooks)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("ibnetdiscover")
def ibnetdiscover(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Counts of switches, CAs and links; each degraded link warns."""
    where = ctx.component()
    metrics = [Metric(name="switches", value=len(after.switches), component=where),
               Metric(name="cas", value=len(after.cas), component=where),
               Metric(name="links", value=len(after.links), component=where)]
    for link in after.links:
        if link.degraded:
            name = f"{link.local.name or link.local.guid}:{link.local.port}"
            metrics.append(Metric(name="degraded_link", value=link.degraded_reason or "",
                                  component=name, verdict=Verdict.WARN,
                                  source="width/speed below the capture's most common one"))
    return metrics
