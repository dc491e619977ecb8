"""Reports for a workspace: the sessions read from its journal, the topology, the probe
catalog's thresholds and the demo scenarios' planted faults gathered for the report builder,
and the result written as markdown or HTML. One place for the CLI and the app."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabtui.errors import RequestError
from fabtui.model.report import Report, ReportKind
from fabtui.model.slowjob import SlowJobReport
from fabtui.paths import write_output
from fabtui.reports.build import ReportInputs, build_report, guess_kind
from fabtui.reports.evidence import ReportError, SessionEvidence, read_session

if TYPE_CHECKING:
    from fabtui.model.case import Case
    from fabtui.workspace.core import Workspace

FORMATS = ("md", "html")


def session_evidence(ws: Workspace, session: str) -> SessionEvidence:
    """One session's evidence; `last` is the newest session. Raises `RequestError`."""
    session = ws.session_id(session)
    found = ws.journal.session(session)
    if found is None:
        raise RequestError(f"no session {session!r} in {ws.journal.path} (fabtui runbook "
                           "sessions lists them)")
    try:
        return read_session(session, found[0], ws.journal.events(session))
    except ReportError as exc:
        raise RequestError(str(exc)) from None


def build(ws: Workspace, sessions: Sequence[str], kind: str | None = None,
          case: str | None = None) -> Report:
    """The report of `kind` (guessed from the sessions when None) over `sessions`, in the
    order given; `case` (an id in the case library) makes it an incident review, with the
    sessions the case names when none are given. Raises `RequestError` for an unknown
    session, case or kind."""
    if kind == ReportKind.SLOW_JOB.value:
        raise RequestError("--kind slow-job: a slow-job report is made from an analysis, not "
                           "from sessions: `fabtui report --slow FILE` (FILE from `fabtui "
                           "triage slow --json`)")
    found = ws.cases.get(case) if case else None
    if found is not None and not sessions:
        sessions = [s for s in found.sessions if ws.journal.session(s) is not None]
    if found is not None and kind is None:
        kind = ReportKind.INCIDENT.value
    evidence = [session_evidence(ws, s) for s in sessions]
    kinds = runbook_kinds(ws, {s.runbook for s in evidence})
    try:
        chosen = ReportKind(kind) if kind else guess_kind(evidence, kinds)
    except ValueError:
        raise RequestError(f"--kind {kind!r}: one of "
                           f"{', '.join(k.value for k in ReportKind)}") from None
    inputs = ReportInputs(
        sessions=evidence, topology=ws.topology().topology,
        thresholds={name: probe.thresholds for name, probe in ws.catalog.items()},
        planted=_planted(evidence), kinds=kinds,
        case=case_sections(found) if found else None)
    try:
        return build_report(chosen, inputs)
    except ReportError as exc:
        raise RequestError(str(exc)) from None


def read_slow(path: Path) -> SlowJobReport:
    """A saved `fabtui triage slow --json` analysis. Raises `RequestError` saying what is
    wrong with the file (unreadable, not JSON, not a slow-job analysis)."""
    from pydantic import ValidationError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RequestError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        return SlowJobReport.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the document"
        raise RequestError(f"{path}: not a `fabtui triage slow --json` analysis: {where}: "
                           f"{first.get('msg', 'invalid')}") from None


def build_slow(ws: Workspace, analysis: SlowJobReport, made_from: str) -> Report:
    """The slow-job report of an analysis, the failing ports named with the optic serial the
    topology records for them."""
    from fabtui.reports.build import optics_of
    from fabtui.reports.slowjob import build_slow_report

    return build_slow_report(analysis, made_from=made_from,
                             optics=optics_of(ws.topology().topology))


def runbook_kinds(ws: Workspace, names: set[str]) -> dict[str, str]:
    """Runbook id -> the report its sessions make: its front matter's `report`, else
    `acceptance` for one tagged so; a runbook no longer in the library is left out (its
    sessions are judged on what they recorded)."""
    kinds: dict[str, str] = {}
    for name in names:
        runbook = ws.library.get(name)
        if runbook is not None:
            kinds[name] = runbook.meta.report or (
                "acceptance" if "acceptance" in runbook.meta.tags else "test")
    return kinds


def case_sections(case: Case) -> dict[str, Any]:
    """A case as the incident review reads it: its review sections in order, its timeline
    and action items (with owners)."""
    named = {"Summary": case.summary, "Impact": case.impact, "Symptom": case.symptom,
             "Trigger": case.trigger, "Detection": case.detection,
             "Localization": case.localization, "Root cause": case.root_cause,
             "Resolution": case.resolution, "Lessons": case.lessons, "Risks": case.risks}
    sections = {name: text for name, text in named.items() if text.strip()}
    sections |= {name: text for name, text in case.sections.items() if text.strip()}
    environment = {k: str(v) for k, v in case.environment.model_dump().items() if v}
    return {"id": case.id, "title": case.title, "status": str(case.status),
            "sections": sections, "environment": environment,
            "timeline": [(t.at, t.text) for t in case.timeline],
            "action_items": [f"{a.text}" + (f" ({a.owner})" if a.owner else "") +
                             (" — done" if a.done else "") for a in case.action_items]}


def render(report: Report, fmt: str) -> str:
    """The report as text in `fmt` (`md` or `html`)."""
    if fmt == "html":
        from fabtui.reports.html import render_html

        return render_html(report)
    if fmt == "md":
        from fabtui.reports.markdown import render_markdown

        return render_markdown(report)
    raise RequestError(f"--format {fmt!r}: one of {', '.join(FORMATS)}")


def write(report: Report, fmt: str, path: Path) -> None:
    """Write the rendered report to `path` atomically (a reader never sees half a file; a
    symlink planted beside it is never followed: `fabtui.paths.write_file`); a path that
    cannot be written is a `RequestError` saying why (`fabtui.paths.write_output`)."""
    write_output(path, render(report, fmt))


def write_newest(ws: Workspace) -> Path:
    """The newest session's report as HTML in `<data dir>/reports/<session>.html` (created);
    returns its path. Raises `RequestError` when no session is recorded."""
    session = ws.session_id("last")
    built = build(ws, [session])
    folder = ws.settings.data_dir / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.html"
    write(built, "html", path)
    return path


def _planted(sessions: Sequence[SessionEvidence]) -> dict[str, list[str]]:
    """Scenario name -> `fault on component` for the scenarios these sessions ran on."""
    from fabtui.errors import InputError
    from fabtui.sim.scenario import find_scenario, load_scenario

    planted: dict[str, list[str]] = {}
    for name in {s.fabric.get("scenario") for s in sessions} - {None, "healthy"}:
        try:
            scenario = load_scenario(find_scenario(str(name))).scenario
        except (InputError, RequestError, OSError):
            continue  # a scenario file since removed: the report says what the session says
        planted[str(name)] = [f"{f.fault} on {f.component}" for f in scenario.timeline]
    return planted
