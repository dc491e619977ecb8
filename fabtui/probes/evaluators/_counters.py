"""Shared shape of counter evaluators: deltas of error counters, rates of traffic counters."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping

from fabtui.model.probe import Metric
from fabtui.probes.counters import changes


def counter_metrics(before: Mapping[str, int | None] | None, after: Mapping[str, int | None],
                    component: str, interval: float, *, deltas: Iterable[str] = (),
                    rates: Iterable[str] = (), prefix: str = "") -> list[Metric]:
    """`delta.<name>` for error-like counters and `rate.<name>` (/s) for flow-like ones.

    Names may be glob patterns. With one sample only `total.<name>` values are reported, never
    judged: an absolute count says nothing about now.
    """
    delta_patterns, rate_patterns = list(deltas), list(rates)

    def wanted(name: str, patterns: list[str]) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    if before is None:
        return [Metric(name=f"total.{prefix}{name}", value=value, component=component)
                for name, value in after.items()
                if value is not None and wanted(name, delta_patterns)]
    metrics = []
    for name, change in sorted(changes(before, after, interval).items()):
        if wanted(name, rate_patterns):
            metrics.append(Metric(name=f"rate.{prefix}{name}", value=round(change.rate, 3),
                                  unit="/s", component=component))
        elif wanted(name, delta_patterns):
            metrics.append(Metric(name=f"delta.{prefix}{name}", value=change.delta,
                                  component=component))
    return metrics
