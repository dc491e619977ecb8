"""The slow-job report as an on-call note: what happened, where the evidence ends, what to run
next. Plain text that also reads as markdown. No side effects."""

from __future__ import annotations

from fabtui.model.slowjob import SlowChain, SlowJobReport
from fabtui.triage.slowjob import words


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
    lines = [f"Job {report.job}, {span}, {report.ranks} ranks: {report.summary}"]
    for number, chain in enumerate(report.chains, 1):
        episode = chain.episode
        what = f"{words.pct(episode.magnitude)} slower" if episode.kind == "slow" else \
            f"jitter {episode.magnitude * 100:.0f} %"
        lines += ["", f"Episode {number}: {what}, {words.clock(episode.start)}-"
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
    lines += [f"warning: {w}" for w in report.warnings]
    return "\n".join(lines)
