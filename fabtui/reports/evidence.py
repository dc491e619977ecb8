"""A journaled session read back as the evidence a report lays out: its blocks with verdicts,
results and variables, its notes, decisions and outcome. Reads events only; writes nothing.

A session is judged on how it ended, whatever happened on the way: a block run again (a gate
answered on resume, a block re-run) supersedes its earlier result, and a session resumed after
it stopped has the outcome of its last run (none while that run has not finished). The earlier
results stay as history (a repair's before-readings)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fabtui.model.events import (
    BlockCommand,
    BlockFinished,
    BlockStarted,
    Decision,
    Event,
    EventKind,
    Note,
    SessionCancelled,
    SessionFinished,
    SessionResumed,
    SessionStarted,
    SessionWaiting,
    StepStarted,
)
from fabtui.model.report import SessionRef, Source
from fabtui.model.verdict import Verdict


class ReportError(Exception):
    """A session cannot be reported on (no such session, nothing recorded): said in one line."""


@dataclass
class BlockRecord:
    """One finished block of a session."""

    step: str | None
    block: str | None
    kind: str
    verdict: Verdict
    message: str
    result: dict[str, Any]
    vars: dict[str, Any]
    at: float
    command: str | None = None
    order: int = 0
    """Position in the session's journal (events of one second keep their order)."""
    superseded: bool = False
    """A later run of the same block (after a resume, a re-run) holds its current result."""

    @property
    def probe(self) -> str | None:
        probe = self.result.get("probe")
        return probe if isinstance(probe, str) else None

    @property
    def parsed(self) -> dict[str, Any]:
        parsed = self.result.get("parsed")
        return parsed if isinstance(parsed, dict) else {}

    def metrics(self) -> list[dict[str, Any]]:
        found = self.result.get("metrics")
        return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []

    def source(self, session: str) -> Source:
        return Source(session=session, step=self.step, block=self.block)


@dataclass
class SessionEvidence:
    """Everything a report needs from one session, in journal order."""

    id: str
    runbook: str
    title: str
    status: str
    operator: str
    started_at: float
    inputs: dict[str, Any] = field(default_factory=dict)
    fabric: dict[str, Any] = field(default_factory=dict)
    dry_run: bool = False
    steps: dict[str, str] = field(default_factory=dict)
    """Step id -> title, in the order the session entered them."""
    blocks: list[BlockRecord] = field(default_factory=list)
    notes: list[tuple[float, str | None, str]] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    """What the session's `case=title` notes say (the incident in words: `NCCL hang on node003
    (...)`, `dark optic MT24000043 in leaf-g00-r5:Ethernet16 replaced`)."""
    decisions: list[tuple[float, str | None, Decision]] = field(default_factory=list)
    decision_order: list[int] = field(default_factory=list)
    """Journal position of each of `decisions`."""
    finished: SessionFinished | None = None
    """How the last run ended; None while the session has not finished since it last started
    or resumed."""
    cancelled: SessionCancelled | None = None
    earlier: list[SessionFinished] = field(default_factory=list)
    """How runs before a resume ended (a gate left unanswered, then answered on resume)."""
    waiting: SessionWaiting | None = None
    """The gate the session waits at (not passed yet), while it waits."""
    last_at: float = 0.0

    def current(self) -> list[BlockRecord]:
        """The blocks as the session ended: each block's last result."""
        return [b for b in self.blocks if not b.superseded]

    @property
    def outcome(self) -> Verdict | None:
        return self.finished.outcome if self.finished is not None else None

    def ref(self) -> SessionRef:
        probes = list(dict.fromkeys(b.probe for b in self.blocks if b.probe))
        return SessionRef(
            id=self.id, runbook=self.runbook, title=self.title, status=self.status,
            operator=self.operator, started=iso(self.started_at),
            finished=iso(self.last_at) if self.finished is not None else None,
            inputs=self.inputs, scenario=self.fabric.get("scenario"), probes=probes,
            blocks=len(self.blocks))

    def probe_blocks(self, *names: str) -> Iterable[BlockRecord]:
        """Finished probe blocks whose probe is one of `names` (or starts with a `name.`)."""
        for block in self.blocks:
            probe = block.probe
            if probe and any(probe == n or probe.startswith(n + ".") for n in names):
                yield block


def iso(at: float) -> str:
    """Unix time as an ISO timestamp in UTC, to the second."""
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_session(session: str, info: Any, events: Sequence[Event]) -> SessionEvidence:
    """The evidence of `session` from its journal `info` (a SessionInfo) and `events`.

    Raises `ReportError` when the journal holds nothing for it."""
    if not events:
        raise ReportError(f"session {session}: the journal holds no event for it (fabtui "
                          "runbook sessions lists the recorded ones)")
    found = SessionEvidence(id=session, runbook=info.runbook, title=info.title,
                            status=info.status, operator=info.operator or "",
                            started_at=info.started_at)
    kinds: dict[tuple[str | None, str | None], str] = {}
    commands: dict[tuple[str | None, str | None], str] = {}
    latest: dict[tuple[str | None, str | None], BlockRecord] = {}
    for order, event in enumerate(events):
        data = event.data
        found.last_at = max(found.last_at, event.at)
        key = (event.step, event.block)
        if isinstance(data, SessionStarted):
            found.inputs = dict(data.inputs)
            found.fabric = dict(data.fabric or {})
            found.dry_run = data.dry_run
        elif isinstance(data, StepStarted) and event.step:
            found.steps.setdefault(event.step, data.title or event.step)
        elif isinstance(data, BlockStarted):
            kinds[key] = str(data.kind)
        elif isinstance(data, BlockCommand):
            commands[key] = data.command
        elif isinstance(data, BlockFinished):
            record = BlockRecord(
                step=event.step, block=event.block, kind=kinds.get(key, ""),
                verdict=data.verdict, message=data.message, result=dict(data.result),
                vars=dict(data.vars), at=event.at, command=commands.get(key), order=order)
            if key in latest:
                latest[key].superseded = True
            latest[key] = record
            found.blocks.append(record)
        elif isinstance(data, Note):
            found.notes.append((event.at, event.block, data.text))
            if data.case == "title" and data.by != "demo" and data.text.strip():
                found.titles.append(" ".join(data.text.split()))
        elif isinstance(data, Decision):
            found.decisions.append((event.at, event.block, data))
            found.decision_order.append(order)
        elif isinstance(data, SessionResumed):
            if found.finished is not None:
                found.earlier.append(found.finished)
            found.finished = found.cancelled = None
        elif isinstance(data, SessionFinished):
            found.finished = data
            found.cancelled = None
        elif isinstance(data, SessionCancelled):
            found.cancelled = data
        elif isinstance(data, SessionWaiting):
            found.waiting = data
        if event.kind is EventKind.SESSION_RESUMED:
            found.waiting = None
    return found
