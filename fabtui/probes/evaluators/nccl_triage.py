"""Hang triage reports (`fabtui triage nccl --json`, probe `triage.nccl`): the verdict and one
metric per suspect, each on the component the report placed it on (leaf port, NIC, node)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("nccl-triage")
def nccl_triage(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """`verdict` fails when the report names suspects; each suspect of the first fault fails,
    those of further faults warn. A suspect's component is the fabric's name for where the
    report placed it (the report already is in topology terms: a leaf port, a `switch`
    suspect's switch, a NIC), not one below the target."""
    report = after.report
    metrics = [Metric(name="verdict", value=report.verdict, component=ctx.component(),
                      verdict=Verdict.FAIL if report.suspects else Verdict.OK,
                      source="fabtui triage nccl (docs/triage.md)")]
    for suspect in report.suspects:
        nic = f"{suspect.node}:{suspect.nic}" if suspect.node and suspect.nic else suspect.node
        where = suspect.port or suspect.switch or nic or (
            f"rank:{suspect.rank}" if suspect.rank is not None else None)
        metrics.append(Metric(name=f"suspect.{suspect.kind.replace(' ', '_')}",
                              value=suspect.reason[:200], component=where or ctx.component(),
                              verdict=Verdict.FAIL if suspect.fault == 1 else Verdict.WARN))
    return metrics
