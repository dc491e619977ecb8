"""The open incidents as the app shows them (issue 40): a headless view model over an incident
book that reads the alerts journal, which `fabtui alerts serve` writes, often in another
process. `changed()` says whether anything was committed to the journal since (SQLite's
data_version, `Journal.changes()`: no table read); `refresh()` reads the journal again and
returns the rows; `account(id)` the lines of one incident. The Incidents
screen asks `changed()` on a short timer and calls the other two in a worker.

Side effects: reads the alerts journal.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from fabtui.alerts.incidents import Incident, IncidentBook
from fabtui.alerts.present import account, screen_row
from fabtui.journal.store import Changes


@dataclass(frozen=True)
class IncidentRow:
    """One line of the list."""

    id: str
    cells: tuple[str, ...]
    """`fabtui.alerts.present.SCREEN_HEADERS` order."""
    suspect: str
    firing: int
    shown_at: str = ""
    """What the Fabric screen selects for it: the suspect, or for a job or a rail (no one
    element) the first element its alerts name."""


class IncidentList:
    """See the module docstring."""

    def __init__(self, book: IncidentBook) -> None:
        self.book = book
        self.shown: dict[str, Incident] = {}
        self._stamp: Changes | None = None
        self._rows: list[IncidentRow] = []

    def changed(self) -> bool:
        """Whether anything was committed to the journal since the last `refresh`, by
        another process or through this book (one `PRAGMA data_version`: cheap enough to ask
        several times a second). A journal that cannot be asked counts as changed: the
        `refresh` that follows says what is wrong."""
        try:
            return self.book.journal.changes() != self._stamp
        except sqlite3.Error:
            return True

    def refresh(self) -> list[IncidentRow]:
        """The open incidents now, newest first (the journal read again when it changed)."""
        stamp = self.book.journal.changes()  # before the read: a write meanwhile shows next
        if stamp == self._stamp:
            return self._rows
        self.book.load()
        incidents = self.book.open_incidents()
        self.shown = {i.id: i for i in incidents}
        self._rows = [IncidentRow(i.id, screen_row(i), i.suspect, len(i.firing),
                                  _shown_at(i)) for i in incidents]
        self._stamp = stamp
        return self._rows

    def account(self, incident_id: str) -> list[str]:
        """The full account of a listed incident ([] when it is no longer listed)."""
        found = self.shown.get(incident_id)
        return account(found) if found is not None else []


def _shown_at(incident: Incident) -> str:
    if incident.kind in ("job", "rail"):
        return next((a.element for a in incident.explains if a.element), incident.suspect)
    return incident.suspect
