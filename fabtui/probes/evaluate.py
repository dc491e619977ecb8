"""From parsed output to judged metrics and findings.

An evaluator per output kind turns one parse (or two, for counter probes) into `Metric`s, each
naming its component in topology terms. Thresholds are data (the probe's `[[probe.thresholds]]`,
each citing its source) applied by `judge`; an evaluator may also set a verdict itself where the
rule is absolute (a lane without light, a data-corruption count above zero). Findings are the
metrics that are not ok, worded for the operator.

The registry, `EvalContext` and the `@evaluator` decorator live in `evaluators/base.py` (the
evaluator modules import them from there); they are re-exported here. Output of a kind no
evaluator judges raises `NoEvaluator`: the runner makes that an `error` result, never `ok`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any

from fabtui.model.findings import Finding, Severity
from fabtui.model.probe import Metric, ProbeDef, Threshold, Verdict
from fabtui.probes import evaluators as _evaluators  # importing them registers them
from fabtui.probes.evaluators.base import (
    REGISTRY,
    EvalContext,
    Evaluator,
    EvaluatorAlreadyRegistered,
    NoEvaluator,
    evaluator,
)
from fabtui.probes.targets import ProbeTarget


def hardware_classes(target: ProbeTarget) -> frozenset[str]:
    """Classes for threshold lookup: GPU generation, NIC speed, fabric family."""
    classes: set[str] = set()
    node = target.node
    if node is not None:
        for gpu in node.gpus[:1]:
            if gpu.model:
                classes.add(gpu.model.split("-")[0].upper())
        speeds = {nic.speed for nic in node.nics}
        classes.update(f"{s}G" for s in speeds)
    if target.nic is not None:
        classes.add(f"{target.nic.speed}G")
    return frozenset(classes)


def _threshold_for(metric: str, thresholds: Iterable[Threshold],
                   hardware: frozenset[str]) -> Threshold | None:
    """The most specific threshold for `metric`: a hardware match beats `*`."""
    best: Threshold | None = None
    upper: set[str] | None = None
    for threshold in thresholds:
        if not fnmatch.fnmatchcase(metric, threshold.metric):
            continue
        if threshold.hardware == "*":
            best = best or threshold
            continue
        if upper is None:
            upper = {h.upper() for h in hardware}
        if threshold.hardware.upper() in upper:
            return threshold
    return best


def judge(metrics: list[Metric], thresholds: list[Threshold],
          hardware: frozenset[str]) -> list[Metric]:
    """Apply thresholds; a verdict set by the evaluator is only ever made worse."""
    judged = []
    found: dict[str, Threshold | None] = {}  # many ports / lanes share a metric name
    for metric in metrics:
        if metric.name in found:
            threshold = found[metric.name]
        else:
            threshold = found[metric.name] = _threshold_for(metric.name, thresholds, hardware)
        value = metric.value
        if threshold is None or not isinstance(value, int | float):
            judged.append(metric)
            continue
        number = float(value)
        verdict, limit = Verdict.OK, None
        for level, bound in ((Verdict.FAIL, threshold.fail), (Verdict.WARN, threshold.warn)):
            if bound is None:
                continue
            crossed = number >= bound if threshold.direction == "above" else number < bound
            if crossed:
                verdict, limit = level, bound
                break
        if limit is None:
            limit = threshold.fail if threshold.fail is not None else threshold.warn
        if metric.verdict.rank > verdict.rank:
            # The evaluator's own rule is the stricter one: keep its limit and source.
            judged.append(metric.model_copy(update={"unit": metric.unit or threshold.unit}))
            continue
        judged.append(metric.model_copy(update={
            "verdict": verdict, "limit": limit, "source": threshold.source,
            "unit": metric.unit or threshold.unit}))
    return judged


def findings(probe: ProbeDef, metrics: list[Metric]) -> list[Finding]:
    """One finding per metric that is not ok."""
    result = []
    for metric in metrics:
        if metric.verdict is Verdict.OK:
            continue
        severity = Severity.ERROR if metric.verdict in (Verdict.FAIL, Verdict.ERROR) \
            else Severity.WARNING
        unit = f" {metric.unit}" if metric.unit else ""
        limit = f" (limit {_number(metric.limit)}{unit})" if metric.limit is not None else ""
        result.append(Finding(rule=f"{probe.name}:{metric.name}", severity=severity,
                              component=metric.component,
                              message=f"{metric.component}: {metric.name} = "
                                      f"{_number(metric.value)}{unit}{limit}"))
    return result


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-3 or abs(value) >= 1e6 else f"{value:.4g}"
    return str(value)


def evaluate(kind: str, before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Metrics for a parse of `kind`, judged against the probe's thresholds. Raises
    `NoEvaluator` for a kind no evaluator judges (no metrics would read as healthy)."""
    metrics = REGISTRY.get(kind)(before, after, ctx)
    return judge(metrics, ctx.probe.thresholds, ctx.hardware)


__all__ = ["REGISTRY", "EvalContext", "Evaluator", "EvaluatorAlreadyRegistered", "NoEvaluator",
           "_evaluators", "evaluate", "evaluator", "findings", "hardware_classes", "judge"]
