"""DCGM diagnostics (`dcgmi diag -r N`): one metric per test and the overall result."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("dcgmi-diag")
def dcgmi_diag(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """One metric per DCGM test (never only the summary: IBM/autopilot #68)."""
    verdicts = {"pass": Verdict.OK, "fail": Verdict.FAIL, "warn": Verdict.WARN}
    metrics = [Metric(name="overall", value=after.overall, component=ctx.component(),
                      verdict=verdicts.get(after.overall, Verdict.WARN))]
    for test, result in sorted(after.tests.items()):
        failed = after.failed_gpus.get(test) or []
        where = ctx.component(",".join(f"GPU{g}" for g in failed)) if failed else \
            ctx.component()
        metrics.append(Metric(name=f"test.{test}", value=result, component=where,
                              verdict=verdicts.get(result, Verdict.OK)))
    return metrics
