"""The runbook engine: one state machine for the TUI, headless runs and runbook tests.

Each block goes pending -> running -> ok / warn / fail / skipped / error (or aborted at a gate).
Every event (session and step boundaries, the command as rendered, output, the parsed result,
the verdict, each operator decision and note) is appended to the journal, and committed, before
the operator is shown it, so a killed process loses nothing it showed; `Engine.resume` picks a
session up after its last finished block, with every captured value restored.

Flow: steps run in document order; a `decide` block jumps (to a step, to `end`, or hands over to
another runbook); a declined gate aborts (or jumps to its `on_no` step); a block that cannot run
(`error`) stops the run unless it says `on_error=continue`; `on_fail=STEP` jumps on a failure.
Secrets (inputs marked `secret`, and values that look like passwords, tokens or keys) are
replaced by `***` in everything the journal stores.

Who watches and who answers: observers (`Observer`, in the style of nornir's processors) receive
every typed event as it is journaled, and each block's output as it streams; one awaitable
`Operator` answers gates and inputs (a person at a terminal or a TUI screen, a table of scripted
answers: the engine treats them all alike).

Cancellation (asyncio: Ctrl-C, a cancelled worker): the running block's transport call is
cancelled (its child process killed by the transport), the block is journaled `cancelled` and the
session `cancelled` (resumable: `restore` runs that block again), and the cancellation goes on
to the caller, who closes the runner's sessions. `abort()` during a running block cancels that
block and ends the session as aborted, the end being the session's last event.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabtui.journal.store import Journal
from fabtui.model.events import (
    BlockCommand,
    BlockFinished,
    BlockOutput,
    BlockStarted,
    Decision,
    Event,
    EventKind,
    Note,
    Payload,
    SessionCancelled,
    SessionFinished,
    SessionResumed,
    SessionStarted,
    StepFinished,
    StepStarted,
    kind_of,
)
from fabtui.model.probe import ProbeDef
from fabtui.model.runbook import Block, BlockKind, InputSpec, Runbook
from fabtui.model.verdict import Verdict
from fabtui.model.verdict import worst as worst_verdict
from fabtui.probes.danger import confirmation_phrase
from fabtui.probes.render import RenderError
from fabtui.probes.runner import ProbeRunner
from fabtui.probes.targets import TargetError
from fabtui.runbooks import blocks as block_text
from fabtui.runbooks.expr import (
    Evaluator,
    ExprError,
    Unknown,
    Unknowns,
    UnknownValue,
    describe_unknown,
    render,
    render_cli_lines,
    render_shell,
)
from fabtui.runbooks.functions import fabric_functions
from fabtui.runbooks.inputs import convert
from fabtui.runbooks.redact import MASK, Redactor
from fabtui.runbooks.resume import input_block_spec, secret_blocks
from fabtui.transports.cli_session import CliTarget
from fabtui.transports.ssh import SshTarget

OUTPUT_KEEP = 256 * 1024
"""Bytes of a block's output kept in its result and in the journal."""
RESULT_KEEP = 512 * 1024
"""A result larger than this (as JSON) is journaled without its parsed detail."""
_STOP = "__stop__"
_ABORT = "abort"


class Operator(Protocol):
    """Who answers gates and inputs (a terminal, the TUI, a table of answers): awaited, so an
    answer may take as long as a person needs; cancelling the run cancels the wait."""

    async def confirm(self, block: Block, prompt: str, phrase: str | None) -> str | None:
        """The answer to a gate: the phrase typed, or yes / no (None: nobody can answer)."""

    async def ask(self, block: Block, prompt: str, spec: InputSpec) -> str | None:
        """A value for an `input` block (None: no answer)."""


@dataclass
class ScriptedOperator:
    """Answers from a table, given beforehand (headless runs, runbook tests)."""

    answers: dict[str, str] = field(default_factory=dict)

    async def confirm(self, block: Block, prompt: str, phrase: str | None) -> str | None:
        """The scripted answer for the gate, if any."""
        return self.answers.get(block.id)

    async def ask(self, block: Block, prompt: str, spec: InputSpec) -> str | None:
        """The scripted answer for the input, if any."""
        return self.answers.get(block.id, self.answers.get(spec.name))


class Observer:
    """Watches a run (progress lines, a TUI screen, a test). Every hook does nothing by default;
    a subclass overrides what it needs. Hooks run synchronously, after the event is journaled,
    and must not raise."""

    def event(self, event: Event) -> None:
        """Any journaled event (called before the specific hook below)."""

    def run_started(self, event: Event) -> None:
        """The session started or resumed (`session_started`, `session_resumed`)."""

    def step_entered(self, event: Event) -> None:
        """A step opened."""

    def block_started(self, event: Event, block: Block) -> None:
        """A block began."""

    def output_chunk(self, block: Block, text: str) -> None:
        """A line of a running block's output, as it arrives (not journaled one by one)."""

    def needs_answer(self, block: Block, prompt: str) -> None:
        """The operator is being asked (a gate, an input, a dangerous command)."""

    def block_finished(self, event: Event) -> None:
        """A block ended (`event.data` is a `BlockFinished`)."""

    def run_finished(self, event: Event) -> None:
        """The session ended (`session_finished`) or was interrupted (`session_cancelled`)."""


_HOOKS = {EventKind.SESSION_STARTED: "run_started", EventKind.SESSION_RESUMED: "run_started",
          EventKind.STEP_STARTED: "step_entered", EventKind.BLOCK_FINISHED: "block_finished",
          EventKind.SESSION_FINISHED: "run_finished",
          EventKind.SESSION_CANCELLED: "run_finished"}


@dataclass
class RunSummary:
    """How a run ended."""

    session: str
    runbook: str
    outcome: Verdict
    path: list[str]
    ended_at: str | None
    vars: dict[str, Any]
    findings: list[str]
    blocks: dict[str, Verdict]
    handover: str | None = None
    reason: str = ""

    def text(self) -> str:
        """The summary an operator reads at the end."""
        lines = [f"{self.runbook}: {self.outcome.value} (session {self.session})",
                 f"path: {' -> '.join(self.path) or '-'}"]
        if self.reason:
            lines.append(f"stopped: {self.reason}")
        if self.handover:
            lines.append(f"next: runbook {self.handover}")
        lines += [f"  {finding}" for finding in self.findings]
        return "\n".join(lines)


@dataclass
class _Outcome:
    verdict: Verdict
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    flow: str | None = None
    """Where to go next: a step id, `end`, `runbook:ID`, `abort`, or stop."""
    variables: dict[str, Any] = field(default_factory=dict)


def var_name(block_id: str) -> str:
    """How expressions name a block's result: `dom-before` -> `dom_before`."""
    return block_id.replace("-", "_")


class Engine:
    """Runs one runbook session."""

    def __init__(self, runbook: Runbook, *, inputs: dict[str, Any], runner: ProbeRunner,
                 catalog: dict[str, ProbeDef], journal: Journal, operator: Operator,
                 dry_run: bool = False, redactor: Redactor | None = None,
                 operator_name: str | None = None,
                 observers: Sequence[Observer] = (),
                 fabric: dict[str, Any] | None = None) -> None:
        self.runbook = runbook
        self.fabric = fabric
        self.inputs = dict(inputs)
        self.runner = runner
        self.catalog = catalog
        self.journal = journal
        self.operator = operator
        self.dry_run = dry_run
        secrets = [str(inputs[s.name]) for s in runbook.meta.inputs
                   if s.secret and inputs.get(s.name)]
        self.redactor = redactor or Redactor()
        self.redactor.add(*secrets)
        self.operator_name = operator_name
        self.session: str | None = None
        self.values: dict[str, Any] = {}
        """Block results and set / captured variables, by expression name."""
        self.verdicts: dict[str, Verdict] = {}
        self.messages: dict[str, str] = {}
        self.path: list[str] = []
        self._position = (0, 0)
        self._step_open = False
        self._visits = 0
        self._ending: tuple[str, str] | None = None
        self._handover: str | None = None
        self.summary: RunSummary | None = None
        """Set when the session has ended."""
        self.planned_skips: dict[str, str] = {}
        """Block id -> reason: blocks the operator decided beforehand to skip."""
        self._functions = fabric_functions(runner.graph)
        self.observers: list[Observer] = list(observers)
        self.cancelled = False
        """The last run was interrupted (its session is resumable)."""
        self._running: tuple[Block, asyncio.Task[Any]] | None = None
        self._abort_requested: str | None = None
        self._attrs: dict[str, block_text.BlockAttrs] = {}
        self._unknown: Unknowns = []
        """A dry run: the values the current block needs that are not known yet."""

    # scope ------------------------------------------------------------------------------------
    def scope(self) -> dict[str, Any]:
        """What expressions see: inputs, then block results and variables."""
        return {**self.inputs, **self.values}

    def evaluator(self) -> Evaluator:
        """An evaluator over the current scope."""
        return Evaluator(self.scope(), self._functions)

    def _render(self, template: str, evaluator: Evaluator) -> str:
        """`render`; in a dry run an unknown value stays `{{ expr }}` and is remembered."""
        return render(template, evaluator, self._unknown if self.dry_run else None)

    def _render_shell(self, script: str, evaluator: Evaluator) -> str:
        """`render_shell`, tolerant of unknown values in a dry run as `_render` is."""
        return render_shell(script, evaluator, self._unknown if self.dry_run else None)

    def _unknown_note(self) -> str:
        """` ({{ leaf }}: set from ..., known when it runs)` for the values still unknown."""
        return f" ({describe_unknown(self._unknown)})" if self._unknown else ""

    def _where(self, block: Block) -> str:
        index = next(i for i, s in enumerate(self.runbook.steps, 1) if s.id == block.step)
        return f"step {index} block {block.id!r}"

    # journal ----------------------------------------------------------------------------------
    def _record(self, payload: Payload, step: str | None = None,
                block: str | None = None) -> Event:
        """Journal an event (secrets scrubbed), then tell the observers."""
        assert self.session is not None
        event = self.journal.append(self.session, kind_of(payload), step, block,
                                    self.redactor.scrub(payload.record()))
        hook = _HOOKS.get(event.kind)
        for observer in self.observers:
            observer.event(event)
            if hook is not None:
                getattr(observer, hook)(event)
        return event

    def _tell(self, hook: str, *args: Any) -> None:
        for observer in self.observers:
            getattr(observer, hook)(*args)

    def _announce_question(self, block: Block, prompt: str) -> str:
        """`prompt` masked (a screen never shows a secret), told to the observers as a question
        awaiting its answer; the masked text is what the operator is then asked."""
        masked = self.redactor.text(prompt)
        self._tell("needs_answer", block, masked)
        return masked

    def _stream(self, block: Block, line: str) -> None:
        """A line of output to the observers, secrets masked as the journal masks them."""
        if self.observers:
            self._tell("output_chunk", block, self.redactor.text(line))

    def attrs(self, block: Block) -> block_text.BlockAttrs:
        """`block`'s typed attributes (read once)."""
        found = self._attrs.get(block.id)
        if found is None:
            found = self._attrs[block.id] = block_text.block_attrs(block)
        return found

    # running ----------------------------------------------------------------------------------
    def begin(self) -> str:
        """Open the session in the journal (once); returns its id."""
        if self.session is None:
            public = {k: ("***" if any(s.name == k and s.secret for s in self.runbook.meta.inputs)
                          else v) for k, v in self.inputs.items()}
            self.session = self.journal.start(
                self.runbook.meta.id, self.runbook.title, self.runbook.path,
                self.runbook.digest, self.redactor.scrub(public), self.operator_name)
            self._record(SessionStarted(
                runbook=self.runbook.meta.id, version=self.runbook.meta.version,
                digest=self.runbook.digest, inputs=public, dry_run=self.dry_run,
                fabric=self.fabric))
        return self.session

    @property
    def finished(self) -> bool:
        """True once the session has ended (run to the end, stopped, aborted, handed over)."""
        return self.summary is not None

    def next_block(self) -> Block | None:
        """The block that runs next (None at the end of the runbook)."""
        index, block = self._position
        steps = self.runbook.steps
        while index < len(steps) and block >= len(steps[index].blocks):
            index, block = index + 1, 0
        return steps[index].blocks[block] if index < len(steps) else None

    async def run(self) -> RunSummary:
        """Run from the current position to the end (or a stop). Returns the summary.

        Raises `asyncio.CancelledError` when cancelled (the session is then `cancelled`).
        """
        self.begin()
        while self.summary is None:
            await self.run_next()
        return self.summary

    async def run_next(self) -> None:
        """Run one block (opening its step first; closing it, and moving on, after)."""
        self.begin()
        if self.summary is not None:
            return
        steps = self.runbook.steps
        index, position = self._position
        if index >= len(steps):
            self._finish()
            return
        self._visits += 1
        if self._visits > 10 * len(self.runbook.blocks()) + 100:
            self._ending = ("stop", "a decide loop ran more than ten times through the runbook")
            self._finish()
            return
        step = steps[index]
        if not self._step_open:
            self.path.append(step.id)
            self._record(StepStarted(title=step.title), step.id)
            self._step_open = True
        if position >= len(step.blocks):
            self._close_step(index, None)
            return
        block = step.blocks[position]
        if block.id in self.planned_skips:
            self.skip(block.id, self.planned_skips[block.id])
            return
        outcome = await self._block(block)
        if self.summary is not None:
            return  # aborted while the block ran: the session has ended
        self._position = (index, position + 1)
        if outcome.flow is not None or position + 1 >= len(step.blocks):
            self._close_step(index, outcome.flow)

    def _close_step(self, index: int, flow: str | None) -> None:
        """End step `index` and go where `flow` says (the next step when None)."""
        steps = self.runbook.steps
        step = steps[index]
        verdict = worst_verdict([self.verdicts.get(b.id, Verdict.PENDING) for b in step.blocks])
        self._record(StepFinished(verdict=verdict), step.id)
        self._step_open = False
        if flow is None:
            self._position = (index + 1, 0)
            if index + 1 >= len(steps):
                self._finish()
            return
        if flow == "end":
            self._finish()
        elif flow == _ABORT:
            self._ending = ("abort", self.messages.get(self._last_block(), "aborted"))
            self._finish()
        elif flow == _STOP:
            self._ending = ("stop", self.messages.get(self._last_block(), "stopped"))
            self._finish()
        elif flow.startswith("runbook:"):
            self._handover = flow.split(":", 1)[1]
            self._finish()
        else:
            target = next((i for i, s in enumerate(steps) if s.id == flow), None)
            if target is None:
                self._ending = ("stop", f"no step {flow!r} to go to")
                self._finish()
            else:
                self._position = (target, 0)

    # operator actions -------------------------------------------------------------------------
    def skip(self, block_id: str, reason: str) -> None:
        """Skip the next block (it must be `block_id`), recording why."""
        block = self.next_block()
        if block is None or block.id != block_id:
            raise ValueError(f"{block_id} is not the next block"
                             + (f" ({block.id} is)" if block else ""))
        self.begin()
        index, position = self._position
        if not self._step_open:
            self.path.append(block.step)
            self._record(StepStarted(title=self.runbook.steps[index].title), block.step)
            self._step_open = True
        self._record(Decision(by="operator", skip=reason), block.step, block.id)
        self._apply(block, _Outcome(Verdict.SKIPPED, f"skipped by the operator: {reason}"))
        self._position = (index, position + 1)
        if position + 1 >= len(self.runbook.steps[index].blocks):
            self._close_step(index, None)

    def jump(self, step_id: str, reason: str = "") -> None:
        """Continue at step `step_id` (the operator's choice, recorded)."""
        target = next((i for i, s in enumerate(self.runbook.steps) if s.id == step_id), None)
        if target is None:
            raise ValueError(f"no step {step_id!r}")
        self.begin()
        self._record(Decision(by="operator", jump=step_id, reason=reason))
        if self._step_open:
            self._close_step(self._position[0], step_id)
        else:
            self._position = (target, 0)

    def abort(self, reason: str) -> RunSummary | None:
        """End the session as aborted by the operator. Between blocks it ends now (the summary
        is returned); while a block runs (another task awaits `run_next`), that block is
        cancelled and the session ends when it has stopped (None is returned; the awaited
        `run_next` returns and `summary` is set)."""
        self.begin()
        if self.summary is not None:
            return self.summary
        self._record(Decision(by="operator", abort=reason))
        self._ending = ("abort", f"aborted by the operator: {reason}")
        if self._running is not None and not self._running[1].done():
            self._abort_requested = reason
            self._running[1].cancel()
            return None
        return self._finish()

    def cancel(self) -> bool:
        """Cancel the block running now (from another task: a TUI's stop key). As for any
        cancellation, the block and the session are journaled `cancelled` and the awaited
        `run_next` / `run` raises `CancelledError`; False when no block is running."""
        if self._running is None or self._running[1].done():
            return False
        self._running[1].cancel()
        return True

    def note(self, text: str) -> None:
        """An operator's note, recorded in the journal."""
        self.begin()
        self._record(Note(text=text, by="operator"))

    async def rerun(self, block_id: str) -> Verdict:
        """Run a block again (its new result replaces the old one for later blocks)."""
        block = next((b for b in self.runbook.blocks() if b.id == block_id), None)
        if block is None:
            raise ValueError(f"no block {block_id!r}")
        self.begin()
        self._record(Decision(by="operator", rerun=True), block.step, block.id)
        outcome = await self._block(block)
        return outcome.verdict

    def _last_block(self) -> str:
        return next(reversed(self.verdicts), "") if self.verdicts else ""

    def _finish(self) -> RunSummary:
        assert self.session is not None
        if self.summary is not None:
            return self.summary
        ending, handover = self._ending, self._handover
        self._position = (len(self.runbook.steps), 0)
        if ending and ending[0] == "abort":
            outcome = Verdict.ABORTED
        elif ending and ending[0] == "stop":
            outcome = Verdict.ERROR
        else:
            # The runbook states its conclusions in checks; probe and command results are the
            # evidence (an optic replacement's "before" readings are expected to be bad).
            kinds = {b.id: b.kind for b in self.runbook.blocks()}
            checks = [v for b, v in self.verdicts.items() if kinds.get(b) is BlockKind.CHECK]
            outcome = worst_verdict(checks if checks else list(self.verdicts.values()))
        findings = [f"[{verdict.value}] {block}: {self.messages.get(block, '')}"
                    for block, verdict in self.verdicts.items()
                    if verdict in (Verdict.WARN, Verdict.FAIL, Verdict.ERROR, Verdict.ABORTED)]
        # Masked here, at the source, so no face (text, JSON, a case draft, a report) can
        # print a secret the run saw: a check message or a captured value may hold one.
        mask = self.redactor
        summary = RunSummary(
            session=self.session, runbook=self.runbook.meta.id, outcome=outcome,
            path=list(self.path), ended_at=self.path[-1] if self.path else None,
            vars=mask.scrub({k: v for k, v in self.values.items()
                             if not isinstance(v, dict | Unknown)}),
            findings=mask.scrub(findings), blocks=dict(self.verdicts), handover=handover,
            reason=mask.text(ending[1]) if ending else "")
        self._record(SessionFinished(outcome=outcome, path=summary.path, handover=handover,
                                     reason=summary.reason, findings=findings))
        self.journal.set_status(self.session, outcome.value)
        self.summary = summary
        return summary

    # blocks -----------------------------------------------------------------------------------
    async def _block(self, block: Block) -> _Outcome:
        event = self._record(BlockStarted(kind=block.kind.value), block.step, block.id)
        self._tell("block_started", event, block)
        self.verdicts[block.id] = Verdict.RUNNING
        task = asyncio.current_task()
        self._running = (block, task) if task is not None else None
        self._unknown = []
        try:
            attrs = self.attrs(block)
            condition = attrs.condition
            try:
                wanted = not condition or self.evaluator().evaluate(condition)
            except UnknownValue as exc:
                if not self.dry_run:
                    raise
                self._unknown.append((f"if {condition}", exc.unknown))
                wanted = True  # a dry run shows what the block would do if it runs
            if not wanted:
                outcome = _Outcome(Verdict.SKIPPED, f"skipped: {condition} is false")
            else:
                outcome = await self._execute(block)
        except ExprError as exc:
            outcome = _Outcome(Verdict.ERROR, str(exc))
        except (TargetError, RenderError, ValueError) as exc:
            outcome = _Outcome(Verdict.ERROR, str(exc))
        except asyncio.CancelledError:
            aborted = self._cancelled(block, task)
            if aborted is None:
                raise
            return aborted
        finally:
            self._running = None
        if self.dry_run and outcome.verdict is Verdict.ERROR:
            # Values a dry run did not measure cannot drive later blocks: say so, go on.
            outcome = _Outcome(Verdict.SKIPPED, f"dry run: {outcome.message}")
        attrs = self._attrs.get(block.id) or block_text.BlockAttrs()  # (unreadable: defaults)
        if outcome.verdict is Verdict.ERROR and outcome.flow is None and \
                attrs.on_error == "stop":
            outcome.flow = _STOP
        if outcome.verdict is Verdict.FAIL and outcome.flow is None:
            target = attrs.on_fail
            if target and target != "continue":
                outcome.flow = _STOP if target == "stop" else target
        self._apply(block, outcome)
        return outcome

    def _cancelled(self, block: Block, task: asyncio.Task[Any] | None) -> _Outcome | None:
        """`block` was cancelled: journal it; then end as aborted (an operator's `abort`: the
        outcome is returned) or leave the session resumable at this block (None: the caller
        lets the cancellation go on)."""
        if self._abort_requested is not None and task is not None and task.uncancel() == 0:
            reason, self._abort_requested = self._abort_requested, None
            outcome = _Outcome(Verdict.ABORTED, f"aborted by the operator: {reason}", flow=_ABORT)
            self._apply(block, outcome)
            self._finish()
            return outcome
        # flow=stop: a resume runs this block again, inside its step (see `restore`).
        self._apply(block, _Outcome(Verdict.CANCELLED, "cancelled while running", flow=_STOP))
        self.mark_cancelled(block)
        return None

    def mark_cancelled(self, block: Block | None = None, reason: str = "interrupted") -> None:
        """Journal that the run was interrupted (at `block`, if one was running): the session
        is `cancelled` and resumable. Does nothing once the session has ended or was marked."""
        if self.session is None or self.summary is not None or self.cancelled:
            return
        self.cancelled = True
        step = block.step if block is not None else None
        self._record(SessionCancelled(reason=reason, resume=step), step,
                     block.id if block is not None else None)
        self.journal.set_status(self.session, Verdict.CANCELLED.value)

    def _apply(self, block: Block, outcome: _Outcome) -> None:
        """Store the block's result and variables, then journal its end."""
        name = var_name(block.id)
        result = {"verdict": outcome.verdict.value, "message": outcome.message, **outcome.data}
        self.values[name] = result
        variables = dict(outcome.variables)
        assignments = (self._attrs.get(block.id) or block_text.BlockAttrs()).assignments
        if self.dry_run and outcome.verdict is Verdict.SKIPPED:
            # Not measured: its result is unknown, and so is what follows from it; what
            # follows from inputs and the topology alone is computed, so a dry run shows it.
            self.values[name] = Unknown(name, f"the result of {self._where(block)}, known "
                                        "when it runs")
            for part in _assignments(assignments or ""):
                key, _, expression = part.partition("=")
                try:
                    variables[key.strip()] = Evaluator({**self.scope(), **variables},
                                                       self._functions).evaluate(expression)
                except UnknownValue as exc:
                    variables[key.strip()] = exc.unknown.derived(key.strip())
                except ExprError as exc:
                    variables[key.strip()] = Unknown(key.strip(), f"not computable in a dry "
                                                     f"run ({exc})")
        elif assignments and outcome.verdict not in (Verdict.ERROR, Verdict.SKIPPED):
            for part in _assignments(assignments):
                key, _, expression = part.partition("=")
                try:
                    variables[key.strip()] = Evaluator({**self.scope(), **variables},
                                                       self._functions).evaluate(expression)
                except ExprError as exc:
                    outcome.verdict, outcome.message = Verdict.ERROR, f"set {key.strip()}: {exc}"
                    result.update(verdict="error", message=outcome.message)
                    break  # the first failing assignment is the one to fix; the rest follow
        self.values.update(variables)
        self.verdicts[block.id] = outcome.verdict
        self.messages[block.id] = outcome.message
        stored = result
        if "parsed" in result and \
                len(json.dumps(result, default=str, check_circular=False)) > RESULT_KEEP:
            stored = {k: v for k, v in result.items() if k != "parsed"}
        unknown = {k: v.why for k, v in variables.items() if isinstance(v, Unknown)}
        self._record(BlockFinished(verdict=outcome.verdict, message=outcome.message,
                                   result=stored,
                                   vars={k: None if k in unknown else v
                                         for k, v in variables.items()},
                                   flow=outcome.flow, unknown=unknown),
                     block.step, block.id)

    async def _execute(self, block: Block) -> _Outcome:
        if self.dry_run and block.kind in (BlockKind.CHECK, BlockKind.DECIDE,
                                           BlockKind.CONFIRM, BlockKind.INPUT):
            return self._dry(block)
        handlers = {BlockKind.SH: self._sh, BlockKind.PROBE: self._probe,
                    BlockKind.CHECK: self._check, BlockKind.CONFIRM: self._confirm,
                    BlockKind.INPUT: self._input, BlockKind.DECIDE: self._decide,
                    BlockKind.NOTE: self._note}
        return await handlers[block.kind](block)

    def _dry(self, block: Block) -> _Outcome:
        """A dry run shows every gate and judgement without making it, and visits every step."""
        body = " | ".join(line.strip() for line in block.body.strip().splitlines())
        try:
            body = self._render(body, self.evaluator())
        except ExprError:
            self._unknown = []  # shown as written; the real run reports the error
        if block.kind is BlockKind.INPUT:
            attrs = self.attrs(block)
            name = attrs.name or var_name(block.id)
            if attrs.default is not None and attrs.secret:
                self.redactor.add(attrs.default)
            asked = Unknown(name, f"asked for at {self._where(block)}"
                            + (f" (default {attrs.default})"
                               if attrs.default is not None and not attrs.secret else ""))
            return _Outcome(Verdict.SKIPPED, f"dry run: would ask for {name}: {body}"
                            f"{self._unknown_note()}", variables={name: asked})
        verb = {BlockKind.CHECK: "judge", BlockKind.DECIDE: "choose",
                BlockKind.CONFIRM: "ask"}[block.kind]
        return _Outcome(Verdict.SKIPPED, f"dry run: would {verb}: {body}{self._unknown_note()}")

    async def _note(self, block: Block) -> _Outcome:
        text = self._render(block.body.strip(), self.evaluator())
        if self._unknown:
            text += f"\n(dry run: {describe_unknown(self._unknown)})"
        self._record(Note(text=text, by="runbook"), block.step, block.id)
        return _Outcome(Verdict.OK, text.splitlines()[0] if text else "")

    async def _check(self, block: Block) -> _Outcome:
        evaluator = self.evaluator()
        for rule in block_text.check_rules(block):
            if rule.condition is None or evaluator.evaluate(rule.condition):
                return _Outcome(rule.verdict, render(rule.message, evaluator),
                                {"rule": rule.line})
        return _Outcome(Verdict.OK, "no rule matched")

    async def _decide(self, block: Block) -> _Outcome:
        evaluator = self.evaluator()
        for branch in block_text.branches(block):
            if branch.condition is None or evaluator.evaluate(branch.condition):
                target = render(branch.target, evaluator)
                self._record(Decision(by="runbook", condition=branch.condition or "default",
                                      target=target), block.step, block.id)
                return _Outcome(Verdict.OK, f"-> {target}", {"target": target}, flow=target)
        return _Outcome(Verdict.OK, "no branch taken: continue")

    async def _confirm(self, block: Block) -> _Outcome:
        evaluator = self.evaluator()
        prompt = render(block.body.strip(), evaluator)
        attrs = self.attrs(block)
        phrase = render(attrs.type, evaluator) if attrs.type is not None else \
            (block.id if block_text.is_dangerous(block) else None)
        prompt = self._announce_question(block, prompt)
        answer = await self.operator.confirm(block, prompt, phrase)
        if answer is None:
            return _Outcome(Verdict.ERROR, f"gate {block.id} needs an answer "
                            f"(headless: --answer {block.id}={phrase or 'yes'})")
        accepted = answer.strip() == phrase if phrase else \
            answer.strip().lower() in ("y", "yes", "ok", "go")
        self._record(Decision(by="operator", prompt=prompt,
                              answer="accepted" if accepted else answer,
                              typed=phrase is not None), block.step, block.id)
        if accepted:
            return _Outcome(Verdict.OK, "confirmed", {"answer": "yes"})
        target = attrs.on_no or _ABORT
        verdict = Verdict.ABORTED if target == _ABORT else Verdict.SKIPPED
        return _Outcome(verdict, f"not confirmed: {prompt.splitlines()[0] if prompt else ''}"
                        .strip(), {"answer": "no"}, flow=target)

    async def _input(self, block: Block) -> _Outcome:
        spec = input_block_spec(block)
        name = spec.name
        prompt = self._announce_question(block, render(block.body.strip(), self.evaluator()))
        answer = await self.operator.ask(block, prompt, spec)
        if answer is None:
            answer = spec.default
        if spec.secret and answer is not None:
            self.redactor.add(str(answer))  # before convert: its error message quotes it
        if answer is None:
            return _Outcome(Verdict.ERROR, f"input {name} needs a value "
                            f"(headless: --answer {block.id}=VALUE)")
        value = convert(spec, answer, self.runner.graph)
        if spec.secret:
            self.redactor.add(str(value))
        self._record(Decision(by="operator", input=name, value=value), block.step, block.id)
        return _Outcome(Verdict.OK, f"{name} = {'***' if spec.secret else value}",
                        {"value": value}, variables={name: value})

    async def _probe(self, block: Block) -> _Outcome:
        call = block_text.probe_call(block)
        definition = self.catalog.get(call.probe)
        if definition is None:
            return _Outcome(Verdict.ERROR, f"no probe {call.probe!r} in the catalog")
        evaluator = self.evaluator()
        target = self._render(call.target, evaluator) if call.target is not None else None
        params = {k: self._render(v, evaluator) for k, v in call.params.items()}
        attrs = self.attrs(block)
        if attrs.timeout is not None:
            definition = definition.model_copy(update={"timeout": attrs.timeout})
        if attrs.interval is not None:
            interval = attrs.interval
            if isinstance(interval, str):
                rendered = self._render(interval, evaluator)
                try:
                    interval = float(rendered)
                except ValueError:
                    return _Outcome(Verdict.ERROR, f"interval={interval!r} is {rendered!r}, "
                                                   "not a number of seconds")
            if interval <= 0:
                return _Outcome(Verdict.ERROR, f"interval must be positive, not {interval:g}")
            definition = definition.model_copy(update={"interval": interval})
        described = f"{call.probe} on {target or 'this machine'}" + \
            (f" {params}" if params else "")
        self._record(BlockCommand(command=described), block.step, block.id)
        confirmed: str | None = None
        if definition.danger or block_text.is_dangerous(block):  # the same gate as `sh`
            refused = await self._typed_gate(
                block, evaluator, f"probe {call.probe} changes state on "
                f"{target or 'this machine'}: {definition.description}", f"run {described}")
            if refused is not None:
                return refused
            # The gate above is this face's typed confirmation; the runner checks the phrase.
            confirmed = confirmation_phrase(definition, target)
        if self.dry_run:
            return _Outcome(Verdict.SKIPPED, f"dry run: would run {described}"
                            f"{self._unknown_note()}")
        result = await self.runner.run(definition, target, params,
                                       on_line=lambda line: self._stream(block, line),
                                       confirmed=confirmed)
        metrics = [{"name": m.name, "value": m.value, "unit": m.unit, "component": m.component,
                    "verdict": m.verdict.value} for m in result.metrics]
        findings = [f.message if hasattr(f, "message") else str(f) for f in result.findings]
        output = "\n".join(r.output for r in result.raw)[-OUTPUT_KEEP:]
        if output:
            self._record(BlockOutput(output=output), block.step, block.id)
        verdict = result.verdict
        message = result.error or (findings[0] if findings else f"{call.probe}: "
                                   f"{result.verdict.value}")
        if len(findings) > 1 and not result.error:
            message += f" (+{len(findings) - 1} more)"
        return _Outcome(verdict, message, {
            "probe": call.probe, "target": target, "command": result.command,
            "metrics": metrics, "findings": findings, "parsed": result.parsed,
            "error": result.error})

    async def _sh(self, block: Block) -> _Outcome:
        evaluator = self.evaluator()
        attrs = self.attrs(block)
        target = self._render(attrs.on, evaluator) if attrs.on else None
        graph = self.runner.graph
        if target is not None and graph is not None and target in graph.switches:
            # Typed into a CLI line by line: each value stays on its line (else nothing runs).
            script = "\n".join(render_cli_lines(block.body, evaluator,
                                                self._unknown if self.dry_run else None))
        else:
            script = self._render_shell(block.body.rstrip("\n"), evaluator)
        timeout = attrs.timeout if attrs.timeout is not None else 120.0
        where = target or "this machine"
        self._record(BlockCommand(command=script, on=where), block.step, block.id)
        if block_text.is_dangerous(block):
            refused = await self._typed_gate(block, evaluator, f"on {where} this runs:\n{script}",
                                             f"run on {where}: {script}")
            if refused is not None:
                return refused
        if self.dry_run:
            return _Outcome(Verdict.SKIPPED, f"dry run: would run on {where}: {script}"
                            f"{self._unknown_note()}", variables=self._dry_captures(block))
        output, status, error = await self._run_script(block, target, script, timeout)
        if output:
            self._record(BlockOutput(output=output[-OUTPUT_KEEP:]), block.step, block.id)
        variables: dict[str, Any] = {}
        if attrs.capture is not None and output:
            match = re.search(attrs.capture, output, re.M)
            if match:
                variables = {k: v for k, v in match.groupdict().items() if v is not None}
        data = {"output": output[-OUTPUT_KEEP:], "status": status, "on": where}
        if error is not None:
            return _Outcome(Verdict.ERROR, error, data, variables=variables)
        if status in attrs.ok_status:
            return _Outcome(Verdict.OK, f"exit {status}", data, variables=variables)
        first = next((line for line in output.splitlines() if line.strip()), "")
        return _Outcome(Verdict.FAIL, f"exit {status}: {first[:160]}", data, variables=variables)

    def _dry_captures(self, block: Block) -> dict[str, Any]:
        """The names a `capture` pattern would set, as unknowns (a dry run has no output)."""
        try:
            groups = re.compile(self.attrs(block).capture or "").groupindex
        except re.error:
            return {}
        why = f"captured from the output of {self._where(block)}, known when it runs"
        return {name: Unknown(name, why) for name in groups}

    async def _typed_gate(self, block: Block, evaluator: Evaluator, danger: str,
                          action: str) -> _Outcome | None:
        """Ask the operator to type the block's `confirm` phrase (default: its id).

        None when they typed it; otherwise the block's outcome (not confirmed, nobody to ask,
        or a dry run's note of what it would ask before `action`).
        """
        attrs = self.attrs(block)
        phrase = self._render(attrs.confirm, evaluator) if attrs.confirm is not None \
            else block.id
        if self.dry_run:
            return _Outcome(Verdict.SKIPPED, f"dry run: would ask to type {phrase!r}, then "
                            f"{action}{self._unknown_note()}", variables=self._dry_captures(block))
        prompt = self._announce_question(block, f"DANGER: {danger}\nType {phrase} to run it.")
        answer = await self.operator.confirm(block, prompt, phrase)
        if answer is None:
            return _Outcome(Verdict.ERROR, f"{block.id} is dangerous and needs typed "
                            f"confirmation (headless: --answer {block.id}={phrase})")
        self._record(Decision(by="operator", typed=True,
                              answer="accepted" if answer.strip() == phrase else answer),
                     block.step, block.id)
        if answer.strip() != phrase:
            target = attrs.on_no or _ABORT  # declined with on_no=STEP: the run goes on there
            return _Outcome(Verdict.ABORTED if target == _ABORT else Verdict.SKIPPED,
                            f"not confirmed: typed {answer!r}, not {phrase!r}", flow=target)
        return None

    async def _run_script(self, block: Block, target: str | None, script: str,
                          timeout: float) -> tuple[str, int | None, str | None]:
        """(output, exit status, error) of a script on this machine, a node or a switch.

        Note: runs the script (a child process here, or through ssh / a CLI session); the
        output streams to the observers line by line.
        """
        transports = self.runner.transports
        graph = self.runner.graph

        def on_line(line: str) -> None:
            self._stream(block, line)

        if target is None:
            result = await transports.local.run(["sh", "-c", script], timeout=timeout,
                                                on_line=on_line)
        elif graph is not None and target in graph.switches:
            switch = graph.switches[target]
            cli = CliTarget(ssh=SshTarget(name=switch.name, host=switch.mgmt or switch.name,
                                          credentials=switch.credentials),
                            flavor=switch.flavor.value)
            outputs = []
            for line in [c for c in script.split("\n") if c.strip()]:  # as rendered, checked
                reply = await transports.cli.run(cli, line, timeout=timeout,
                                                 retry_on_drop=False)
                outputs.append(reply.output)
                for text in reply.output.splitlines():
                    on_line(text)
                if not reply.ok:
                    return "\n".join(outputs), None, reply.error_message or "rejected"
            return "\n".join(outputs), 0, None
        else:
            node = graph.nodes.get(target) if graph is not None else None
            host = node.mgmt if node is not None and node.mgmt else target
            result = await transports.ssh.run(SshTarget(name=target, host=host),
                                              ["sh", "-c", script], timeout=timeout,
                                              on_line=on_line)
        output = result.output
        if result.error is not None and result.error.value != "command":
            return output, result.exit_status, result.error_message or result.error.value
        return output, result.exit_status, None

    # resume -----------------------------------------------------------------------------------
    def restore(self, session: str, events: list[Event],
                secrets: Mapping[str, Any] | None = None) -> None:
        """Take up `session` after its last finished block (its results and path restored).

        A secret is never replayed from the journal (it holds `***`): the value of a finished
        secret `input` block comes from `secrets` (by input name; see `runbooks.resume`), and
        one not given, like any other value the journal holds masked, is left undefined, so a
        block that uses it fails instead of running with `***`."""
        self.session = session
        asked = secret_blocks(self.runbook)
        given = dict(secrets or {})
        self.redactor.add(*(str(v) for v in given.values() if v is not None))
        steps = self.runbook.steps
        step_ids = [s.id for s in steps]
        position = (0, 0)
        stopped = False
        resumed = False
        for event in events:
            if event.kind is EventKind.SESSION_RESUMED:
                resumed = True
                continue
            if event.kind is EventKind.STEP_STARTED and event.step:
                if not (resumed and self.path and self.path[-1] == event.step):
                    self.path.append(event.step)  # (a resume may restart the open step)
                resumed = False
            data = event.data
            if not isinstance(data, BlockFinished) or event.block is None or \
                    event.step not in step_ids:
                continue
            self.verdicts[event.block] = data.verdict
            self.messages[event.block] = data.message
            self._restore_values(event.block, data, asked, given)
            step_index = step_ids.index(event.step)
            flow = data.flow
            blocks = [b.id for b in steps[step_index].blocks]
            stopped = flow == _STOP
            if stopped:
                # It stopped here (a gate nobody answered, a block that could not run): a resume
                # runs this block again, inside the step already open.
                here = blocks.index(event.block) if event.block in blocks else 0
                position = (step_index, here)
                self.verdicts.pop(event.block, None)
                self.messages.pop(event.block, None)
            elif flow in step_ids:
                position = (step_ids.index(flow), 0)
            elif flow is not None:
                position = (len(steps), 0)  # it ended there
            else:
                after = blocks.index(event.block) + 1 if event.block in blocks else len(blocks)
                position = (step_index, after) if after < len(blocks) else (step_index + 1, 0)
        if stopped:
            self._step_open = True
        elif position[1] == 0 and position[0] < len(steps) and self.path and \
                self.path[-1] == steps[position[0]].id:
            self.path.pop()  # that step starts again from its first block
            self._step_open = False
        else:
            self._step_open = position[1] > 0
        self._position = position
        self.journal.set_status(session, "running")
        self._record(SessionResumed(
            at_step=steps[position[0]].id if position[0] < len(steps) else None))
    def secrets_in_hand(self) -> dict[str, Any]:
        """The secrets this engine holds (never journaled): its secret runbook inputs and the
        answers its secret `input` blocks got, by name, for `Workspace.continue_interrupted`."""
        held = {s.name: self.inputs[s.name] for s in self.runbook.meta.inputs
                if s.secret and self.inputs.get(s.name) is not None}
        held.update((spec.name, self.values[spec.name])
                    for spec in secret_blocks(self.runbook).values()
                    if self.values.get(spec.name) is not None)
        return held

    def _restore_values(self, block: str, data: BlockFinished, asked: Mapping[str, InputSpec],
                        given: Mapping[str, Any]) -> None:
        """A finished block's result and variables back into the expression context (see
        `restore`: masked values stay undefined unless given again)."""
        spec = asked.get(block)
        if spec is not None and data.verdict is Verdict.OK:
            self.values.pop(spec.name, None)
            self.values.pop(var_name(block), None)
            if spec.name in given:  # the variable wins over the result, as when it ran
                self.values[var_name(block)] = {"value": given[spec.name]}
                self.values[spec.name] = given[spec.name]
            return
        self.values[var_name(block)] = data.result
        for name, value in data.vars.items():
            if value == MASK:
                self.values.pop(name, None)
            else:
                self.values[name] = value


def _assignments(text: str) -> list[str]:
    """`a=expr; b=expr` -> the assignments (a `;` inside quotes stays)."""
    parts, current, quote = [], "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == ";":
            parts.append(current)
            current = ""
            continue
        current += char
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]

