"""A session becomes a draft case: what the journal recorded, laid out as a case.

A finished or abandoned runbook session already holds most of a case: the symptoms its runbook
is for, the checks that failed with their values, the components they were read on, the path the
run took, its timeline and the notes left on the way. `draft_case` lays that out; the operator
then writes the root cause and the resolution (`fabtui cases complete`, or by editing the
exported markdown and importing it again). Pure: the caller reads the journal and masks the
result (the library masks everything it stores).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fabtui.cases.components import error_codes_in
from fabtui.model.case import Case, CaseStatus, EvidenceRow, SymptomClass, TimelineEntry
from fabtui.model.element import ElementRef
from fabtui.model.events import (
    BlockCommand,
    BlockFinished,
    Decision,
    Event,
    Note,
    SessionCancelled,
    SessionFinished,
    StepStarted,
)
from fabtui.model.verdict import Verdict

MAX_EVIDENCE = 40
"""Evidence rows kept from one session (a sweep can fail hundreds of lanes)."""

_CLASS_BY_RUNBOOK = {
    "nccl-hang-triage": SymptomClass.NCCL_HANG, "busbw-low": SymptomClass.BUSBW_LOW,
    "slow-node": SymptomClass.SLOW_NODE, "pfc-storm": SymptomClass.PFC_STORM,
    "link-flap": SymptomClass.LINK_FLAP, "gdr-not-effective": SymptomClass.GDR_NOT_EFFECTIVE,
    "multi-job-interference": SymptomClass.MULTI_JOB_INTERFERENCE,
    "rank-mapping-check": SymptomClass.RANK_MAPPING,
    "optic-replacement": SymptomClass.OPTIC_FAILURE,
}
_CLASS_BY_CODE = (("xid-", SymptomClass.GPU_XID), ("ib-status-", SymptomClass.IB_COMPLETION_ERROR))
_CLASS_BY_METRIC = (
    # Most specific first: a failing optic also shows FEC errors and drops, so the DOM reading
    # names the class before the symptoms it causes do.
    (re.compile(r"rx_power|tx_power|tx_bias|optic|dom_|laser"), SymptomClass.OPTIC_FAILURE),
    (re.compile(r"xid|sxid|row_remap|ecc_"), SymptomClass.GPU_XID),
    (re.compile(r"pause|pfc"), SymptomClass.PFC_STORM),
    (re.compile(r"flap|link_down|carrier|link_downed"), SymptomClass.LINK_FLAP),
    (re.compile(r"fec|_ber\b|ber$|symbol_err"), SymptomClass.FEC_ERRORS),
    (re.compile(r"mtu|gid|trust|firmware|qos|dscp|ecn_enabled"),
     SymptomClass.ROCE_CONFIG_MISMATCH),
    (re.compile(r"discard|drop"), SymptomClass.PORT_DROPS),
    (re.compile(r"busbw|algbw"), SymptomClass.BUSBW_LOW),
)
"""A session of a general runbook (acceptance, bring-up) is classed by what failed in it."""
_COMPONENT_VARS = ("suspect", "port", "nic", "node", "leaf", "switch", "target")
_PROBLEMS = (Verdict.FAIL, Verdict.WARN, Verdict.ERROR)


@dataclass(frozen=True)
class SessionRecord:
    """What filing reads about one session: the journal's record and its runbook's symptoms."""

    id: str
    runbook: str
    title: str
    status: str
    started_at: float
    events: Sequence[Event]
    operator: str = ""
    symptoms: Sequence[str] = ()
    """The runbook's `symptoms:` (what the operator saw that made them run it)."""
    tags: Sequence[str] = ()
    """The runbook's tags."""


@dataclass
class _Draft:
    components: list[str] = field(default_factory=list)
    evidence: list[EvidenceRow] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    timeline: list[TimelineEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    operator_notes: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    runbooks: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    conclusion: str = ""
    outcome: str = ""
    path: list[str] = field(default_factory=list)

    def component(self, value: Any) -> None:
        if not isinstance(value, str) or not value or " " in value:
            return
        ref = ElementRef.parse(value).whole
        value = ref.device if ref.part.startswith("rank") else str(ref)
        # (a rank is where it ran, not a part of the fabric)
        if value not in self.components:
            self.components.append(value)


def case_id_for(session: str) -> str:
    """The id of the case filed from `session`."""
    return f"session-{session}"


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def _line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def draft_case(record: SessionRecord) -> Case:
    """The draft case of a session (status draft; root cause and resolution left empty)."""
    draft = _Draft(runbooks=[record.runbook])
    for event in record.events:
        _read(event, draft)
    symptom_class = _symptom_class(record, draft.codes, draft.evidence)
    findings = "\n".join(f"- {f}" for f in draft.failed)
    symptom = "\n\n".join(p for p in (
        "Symptoms this runbook is for: " + "; ".join(record.symptoms) + "."
        if record.symptoms else "",
        f"Session {record.id} of runbook {record.runbook} ended "
        f"{draft.outcome or record.status}" + (":" if findings else "."), findings) if p)
    path = " → ".join(draft.path)
    localization = "\n\n".join(p for p in (
        f"Path through {record.runbook}: {path}." if path else "",
        "\n".join(f"- {d}" for d in draft.decisions),
        "\n".join(f"- {n}" for n in draft.notes)) if p)
    lessons = "\n".join(f"- {n}" for n in draft.operator_notes)
    tags = list(dict.fromkeys([symptom_class.value, *record.tags]))
    conclusion = draft.conclusion or (draft.failed[-1] if draft.failed else "")
    title = f"{record.title}: {_line(conclusion, 120)}" if conclusion else record.title
    outcome = draft.outcome or record.status
    return Case(
        id=case_id_for(record.id), title=title or record.runbook, status=CaseStatus.DRAFT,
        opened=_when(record.started_at), lang="en", symptom_class=symptom_class,
        error_codes=draft.codes, components=draft.components, tags=[t for t in tags if t],
        sessions=[record.id], runbooks=list(dict.fromkeys(draft.runbooks)),
        authors=[record.operator] if record.operator else [],
        symptom=symptom,
        summary=f"Filed from session {record.id} ({record.runbook}, {outcome})."
        + (f" The run concluded: {_line(conclusion)}." if conclusion else ""),
        evidence=draft.evidence[:MAX_EVIDENCE],
        evidence_notes=(f"{len(draft.evidence) - MAX_EVIDENCE} more rows in session "
                        f"{record.id}" if len(draft.evidence) > MAX_EVIDENCE else ""),
        timeline=draft.timeline, localization=localization,
        lessons=("Operator notes:\n" + lessons) if lessons else "")


def _read(event: Event, draft: _Draft) -> None:
    data = event.data
    if isinstance(data, StepStarted):
        draft.path.append(event.step or "")
        draft.timeline.append(TimelineEntry(at=_when(event.at),
                                            text=_line(f"step {data.title or event.step}")))
    elif isinstance(data, BlockCommand):
        return
    elif isinstance(data, BlockFinished):
        _finished(event, data, draft)
    elif isinstance(data, Note):
        text = _line(data.text)
        (draft.operator_notes if data.by == "operator" else draft.notes).append(text)
        draft.timeline.append(TimelineEntry(at=_when(event.at), text=f"note: {text}"))
    elif isinstance(data, Decision):
        if data.by == "operator":
            what = data.answer or data.skip or data.jump or data.abort or data.input or ""
            draft.decisions.append(_line(f"operator at {event.step or '-'}: "
                                         f"{data.prompt or ''} {what} {data.reason or ''}"))
        elif data.target and data.target.startswith("runbook:"):
            draft.runbooks.append(data.target.removeprefix("runbook:"))
    elif isinstance(data, SessionFinished):
        draft.outcome = data.outcome.value
        if data.handover:
            draft.runbooks.append(data.handover)
        draft.timeline.append(TimelineEntry(at=_when(event.at),
                                            text=f"session ended {data.outcome.value}"
                                            + (f": {_line(data.reason)}" if data.reason
                                               else "")))
    elif isinstance(data, SessionCancelled):
        draft.outcome = "cancelled"
        draft.timeline.append(TimelineEntry(at=_when(event.at),
                                            text=f"session cancelled: {_line(data.reason)}"))


def _finished(event: Event, data: BlockFinished, draft: _Draft) -> None:
    result = data.result
    for key in _COMPONENT_VARS:
        draft.component(data.vars.get(key))
    optic = data.vars.get("optic_id") or data.vars.get("optic")
    if isinstance(optic, str) and optic and " " not in optic:
        draft.component(f"optic:{optic}")
    for code in error_codes_in(data.message):
        if code not in draft.codes:
            draft.codes.append(code)
    if data.verdict not in _PROBLEMS:
        return
    name = event.block or "-"
    draft.failed.append(f"[{data.verdict.value}] {name}: {_line(data.message)}")
    draft.timeline.append(TimelineEntry(at=_when(event.at),
                                        text=_line(f"{name} {data.verdict.value}: "
                                                   f"{data.message}")))
    if "rule" in result:  # a check's verdict: what the run concluded at that point
        draft.conclusion = _line(data.message)
    probe = str(result.get("probe") or name)
    for metric in result.get("metrics") or []:
        if not isinstance(metric, dict) or metric.get("verdict") not in \
                [v.value for v in _PROBLEMS]:
            continue
        component = str(metric.get("component") or result.get("target") or "")
        if not (probe.startswith("logs.") and component == result.get("target")):
            draft.component(component)  # (the host a log was read on is not a suspect)
        value = f"{metric.get('value')}"
        unit = str(metric.get("unit") or "")
        value = _line(f"{value} {unit}".strip(), 200)
        for code in error_codes_in(value):
            if code not in draft.codes:
                draft.codes.append(code)
        draft.evidence.append(EvidenceRow(component=component, metric=str(metric.get("name")),
                                          value=value, source=probe))
    if not result.get("metrics") and result.get("target"):
        draft.component(result.get("target"))


def _symptom_class(record: SessionRecord, codes: list[str],
                   evidence: Sequence[EvidenceRow]) -> SymptomClass:
    """The runbook's own class; else the error codes seen; else what the failing metrics
    measured; else a class named in the runbook's name or tags; else other."""
    known = _CLASS_BY_RUNBOOK.get(record.runbook)
    if known is not None:
        return known
    for prefix, symptom_class in _CLASS_BY_CODE:
        if any(c.startswith(prefix) for c in codes):
            return symptom_class
    metrics = [row.metric.lower() for row in evidence]
    for pattern, symptom_class in _CLASS_BY_METRIC:
        if any(pattern.search(metric) for metric in metrics):
            return symptom_class
    words = " ".join([record.runbook, *record.tags]).lower()
    for symptom_class in SymptomClass:
        if symptom_class is not SymptomClass.OTHER and \
                re.search(rf"(?<![\w-]){re.escape(symptom_class.value)}(?![\w-])", words):
            return symptom_class
    return SymptomClass.OTHER
