"""Abandoning a session that is not running here: the one way a session that waits at a gate,
was interrupted or stopped ends for good (an engine in hand abandons its own session with
`Engine.abort`).

Writes to the journal, each event committed before the next: the operator's decision (the
reason), then `session_finished` as `aborted`, then the session's status. A crash between them
leaves a session that is still resumable, or one whose end is recorded: never one half ended.
"""

from __future__ import annotations

from fabtui.journal.store import Journal
from fabtui.model.events import (
    Decision,
    Event,
    EventKind,
    SessionFinished,
    SessionWaiting,
)
from fabtui.model.verdict import Verdict
from fabtui.runbooks.redact import Redactor


def recorded_path(events: list[Event]) -> list[str]:
    """The steps a session went through, in order, from its journal (a resume that opened the
    step it stopped in again is not counted twice)."""
    path: list[str] = []
    resumed = False
    for event in events:
        if event.kind is EventKind.SESSION_RESUMED:
            resumed = True
        elif event.kind is EventKind.STEP_STARTED and event.step:
            if not (resumed and path and path[-1] == event.step):
                path.append(event.step)
            resumed = False
    return path


def abandon(journal: Journal, session: str, events: list[Event], reason: str,
            redactor: Redactor) -> SessionFinished:
    """End `session` (whose recorded `events` are given) as aborted by the operator for
    `reason` (masked by `redactor`); returns the end recorded. The caller checks that the
    session may be abandoned (it has not ended)."""
    waiting = next((e for e in reversed(events) if isinstance(e.data, SessionWaiting)), None)
    step = waiting.step if waiting is not None else None
    block = waiting.block if waiting is not None else None
    said = redactor.text(reason.strip())
    journal.append(session, EventKind.DECISION, step, block,
                   Decision(by="operator", abort=said).record())
    ended = SessionFinished(outcome=Verdict.ABORTED, path=recorded_path(events),
                            reason=f"abandoned by the operator: {said}")
    journal.append(session, EventKind.SESSION_FINISHED, None, None, ended.record())
    journal.set_status(session, Verdict.ABORTED.value)
    return ended
