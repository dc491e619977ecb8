"""The engine's event vocabulary: one kind per thing that happens in a session, each with a
typed payload.

Every event is journaled (append-only) before anyone is shown it; observers (a terminal's
progress lines, a TUI screen, a test) receive the same typed events. On disk an event stays what
it always was: a kind string and a JSON object of its payload's fields, so sessions recorded
before the payloads were typed read back unchanged. Payloads accept unknown keys (kept as they
are) so that a journal written by a newer fabtui still reads.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabtui.model.verdict import Verdict


class EventKind(StrEnum):
    """What happened (the `kind` column of the journal)."""

    SESSION_STARTED = "session_started"
    SESSION_RESUMED = "session_resumed"
    STEP_STARTED = "step_started"
    BLOCK_STARTED = "block_started"
    BLOCK_COMMAND = "block_command"
    """The command as rendered, before it is sent."""
    COMMAND_SENT = "command_sent"
    """A dangerous command is about to be sent (journaled first: after a crash, a resume knows
    it may have run)."""
    BLOCK_OUTPUT = "block_output"
    """A block's output (kept up to a cap) once it has ended; chunks stream to observers only."""
    BLOCK_FINISHED = "block_finished"
    DECISION = "decision"
    NOTE = "note"
    STEP_FINISHED = "step_finished"
    SESSION_FINISHED = "session_finished"
    SESSION_CANCELLED = "session_cancelled"
    """The run was interrupted (Ctrl-C, a cancelled worker): not finished, resumable."""
    SESSION_WAITING = "session_waiting"
    """A gate was not passed (answered no, mistyped, nobody to answer): the session waits at
    it, not finished, resumable; only an operator's abandon (with a reason) ends it."""
    HANDED_OVER_FROM = "handed_over_from"
    """This session was opened from the hand-over of another (`next: runbook ...`): the first
    session of the same incident (journaled right after `session_started`)."""
    HANDED_OVER_TO = "handed_over_to"
    """The runbook this session handed over to was opened as a new session (journaled in this,
    already finished, session once the new one has started)."""
    # An incident from Alertmanager's alerts (`fabtui.alerts`): written only to the alerts
    # journal (`alerts.sqlite`, one session per incident), never to a runbook's.
    INCIDENT_OPENED = "incident_opened"
    ALERTS_FIRING = "alerts_firing"
    """More alerts the incident explains."""
    ALERTS_RESOLVED = "alerts_resolved"
    SUSPECT_CHANGED = "suspect_changed"
    INCIDENT_RESOLVED = "incident_resolved"
    """Every alert of the incident has resolved."""
    INCIDENT_REOPENED = "incident_reopened"
    """Alerts on the suspect of a recently resolved incident fire again (a flapping link):
    the incident opens again rather than a new one."""
    INCIDENT_MERGED = "incident_merged"
    """Its alerts turned out to share an element with an older incident, which took them."""
    INCIDENT_CLOSED = "incident_closed"
    """An operator closed it by hand (`fabtui alerts close`, the Incidents screen's `c`): who
    and why; its alerts resolving do not reopen it, only one firing again."""
    SILENCE_REQUESTED = "silence_requested"
    """An operator passed the typed gate: the silences are about to be sent (journaled first:
    after a crash, the incident says they may exist)."""
    SILENCE_APPLIED = "silence_applied"
    SILENCE_FAILED = "silence_failed"


class Payload(BaseModel):
    """What an event says, beyond where it happened."""

    model_config = ConfigDict(frozen=True, extra="allow")

    def record(self) -> dict[str, Any]:
        """The JSON object the journal stores (fields left unset by a decision are omitted)."""
        return self.model_dump(mode="json", exclude_none=True)


class SessionStarted(Payload):
    runbook: str
    version: str | int = 1
    digest: str = ""
    inputs: dict[str, Any] = Field(default_factory=dict)
    dry_run: bool = False
    fabric: dict[str, Any] | None = None
    """Where it ran: the topology's cluster name and, on the demo fabric, the scenario playing
    and the faults injected (reports name them); None in sessions recorded before."""


class SessionResumed(Payload):
    at_step: str | None = None

    def record(self) -> dict[str, Any]:
        """`at_step` is stored even when null (the run resumed at its end)."""
        return self.model_dump(mode="json")


class StepStarted(Payload):
    title: str = ""


class BlockStarted(Payload):
    kind: Any = ""
    """The block's kind (`sh`, `probe`, `check`, ...)."""


class BlockCommand(Payload):
    command: str
    on: str | None = None
    """Where it runs (a node, a switch, `this machine`); None for probes."""


class CommandSent(Payload):
    on: str
    """Where the dangerous command went (a node, a switch, `this machine`)."""


class BlockOutput(Payload):
    output: str


class BlockFinished(Payload):
    verdict: Verdict
    message: str = ""
    result: dict[str, Any] = Field(default_factory=dict)
    vars: dict[str, Any] = Field(default_factory=dict)
    flow: str | None = None
    """Where the run went next: a step id, `end`, `runbook:ID`, `abort`, `__stop__`; None to
    continue with the next block."""
    unknown: dict[str, str] = Field(default_factory=dict)
    """A dry run: the variables this block would set that only a real run knows, and why."""

    def record(self) -> dict[str, Any]:
        """`flow` is stored even when null, as it always was; `unknown` only when there is one."""
        data = self.model_dump(mode="json")
        if not data["unknown"]:
            del data["unknown"]
        return data


class Decision(Payload):
    """A choice: the operator's (answer, skip, jump, abort, rerun, input) or the runbook's
    (a decide branch taken)."""

    by: str
    """`operator` or `runbook`."""
    prompt: str | None = None
    answer: str | None = None
    typed: bool | None = None
    skip: str | None = None
    jump: str | None = None
    reason: str | None = None
    abort: str | None = None
    rerun: bool | None = None
    condition: str | None = None
    target: str | None = None
    input: str | None = None
    value: Any = None

    @property
    def accepted(self) -> bool:
        """True when this decision accepted a gate."""
        return self.answer == "accepted"


class Note(Payload):
    text: str
    by: str = "runbook"
    """`runbook` (a note block), `operator`, or `demo` (what the demo fabric did for the
    operator, e.g. a simulated repair: never part of a case)."""
    case: str | None = None
    """The case section a note block fills when the session is filed (its `case=` attribute:
    `title`, `symptom`, `root-cause`, `resolution`)."""


class StepFinished(Payload):
    verdict: Verdict


class SessionFinished(Payload):
    outcome: Verdict
    path: list[str] = Field(default_factory=list)
    handover: str | None = None
    reason: str = ""
    findings: list[str] = Field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """`handover` is stored even when null, as it always was."""
        return self.model_dump(mode="json")


class SessionCancelled(Payload):
    reason: str = "interrupted"
    resume: str | None = None
    """The step a resume continues at."""


class SessionWaiting(Payload):
    gate: str
    """The gate block the session waits at (a resume asks it again)."""
    step: str | None = None
    reason: str = ""
    """Why it waits: the answer given (`no`, a mistyped phrase) or that nobody answered."""
    answer: str = "yes"
    """What passes the gate: `yes`, or the phrase to type (`--answer GATE=ANSWER`)."""


class HandedOverFrom(Payload):
    """The session that handed over to this one, and its runbook."""

    session: str
    runbook: str = ""


class HandedOverTo(Payload):
    """The session opened from this one's hand-over, and its runbook."""

    session: str
    runbook: str = ""


class IncidentOpened(Payload):
    suspect: str
    kind: str
    reason: str = ""
    alertmanager: str = ""
    """The Alertmanager that sent its first alerts (`externalURL`): where silences go."""
    context: dict[str, Any] = Field(default_factory=dict)
    alerts: list[dict[str, Any]] = Field(default_factory=list)


class AlertsFiring(Payload):
    alerts: list[dict[str, Any]] = Field(default_factory=list)


class AlertsResolved(Payload):
    fingerprints: list[str] = Field(default_factory=list)


class SuspectChanged(Payload):
    suspect: str
    kind: str
    reason: str = ""
    was: str = ""
    context: dict[str, Any] = Field(default_factory=dict)


class IncidentResolved(Payload):
    pass


class IncidentReopened(Payload):
    alerts: list[dict[str, Any]] = Field(default_factory=list)


class IncidentMerged(Payload):
    incident: str
    """The older incident that took its alerts."""


class IncidentClosed(Payload):
    reason: str
    operator: str = ""
    firing: list[str] = Field(default_factory=list)
    """Fingerprints of its alerts still firing when it was closed (sent again unchanged,
    they do not reopen it)."""


class SilenceRequested(Payload):
    silences: list[dict[str, Any]] = Field(default_factory=list)
    operator: str = ""
    alertmanager: str = ""


class SilenceApplied(SilenceRequested):
    ids: list[str] = Field(default_factory=list)


class SilenceFailed(SilenceRequested):
    reason: str = ""


PAYLOADS: dict[EventKind, type[Payload]] = {
    EventKind.SESSION_STARTED: SessionStarted, EventKind.SESSION_RESUMED: SessionResumed,
    EventKind.STEP_STARTED: StepStarted, EventKind.BLOCK_STARTED: BlockStarted,
    EventKind.BLOCK_COMMAND: BlockCommand, EventKind.COMMAND_SENT: CommandSent,
    EventKind.BLOCK_OUTPUT: BlockOutput,
    EventKind.BLOCK_FINISHED: BlockFinished, EventKind.DECISION: Decision,
    EventKind.NOTE: Note, EventKind.STEP_FINISHED: StepFinished,
    EventKind.SESSION_FINISHED: SessionFinished, EventKind.SESSION_CANCELLED: SessionCancelled,
    EventKind.SESSION_WAITING: SessionWaiting, EventKind.HANDED_OVER_FROM: HandedOverFrom,
    EventKind.HANDED_OVER_TO: HandedOverTo,
    EventKind.INCIDENT_OPENED: IncidentOpened, EventKind.ALERTS_FIRING: AlertsFiring,
    EventKind.ALERTS_RESOLVED: AlertsResolved, EventKind.SUSPECT_CHANGED: SuspectChanged,
    EventKind.INCIDENT_RESOLVED: IncidentResolved, EventKind.INCIDENT_MERGED: IncidentMerged,
    EventKind.INCIDENT_REOPENED: IncidentReopened, EventKind.INCIDENT_CLOSED: IncidentClosed,
    EventKind.SILENCE_REQUESTED: SilenceRequested, EventKind.SILENCE_APPLIED: SilenceApplied,
    EventKind.SILENCE_FAILED: SilenceFailed,
}
KINDS: dict[type[Payload], EventKind] = {cls: kind for kind, cls in PAYLOADS.items()}


def kind_of(payload: Payload) -> EventKind:
    """The event kind a payload is for."""
    return KINDS[type(payload)]


class Event(BaseModel):
    """One journal entry of a session (append-only): where, when, what kind, and its payload."""

    model_config = ConfigDict(frozen=True)

    session: str
    seq: int
    at: float
    """Unix time."""
    kind: EventKind
    step: str | None = None
    block: str | None = None
    data: Payload
    """The typed payload of `kind` (a `BlockFinished` for `block_finished`, ...)."""

    @model_validator(mode="before")
    @classmethod
    def _typed_payload(cls, value: Any) -> Any:
        """A stored JSON object becomes its kind's payload."""
        if isinstance(value, dict) and not isinstance(value.get("data"), Payload):
            kind = EventKind(value["kind"])
            value = {**value, "data": PAYLOADS[kind].model_validate(value.get("data") or {})}
        return value
