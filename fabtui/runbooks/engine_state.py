"""The runbook engine's state and the helpers every part of it uses: the expression scope, the
journal (every event recorded, secrets scrubbed, before an observer sees it), observers told,
block attributes read once. `handlers` runs each kind of block on it; `engine` drives the flow."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fabtui.journal.store import Journal
from fabtui.model.events import (
    Event,
    Payload,
    kind_of,
)
from fabtui.model.probe import ProbeDef, ProbeResult
from fabtui.model.runbook import Block, Runbook
from fabtui.model.verdict import Verdict
from fabtui.probes.runner import ProbeRunner
from fabtui.runbooks import blocks as block_text
from fabtui.runbooks.expr import Evaluator
from fabtui.runbooks.functions import fabric_functions
from fabtui.runbooks.observe import EVENT_HOOKS, Observer, Operator, RunSummary
from fabtui.runbooks.redact import Redactor
from fabtui.runbooks.resume import MayHaveRun
from fabtui.runbooks.templates import Unknowns, describe_unknown, render, render_shell

OUTPUT_KEEP = 256 * 1024
"""Bytes of a block's output kept in its result and in the journal."""
RESULT_KEEP = 512 * 1024
"""A result larger than this (as JSON) is journaled without its parsed detail."""
STOP = "__stop__"
"""An outcome's flow: the run stops at this block (resumable there)."""
ABORT = "abort"
"""An outcome's flow: the run ends aborted."""
WAIT = "__wait__"
"""An outcome's flow: a gate was not passed (no, a mistyped phrase, nobody to answer); the
session waits at it (journaled `session_waiting`, resumable there: a resume asks it again)."""


@dataclass
class Outcome:
    """What a block handler returns: its verdict, message, result, flow and variables."""

    verdict: Verdict
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    flow: str | None = None
    """Where to go next: a step id, `end`, `runbook:ID`, `abort`, or stop."""
    variables: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeCall:
    """A `probe` block's call as rendered: the definition with the block's timeout, interval
    and samples applied, the target and parameters, and how the journal describes it."""

    probe: str
    definition: ProbeDef
    target: str | None
    params: dict[str, str]
    described: str
    dangerous: bool


@dataclass
class Started:
    """A probe of a `together` group, started when its group started (see
    `BlockHandlers._start_together`): its call as rendered then, and its run."""

    call: ProbeCall
    task: asyncio.Task[ProbeResult]
    lines: list[str] = field(default_factory=list)
    """Output it gave before its block started, streamed when its block runs."""


def var_name(block_id: str) -> str:
    """How expressions name a block's result: `dom-before` -> `dom_before`."""
    return block_id.replace("-", "_")


class EngineState:
    """One session's state and helpers (see the module docstring)."""

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
        self.handed_over_from: tuple[str, str] | None = None
        """(session, runbook) this session was opened from by its hand-over: `begin` journals
        the link in both sessions (set before the run begins; `Workspace.open_run`)."""
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
        self.questions = 0
        """How many times the operator has been asked (gates, inputs, dangerous commands)."""
        self._together: dict[str, Started] = {}
        """Block id -> its probe, started with its `together` group and not yet awaited by
        its block (nothing journaled for it yet: a crash loses only time)."""
        self.may_have_run: dict[str, MayHaveRun] = {}
        """Dangerous blocks an interrupted run confirmed or sent (set by `restore`): their
        gate says so and asks for `again PHRASE`."""

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
        """` (not rendered, known when it runs: ‹leaf› set from ...)` for the values still
        unknown."""
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
        hook = EVENT_HOOKS.get(event.kind)
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
        self.questions += 1
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
