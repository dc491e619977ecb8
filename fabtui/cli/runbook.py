"""`fabtui runbook ...`: list, show, lint, run headless, resume, test, and read the journal.

Exit codes of `run`, `resume` and `test`: 0 the run ended ok or with warnings; 1 it ended on a
failed check (a finding) or a test failed; 2 bad input (unknown runbook, bad --input, lint
errors); 4 the run stopped before its end (a block that could not run, an abandon): never a
hang; 5 the session waits at a gate it did not pass (no --answer, "no", a mistyped phrase: the
command that goes on, and the one that abandons it, are printed); 130 interrupted by Ctrl-C
(journaled as cancelled; the command that resumes it is printed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shlex
import time
from collections.abc import Callable
from pathlib import Path

import click

from fabtui.cli.context import EXIT_FINDINGS, key_values, workspace
from fabtui.errors import InputError
from fabtui.model.events import (
    BlockCommand,
    BlockFinished,
    Decision,
    Event,
    HandedOverFrom,
    Note,
    StepStarted,
)
from fabtui.model.runbook import Verdict
from fabtui.runbooks.engine import Engine, Observer, RunSummary, ScriptedOperator
from fabtui.runbooks.library import find as find_runbooks
from fabtui.runbooks.redact import MASK
from fabtui.runbooks.resume import ask_again, secret_blocks
from fabtui.transports.cli_line import visible
from fabtui.views.guided import handover_inputs, session_rows

EXIT_STOPPED = 4
EXIT_WAITING = 5
"""The session waits at a gate (not finished): `fabtui runbook resume` goes on."""
EXIT_INTERRUPTED = 130
"""Ctrl-C: the session was journaled as cancelled and can be resumed (128 + SIGINT)."""


@click.group("runbook")
def runbook() -> None:
    """Runbooks: executable markdown procedures, recorded step by step."""


def _pairs(items: tuple[str, ...], option: str) -> dict[str, str]:
    return key_values(items, option, "name")


@runbook.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def list_runbooks(ctx: click.Context, as_json: bool) -> None:
    """The runbook library: id, title, and the symptoms each one is for."""
    library = workspace(ctx).library
    rows = [{"id": r.meta.id, "title": r.title, "summary": r.meta.summary,
             "symptoms": r.meta.symptoms, "tags": r.meta.tags, "path": r.path,
             "tests": len(r.meta.tests)} for r in sorted(library.runbooks.values(),
                                                         key=lambda r: r.meta.id)]
    for issue in library.broken:  # on stderr, so that --json output stays one document
        click.echo(f"unreadable: {issue}", err=True)
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for row in rows:
        click.echo(f"{row['id']:<28}{row['title']}")


@runbook.command("find")
@click.argument("text", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def find(ctx: click.Context, text: tuple[str, ...], as_json: bool) -> None:
    """Runbooks for a symptom, in English or Chinese (`fabtui runbook find NCCL 超时`)."""
    result = find_runbooks(workspace(ctx).library, " ".join(text))
    if as_json:
        click.echo(json.dumps([{"id": r.meta.id, "score": score, "title": r.title}
                               for score, r in result.hits], indent=2, ensure_ascii=False))
        return
    unknown = result.unknown_line()
    if unknown:
        click.echo(unknown)
    if not result.hits:
        click.echo("no runbook matches; `fabtui runbook list` shows them all")
        ctx.exit(EXIT_FINDINGS)
    for score, book in result.hits:
        click.echo(f"{book.meta.id:<28}{score:5.2f}  {book.title}")


@runbook.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """A runbook's inputs, steps and blocks, as the engine reads them."""
    book = workspace(ctx).runbook(name)
    meta = book.meta
    if as_json:
        data = book.model_dump(mode="json", include={"meta", "title", "path", "digest",
                                                     "steps"})
        for spec in data["meta"]["inputs"]:
            if spec.get("secret") and spec.get("default") is not None:
                spec["default"] = MASK
        for step in data["steps"]:
            for block in step["blocks"]:
                block["attrs"] = _public_attrs(block["attrs"])
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(f"{meta.id} (v{meta.version}): {book.title}")
    if meta.summary:
        click.echo(f"  {meta.summary}")
    if meta.symptoms:
        click.echo(f"  symptoms: {'; '.join(meta.symptoms)}")
    for spec in meta.inputs:
        need = "required" if spec.required else \
            f"default {MASK if spec.secret and spec.default is not None else repr(spec.default)}"
        about = f": {spec.description}" if spec.description else ""
        click.echo(f"  input {spec.name} ({spec.type.value}, {need}){about}")
    for index, step in enumerate(book.steps, start=1):
        click.echo(f"{index:>2}. {step.id}: {step.title}")
        for block in step.blocks:
            attrs = " ".join(f"{k}={v}" for k, v in _public_attrs(block.attrs).items()
                             if k != "id")
            click.echo(f"      {block.kind.value:<8}{block.id}{'  ' + attrs if attrs else ''}")
    for test in meta.tests:
        click.echo(f"  test {test.name!r} on scenario {test.scenario}")


def _public_attrs(attrs: dict[str, str]) -> dict[str, str]:
    """A block's attributes with a secret input's default masked."""
    if attrs.get("secret") == "true" and "default" in attrs:
        return {**attrs, "default": MASK}
    return dict(attrs)


@runbook.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def lint_command(ctx: click.Context, paths: tuple[Path, ...], as_json: bool) -> None:
    """Check runbooks (files or folders; default: the library): exit 1 on errors."""
    issues, count = workspace(ctx).lint_paths(paths)
    errors = sum(1 for i in issues if i.severity == "error")
    warnings = len(issues) - errors
    if as_json:
        click.echo(json.dumps({"files": count, "errors": errors, "warnings": warnings,
                               "issues": [dataclasses.asdict(i) for i in issues]}, indent=2,
                              ensure_ascii=False))
        ctx.exit(EXIT_FINDINGS if errors else 0)
    for issue in issues:
        click.echo(str(issue))
    click.echo(f"{count} runbook{'s' if count != 1 else ''}: {errors} error"
               f"{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}",
               err=True)
    ctx.exit(EXIT_FINDINGS if errors else 0)


_SHOWN = 160
"""Characters of a command line the progress shows (the rest is counted, and journaled whole)."""


class _Printer(Observer):
    """Progress lines for a headless run."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.noted: str | None = None
        """The block whose note or decision was just printed (its ok line would repeat it)."""

    def event(self, event: Event) -> None:
        if self.quiet:
            return
        data = event.data
        if isinstance(data, StepStarted):
            click.echo(f"== {event.step}: {data.title}")
        elif isinstance(data, BlockCommand):
            # Each line as it is sent (a switch CLI gets them one by one), nothing hidden.
            where = f" (on {data.on})" if data.on and data.on != "this machine" else ""
            for line in data.command.strip("\n").split("\n"):
                cut = f"... (+{len(line) - _SHOWN:,} characters)" if len(line) > _SHOWN else ""
                click.echo(f"   $ {visible(line[:_SHOWN])}{cut}{where}")
        elif isinstance(data, BlockFinished):
            if not (event.block == self.noted and data.verdict is Verdict.OK):
                message = "\n      ".join(visible(line) for line in data.message.split("\n"))
                click.echo(f"   [{data.verdict.value}] {event.block}: {message}")
            self.noted = None
        elif isinstance(data, Note):
            for line in data.text.splitlines():
                click.echo(f"   note: {line}")
            self.noted = event.block
        elif isinstance(data, HandedOverFrom):
            click.echo(f"== handed over from session {data.session} ({data.runbook})")
        elif isinstance(data, Decision) and data.by == "runbook":
            click.echo(f"   -> {data.target}")
            self.noted = event.block


def _finish(ctx: click.Context, summary: RunSummary, as_json: bool, engine: Engine,
            answers: dict[str, str]) -> None:
    resume = abandon = None
    if summary.waiting is not None:
        resume = _fabtui(ctx, "runbook", "resume", summary.session,
                         *_resume_args(engine, {**answers, summary.waiting: summary.answer}))
        abandon = _fabtui(ctx, "runbook", "abandon", summary.session, "--reason", "WHY")
    if as_json:
        click.echo(json.dumps({
            "session": summary.session, "runbook": summary.runbook,
            "outcome": summary.outcome.value, "path": summary.path,
            "ended_at": summary.ended_at, "handover": summary.handover,
            "reason": summary.reason, "findings": summary.findings,
            "vars": summary.vars, "waiting": summary.waiting, "resume": resume},
            indent=2, default=str))
    else:
        click.echo("")
        click.echo(summary.text())
    if engine.dry_run and not as_json:
        click.echo("dry run: nothing was run or asked; the session is kept as a dry run, "
                   "never `last`", err=True)
    if summary.handover and not as_json:
        _say_handover(ctx, engine, summary.handover)
    if resume is not None:
        click.echo(f"\nthe session waits at gate {summary.waiting}; when ready, go on with:\n"
                   f"  {resume}\nor end it for good: {abandon}", err=True)
        ctx.exit(EXIT_WAITING)
    if summary.outcome in (Verdict.ERROR, Verdict.ABORTED):
        ctx.exit(EXIT_STOPPED)
    ctx.exit(EXIT_FINDINGS if summary.outcome is Verdict.FAIL else 0)


def _say_handover(ctx: click.Context, engine: Engine, name: str) -> None:
    """The command that opens the runbook this session handed over to, with what the session
    already knows and did (`views.guided.handover_inputs`: its port, the node it drained)."""
    try:
        target = workspace(ctx).runbook(name)
    except InputError:
        return  # the summary names it; `runbook run` will say what is wrong with it
    carried = handover_inputs(engine.runbook, target, engine.scope())
    args = [arg for key, value in carried.items() for arg in ("--input", f"{key}={value}")]
    if engine.session is not None and not engine.dry_run:  # the journal links the two
        args += ["--handed-over-from", engine.session]
    click.echo(f"hand over with: {_fabtui(ctx, 'runbook', 'run', name, *args)}")


def _fabtui(ctx: click.Context, *args: str) -> str:
    """A fabtui command line, quoted for a shell, with this run's `--config`."""
    root = ctx.find_root().params
    config = ["--config", str(root["config_path"])] if root.get("config_path") else []
    return shlex.join(["fabtui", *config, *args])


def _drive(ctx: click.Context, engine: Engine,
           resume_args: Callable[[], list[str]]) -> RunSummary:
    """Run `engine`; on Ctrl-C, say how to resume the (journaled, cancelled) session, exit 130."""
    try:
        return asyncio.run(workspace(ctx).drive(engine))
    except KeyboardInterrupt:
        if engine.summary is not None:
            return engine.summary  # it had ended; only closing the sessions was interrupted
        if engine.session is None:
            raise
        engine.mark_cancelled()  # (journaled already when a block was running)
        command = _fabtui(ctx, "runbook", "resume", engine.session, *resume_args())
        click.echo(f"\ninterrupted: session {engine.session} is journaled as cancelled", err=True)
        click.echo(f"resume it with: {command}", err=True)
        ctx.exit(EXIT_INTERRUPTED)


def _resume_args(engine: Engine, answers: dict[str, str]) -> list[str]:
    """The options a resume needs again, as the journal stands now: the secrets it will ask
    again (`runbooks.resume.ask_again`, the list every face renders; shown as <secret>) and
    the answers not used yet."""
    session = engine.session
    found = engine.journal.session(session) if session is not None else None
    asks = ask_again(engine.runbook, found[1] if found else {},
                     engine.journal.events(session) if session is not None else [])
    # An optional secret left out resumes with its default, and the resume says so.
    args = [arg for a in asks if a.needed for arg in ("--input", f"{a.name}=<secret>")]
    secret = set(secret_blocks(engine.runbook)) | \
        {s.name for s in engine.runbook.meta.inputs if s.secret}
    used = {a.block for a in asks if a.block is not None}
    for name, value in answers.items():
        if name not in used:
            args += ["--answer", f"{name}={'<secret>' if name in secret else value}"]
    return args


@runbook.command("run")
@click.argument("name")
@click.option("--input", "inputs", multiple=True, metavar="NAME=VALUE", help="Runbook input.")
@click.option("--answer", "answers", multiple=True, metavar="GATE=ANSWER",
              help="Answer to a gate or input block (yes, or the phrase to type).")
@click.option("--skip", "skips", multiple=True, metavar="BLOCK=REASON",
              help="Skip a block, recording why (repeatable).")
@click.option("--start-at", metavar="STEP", help="Begin at this step (recorded as a jump).")
@click.option("--dry-run", is_flag=True, help="Render every command and gate; run nothing.")
@click.option("--handed-over-from", "handed_over_from", metavar="SESSION",
              help="The session whose hand-over (next: runbook NAME) this run takes up: both "
                   "are journaled as one incident, and its case spans them.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def run_command(ctx: click.Context, name: str, inputs: tuple[str, ...],
                answers: tuple[str, ...], skips: tuple[str, ...], start_at: str | None,
                dry_run: bool, handed_over_from: str | None, as_json: bool) -> None:
    """Run runbook NAME headless: progress, then a summary. Gates need --answer."""
    given, answered = _pairs(inputs, "--input"), _pairs(answers, "--answer")
    engine = workspace(ctx).open_run(
        name, inputs=given, operator=ScriptedOperator(answered), observers=[_Printer(as_json)],
        skips=_pairs(skips, "--skip"), start_at=start_at, dry_run=dry_run,
        handed_over_from=handed_over_from)
    summary = _drive(ctx, engine, lambda: _resume_args(engine, answered))
    _finish(ctx, summary, as_json, engine, answered)


@runbook.command("resume")
@click.argument("session")
@click.option("--input", "inputs", multiple=True, metavar="NAME=VALUE",
              help="Secret inputs again (they were never stored).")
@click.option("--answer", "answers", multiple=True, metavar="GATE=ANSWER")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def resume(ctx: click.Context, session: str, inputs: tuple[str, ...],
           answers: tuple[str, ...], as_json: bool) -> None:
    """Continue a session after its last finished block: after a crash, or where it stopped
    (a gate nobody answered, a block that could not run), with --answer for the gate."""
    given, answered = _pairs(inputs, "--input"), _pairs(answers, "--answer")
    resumed = workspace(ctx).resume(session, inputs=given, operator=ScriptedOperator(answered),
                                    observers=[_Printer(as_json)])
    for note in resumed.notes:
        click.echo(f"note: {note}", err=True)
    summary = _drive(ctx, resumed.engine,
                     lambda: _resume_args(resumed.engine, answered))
    _finish(ctx, summary, as_json, resumed.engine, answered)


@runbook.command("abandon")
@click.argument("session")
@click.option("--reason", required=True, metavar="TEXT",
              help="Why it ends here (recorded for whoever picks it up next).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def abandon(ctx: click.Context, session: str, reason: str, as_json: bool) -> None:
    """End SESSION for good, as aborted (a session waiting at a gate, interrupted or stopped):
    a "no" at a gate only makes a session wait, and `resume` goes on with it."""
    ended = workspace(ctx).abandon(session, reason)
    if as_json:
        click.echo(json.dumps({"session": ended, "outcome": Verdict.ABORTED.value,
                               "reason": reason.strip()}, indent=2))
        return
    click.echo(f"session {ended} abandoned: {reason.strip()}")
    click.echo(f"file it as a case with: {_fabtui(ctx, 'cases', 'file', ended)}")


@runbook.command("test")
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def test_command(ctx: click.Context, names: tuple[str, ...], as_json: bool) -> None:
    """Run the runbooks' declared test cases on the simulated fabric (default: all)."""
    outcomes = []
    for outcome in workspace(ctx).test_runbooks(names):
        outcomes.append(outcome)
        if as_json:
            continue
        if outcome.test is None:
            click.echo(f"FAIL  {outcome.runbook}: {outcome.not_run}, not run")
        else:
            mark = "pass" if outcome.passed else "FAIL"
            click.echo(f"{mark}  {outcome.runbook} / {outcome.test}  ({outcome.seconds:.1f} s)")
        for problem in outcome.problems:
            if problem != outcome.not_run:
                click.echo(f"      {problem.removeprefix('lint: ')}")
    failed = [o for o in outcomes if not o.passed]
    if as_json:
        click.echo(json.dumps([o.as_json() for o in outcomes], indent=2))
    else:
        click.echo(f"{len(outcomes) - len(failed)} passed, {len(failed)} failed", err=True)
    ctx.exit(EXIT_FINDINGS if failed else 0)


@runbook.command("sessions")
@click.option("--limit", default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def sessions(ctx: click.Context, limit: int, as_json: bool) -> None:
    """Recorded sessions, newest first."""
    rows = workspace(ctx).sessions(limit)
    if as_json:
        click.echo(json.dumps([r.model_dump() for r in rows], indent=2))
        return
    for line in session_rows(rows):  # as the app's sessions list reads them
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(line.started_at))
        click.echo(f"{line.id}  {when}  {line.state:<11} {line.outcome or '-':<8} "
                   f"{line.runbook:<24} {line.operator or '-'}")


@runbook.command("journal")
@click.argument("session")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def journal_command(ctx: click.Context, session: str, as_json: bool) -> None:
    """Every recorded event of a session."""
    events = workspace(ctx).events(session)
    if as_json:
        click.echo(json.dumps([{**e.model_dump(mode="json", exclude={"data"}),
                                "data": e.data.record()} for e in events], indent=2,
                              default=str))
        return
    for event in events:
        when = time.strftime("%H:%M:%S", time.localtime(event.at))
        where = "/".join(x for x in (event.step, event.block) if x)
        detail = {k: v for k, v in event.data.record().items() if k not in ("result",)}
        click.echo(f"{event.seq:>4} {when} {event.kind.value:<16} {where:<32} "
                   f"{json.dumps(detail, default=str)[:200]}")

