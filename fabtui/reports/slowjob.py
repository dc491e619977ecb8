"""A slow-job analysis (`fabtui triage slow --json`, `fabtui.model.slowjob.SlowJobReport`) as a
report a customer can read (issue 39).

Every line of it is the analysis' own: the episodes with their times and sizes, each chain's
hops with the evidence and the counter-evidence as the engine wrote them, the confidence, the
cheapest check that would confirm it, and the verdict. Nothing is added: where the chain says it
cannot tell, the report says so and what was missing; where it says "not the fabric", the report
names what instead and lists no fabric element. The verdict follows the chains:

- a chain that ends at a fabric element: FAIL, the element and its optic named;
- no such chain, but one that cannot tell or points away from the fabric (the job is slow and
  the fabric is not shown to be why): WARN, with what it points at;
- no episode in the window: PASS (the step time held its baseline).

Pure: the analysis in, a `Report` out.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from fabtui.model.report import Problem, Report, ReportKind, Source, TimelineEntry
from fabtui.model.slowjob import SlowChain, SlowJobReport
from fabtui.model.verdict import Verdict


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _episode_line(chain: SlowChain) -> str:
    e = chain.episode
    size = (f"{e.magnitude:.0%} slower" if e.kind == "slow" else
            f"step-time spread {e.magnitude:.0%} of the baseline")
    return (f"{e.kind} episode {_iso(e.start)} to {_iso(e.end)}: {size} (median "
            f"{e.median_s:.3g} s against {e.baseline_s:.3g} s, {e.samples} samples)")


def _verdict_line(chain: SlowChain) -> str:
    v = chain.verdict
    where = f" {v.layer} {v.element}" if v.element and v.layer else \
        (f" {v.element}" if v.element else "")
    away = f"not the fabric ({v.cause or 'elsewhere'}" + (f":{where})" if where else ")")
    head = {"fabric": f"the fabric:{where}", "not the fabric": away,
            "cannot tell": "cannot tell"}[v.kind]
    return f"{head} — {v.summary} (confidence {v.confidence:.0%})"


def _chain_text(chain: SlowChain) -> str:
    """The chain as markdown: one item per hop, top to bottom, with what speaks for and
    against it and the check that would confirm it."""
    lines = [_episode_line(chain) + ".", ""]
    for hop in chain.hops:
        lines.append(f"- **{hop.layer}** `{hop.element}` — {hop.claim} "
                     f"(confidence {hop.confidence:.0%})")
        lines += [f"    - evidence: {e}" for e in hop.evidence]
        lines += [f"    - against: {c}" for c in hop.counter_evidence]
        if hop.probe is not None:
            run = f"`{hop.probe.command}`"
            runbook = f", runbook `{hop.probe.runbook}`" if hop.probe.runbook else ""
            lines.append(f"    - to confirm: {run}{runbook}")
    lines += ["", f"**Verdict**: {_verdict_line(chain)}"]
    return "\n".join(lines)


def _overall(report: SlowJobReport) -> tuple[Verdict, str]:
    if report.healthy or not report.chains:
        return Verdict.OK, (f"no slow or jittery episode: the step time held its baseline "
                            f"({report.baseline_s:.3g} s)" if report.baseline_s is not None
                            else "no episode found")
    fabric = [c for c in report.chains if c.verdict.kind == "fabric"]
    if fabric:
        elements = list(dict.fromkeys(c.verdict.element or "?" for c in fabric))
        return Verdict.FAIL, (f"the fabric slowed the job: {', '.join(elements)} "
                              f"({len(fabric)} of {len(report.chains)} episodes)")
    away = [c for c in report.chains if c.verdict.kind == "not the fabric"]
    if away and len(away) == len(report.chains):
        causes = list(dict.fromkeys(
            f"{c.verdict.cause or 'elsewhere'}" + (f" {c.verdict.element}" if c.verdict.element
                                                   else "") for c in away))
        return Verdict.WARN, f"the job was slow, not because of the fabric: {', '.join(causes)}"
    return Verdict.WARN, ("the job was slow and the evidence cannot tell where: "
                          + "; ".join(c.verdict.summary for c in report.chains
                                      if c.verdict.kind == "cannot tell"))


def build_slow_report(report: SlowJobReport, *, made_from: str,
                      optics: Mapping[str, str] | None = None, generated: str | None = None,
                      ) -> Report:
    """The report of one analysis. `made_from` names where the analysis came from (a file, the
    demo scenario); `optics` maps a port element to the serial of the optic in it (from the
    topology) so a failing port names the part to swap."""
    verdict, conclusion = _overall(report)
    problems: list[Problem] = []
    sections: dict[str, str] = {}
    timeline: list[TimelineEntry] = []
    for number, chain in enumerate(report.chains, start=1):
        anchor = Source(session=made_from, block=f"episode-{number}")
        timeline.append(TimelineEntry(at=_iso(chain.episode.start),
                                      what=f"episode {number} begins: " + _episode_line(chain),
                                      source=anchor))
        sections[f"Episode {number}"] = _chain_text(chain)
        v = chain.verdict
        if v.kind == "fabric" and v.element:
            deepest = next((h for h in reversed(chain.hops) if h.element == v.element), None)
            what = deepest.evidence if deepest is not None and deepest.evidence else [v.summary]
            problems.append(Problem(element=v.element,
                                    optic=(optics or {}).get(v.element), what=what,
                                    verdict=Verdict.FAIL, source=anchor))
    summary = [f"Job {report.job}, {_iso(report.start)} to {_iso(report.end)}, "
               f"{report.ranks} ranks with step times: {report.summary}"]
    summary += [f"Episode {n}: {_verdict_line(c)}" for n, c in enumerate(report.chains, 1)]
    missing = list(report.warnings)
    if report.ranks <= 1 and report.chains:
        missing.append("per-rank step times: only the job's step time was read, so a late rank "
                       "is seen through the communicators' busbw, not its own step times")
    environment = {"analysis": made_from}
    if report.sources:
        environment["sources"] = "; ".join(report.sources)
    return Report(
        kind=ReportKind.SLOW_JOB, title=f"Why job {report.job} was slow",
        generated=generated or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        sessions=[], summary=summary, problems=problems, sections=sections,
        timeline=timeline, missing=missing, verdict=verdict, conclusion=conclusion,
        recommendations=[f"to confirm {h.layer} {h.element}: {h.probe.command}"
                         for c in report.chains
                         for h in [next((h for h in reversed(c.hops) if h.probe), None)]
                         if h is not None and h.probe is not None],
        environment=environment)
