"""Messages the app's workers post (past tense: they say what happened)."""

from __future__ import annotations

from textual.message import Message

from fabtui.model.probe import ProbeResult
from fabtui.views.status import FabricSnapshot


class SnapshotArrived(Message):
    """The poller froze a new view of the fabric. A flood collapses to the latest one."""

    def __init__(self, snapshot: FabricSnapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotArrived)


class ProbeFinished(Message):
    """A probe run on demand (`r` on an element) came back."""

    def __init__(self, key: str, result: ProbeResult | None, error: str | None) -> None:
        super().__init__()
        self.key = key
        self.result = result
        self.error = error


class OpenRunbook(Message):
    """Open a runbook as a guided session (the Runbooks screen handles it), inputs pre-filled:
    from a triage suspect, a Fabric element's findings or a case that references the runbook."""

    def __init__(self, runbook: str, inputs: dict[str, str] | None = None,
                 why: str = "", from_session: str | None = None) -> None:
        super().__init__()
        self.runbook = runbook
        self.inputs = dict(inputs or {})
        self.why = why
        self.from_session = from_session
        """The session whose hand-over opens it (the journal links the two)."""


class OpenSession(Message):
    """Show a recorded runbook session (its id or a unique prefix) on the Runbooks screen."""

    def __init__(self, session: str) -> None:
        super().__init__()
        self.session = session


class OpenCase(Message):
    """Show a case on the Cases screen; `edit` opens a draft in the editor."""

    def __init__(self, case_id: str, *, edit: bool = False) -> None:
        super().__init__()
        self.case_id = case_id
        self.edit = edit


class Highlight(Message):
    """Mark elements on the Fabric screen (fabric-map keys) as what a session, a triage or a case
    is about; an empty set clears the marks of that `origin`."""

    def __init__(self, origin: str, keys: frozenset[str], why: str = "") -> None:
        super().__init__()
        self.origin = origin
        self.keys = keys
        self.why = why
