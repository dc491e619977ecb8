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
from fabtui.model.case import (
    Case,
    CaseStatus,
    Environment,
    EvidenceRow,
    SymptomClass,
    TimelineEntry,
)
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
_DEMO_NOTE = re.compile(r"\bon the demo fabric\b")
"""An operator note a face wrote for a simulated repair before such notes were `by="demo"`."""
_SIMULATED = re.compile(r"fabtui[-_ ]?sim|-SIM\b", re.IGNORECASE)
"""A value the demo fabric made up (a placeholder part number): no environment of an incident."""
_CA_TYPES = {"MT4123": "ConnectX-6", "MT4125": "ConnectX-6 Dx", "MT4129": "ConnectX-7",
             "MT4131": "ConnectX-8"}
"""ibstat's CA type (the PCI device id in decimal) -> the adapter (pci.ids: 15b3:101b, 101d,
1021, 1023)."""
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
    first_failure: str = ""
    sections: dict[str, list[str]] = field(default_factory=dict)
    """What note blocks with `case=` said, by section (title, symptom, root-cause, resolution)."""
    environment: dict[str, str] = field(default_factory=dict)

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


def _real(text: str) -> str:
    """`text` without what the demo fabric made up (`(part 400G-DR4-SIM)` in older journals, a
    `/var/log/fabtui-sim/...` path): simulator internals never reach a case."""
    if not _SIMULATED.search(text):
        return text
    text = re.sub(r"\s*\((?:part\s+)?[^()]*?(?:fabtui[-_ ]?sim|-SIM\b)[^()]*\)", "", text,
                  flags=re.IGNORECASE)
    return " ".join(w for w in text.split() if not _SIMULATED.search(w))


def _line(text: str, limit: int = 300) -> str:
    text = " ".join(_real(str(text)).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def draft_case(record: SessionRecord) -> Case:
    """The draft case of one session (status draft): `draft_incident` of that session alone."""
    return draft_incident([record])


def _short(title: str) -> str:
    """A runbook title without its explanation: `Optic replacement — clean, ...` -> `Optic
    replacement`."""
    return re.split(r"\s+[—–-]\s+|\s+\(", title, maxsplit=1)[0].strip() or title


def draft_incident(records: Sequence[SessionRecord]) -> Case:
    """The draft case of one incident: its sessions in order (a triage, then the repair it
    handed over to), all linked. Pre-filled from the journal: the title, symptom, root cause
    and resolution from the note blocks the runbooks mark with `case=` (the first session's
    symptom, the last one's root cause and resolution, the titles joined), else the runbook's
    first failure; the environment from what the probes read; the evidence, components,
    error codes, path and timeline of every session. What the demo fabric did for the
    operator (a simulated repair) is left out. Status draft until the operator reviews it."""
    if not records:
        raise ValueError("an incident needs at least one session")
    drafts: list[_Draft] = []
    for record in records:
        draft = _Draft(runbooks=[record.runbook])
        for event in record.events:
            _read(event, draft)
        drafts.append(draft)
    first, last = records[0], records[-1]
    merged = _Draft()
    for draft in drafts:
        for name in ("evidence", "failed", "timeline", "notes", "operator_notes", "decisions"):
            getattr(merged, name).extend(getattr(draft, name))
        for value in draft.components:
            merged.component(value)
        merged.codes += [c for c in draft.codes if c not in merged.codes]
        merged.runbooks = list(dict.fromkeys([*merged.runbooks, *draft.runbooks]))
        for key, value in draft.environment.items():
            merged.environment.setdefault(key, value)
    symptom_class = _symptom_class(first, merged.codes, merged.evidence)

    def said(section: str, which: Sequence[_Draft]) -> list[str]:
        return [text for d in which for text in d.sections.get(section, [])]

    titles = said("title", drafts)
    title = ": ".join(dict.fromkeys(titles)) if titles else _fallback_title(first, drafts[0])
    title = title[:1].upper() + title[1:]
    first_said = said("symptom", drafts[:1]) or said("symptom", drafts)
    opening = first_said[0] if first_said else next(
        (f"{_short(r.title)}: {d.first_failure}." for r, d in zip(records, drafts, strict=True)
         if d.first_failure), "")
    def failures(d: _Draft) -> list[str]:  # a stop a resume answered is no failure
        ended_in_error = d.outcome == Verdict.ERROR.value
        return [f for f in d.failed if ended_in_error or not f.startswith("[error]")]

    seen = "\n\n".join(
        f"Session {r.id} ({r.runbook}) ended {d.outcome or r.status}"
        + (":\n" + "\n".join(f"- {f}" for f in failures(d)) if failures(d) else ".")
        for r, d in zip(records, drafts, strict=True))
    symptom = "\n\n".join(p for p in (opening, seen) if p)
    root_cause = "\n\n".join(said("root-cause", drafts[::-1][:1]) or said("root-cause", drafts))
    resolution = "\n\n".join(said("resolution", drafts[::-1][:1]) or
                              said("resolution", drafts))
    localization = "\n\n".join(p for p in [
        *(f"Path through {r.runbook}: {' → '.join(d.path)}." for r, d in
          zip(records, drafts, strict=True) if d.path),
        "\n".join(f"- {d}" for d in merged.decisions),
        "\n".join(f"- {n}" for n in merged.notes)] if p)
    lessons = "\n".join(f"- {n}" for n in merged.operator_notes)
    tags = list(dict.fromkeys([symptom_class.value, *(t for r in records for t in r.tags)]))
    outcome = drafts[-1].outcome or last.status
    sessions = [r.id for r in records]
    return Case(
        id=case_id_for(first.id), title=title or first.runbook, status=CaseStatus.DRAFT,
        opened=_when(first.started_at), lang="en", symptom_class=symptom_class,
        error_codes=merged.codes, components=merged.components, tags=[t for t in tags if t],
        environment=Environment(**merged.environment),
        sessions=sessions, runbooks=merged.runbooks,
        authors=list(dict.fromkeys(r.operator for r in records if r.operator)),
        symptom=symptom, root_cause=root_cause, resolution=resolution,
        summary=(f"Filed from session {first.id} ({first.runbook}, {outcome})."
                 if len(records) == 1 else
                 "Filed from the sessions of one incident: " + ", then ".join(
                     f"{r.id} ({r.runbook}, {d.outcome or r.status})"
                     for r, d in zip(records, drafts, strict=True)) + "."),
        evidence=merged.evidence[:MAX_EVIDENCE],
        evidence_notes=(f"{len(merged.evidence) - MAX_EVIDENCE} more rows in the sessions"
                        if len(merged.evidence) > MAX_EVIDENCE else ""),
        timeline=merged.timeline, localization=localization,
        lessons=("Operator notes:\n" + lessons) if lessons else "")


def _fallback_title(record: SessionRecord, draft: _Draft) -> str:
    """A title when no note block gives one: the runbook's name, where, and how it ended."""
    where = next((c for c in draft.components if ":" in c and not c.startswith("optic:")),
                 draft.components[0] if draft.components else "")
    title = _short(record.title) or record.runbook
    if where:
        title += f" on {where}"
    if draft.first_failure:
        title += f": {_line(draft.first_failure, 100)}"
    return title


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
        if data.by == "demo" or (data.by == "operator" and _DEMO_NOTE.search(data.text)):
            return  # the demo fabric's doing (a simulated repair), not the incident's
        if data.case:
            draft.sections.setdefault(data.case, []).append(" ".join(_real(data.text).split()))
            return
        text = _line(data.text)
        (draft.operator_notes if data.by == "operator" else draft.notes).append(text)
        draft.timeline.append(TimelineEntry(at=_when(event.at), text=f"note: {text}"))
    elif isinstance(data, Decision):
        if data.by == "operator":
            what = data.answer or data.skip or data.jump or data.abort or data.input or ""
            asked = data.prompt or (f"typed confirmation {event.block}" if data.typed
                                    else event.block or "")
            draft.decisions.append(_line(f"operator at {event.step or '-'}: "
                                         f"{asked} {what} {data.reason or ''}"))
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
    _environment(result, draft.environment)
    if data.verdict not in _PROBLEMS:
        return
    name = event.block or "-"
    if data.verdict is not Verdict.ERROR and not draft.first_failure and data.message:
        draft.first_failure = _line(data.message, 200)
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
        if probe.startswith("logs."):
            component = _logged_host(component, str(result.get("target") or ""))
        if not (probe.startswith("logs.") and component == result.get("target")):
            draft.component(component)
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


def _logged_host(component: str, log_host: str) -> str:
    """A log's element without the host the log was read on: `node001:node003` (node003 as
    node001's log names it, a host named like the log's own) is node003; `node003:mlx5_5` read
    on node003 stays the NIC it is."""
    head, _, rest = component.partition(":")
    digitless = re.compile(r"\d+")
    if head == log_host and rest and ":" not in rest and \
            digitless.sub("", rest) == digitless.sub("", log_host):
        return rest
    return component


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


def _environment(result: dict[str, Any], found: dict[str, str]) -> None:
    """What the probes read about the hardware and software, into `found` (first reading
    wins): GPU and driver (nvidia-smi -q), NIC and its firmware (ibstat, mlxlink), the optics
    at both ends (switch DOM, mlxlink -m), the switch OS, NCCL (the job's log)."""
    parsed = result.get("parsed")
    if not isinstance(parsed, dict):
        return

    def put(key: str, value: object) -> None:
        text = " ".join(str(value).split()) if value not in (None, "") else ""
        if not text or _SIMULATED.search(text):
            return
        if key == "optic" and found.get(key) and text.split()[0] not in found[key]:
            found[key] += f"; {text}"  # the two ends of the cable, each once
            return
        found.setdefault(key, text)

    kind = parsed.get("kind")
    if kind == "nvidia-smi-q":
        gpus = parsed.get("gpus") or []
        names = [g.get("product_name") for g in gpus if isinstance(g, dict)]
        if names and names[0]:
            put("gpu", f"{len(names)}x {names[0]}" if len(names) > 1 else names[0])
        put("driver", f"NVIDIA {parsed['driver_version']}" if parsed.get("driver_version")
            else None)
        put("cuda", parsed.get("cuda_version"))
    elif kind == "nccl-log":
        put("nccl", parsed.get("nccl_version"))
    elif kind == "ibstat":
        for ca in (parsed.get("cas") or {}).values():
            if isinstance(ca, dict):
                ca_type = str(ca.get("ca_type") or "")
                put("nic", f"{_CA_TYPES[ca_type]} ({ca_type})" if ca_type in _CA_TYPES
                    else ca_type)
                put("firmware", f"NIC {ca['firmware_version']}" if ca.get("firmware_version")
                    else None)
                break
    elif kind == "mlxlink":
        put("firmware", f"NIC {parsed['firmware_version']}" if parsed.get("firmware_version")
            else None)
        module = " ".join(str(parsed.get(k) or "") for k in ("vendor_name",
                                                             "vendor_part_number")).strip()
        put("optic", f"NIC side {module}" if module else None)
    elif kind == "transceiver-dom":
        if parsed.get("flavor"):
            put("switch", {"sonic": "SONiC", "eos": "Arista EOS", "nvos": "NVIDIA NVOS",
                           "onyx": "NVIDIA Onyx"}.get(str(parsed["flavor"]),
                                                      str(parsed["flavor"])))
        for optic in (parsed.get("interfaces") or {}).values():
            if not isinstance(optic, dict) or not optic.get("present", True):
                continue
            made = " ".join(str(optic.get(k) or "") for k in ("vendor", "part_number"))
            media = re.sub(r"\s*\(.*\)$", "", str(optic.get("media_type") or ""))
            what = (made + (f" ({media})" if media else "")
                    if made.strip() and not _SIMULATED.search(made) else
                    " ".join(str(optic.get(k) or "") for k in ("identifier", "media_type")))
            put("optic", f"switch side {' '.join(what.split())}" if what.strip() else None)
            break
