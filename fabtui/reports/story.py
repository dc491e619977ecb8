"""What a report says in plain words: which session kind is which report, where a repair
happened (its before and after), the failing elements one line each with their lanes folded,
and the summary a customer reads first. Pure: reads session evidence, writes nothing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from fabtui.model.probe import Threshold
from fabtui.model.report import Problem, ReportKind
from fabtui.model.verdict import Verdict, worst
from fabtui.reports.evidence import BlockRecord, SessionEvidence
from fabtui.reports.rows import BAD, Reading, bounds_for, is_dark, number, port_of, show
from fabtui.reports.rules import rule_for

SYMPTOM_PROBES = ("logs.nccl", "triage.")
"""Probes that read a job's logs: what they report are the job's symptoms, and their
components are where the log was read (the log host, a rank), not failing elements."""


def is_symptom(reading: Reading) -> bool:
    return reading.probe.startswith(SYMPTOM_PROBES)


def kind_for(sessions: Sequence[SessionEvidence], kinds: Mapping[str, str]) -> ReportKind:
    """The report sessions call for, from what their runbooks are (`report:` in the front
    matter, `kinds`: runbook id -> report kind): a triage among them makes an incident review
    (with the repair it handed over to), a repair a repair report, a test a test report;
    healthy and faulty demo runs of an acceptance or a test together a fault-injection report;
    otherwise an acceptance report."""
    found = [kinds.get(s.runbook) or ("incident" if s.finished and s.finished.handover
                                      else None) for s in sessions]
    if "incident" in found:
        return ReportKind.INCIDENT
    if "repair" in found:
        return ReportKind.REPAIR
    if any(s.fabric.get("scenario") not in (None, "healthy") for s in sessions) and \
            len(sessions) > 1:
        return ReportKind.FAULT_INJECTION
    named = {k for k in found if k}
    for single in (ReportKind.RDMA, ReportKind.NCCL):
        if named == {single.value} and None not in found:
            return single
    if "acceptance" in found or not named:
        return ReportKind.ACCEPTANCE
    return ReportKind.TEST


def repair_point(session: SessionEvidence) -> int | None:
    """Journal position of the repair: the last gate the operator accepted before the last
    probe (`swapped`, `cleaned`): readings after it are the after-state. None when no gate
    precedes a probe (nothing was repaired: the session stopped before, or found nothing)."""
    blocks = session.current()
    probes = [b.order for b in blocks if b.probe]
    if not probes:
        return None
    last_probe = max(probes)
    gates = [order for order, (_, _, decision) in zip(session.decision_order,
                                                      session.decisions, strict=True)
             if decision.by == "operator" and decision.accepted and order < last_probe]
    return max(gates) if gates else None


def phases(session: SessionEvidence, repair: bool
           ) -> tuple[list[BlockRecord], list[BlockRecord], int | None]:
    """(the blocks the session is judged on, the blocks before its repair, the repair point).
    A repair is judged on what it read after the repair; anything else on how each block
    ended."""
    blocks = session.current()
    if not repair:
        return blocks, [], None
    point = repair_point(session)
    if point is None:
        return blocks, [], None
    before = [b for b in session.blocks if b.order < point and
              not (b.superseded and not b.probe)]
    return [b for b in blocks if b.order > point], before, point


def repaired_ends(session: SessionEvidence) -> set[str]:
    """The ports a repair session probed by name: the repaired port and the ends of its link
    (`leaf-g00-r5:Ethernet16`, `node003:mlx5_5`, each end of a bandwidth pair), from its
    probe blocks' targets. Empty when it probed no single port."""
    ends: set[str] = set()
    for block in session.blocks:
        target = block.result.get("target") if block.probe else None
        if isinstance(target, str):
            ends.update(t.strip() for t in target.split(",") if ":" in t)
    return ends


def split_scope(found: Sequence[Reading], ends: set[str]) -> tuple[list[Reading], list[Reading]]:
    """(the readings about the repair, the readings of other ports of the same device).

    A probe read on a whole device (`switch.fec` on a leaf) reads every port of it; a repair
    of one port is judged on that port (and the NIC end), never on a neighbour's errors, so
    the readings of a device-wide block on a port that is none of `ends` go to the second
    list (shown apart, deciding nothing). Without `ends` everything is the repair's."""
    own: list[Reading] = []
    others: list[Reading] = []
    for reading in found:
        target = reading.block.result.get("target")
        port = port_of(reading.component)
        device, sep, _ = port.partition(":")
        other = bool(ends) and isinstance(target, str) and ":" not in target and \
            bool(sep) and device == target and port not in ends
        (others if other else own).append(reading)
    return own, others


def fold(lanes: Iterable[str]) -> str:
    """Lane numbers as ranges: `1, 2, 3, 4` -> `1-4`; `2, 3, 6` -> `2-3, 6`."""
    numbers = sorted({int(lane) for lane in lanes if lane.isdigit()})
    others = sorted({lane for lane in lanes if not lane.isdigit()})
    runs: list[str] = []
    for n in numbers:
        if runs and "-" in runs[-1] and int(runs[-1].split("-")[1]) == n - 1:
            runs[-1] = f"{runs[-1].split('-')[0]}-{n}"
        elif runs and runs[-1].isdigit() and int(runs[-1]) == n - 1:
            runs[-1] = f"{runs[-1]}-{n}"
        else:
            runs.append(str(n))
    return ", ".join(runs + others)


def problems(session: str, found: Sequence[Reading], blocks: Sequence[BlockRecord],
             optics: Mapping[str, str],
             thresholds: Mapping[str, Sequence[Threshold]]) -> list[Problem]:
    """The readings that are not ok, one line per element (port, NIC, node), lanes folded;
    then each failing check or block that could not run."""
    elements: dict[str, dict[tuple[str, str], list[tuple[str | None, Reading]]]] = {}
    for reading in found:
        if reading.verdict not in BAD or is_symptom(reading):
            continue
        component = reading.component
        element = port_of(component)
        lane = component.rpartition("/lane")[2] if "/lane" in component else None
        kind = "dark" if is_dark(reading.value) else "down" if reading.down else "value"
        elements.setdefault(element, {}).setdefault((reading.name, kind), []).append(
            (lane, reading))
    out = []
    for element, groups in elements.items():
        lines = []
        unmeasured: dict[str, list[str]] = {}
        for (name, kind), items in groups.items():
            lanes = [lane for lane, _ in items if lane is not None]
            where = f" on lane{'s' if len(lanes) > 1 else ''} {fold(lanes)}" if lanes else ""
            first = items[0][1]
            if kind == "dark":
                lines.append(f"no light{where} ({name} -inf {first.unit})".rstrip())
            elif kind == "down":
                unmeasured.setdefault(str(first.down), []).append(name)
            else:
                lines.append(f"{name} {_values([r for _, r in items], thresholds)}{where}")
        lines += [f"{why}: {', '.join(names)} not measured"
                  for why, names in unmeasured.items()]
        readings = [r for items in groups.values() for _, r in items]
        decider = max(readings, key=lambda r: r.verdict.rank)
        out.append(Problem(element=element, optic=optics.get(element), what=lines,
                           verdict=worst(r.verdict for r in readings),
                           source=decider.block.source(session)))
    for block in blocks:
        if block.verdict in BAD and not block.probe and \
                (block.kind == "check" or block.verdict.rank >= Verdict.ERROR.rank):
            out.append(Problem(element=f"check {block.block}" if block.kind == "check"
                               else f"block {block.block}",
                               what=[block.message or str(block.verdict)],
                               verdict=block.verdict, source=block.source(session)))
        elif block.probe and block.verdict is Verdict.ERROR:
            out.append(Problem(element=str(block.result.get("target") or block.probe),
                               what=[f"{block.probe} could not measure: {block.message}"],
                               verdict=block.verdict, source=block.source(session)))
    return _merged(out)


def _merged(found: Sequence[Problem]) -> list[Problem]:
    """One problem per element: what two blocks said of the same element, together."""
    merged: dict[str, Problem] = {}
    for problem in found:
        had = merged.get(problem.element)
        if had is None:
            merged[problem.element] = problem
            continue
        verdict = worst([had.verdict, problem.verdict])
        merged[problem.element] = had.model_copy(update={
            "what": [*had.what, *(w for w in problem.what if w not in had.what)],
            "verdict": verdict,
            "source": had.source if had.verdict is verdict else problem.source})
    return list(merged.values())


def _values(found: Sequence[Reading], thresholds: Mapping[str, Sequence[Threshold]]) -> str:
    """One value, or the range of several (`-8.4 ... -7.9 dBm`), with the limit it crossed
    (`FAIL if < 2 mA`: the same limit the criteria table shows for that reading)."""
    unit = found[0].unit
    numbers = [v for v in (number(r.value) for r in found) if v is not None]
    if len(numbers) == len(found) and len(set(numbers)) > 1:
        text = f"{show(min(numbers))} ... {show(max(numbers), unit)}"
    else:
        text = show(found[0].value, unit)
    first = max(found, key=lambda r: r.verdict.rank)
    value = number(first.value)
    bounds = bounds_for(first, thresholds.get(first.probe, ()),
                        rule_for(first.probe, first.name))
    crossed = next((b for b in bounds if value is not None and b.holds(value)), None)
    return text + (f" ({crossed.verdict.value.upper()} if {crossed.op} "
                   f"{show(crossed.limit, unit)})" if crossed is not None else "")


def element_line(problem: Problem, most: int = 3) -> str:
    """`leaf-g00-r5:Ethernet16 (optic MT24000043): no light on lanes 1-4; ...` (the first
    `most` things wrong with it, and how many more)."""
    name = problem.element + (f" (optic {problem.optic})" if problem.optic else "")
    more = len(problem.what) - most
    return f"{name}: {'; '.join(problem.what[:most])}" + (f" (+{more} more)" if more > 0
                                                          else "")


def symptoms(found: Sequence[Reading]) -> list[str]:
    """What the job's logs said, one line per kind of event (`event.watchdog_timeout: 62
    rank(s) timed out in ALLREDUCE #1276 (node001)`)."""
    lines: dict[str, list[str]] = {}
    for reading in found:
        if is_symptom(reading) and reading.verdict in BAD:
            lines.setdefault(reading.name, []).append(
                f"{show(reading.value, reading.unit)} ({reading.component})")
    return [f"{name}: {items[0]}" + (f" (+{len(items) - 1} more)" if len(items) > 1 else "")
            for name, items in lines.items()]


def last_note(session: SessionEvidence) -> str | None:
    """The session's last note: a runbook writes what it did there (`replaced this optic: old
    serial ..., new serial ...`)."""
    return session.notes[-1][2] if session.notes else None


def final_check(blocks: Sequence[BlockRecord]) -> BlockRecord | None:
    """The last check the session made (a repair's verification)."""
    checks = [b for b in blocks if b.kind == "check"]
    return checks[-1] if checks else None


__all__ = ["SYMPTOM_PROBES", "element_line", "final_check", "fold", "is_symptom",
           "kind_for", "last_note", "phases", "problems", "repair_point", "repaired_ends",
           "split_scope", "symptoms"]
