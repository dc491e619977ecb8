"""From parsed output to judged metrics and findings.

An evaluator per output kind turns one parse (or two, for counter probes) into `Metric`s, each
naming its component in topology terms. Thresholds are data (the probe's `[[probe.thresholds]]`,
each citing its source) applied by `judge`; an evaluator may also set a verdict itself where the
rule is absolute (a lane without light, a data-corruption count above zero). Findings are the
metrics that are not ok, worded for the operator.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fabtui.model.findings import Finding, Severity
from fabtui.model.probe import Metric, ProbeDef, Threshold, Verdict
from fabtui.probes.targets import ProbeTarget
from fabtui.topology.graph import FabricGraph


@dataclass(frozen=True)
class EvalContext:
    """What evaluators need besides the parse."""

    probe: ProbeDef
    target: ProbeTarget
    interval: float
    """Seconds between the two samples (counter probes)."""
    hardware: frozenset[str]
    """Hardware classes of the target (`H100`, `400G`, `NDR`, ...), for per-SKU thresholds."""
    graph: FabricGraph | None = None
    """The fabric, for evaluators that compare what they see with the topology (LLDP)."""

    def component(self, detail: str | None = None) -> str:
        """`node001:mlx5_3`, `leaf-g00-r3:Ethernet8`, `node001:GPU2`, ... for `detail`."""
        t = self.target
        if t.kind == "nic" and t.node is not None and t.nic is not None:
            base = f"{t.node.hostname}:{t.nic.name}"
            return base if detail is None else f"{base}/{detail}"
        if t.switch is not None:
            if detail is not None:
                return f"{t.switch.name}:{detail}"
            return f"{t.switch.name}:{t.port}" if t.port else t.switch.name
        host = t.node.hostname if t.node is not None else t.name
        return host if detail is None else f"{host}:{detail}"


Evaluator = Callable[[Any, Any, EvalContext], list[Metric]]
"""(parse of the first sample or None, parse of the last sample, context) -> metrics."""

EVALUATORS: dict[str, Evaluator] = {}


def evaluator(*kinds: str) -> Callable[[Evaluator], Evaluator]:
    """Register an evaluator for parser kinds (or `nvml`)."""
    def register(fn: Evaluator) -> Evaluator:
        for kind in kinds:
            EVALUATORS[kind] = fn
        return fn

    return register


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
    """Metrics for a parse of `kind`, judged against the probe's thresholds."""
    fn = EVALUATORS.get(kind)
    metrics = fn(before, after, ctx) if fn is not None else []
    return judge(metrics, ctx.probe.thresholds, ctx.hardware)


# Importing the evaluator modules registers them.
from fabtui.probes import evaluators as _evaluators  # noqa: E402

__all__ = ["EVALUATORS", "EvalContext", "_evaluators", "evaluate", "findings", "judge"]
