"""`fabtui probe run PROBE --target SET`: one probe on many targets, one table.

The rows come in the set's order (the topology's), whatever order the targets answered in. A
terminal gets a progress line on stderr while the sweep runs. Exit status: 1 when any target
fails, else the single probe's status for a target that could not be measured (3), else 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fabtui.cli import render
from fabtui.cli.context import EXIT_FINDINGS
from fabtui.model.probe import Metric, ProbeDef, ProbeResult, Verdict
from fabtui.probes.targets import ProbeTarget

if TYPE_CHECKING:
    from fabtui.workspace import Workspace

KEY_METRICS = 3
"""Metrics shown per row: the ones not ok first, else the probe's evidence, else the first."""


def run_sweep(ws: Workspace, definition: ProbeDef, targets: Sequence[ProbeTarget],
              params: dict[str, str], topology: Path | None, *, as_json: bool,
              limit: int, target_timeout: float | None,
              exit_code: Callable[[ProbeResult], int], confirmed: str | None = None,
              named: str | None = None) -> int:
    """Run the sweep through the workspace, print its table (or JSON), return the exit status.

    `exit_code(result)` is the status one target alone would give; `confirmed` is the phrase
    typed for a dangerous probe on the set as the operator `named` it.
    Note: runs commands on every target; prints to stdout, and progress to stderr.
    """
    progress = _Progress(len(targets)) if sys.stderr.isatty() and not as_json else None
    results = asyncio.run(_collect(ws, definition, targets, params, topology, limit,
                                   target_timeout, progress, confirmed, named))
    order = {t.name: i for i, t in enumerate(targets)}
    results.sort(key=lambda r: order.get(r.target, len(order)))
    if as_json:
        click.echo(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
    else:
        click.echo(table(definition, results))
    codes = {exit_code(r) for r in results}
    return EXIT_FINDINGS if EXIT_FINDINGS in codes else max(codes, default=0)


async def _collect(ws: Workspace, definition: ProbeDef, targets: Sequence[ProbeTarget],
                   params: dict[str, str], topology: Path | None, limit: int,
                   target_timeout: float | None, progress: _Progress | None,
                   confirmed: str | None, named: str | None) -> list[ProbeResult]:
    results: list[ProbeResult] = []
    try:
        async with contextlib.aclosing(ws.sweep(definition.name, targets, params, topology,
                                                limit=limit, target_timeout=target_timeout,
                                                confirmed=confirmed, named=named)) \
                as stream:
            async for result in stream:
                results.append(result)
                if progress is not None:
                    progress.update(result)
    finally:
        if progress is not None:
            progress.clear()
    return results


def table(definition: ProbeDef, results: Sequence[ProbeResult]) -> str:
    """One row per target: target, verdict, seconds, key metrics or the error; then a count."""
    rows = [(r.target, r.verdict.value, f"{(r.ended_at - r.started_at).total_seconds():.1f}",
             r.error or _key_metrics(definition, r.metrics, r.target)) for r in results]
    counts = {v: sum(r.verdict is v for r in results) for v in Verdict}
    tally = ", ".join(f"{n} {v.value}" for v, n in counts.items() if n)
    return "\n".join([render.table(("target", "verdict", "s", "key metrics / error"), rows), "",
                      f"{definition.name}: {len(results)} target"
                      f"{'s' if len(results) != 1 else ''}: {tally or 'none'}"])


def _key_metrics(definition: ProbeDef, metrics: Sequence[Metric], target: str) -> str:
    shown = [m for m in metrics if m.verdict is not Verdict.OK]
    if not shown:
        shown = [m for name in definition.evidence for m in metrics if m.name == name]
    shown = (shown or list(metrics))[:KEY_METRICS]
    more = len(metrics) - len(shown)
    text = "  ".join(_metric(m, target) for m in shown)
    return text + (f"  (+{more})" if more > 0 and text else "") if text else "-"


def _metric(metric: Metric, target: str) -> str:
    """`name=value unit [verdict]`, led by the part of the target it was read on (a lane, a
    port of a switch) when that is narrower than the row's target: else a port's eight lanes
    read as eight identical names."""
    value = metric.value
    shown = f"{value:.4g}" if isinstance(value, float) else str(value)
    flag = "" if metric.verdict is Verdict.OK else f" [{metric.verdict.value}]"
    where = metric.component or target
    part = where[len(target):].lstrip(":/") if where.startswith(target) else where
    lead = f"{part} " if part else ""
    return f"{lead}{metric.name}={shown}{' ' + metric.unit if metric.unit else ''}{flag}"


class _Progress:
    """`  37/64 done, 2 errors` on one rewritten stderr line."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.bad = 0
        self.width = 0

    def update(self, result: ProbeResult) -> None:
        self.done += 1
        self.bad += result.verdict in (Verdict.FAIL, Verdict.ERROR)
        text = f"  {self.done}/{self.total} done" + (f", {self.bad} failing or not measured"
                                                    if self.bad else "")
        self.width = max(self.width, len(text))
        click.echo("\r" + text.ljust(self.width), err=True, nl=False)

    def clear(self) -> None:
        if self.width:
            click.echo("\r" + " " * self.width + "\r", err=True, nl=False)
