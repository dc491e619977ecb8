"""A slow-job analysis becomes a draft case (issue 39): the episodes, the chain and its evidence
laid out as the case library keeps incidents, for the operator to complete with the root cause
once the cheapest check has confirmed (or refuted) the chain.

What the analysis did not establish is not written as found: the root cause stays empty, a chain
that cannot tell files as `other` with its reason, and "not the fabric" is filed as the host or
application finding it is. Pure: the caller stores the case (the library masks it).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from fabtui.model.case import (
    ActionItem,
    Case,
    CaseStatus,
    EvidenceRow,
    SymptomClass,
    TimelineEntry,
)
from fabtui.model.slowjob import Hop, SlowChain, SlowJobReport

_BY_WORDS = (
    (re.compile(r"rx.power|optic|dom\b|laser"), SymptomClass.OPTIC_FAILURE),
    (re.compile(r"\bfec\b|ber\b|symbol"), SymptomClass.FEC_ERRORS),
    (re.compile(r"pause|pfc"), SymptomClass.PFC_STORM),
    (re.compile(r"link (?:down|flap)|link_up|flap"), SymptomClass.LINK_FLAP),
    (re.compile(r"pxn|nccl env|nccl_"), SymptomClass.ROCE_CONFIG_MISMATCH),
)
"""The deepest hop's words name the class (most specific first: a failing optic shows FEC
errors too)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_EVIDENCE = 40


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def case_id_for_slow(report: SlowJobReport) -> str:
    """`slow-<job>-<window start>`: one analysis of one window files as one case."""
    stamp = datetime.fromtimestamp(report.start, UTC).strftime("%Y%m%d-%H%M")
    return _UNSAFE.sub("-", f"slow-{report.job}-{stamp}").strip("-.") or "slow-job"


def _symptom_class(chain: SlowChain | None) -> SymptomClass:
    if chain is None:
        return SymptomClass.OTHER
    verdict = chain.verdict
    if verdict.kind == "not the fabric":
        return SymptomClass.SLOW_NODE if verdict.cause in ("host", "gpu") else \
            SymptomClass.OTHER
    if verdict.kind == "cannot tell":
        return SymptomClass.OTHER
    deepest = next((h for h in reversed(chain.hops) if h.element == verdict.element),
                   chain.hops[-1] if chain.hops else None)
    words = " ".join([verdict.summary, *(deepest.evidence if deepest else []),
                      deepest.claim if deepest else ""]).lower()
    if verdict.layer == "optic":
        return SymptomClass.OPTIC_FAILURE
    return next((cls for pattern, cls in _BY_WORDS if pattern.search(words)),
                SymptomClass.BUSBW_LOW)


def _deepest_probed(chain: SlowChain) -> list[Hop]:
    """The deepest hop of a chain that carries a check to confirm it (none: empty)."""
    return next(([h] for h in reversed(chain.hops) if h.probe is not None), [])


def draft_slow_case(report: SlowJobReport, made_from: str) -> Case:
    """The analysis as a draft case (not stored)."""
    chains = report.chains
    lead = next((c for c in chains if c.verdict.kind == "fabric"),
                chains[0] if chains else None)
    components: list[str] = []
    for chain in chains:
        for element in (chain.verdict.element, *(h.element for h in reversed(chain.hops))):
            if element and element not in components and len(components) < 12:
                components.append(element)
    evidence = [EvidenceRow(component=h.element, metric=h.layer, value=line[:300],
                            source=made_from)
                for c in chains for h in c.hops for line in h.evidence][:MAX_EVIDENCE]
    episodes = [f"{c.episode.kind} {_iso(c.episode.start)} to {_iso(c.episode.end)}: median "
                f"{c.episode.median_s:.3g} s against {c.episode.baseline_s:.3g} s"
                for c in chains]
    localization = "\n".join(
        f"- episode {n}, {h.layer} {h.element}: {h.claim}"
        + (f" (against: {'; '.join(h.counter_evidence)})" if h.counter_evidence else "")
        for n, c in enumerate(chains, 1) for h in c.hops)
    verdicts = "\n".join(f"- episode {n}: {c.verdict.kind}"
                         + (f" — {c.verdict.element}" if c.verdict.element else "")
                         + f": {c.verdict.summary}" for n, c in enumerate(chains, 1))
    title_end = (f"{lead.verdict.kind} — {lead.verdict.element}" if lead is not None and
                 lead.verdict.element else (lead.verdict.kind if lead is not None else
                                            "no episode"))
    return Case(
        id=case_id_for_slow(report), title=f"Slow job {report.job}: {title_end}",
        status=CaseStatus.DRAFT, opened=_iso(report.start),
        symptom_class=_symptom_class(lead), components=components,
        tags=["slow-job", "triage"],
        symptom=report.summary + ("\n\n" + "\n".join(f"- {e}" for e in episodes)
                                  if episodes else ""),
        detection=f"`fabtui triage slow` over {_iso(report.start)} to {_iso(report.end)} "
                  f"({made_from}; read from {', '.join(report.sources) or 'its inputs'})",
        localization=localization + ("\n\n" + verdicts if verdicts else ""),
        evidence=evidence,
        timeline=[TimelineEntry(at=_iso(c.episode.start), text=f"{c.episode.kind} episode "
                                f"begins ({c.verdict.kind})") for c in chains],
        action_items=[ActionItem(text=f"confirm {h.layer} {h.element}: {p.command}"
                                 + (f" (runbook {p.runbook})" if p.runbook else ""))
                      for c in chains for h in _deepest_probed(c)
                      for p in ([h.probe] if h.probe is not None else [])])
