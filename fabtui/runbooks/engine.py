"""The runbook engine: one state machine for the TUI, headless runs and runbook tests.

Each block goes pending -> running -> ok / warn / fail / skipped / error (or waiting at a gate
not passed).
Every event (session and step boundaries, the command as rendered, output, the parsed result,
the verdict, each operator decision and note) is appended to the journal, and committed, before
the operator is shown it, so a killed process loses nothing it showed; `Engine.resume` picks a
session up after its last finished block, with every captured value restored.

Flow: steps run in document order; a `decide` block jumps (to a step, to `end`, or hands over to
another runbook); a gate not passed (an explicit no without an `on_no` step, a mistyped phrase,
nobody to answer) leaves the session waiting at it (`session_waiting`: not finished, resumable,
the gate asked again), an explicit no with `on_no=STEP` goes there; only the operator's
`abort` (abandon, with a reason) ends a session as aborted; a block that cannot run
(`error`) stops the run unless it says `on_error=continue`; `on_fail=STEP` jumps on a failure.
Probe blocks marked `together=NAME` (consecutive, in one step) run at once: their probes start
when the first is reached (`BlockHandlers._start_together`), so one soak serves them all; each
block still journals its own result in order, and nothing of a block is journaled before its
turn (a killed run resumes with the unfinished ones).
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
from collections.abc import Mapping
from typing import Any

from fabtui.model.events import (
    BlockFinished,
    BlockStarted,
    Decision,
    Event,
    EventKind,
    HandedOverFrom,
    HandedOverTo,
    Note,
    SessionCancelled,
    SessionFinished,
    SessionResumed,
    SessionStarted,
    SessionWaiting,
    StepFinished,
    StepStarted,
)
from fabtui.model.runbook import Block, BlockKind, InputSpec
from fabtui.model.verdict import Verdict
from fabtui.model.verdict import worst as worst_verdict
from fabtui.probes.render import RenderError
from fabtui.probes.targets import TargetError
from fabtui.runbooks import blocks as block_text
from fabtui.runbooks.engine_state import (
    ABORT,
    RESULT_KEEP,
    STOP,
    WAIT,
    Outcome,
    var_name,
)
from fabtui.runbooks.expr import (
    Evaluator,
    ExprError,
    Unknown,
    UnknownValue,
)
from fabtui.runbooks.handlers import BlockHandlers
from fabtui.runbooks.observe import Observer, Operator, RunSummary, ScriptedOperator
from fabtui.runbooks.redact import MASK
from fabtui.runbooks.resume import may_have_run, secret_blocks

__all__ = ["DRY_RUN", "Engine", "Observer", "Operator", "RunSummary", "ScriptedOperator",
           "var_name"]

DRY_RUN = "dry-run"
"""The journal status of a finished dry run (`Workspace.session_id` never takes it as
`last`)."""


class Engine(BlockHandlers):
    """Runs one runbook session: the flow from block to block, skips, jumps, aborts,
    cancellation and resume (block handlers in `handlers`, state in `engine_state`)."""

    # running ----------------------------------------------------------------------------------
    def begin(self) -> str:
        """Open the session in the journal (once); returns its id."""
        if self.session is None:
            public = {k: (MASK if any(s.name == k and s.secret for s in self.runbook.meta.inputs)
                          else v) for k, v in self.inputs.items()}
            self.session = self.journal.start(
                self.runbook.meta.id, self.runbook.title, self.runbook.path,
                self.runbook.digest, self.redactor.scrub(public), self.operator_name)
            self._record(SessionStarted(
                runbook=self.runbook.meta.id, version=self.runbook.meta.version,
                digest=self.runbook.digest, inputs=public, dry_run=self.dry_run,
                fabric=self.fabric))
            self._link_handover()
        return self.session

    def _link_handover(self) -> None:
        """Journal the hand-over this session was opened from in both sessions: first here
        (`handed_over_from`, what a case follows), then in the session that handed over
        (`handed_over_to`). Each is one committed append, as every event is: a crash between
        the two leaves the link readable from this side. A dry run measured nothing and links
        nothing."""
        if self.handed_over_from is None or self.dry_run or self.session is None:
            return
        source, runbook = self.handed_over_from
        self._record(HandedOverFrom(session=source, runbook=runbook))
        self.journal.append(source, EventKind.HANDED_OVER_TO,
                            data=HandedOverTo(session=self.session,
                                              runbook=self.runbook.meta.id).record())

    @property
    def finished(self) -> bool:
        """True once this run has stopped: the session ended (run to the end, stopped,
        aborted, handed over) or waits at a gate (`waiting`: resumable)."""
        return self.summary is not None

    @property
    def waiting(self) -> bool:
        """True when the session waits at a gate it did not pass (resume it to ask again)."""
        return self.summary is not None and self.summary.outcome is Verdict.WAITING

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

    async def close(self) -> None:
        """End the remote sessions this engine's runner opened (CLI sessions, ssh
        connections); the engine's journal stays open with its workspace."""
        self._drop_together()
        await self.runner.close()

    async def run_to_gate(self) -> None:
        """Run blocks until one has asked the operator something (a gate, an input, a
        dangerous command: it ran with the answer) or the session ends."""
        asked = self.questions
        while not self.finished and self.questions == asked:
            await self.run_next()

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
        if block.id not in self._together:  # not started with a group: none runs ahead now
            self._drop_together()
            self._start_together(step, position)
        outcome = await self._block(block)
        if self.summary is not None:
            return  # aborted while the block ran: the session has ended
        if outcome.flow == WAIT:
            self._wait(block, outcome)  # the position stays at the gate
            return
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
        elif flow == ABORT:
            self._ending = ("abort", self.messages.get(self._last_block(), "aborted"))
            self._finish()
        elif flow == STOP:
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
        self._apply(block, Outcome(Verdict.SKIPPED, f"skipped by the operator: {reason}"))
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
        """End the session as aborted by the operator (abandoned: it cannot be resumed; a
        session waiting at a gate too). Between blocks it ends now (the summary
        is returned); while a block runs (another task awaits `run_next`), that block is
        cancelled and the session ends when it has stopped (None is returned; the awaited
        `run_next` returns and `summary` is set)."""
        self.begin()
        if self.waiting:
            self.summary = None  # abandoned at the gate it waits at: it ends now
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

    def note(self, text: str, by: str = "operator") -> None:
        """A note recorded in the journal: the operator's, or (`by="demo"`) what the demo
        fabric did for the operator, which a filed case leaves out."""
        self.begin()
        self._record(Note(text=text, by=by))

    async def rerun(self, block_id: str) -> Verdict:
        """Run a block again (its new result replaces the old one for later blocks)."""
        block = next((b for b in self.runbook.blocks() if b.id == block_id), None)
        if block is None:
            raise ValueError(f"no block {block_id!r}")
        self.begin()
        self._record(Decision(by="operator", rerun=True), block.step, block.id)
        self._drop_together()  # a rerun runs its block alone
        outcome = await self._block(block)
        return outcome.verdict

    def _last_block(self) -> str:
        return next(reversed(self.verdicts), "") if self.verdicts else ""

    def _finish(self) -> RunSummary:
        assert self.session is not None
        if self.summary is not None:
            return self.summary
        ending, handover = self._ending, self._handover
        self._drop_together()
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
        summary = self._summary(outcome, ending[1] if ending else "", handover)
        self._record(SessionFinished(outcome=outcome, path=summary.path, handover=handover,
                                     reason=summary.reason, findings=summary.findings))
        # A dry run measured nothing: recorded, but never `last` (a report or a case of it
        # would say nothing); the sessions list shows it as a dry run.
        self.journal.set_status(self.session, DRY_RUN if self.dry_run else outcome.value)
        self.summary = summary
        return summary

    def _wait(self, block: Block, outcome: Outcome) -> RunSummary:
        """The gate `block` was not passed: the session waits there (journaled, resumable at
        the gate, not finished); the run stops with a `waiting` summary."""
        assert self.session is not None
        answer = str(outcome.data.get("pass") or "yes")
        summary = self._summary(Verdict.WAITING, outcome.message, None)
        summary.waiting, summary.answer = block.id, self.redactor.text(answer)
        self._record(SessionWaiting(gate=block.id, step=block.step, reason=summary.reason,
                                    answer=summary.answer), block.step, block.id)
        self.journal.set_status(self.session, Verdict.WAITING.value)
        self.summary = summary
        return summary

    def _summary(self, outcome: Verdict, reason: str, handover: str | None) -> RunSummary:
        assert self.session is not None
        findings = [f"[{verdict.value}] {block}: {self.messages.get(block, '')}"
                    for block, verdict in self.verdicts.items()
                    if verdict in (Verdict.WARN, Verdict.FAIL, Verdict.ERROR, Verdict.ABORTED)]
        # Masked here, at the source, so no face (text, JSON, a case draft, a report) can
        # print a secret the run saw: a check message or a captured value may hold one.
        mask = self.redactor
        return RunSummary(
            session=self.session, runbook=self.runbook.meta.id, outcome=outcome,
            path=list(self.path), ended_at=self.path[-1] if self.path else None,
            vars=mask.scrub({k: v for k, v in self.values.items()
                             if not isinstance(v, dict | Unknown)}),
            findings=mask.scrub(findings), blocks=dict(self.verdicts), handover=handover,
            reason=mask.text(reason))

    # blocks -----------------------------------------------------------------------------------
    async def _block(self, block: Block) -> Outcome:
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
                outcome = Outcome(Verdict.SKIPPED, f"skipped: {condition} is false")
            else:
                outcome = await self._execute(block)
        except ExprError as exc:
            outcome = Outcome(Verdict.ERROR, str(exc))
        except (TargetError, RenderError, ValueError) as exc:
            outcome = Outcome(Verdict.ERROR, str(exc))
        except asyncio.CancelledError:
            self._drop_together()  # the group's other probes stop with it
            aborted = self._cancelled(block, task)
            if aborted is None:
                raise
            return aborted
        finally:
            self._running = None
        if self.dry_run and outcome.verdict is Verdict.ERROR:
            # Values a dry run did not measure cannot drive later blocks: say so, go on.
            outcome = Outcome(Verdict.SKIPPED, f"dry run: {outcome.message}")
        attrs = self._attrs.get(block.id) or block_text.BlockAttrs()  # (unreadable: defaults)
        if outcome.verdict is Verdict.ERROR and outcome.flow is None and \
                attrs.on_error == "stop":
            outcome.flow = STOP
        if outcome.verdict is Verdict.FAIL and outcome.flow is None:
            target = attrs.on_fail
            if target and target != "continue":
                outcome.flow = STOP if target == "stop" else target
        self._apply(block, outcome)
        return outcome

    def _cancelled(self, block: Block, task: asyncio.Task[Any] | None) -> Outcome | None:
        """`block` was cancelled: journal it; then end as aborted (an operator's `abort`: the
        outcome is returned) or leave the session resumable at this block (None: the caller
        lets the cancellation go on)."""
        if self._abort_requested is not None and task is not None and task.uncancel() == 0:
            reason, self._abort_requested = self._abort_requested, None
            outcome = Outcome(Verdict.ABORTED, f"aborted by the operator: {reason}", flow=ABORT)
            self._apply(block, outcome)
            self._finish()
            return outcome
        # flow=stop: a resume runs this block again, inside its step (see `restore`).
        self._apply(block, Outcome(Verdict.CANCELLED, "cancelled while running", flow=STOP))
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

    def _apply(self, block: Block, outcome: Outcome) -> None:
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
            for part in set_assignments(assignments or ""):
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
            for part in set_assignments(assignments):
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
            stopped = flow in (STOP, WAIT)
            if stopped:
                # It stopped or waits here (a gate not passed, a block that could not run): a
                # resume runs this block again, inside the step already open.
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
        self.may_have_run = {m.block: m for m in may_have_run(self.runbook, events)}
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
        `restore`). The journal masked every secret, inside longer text too (`u:***`): a value
        holding the mask is not restored (a block that uses it fails instead of running with
        `***`), unless it is a secret `input` given again."""
        spec = asked.get(block)
        result = _unmasked(data.result)
        if spec is not None and data.verdict is Verdict.OK:
            self.values.pop(spec.name, None)
            if spec.name in given:  # the variable wins over the result, as when it ran
                self.values[var_name(block)] = {**result, "value": given[spec.name]}
                self.values[spec.name] = given[spec.name]
            else:
                self.values[var_name(block)] = result
            return
        self.values[var_name(block)] = result
        for name, value in data.vars.items():
            if _masked(value):
                self.values.pop(name, None)
            else:
                self.values[name] = value


def set_assignments(text: str) -> list[str]:
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


def _masked(value: Any) -> bool:
    """True when `value` (or anything in it) holds text the journal masked."""
    if isinstance(value, str):
        return MASK in value
    if isinstance(value, dict):
        return any(_masked(v) for v in value.values())
    if isinstance(value, list):
        return any(_masked(v) for v in value)
    return False


def _unmasked(result: dict[str, Any]) -> dict[str, Any]:
    """A restored block result without the fields that hold masked text (its verdict, say,
    stays for a decide to read)."""
    return {k: v for k, v in result.items() if not _masked(v)}
