"""The slow-job report as an on-call note: what happened, where the evidence ends, what to run
next. Plain text that also reads as markdown. No side effects."""

from __future__ import annotations

from collections import Counter

import numpy as np

from fabtui.model.slowjob import SlowChain, SlowJobReport
from fabtui.triage.slowjob import words

_BARS = "▁▂▃▄▅▆▇█"
WIDTH = 60
"""Columns of the step-time line."""


def sparkline(report: SlowJobReport, width: int = WIDTH) -> list[str]:
    """The step time as one line of bars (each column the median of its samples, the lowest
    bar the baseline) and, under it, `^` where an episode runs; [] without a timeline."""
    timeline = report.timeline
    if timeline is None or len(timeline.v) < 2:
        return []
    t, v = np.asarray(timeline.t), np.asarray(timeline.v)
    edges = np.linspace(t[0], t[-1], min(width, v.size) + 1)
    column = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, edges.size - 2)
    levels = np.array([np.median(v[column == c]) if (column == c).any() else np.nan
                       for c in range(edges.size - 1)])
    low = report.baseline_s or float(np.nanmin(levels))
    high = max(float(np.nanmax(levels)), low * 1.05)
    scaled = np.clip((levels - low) / (high - low), 0, 1)
    bars = "".join(" " if np.isnan(x) else _BARS[round(float(x) * (len(_BARS) - 1))]
                   for x in scaled)
    marks = "".join("^" if any(e.start <= (edges[c] + edges[c + 1]) / 2 <= e.end
                               for e in report.episodes) else " "
                    for c in range(edges.size - 1))
    return [f"  step time {low:.2f}-{high:.2f} s  {bars}",
            f"  {'':<{len(f'step time {low:.2f}-{high:.2f} s')}}  {marks.rstrip()}"]


def _verdict(chain: SlowChain) -> str:
    verdict = chain.verdict
    if verdict.kind == "fabric":
        head = f"FABRIC: {verdict.element} ({verdict.layer})"
    elif verdict.kind == "not the fabric":
        head = f"NOT THE FABRIC: {verdict.cause} ({verdict.element})"
    else:
        head = "CANNOT TELL"
    return f"{head}, confidence {verdict.confidence:.2f}"


def note(report: SlowJobReport) -> str:
    """The report for a terminal."""
    span = f"{words.clock(report.start)}-{words.clock(report.end)} UTC"
    lines = [f"Job {report.job}, {span}, {report.ranks} ranks: {report.summary}",
             *sparkline(report)]
    # one episode can have several causes at once (a throttling GPU and a dying optic): its
    # chains share the episode's number and say which cause of how many each one is
    spans = list(dict.fromkeys((c.episode.start, c.episode.end) for c in report.chains))
    causes = Counter((c.episode.start, c.episode.end) for c in report.chains)
    seen: Counter[tuple[float, float]] = Counter()
    for chain in report.chains:
        episode = chain.episode
        key = (episode.start, episode.end)
        seen[key] += 1
        cause = f", cause {seen[key]} of {causes[key]}" if causes[key] > 1 else ""
        what = f"{words.pct(episode.magnitude)} slower" if episode.kind == "slow" else \
            f"jitter {episode.magnitude * 100:.0f} %"
        lines += ["", f"Episode {spans.index(key) + 1}{cause}: {what}, "
                      f"{words.clock(episode.start)}-"
                      f"{words.clock(episode.end)} UTC ({episode.median_s:.2f} s per step "
                      f"against {episode.baseline_s:.2f} s)",
                  f"  {_verdict(chain)}", f"  {chain.verdict.summary}", "  Chain:"]
        for step, hop in enumerate(chain.hops, 1):
            lines.append(f"    {step}. [{hop.layer}] {hop.element}: {hop.claim} "
                         f"({hop.confidence:.2f})")
            lines += [f"         + {line}" for line in hop.evidence]
            lines += [f"         - {line}" for line in hop.counter_evidence]
            if hop.probe is not None:
                runbook = f" (runbook {hop.probe.runbook})" if hop.probe.runbook else ""
                lines.append(f"         > {hop.probe.command}{runbook}")
    if report.path_faults:
        lines += ["", "On the job's path:", *(f"  {fault}" for fault in report.path_faults)]
    lines += [f"warning: {w}" for w in report.warnings]
    return "\n".join(lines)
