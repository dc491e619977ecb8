"""Who watches a run and who answers it: the `Observer` hooks (after nornir's processors), the
awaitable `Operator` (a person at a terminal or a TUI screen, or a table of scripted answers), and
the `RunSummary` a run ends with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from fabtui.model.events import (
    Event,
    EventKind,
)
from fabtui.model.runbook import Block, InputSpec
from fabtui.model.verdict import Verdict


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
        """The session ended (`session_finished`), was interrupted (`session_cancelled`) or
        waits at a gate (`session_waiting`)."""


EVENT_HOOKS = {EventKind.SESSION_STARTED: "run_started", EventKind.SESSION_RESUMED: "run_started",
          EventKind.STEP_STARTED: "step_entered", EventKind.BLOCK_FINISHED: "block_finished",
          EventKind.SESSION_FINISHED: "run_finished",
          EventKind.SESSION_CANCELLED: "run_finished",
          EventKind.SESSION_WAITING: "run_finished"}


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
    waiting: str | None = None
    """The gate the session waits at (outcome `waiting`), else None."""
    answer: str = "yes"
    """What passes that gate: `yes`, or the phrase to type."""

    def text(self) -> str:
        """The summary an operator reads at the end."""
        lines = [f"{self.runbook}: {self.outcome.value} (session {self.session})",
                 f"path: {' -> '.join(self.path) or '-'}"]
        if self.waiting is not None:
            lines.append(f"waiting at gate {self.waiting}: {self.reason}")
        elif self.reason:
            lines.append(f"stopped: {self.reason}")
        if self.handover:
            lines.append(f"next: runbook {self.handover}")
        lines += [f"  {finding}" for finding in self.findings]
        return "\n".join(lines)
