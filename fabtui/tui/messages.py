"""Messages the app's workers post (past tense: they say what happened)."""

from __future__ import annotations

from textual.message import Message

from fabtui.model.probe import ProbeResult
from fabtui.workspace.live import FabricSnapshot


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
