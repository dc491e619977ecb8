"""Sessions (and, for an incident, a case) turned into a `Report`: the sections each kind of
report has, filled only with what the journal recorded. What a kind needs and the sessions do
not hold is listed in `missing`, never invented. Pure: reads its inputs, writes nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fabtui.model.probe import Threshold
from fabtui.model.report import (
    Check,
    Criterion,
    Curve,
    CurvePoint,
    Failure,
    InjectedFault,
    Inventory,
    PairResult,
    Problem,
    Report,
    ReportKind,
    Series,
    SeriesPoint,
    Source,
    TimelineEntry,
)
from fabtui.model.topology import Topology
from fabtui.model.verdict import Verdict, worst
from fabtui.reports import rows
from fabtui.reports.evidence import BlockRecord, ReportError, SessionEvidence, iso
from fabtui.reports.rows import BAD, Reading, number, readings, show
from fabtui.reports.story import (
    element_line,
    final_check,
    is_symptom,
    kind_for,
    last_note,
    phases,
    problems,
    repaired_ends,
    split_scope,
    symptoms,
)

NCCL_PROBES = ("nccl",)
RDMA_PROBES = ("perftest",)
VERSION_KEYS = {
    "nccl_version": "NCCL", "nccl_tests_version": "nccl-tests", "driver_version": "NVIDIA driver",
    "cuda_version": "CUDA", "fw_ver": "NIC firmware", "firmware_version": "firmware",
    "ofed_version": "OFED", "vbios_version": "GPU VBIOS", "sonic_version": "SONiC",
    "os_version": "switch OS", "kernel_version": "kernel",
}


@dataclass
class ReportInputs:
    """What the workspace gathers for a report: the sessions' evidence, the topology, the
    probe catalog's thresholds, the demo scenarios' planted faults and, for an incident, a
    case as plain sections."""

    sessions: Sequence[SessionEvidence]
    topology: Topology | None = None
    thresholds: Mapping[str, Sequence[Threshold]] = field(default_factory=dict)
    planted: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Scenario name -> what it plants (`optic-degrading on leaf-g00-r3:Ethernet16`)."""
    kinds: Mapping[str, str] = field(default_factory=dict)
    """Runbook id -> the report its sessions make (`report:` in its front matter)."""
    case: Mapping[str, Any] | None = None
    """An incident's case: `id`, `title`, `sections` (name -> text), `timeline` (list of
    `(at, what)`), `action_items` (list of text)."""
    now: datetime | None = None


def guess_kind(sessions: Sequence[SessionEvidence],
               kinds: Mapping[str, str] | None = None) -> ReportKind:
    """The report the sessions call for when nobody said which (`story.kind_for`): `kinds`
    maps a runbook id to the report its front matter names."""
    return kind_for(sessions, kinds or {})


@dataclass
class _Judged:
    """One session as the report judges it: the readings it is judged on and, for a repair,
    the readings before the repair."""

    session: SessionEvidence
    blocks: list[BlockRecord]
    readings: list[Reading]
    before_blocks: list[BlockRecord]
    before: list[Reading]
    repaired_at: int | None
    others: list[Reading] = field(default_factory=list)
    """A repair: readings of other ports of a device it read whole (the leaf's other ports
    in `switch.fec`), after the repair; shown apart, they decide nothing about it."""
    others_before: list[Reading] = field(default_factory=list)


def _judge(session: SessionEvidence, kind: ReportKind, kinds: Mapping[str, str]) -> _Judged:
    """A repair is judged on the ports it repaired (`story.split_scope`); anything else on
    every reading."""
    repair = kinds.get(session.runbook) == ReportKind.REPAIR.value or (
        kind is ReportKind.REPAIR and session.runbook not in kinds)
    blocks, before, point = phases(session, repair)
    if not repair:
        return _Judged(session, blocks, readings(blocks), before, readings(before), point)
    ends = repaired_ends(session)
    after, others = split_scope(readings(blocks), ends)
    earlier, others_before = split_scope(readings(before), ends)
    return _Judged(session, blocks, after, before, earlier, point, others, others_before)


def build_report(kind: ReportKind, given: ReportInputs) -> Report:
    """The report of `kind` from `given`. Raises `ReportError` when there is nothing to
    report (no session) or an incident report has neither a case nor a session."""
    sessions = list(given.sessions)
    if not sessions and given.case is None:
        raise ReportError("no session to report on")
    if kind is ReportKind.INCIDENT and given.case is None and not sessions:
        raise ReportError("an incident review needs a case (--case ID) or a session")
    now = (given.now or datetime.now(tz=UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    missing: list[str] = []
    for s in sessions:
        if s.finished is None:
            state = f"waits at gate {s.waiting.gate} ({s.waiting.reason})" if s.waiting \
                else "was interrupted (cancelled)" if s.cancelled else "has not finished"
            missing.append(f"session {s.id} ({s.runbook}) {state}: its later steps are not in "
                           f"this report (fabtui runbook resume {s.id})")
        if s.dry_run:
            missing.append(f"session {s.id} was a dry run: it measured nothing")
    judged = [_judge(s, kind, given.kinds) for s in sessions]
    optics = optics_of(given.topology) if given.topology is not None else {}
    checks = [c for j in judged for c in _checks(j.session, j.session.current())]
    curves = [c for s in sessions for c in _curves(s)]
    pairs = [p for s in sessions for p in _pairs(s)]
    failures = [f for j in judged for f in _failures(j.session.id, j.readings, j.blocks)]
    criteria = [c for j in judged for c in rows.criteria(
        j.session.id, [r for r in j.readings if not is_symptom(r)], given.thresholds,
        before=[r for r in j.before if not is_symptom(r)])]
    other_criteria = [c for j in judged for c in rows.criteria(
        j.session.id, j.others, given.thresholds, before=j.others_before)]
    found = [p for j in judged for p in problems(j.session.id, j.readings, j.blocks, optics,
                                                 given.thresholds)]
    elsewhere = [p for j in judged for p in problems(j.session.id, j.others, (), optics,
                                                     given.thresholds)]
    before = [p for j in judged for p in problems(j.session.id, j.before, j.before_blocks,
                                                  optics, given.thresholds)]
    said = [line for j in judged for line in symptoms([*j.before, *j.readings])]
    software = _software(sessions)
    if not software and kind is not ReportKind.INCIDENT:
        missing.append("software versions: no probe in these sessions read a driver, CUDA, "
                       "OFED or firmware version (new-node-acceptance reads them)")
    inventory = inventory_of(given.topology) if given.topology is not None else None
    if kind is ReportKind.INCIDENT and given.case is not None and not sessions:
        inventory = None  # the case's own environment is shown: it may be another cluster
    if inventory is None and kind is not ReportKind.INCIDENT:
        missing.append("hardware: no topology to count GPUs, NICs, switches and optics from")
    if kind is ReportKind.RDMA:
        criteria = [c for c in criteria if c.name.startswith(RDMA_PROBES)]
        if not pairs:
            missing.append("RDMA pairs: no perftest result in these sessions")
    if kind is ReportKind.NCCL:
        criteria = [c for c in criteria if c.name.startswith(NCCL_PROBES)]
        if not curves:
            missing.append("NCCL collectives: no nccl-tests result in these sessions")
    faults = _faults(sessions, given.planted, curves, pairs) \
        if kind is ReportKind.FAULT_INJECTION else []
    if kind is ReportKind.FAULT_INJECTION and not faults:
        missing.append("injected faults: none of these sessions ran on the demo fabric with a "
                       "fault scenario")
    sections: dict[str, str] = {}
    action_items: list[str] = []
    timeline = [t for s in sessions for t in _timeline(s)]
    title_subject = sessions[0].inputs.get("customer") if sessions else None
    if kind is ReportKind.INCIDENT:
        sections, action_items, case_timeline = _incident(given.case, sessions, failures,
                                                          missing)
        timeline = case_timeline + timeline
    verdict = _overall(kind, judged, failures, faults, given.case, given.kinds)
    if kind is ReportKind.INCIDENT and given.case is not None:
        conclusion = _incident_conclusion(given.case)
    else:
        conclusion = _conclusion(kind, verdict, failures, faults, sessions, optics, judged,
                                 found, given.kinds)
    summary = _summary(kind, verdict, judged, found, before, said, criteria, given.kinds,
                       given.case)
    summary += [f"Not part of this repair (another port read by the same probe, deciding "
                f"nothing here): {element_line(p)}." for p in elsewhere[:3]]
    if len(elsewhere) > 3:
        summary.append(f"... and {len(elsewhere) - 3} more port(s) not part of this repair "
                       "below.")
    return Report(
        kind=kind, title=_title(kind, given, title_subject, inventory), generated=now,
        sessions=[s.ref() for s in sessions], inventory=inventory, software=software,
        criteria=criteria, other_criteria=other_criteria, checks=checks, curves=curves, pairs=pairs,
        series=_series(sessions, failures), failures=failures, problems=found,
        before_problems=before, summary=summary, symptoms=said,
        faults=faults, timeline=sorted(timeline, key=lambda t: t.at), sections=sections,
        action_items=action_items, risks=_risks(sessions, checks, criteria),
        case=str(given.case["id"]) if given.case is not None else None,
        environment={str(k): str(v) for k, v in
                     (given.case.get("environment") or {}).items()} if given.case else {},
        recommendations=_recommendations(sessions, failures, kind), missing=missing,
        verdict=verdict, conclusion=conclusion)


# ---- sections ---------------------------------------------------------------------------------

def inventory_of(topology: Topology) -> Inventory:
    """Models and counts of what the topology holds."""
    gpus: Counter[str] = Counter()
    nics: Counter[str] = Counter()
    speeds: Counter[str] = Counter()
    for node in topology.nodes:
        for gpu in node.gpus:
            gpus[gpu.model or node.model or "GPU (model not in the topology)"] += 1
        for nic in node.nics:
            nics[nic.model or "NIC (model not in the topology)"] += 1
            speeds[f"{nic.speed:g}G" if isinstance(nic.speed, (int, float)) else str(nic.speed)] \
                += 1
    switches: Counter[str] = Counter(
        f"{sw.role} {sw.model or sw.flavor}" for sw in topology.switches)
    return Inventory(cluster=topology.cluster.name, fabric=str(topology.cluster.fabric),
                     nodes=len(topology.nodes), gpus=dict(gpus), nics=dict(nics),
                     switches=dict(switches), links=len(topology.links),
                     optics=sum(1 for link in topology.links if link.optic),
                     speeds=dict(speeds))


def _checks(session: SessionEvidence, blocks: Sequence[BlockRecord]) -> Iterable[Check]:
    for block in blocks:
        if block.kind == "check" and block.block:
            yield Check(step=session.steps.get(block.step or "", block.step or ""),
                        id=block.block, verdict=block.verdict, statement=block.message,
                        source=block.source(session.id))


def _curves(session: SessionEvidence) -> Iterable[Curve]:
    for block in session.probe_blocks(*NCCL_PROBES):
        if block.superseded:
            continue
        parsed = block.parsed
        rows = parsed.get("rows")
        if not isinstance(rows, list) or not rows:
            continue
        points = [CurvePoint(size_bytes=int(r["size_bytes"]),
                             busbw=_half(r, "busbw"), algbw=_half(r, "algbw"))
                  for r in rows if isinstance(r, dict) and "size_bytes" in r]
        metrics = {m.get("name"): m.get("value") for m in block.metrics()}
        busbws = [p.busbw for p in points if p.busbw is not None]
        yield Curve(collective=str(parsed.get("collective") or block.probe),
                    target=str(block.result.get("target", "")),
                    ranks=_command_ranks(block) or _int(parsed.get("n_gpus")),
                    points=points, peak_busbw=max(busbws) if busbws else None,
                    expected_busbw=_float(metrics.get("busbw_expected")),
                    verdict=block.verdict, source=block.source(session.id))


def _pairs(session: SessionEvidence) -> Iterable[PairResult]:
    for block in session.probe_blocks(*RDMA_PROBES):
        if block.superseded:
            continue
        metrics = {m.get("name"): m.get("value") for m in block.metrics()}
        target = str(block.result.get("target", ""))
        client, _, server = target.partition(",")
        yield PairResult(client=client, server=server or "?",
                         bandwidth_gbps=_float(metrics.get("bw_avg_gbps")),
                         peak_gbps=_float(metrics.get("bw_peak_gbps")),
                         message_bytes=_int(metrics.get("message_bytes")),
                         verdict=block.verdict, source=block.source(session.id))


def _failures(session: str, found: Sequence[Reading],
              blocks: Sequence[BlockRecord]) -> Iterable[Failure]:
    """Each reading that is not ok (its value as shown in the criteria), each failing check
    and each block that could not run, of the blocks the session is judged on."""
    for reading in found:
        if reading.verdict not in BAD:
            continue
        limit = number(reading.metric.get("limit"))
        unit = reading.unit
        what = (f"{reading.probe}: {reading.name} = "
                f"{reading.down or show(reading.value, unit)}"
                + (f" (limit {show(limit, unit)})" if limit is not None and not reading.down
                   else ""))
        yield Failure(what=what, component=None if is_symptom(reading) else
                      reading.component or None, verdict=reading.verdict,
                      source=reading.block.source(session))
    for block in blocks:
        if block.verdict not in BAD:
            continue
        if block.probe:
            if block.verdict is Verdict.ERROR:
                yield Failure(what=f"{block.probe}: {block.message}",
                              component=str(block.result.get("target") or "") or None,
                              verdict=block.verdict, source=block.source(session))
        elif block.kind == "check" or block.verdict.rank >= Verdict.ERROR.rank:
            yield Failure(what=block.message or f"{block.block}: {block.verdict}",
                          component=None, verdict=block.verdict, source=block.source(session))


SERIES_MAX = 12
"""Counter timelines kept (the failing components' metrics read most often)."""


def _series(sessions: Sequence[SessionEvidence], failures: Sequence[Failure]) -> list[Series]:
    """The failing components' metrics that were read at least twice, over time."""
    wanted = {_port(f.component) for f in failures if f.component}
    found: dict[tuple[str, str], list[SeriesPoint]] = {}
    units: dict[tuple[str, str], str] = {}
    for session in sessions:
        for block in session.blocks:
            for metric in block.metrics():
                component = str(metric.get("component", ""))
                value = metric.get("value")
                if _port(component) not in wanted or isinstance(value, bool) or \
                        not isinstance(value, (int, float)):
                    continue
                key = (str(metric.get("name")), component)
                found.setdefault(key, []).append(SeriesPoint(
                    at=iso(block.at), value=float(value), source=block.source(session.id)))
                units[key] = str(metric.get("unit") or "")
    kept = sorted(((k, v) for k, v in found.items() if len(v) >= 2),
                  key=lambda kv: (-len(kv[1]), kv[0]))[:SERIES_MAX]
    return [Series(metric=name, component=component, unit=units[(name, component)],
                   points=points) for (name, component), points in kept]


def _software(sessions: Sequence[SessionEvidence]) -> dict[str, list[str]]:
    found: dict[str, dict[str, None]] = {}
    for session in sessions:
        for block in session.blocks:
            for key, value in _walk(block.parsed):
                label = VERSION_KEYS.get(key)
                if label and isinstance(value, (str, int, float)) and str(value).strip():
                    found.setdefault(label, {})[str(value).strip()] = None
    return {label: list(values) for label, values in found.items()}


def _walk(value: Any, depth: int = 0) -> Iterable[tuple[str, Any]]:
    if depth > 4:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            if isinstance(item, (dict, list)):
                yield from _walk(item, depth + 1)
    elif isinstance(value, list):
        for item in value[:64]:
            yield from _walk(item, depth + 1)


def _faults(sessions: Sequence[SessionEvidence], planted: Mapping[str, Sequence[str]],
            curves: Sequence[Curve], pairs: Sequence[PairResult]) -> list[InjectedFault]:
    found = []
    for index, session in enumerate(sessions):
        scenario = session.fabric.get("scenario")
        if not scenario or scenario == "healthy":
            continue
        plants = [*planted.get(scenario, ()), *session.fabric.get("injected", [])]
        components = [p.rsplit(" on ", 1)[-1] for p in plants]
        bad = [b for b in session.blocks if b.verdict in (Verdict.WARN, Verdict.FAIL)]
        detected_by = [f"{b.block} ({b.verdict})" for b in bad
                       if b.kind == "check" or any(c in b.message for c in components)]
        degradation = [f"{c.collective} on {c.target}: {_fmt(c.peak_busbw)} GB/s, expected "
                       f"{_fmt(c.expected_busbw)}" for c in curves
                       if c.source.session == session.id and c.peak_busbw is not None
                       and c.expected_busbw and c.peak_busbw < 0.9 * c.expected_busbw]
        degradation += [f"RDMA {p.client} -> {p.server}: {_fmt(p.bandwidth_gbps)} Gb/s"
                        for p in pairs if p.source.session == session.id
                        and p.verdict in (Verdict.WARN, Verdict.FAIL)]
        handover = session.finished.handover if session.finished else None
        later = [s for s in sessions[index + 1:] if handover and s.runbook == handover]
        recovered = None if not later else all(s.outcome is Verdict.OK for s in later)
        found.append(InjectedFault(
            scenario=scenario, planted=plants or [f"scenario {scenario}"],
            detected=bool(detected_by) or session.outcome in (Verdict.FAIL, Verdict.WARN),
            detected_by=detected_by, degradation=degradation, recovered=recovered,
            source=_session_source(session)))
    return found


def _timeline(session: SessionEvidence) -> Iterable[TimelineEntry]:
    source = _session_source(session)
    yield TimelineEntry(at=iso(session.started_at), what=f"{session.runbook} started "
                        f"(session {session.id})", source=source)
    for block in session.blocks:
        if block.verdict in (Verdict.FAIL, Verdict.ERROR) and block.kind == "check":
            yield TimelineEntry(at=iso(block.at), what=f"{block.block}: {block.message}",
                                source=block.source(session.id))
    for at, block_id, decision in session.decisions:
        if decision.by == "operator":
            yield TimelineEntry(at=iso(at), what=f"operator: {decision.prompt or block_id} -> "
                                f"{decision.answer or decision.skip or decision.abort or 'ok'}",
                                source=source)
    if session.finished is not None:
        yield TimelineEntry(at=iso(session.last_at), what=f"{session.runbook} ended "
                            f"{session.finished.outcome}" + (f", handed over to "
                            f"{session.finished.handover}" if session.finished.handover
                            else ""), source=source)


def _incident(case: Mapping[str, Any] | None, sessions: Sequence[SessionEvidence],
              failures: Sequence[Failure], missing: list[str]
              ) -> tuple[dict[str, str], list[str], list[TimelineEntry]]:
    order = ("Summary", "Impact", "Symptom", "Trigger", "Detection", "Localization",
             "Root cause", "Resolution", "Lessons")
    if case is None:  # the summary, the logs' symptoms and the evidence tell it
        missing.append("case: no case given (fabtui cases file SESSION, then --case ID): root "
                       "cause, resolution and lessons come from it")
        return {}, [], []
    given = {str(k): str(v) for k, v in (case.get("sections") or {}).items() if v}
    sections = {name: given[name] for name in order if name in given}
    sections |= {k: v for k, v in given.items() if k not in sections}
    for name in ("Root cause", "Resolution"):  # (the headline says it in one line)
        if name not in sections:
            missing.append(f"case {case.get('id')}: no '{name}' section")
    timeline = [TimelineEntry(at=str(at), what=str(what)) for at, what in
                case.get("timeline") or []]
    return sections, [str(a) for a in case.get("action_items") or []], timeline


def _overall(kind: ReportKind, judged: Sequence[_Judged], failures: Sequence[Failure],
             faults: Sequence[InjectedFault], case: Mapping[str, Any] | None,
             kinds: Mapping[str, str]) -> Verdict:
    if kind is ReportKind.INCIDENT and case is not None:
        return Verdict.OK if case.get("status") == "resolved" else Verdict.WARN
    if kind is ReportKind.FAULT_INJECTION:
        return Verdict.OK if faults and all(f.detected for f in faults) else Verdict.FAIL
    if kind is ReportKind.INCIDENT:  # resolved when a repair it led to is verified
        return Verdict.OK if any(_verified(j, kinds) for j in judged) else Verdict.WARN
    outcomes = [j.session.outcome or Verdict.ERROR for j in judged]
    return worst([*outcomes, *(f.verdict for f in failures)])


def _verified(judged: _Judged, kinds: Mapping[str, str]) -> bool:
    """A repair session that repaired something, ended ok and reads ok after the repair."""
    return kinds.get(judged.session.runbook) == ReportKind.REPAIR.value and \
        judged.repaired_at is not None and judged.session.outcome is Verdict.OK and \
        not any(r.verdict in BAD for r in judged.readings if not is_symptom(r)) and \
        not any(b.verdict in BAD for b in judged.blocks if b.kind == "check")


def optics_of(topology: Topology) -> dict[str, str]:
    """Port (`leaf-g00-r3:Ethernet16`, `node003:mlx5_3`) -> the optic serial its link records."""
    found: dict[str, str] = {}
    for link in topology.links:
        if link.optic:
            found[str(link.a)] = found[str(link.b)] = link.optic
    return found


def _port(component: str) -> str:
    """A lane's port (`leaf:Ethernet16/lane2` -> `leaf:Ethernet16`); others unchanged."""
    head, _, tail = component.rpartition("/")
    return head if head and tail.startswith("lane") else component


def _conclusion(kind: ReportKind, verdict: Verdict, failures: Sequence[Failure],
                faults: Sequence[InjectedFault], sessions: Sequence[SessionEvidence],
                optics: Mapping[str, str], judged: Sequence[_Judged],
                found: Sequence[Problem], kinds: Mapping[str, str]) -> str:
    if kind is ReportKind.FAULT_INJECTION:
        count = sum(f.detected for f in faults)
        return f"{count} of {len(faults)} injected faults detected" + (
            "" if count == len(faults) else
            f"; missed: {', '.join(f.scenario for f in faults if not f.detected)}")
    named = [f"{p.element} (optic {p.optic})" if p.optic else p.element for p in found
             if not p.element.startswith(("check ", "block "))]
    unfinished = [s.id for s in sessions if s.finished is None]
    if kind is ReportKind.INCIDENT:
        return _incident_status(verdict, judged, kinds)
    if kind is ReportKind.REPAIR:
        repairs = [j for j in judged if kinds.get(j.session.runbook) == "repair"] or judged
        if unfinished:
            return f"INCOMPLETE: session(s) {', '.join(unfinished)} did not finish " \
                   f"(fabtui runbook resume {unfinished[0]})"
        stopped = [j.session for j in repairs if j.session.outcome is Verdict.ERROR]
        if stopped:
            reason = stopped[0].finished.reason if stopped[0].finished else ""
            return f"INCOMPLETE: session {stopped[0].id} stopped before its end" + \
                (f" ({reason})" if reason else "") + \
                f"; fabtui runbook resume {stopped[0].id} continues it"
        if not any(j.repaired_at is not None for j in repairs):
            ended = [f"{j.session.outcome}" + (f" ({j.session.finished.reason})"
                                               if j.session.finished and
                                               j.session.finished.reason else "")
                     for j in repairs]
            return "NOT REPAIRED: no repair was made before the last reading (session ended " \
                + ", ".join(ended) + ")"
        if verdict is Verdict.OK:
            return "REPAIRED and verified: every reading after the repair passes"
        return "repair NOT verified: " + (_listed(named, 8) if named else
                                          failures[0].what if failures else
                                          "the session did not end ok")
    if verdict is Verdict.OK:
        return "PASS: every criterion measured passed" + (
            f" (unfinished: {', '.join(unfinished)})" if unfinished else "")
    if verdict is Verdict.WARN:
        return "PASS WITH WARNINGS: " + (", ".join(named) if named else
                                         "see the warnings below")
    if verdict.rank >= Verdict.ERROR.rank:
        reasons = [s.finished.reason for s in sessions if s.finished and s.finished.reason]
        reasons += [f"session {s.id} waits at gate {s.waiting.gate}: {s.waiting.reason}"
                    if s.waiting else f"session {s.id} did not finish"
                    for s in sessions if s.finished is None]
        return "INCOMPLETE: the tests did not run to their end: " + (
            "; ".join(reasons) if reasons else
            _listed([f.what for f in failures if f.verdict is verdict], 3, "; "))
    what = "hand-over FAILS" if kind is ReportKind.ACCEPTANCE else "FAIL"
    if unfinished and not failures:
        return f"{what}: session(s) {', '.join(unfinished)} did not finish"
    return f"{what}: " + (_listed(named, 8) if named else failures[0].what if failures
                          else "a session did not pass")


def _incident_status(verdict: Verdict, judged: Sequence[_Judged],
                     kinds: Mapping[str, str]) -> str:
    """An incident from its sessions: what the triage found, where it handed over, and
    whether a repair verified the fix."""
    found = []
    repaired = [j for j in judged if _verified(j, kinds)]
    titles = [t for j in judged if kinds.get(j.session.runbook) != "repair" or j in repaired
              for t in j.session.titles]
    if titles:  # the incident in the runbooks' own words (what a case is titled)
        found.append(": ".join(dict.fromkeys(titles)))
    for j in judged:
        if kinds.get(j.session.runbook) == "repair":
            continue
        failing = [b for b in j.blocks if b.kind == "check" and b.verdict in BAD]
        if failing and not titles:
            found.append(failing[-1].message)
        if j.session.finished is not None and j.session.finished.handover:
            found.append(f"handed over to {j.session.finished.handover}")
    if repaired:
        found.append(f"repaired and verified in session {repaired[0].session.id}")
    head = "Resolved" if verdict is Verdict.OK else "Open"
    return f"{head}: " + ("; ".join(found) if found else "no finding recorded")


def _summary(kind: ReportKind, verdict: Verdict, judged: Sequence[_Judged],
             found: Sequence[Problem], before: Sequence[Problem], said: Sequence[str],
             criteria: Sequence[Criterion], kinds: Mapping[str, str],
             case: Mapping[str, Any] | None) -> list[str]:
    """The report in plain words, first: what was wrong, what was done, how it ended."""
    if kind is ReportKind.INCIDENT and case is not None:
        return []
    lines: list[str] = []
    if said:
        lines.append("The job's logs: " + "; ".join(said[:3])
                     + (f"; and {len(said) - 3} more (the report's --json lists them all)"
                        if len(said) > 3 else "") + ".")
    if before:
        was = [p for p in before if not p.element.startswith(("check ", "block "))]
        lines += [f"Before the repair: {element_line(p)}." for p in was[:4]]
        if len(was) > 4:
            lines.append(f"... and {len(was) - 4} more element(s) below.")
    for j in judged:
        if j.repaired_at is not None:
            note = last_note(j.session)
            if note:
                lines.append(f"Done ({j.session.runbook}): {note}")
            check = final_check(j.blocks)
            if check is not None:
                lines.append(f"After the repair: {check.message} ({check.verdict.value}).")
        elif kinds.get(j.session.runbook) == "incident":
            failing = [b for b in j.blocks if b.kind == "check" and b.verdict in BAD]
            if failing:
                lines.append(f"Found ({j.session.runbook}): {failing[-1].message}.")
            if j.session.finished is not None and j.session.finished.handover:
                lines.append(f"Handed over to {j.session.finished.handover}.")
    repaired = any(j.repaired_at is not None for j in judged)
    if kind is ReportKind.REPAIR and not repaired:
        lines.append("No repair was made: the readings below are the state as found.")
    passed = sum(c.verdict is Verdict.OK for c in criteria)
    judged_rows = sum(c.verdict is not Verdict.SKIPPED for c in criteria)
    if kind is not ReportKind.INCIDENT and judged_rows:
        lines.append(f"{passed} of {judged_rows} criteria pass"
                     + (" after the repair" if repaired else "") + ".")
    elements = [p for p in found if not p.element.startswith(("check ", "block "))]
    if elements and kind is not ReportKind.INCIDENT:
        lines += [f"{'Still failing' if repaired else 'Failing'}: "
                  f"{element_line(p)}." for p in elements[:5]]
        if len(elements) > 5:
            lines.append(f"... and {len(elements) - 5} more element(s) below.")
    elif elements:
        lines += [f"Evidence: {element_line(p)}." for p in elements[:3]]
        if len(elements) > 3:
            lines.append(f"... and {len(elements) - 3} more element(s) below.")
    return lines


def _incident_conclusion(case: Mapping[str, Any]) -> str:
    """`Root cause: <its first sentence>` (the headline says RESOLVED), or what is still
    open."""
    status = str(case.get("status") or "draft")
    cause = " ".join(str((case.get("sections") or {}).get("Root cause") or "").split())
    first = cause.split(". ", 1)[0].rstrip(".") if cause else ""
    if status == "resolved":
        return f"Root cause: {first}" if first else "No root cause written"
    return f"{status.capitalize()}: " + (f"root cause so far: {first}" if first else
                                          "no root cause yet")


def _risks(sessions: Sequence[SessionEvidence], checks: Sequence[Check],
           criteria: Sequence[Criterion]) -> list[str]:
    risks = [f"{c.id}: {c.statement}" for c in checks if c.verdict is Verdict.WARN]
    risks += [f"{c.name}: {c.measured} ({c.requirement})" for c in criteria
              if c.verdict is Verdict.WARN]
    risks += [f"session {s.id} ran on the demo fabric (scenario {s.fabric.get('scenario')}): "
              "simulated figures, not a real cluster's" for s in sessions
              if s.fabric.get("simulated")]
    return risks


def _listed(items: Sequence[str], most: int, sep: str = ", ") -> str:
    """The first `most` items, then how many more: the report's tables list them all."""
    return sep.join(items[:most]) + (f" and {len(items) - most} more (the report's tables "
                                      "list them all)"
                                     if len(items) > most else "")


def _recommendations(sessions: Sequence[SessionEvidence],
                     failures: Sequence[Failure], kind: ReportKind) -> list[str]:
    found = []
    for session in sessions:
        if session.finished is not None and session.finished.handover and \
                session.finished.handover not in {s.runbook for s in sessions}:
            found.append(f"run runbook {session.finished.handover} (fabtui runbook run "
                         f"{session.finished.handover}), then repeat {session.runbook}")
    components = list(dict.fromkeys(_port(f.component) for f in failures if f.component))
    if components:
        found.append("fix and re-test: " + _listed(components, 12))
    return found


def _title(kind: ReportKind, given: ReportInputs, subject: object,
           inventory: Inventory | None) -> str:
    cluster = inventory.cluster if inventory else "cluster"
    names = {
        ReportKind.ACCEPTANCE: "Acceptance report", ReportKind.RDMA: "RDMA test report",
        ReportKind.TEST: "Test report", ReportKind.REPAIR: "Repair report",
        ReportKind.NCCL: "NCCL test report",
        ReportKind.FAULT_INJECTION: "Fault-injection report",
        ReportKind.INCIDENT: "Incident review",
    }
    if kind is ReportKind.INCIDENT and given.case is not None:
        return f"Incident review: {given.case.get('title') or given.case.get('id')}"
    return f"{names[kind]}: cluster {cluster}" + (f", for {subject}" if subject else "")


# ---- small helpers ----------------------------------------------------------------------------

def _session_source(session: SessionEvidence) -> Source:
    return Source(session=session.id)


def _half(row: dict[str, Any], name: str) -> float | None:
    half = row.get("out_of_place")
    return _float(half.get(name)) if isinstance(half, dict) else None


def _command_ranks(block: BlockRecord) -> int | None:
    command = str(block.result.get("command", ""))
    parts = command.split()
    if "-np" in parts and parts.index("-np") + 1 < len(parts):
        return _int(parts[parts.index("-np") + 1])
    return None


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _int(value: object) -> int | None:
    number = _float(value)
    return int(number) if number is not None else None


def _verdict(value: object) -> Verdict:
    try:
        return Verdict(str(value))
    except ValueError:
        return Verdict.OK


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-2 and value else f"{value:g}"
    return str(value)


__all__ = ["ReportError", "ReportInputs", "build_report", "guess_kind", "inventory_of"]
