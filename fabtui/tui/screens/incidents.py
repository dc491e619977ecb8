"""The Incidents screen: the open incidents Alertmanager's alerts became (issue 40), opened with
`A` from any view, on top of it.

`fabtui alerts serve` (often another process) journals the incidents; this screen looks at
the alerts journal's file every `WATCH_S` (a `stat`, on the app's thread) and reads it in a
thread worker when it changed (`fabtui.views.incidents.IncidentList`), so an incident shows
within a fraction of a second of the webhook (benchmarks/alert_to_screen.py), and shows the
list, newest first, and the highlighted incident's account under it: the suspect
first, its blast radius, who is behind it, the runbook, similar cases, the alerts it explains,
the silences it suggests (applied only with `fabtui alerts silence ID --confirm SUSPECT`).
`o` opens its runbook, `s` shows the suspect on the Fabric screen, `c` closes it by hand
(asking why; Esc cancels; `fabtui.workspace.alerting.close_incident`, as `fabtui alerts close`
does), `r` reads the journal now.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from fabtui.alerts.present import SCREEN_HEADERS
from fabtui.errors import InputError, RequestError
from fabtui.tui.commands import INCIDENTS_COMMANDS, bindings
from fabtui.tui.messages import OpenRunbook
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.screens.dialogs import Prompt
from fabtui.tui.widgets.footer import KeyFooter
from fabtui.views.incidents import IncidentList, IncidentRow

WATCH_S = 0.1
"""How often the journal is asked whether it changed (one `PRAGMA data_version`; it is read only
when changed)."""


class IncidentsRead(Message):
    """A read of the alerts journal finished: the rows, and the account of each."""

    def __init__(self, rows: list[IncidentRow], accounts: dict[str, list[str]],
                 runbooks: dict[str, str | None], error: str = "") -> None:
        super().__init__()
        self.rows = rows
        self.accounts = accounts
        self.runbooks = runbooks
        self.error = error


class IncidentsScreen(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = INCIDENTS_COMMANDS
    CRUMB = "Incidents"
    BINDINGS: ClassVar[list[BindingType]] = bindings(INCIDENTS_COMMANDS)
    DEFAULT_CSS = """
    IncidentsScreen #incident-status { height: auto; padding: 0 1; color: $text-muted; }
    IncidentsScreen #incident-list { height: 40%; }
    IncidentsScreen #incident-detail { height: 1fr; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[IncidentRow] = []
        self.accounts: dict[str, list[str]] = {}
        self.runbooks: dict[str, str | None] = {}
        self.view: IncidentList | None = None
        self._book_lock = threading.Lock()
        self._reading = False
        """A read is under way (the watch does not start another meanwhile)."""

    def compose(self) -> ComposeResult:
        yield Static("reading the alerts journal…", id="incident-status", markup=False)
        table: DataTable[str] = DataTable(id="incident-list", cursor_type="row",
                                          zebra_stripes=True)
        yield table
        with VerticalScroll(id="incident-detail"):
            yield Static("", id="incident-account", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#incident-list", DataTable)
        table.add_columns(*SCREEN_HEADERS)
        table.focus()
        self._reading = True
        self.read()
        self.set_interval(WATCH_S, self._watch)

    def _watch(self) -> None:
        """Read the journal when its file changed (or when nothing was read yet)."""
        view = self.view
        if self._reading:
            return
        try:
            changed = view is None or view.changed()  # None: the first read failed
        except OSError:
            changed = True  # the read says what is wrong
        if changed:
            self._reading = True  # before the thread starts: the next tick must not
            self.read()

    @work(thread=True, exclusive=True, group="incidents", exit_on_error=False,
          description="read the alerts journal")
    def read(self) -> None:
        """Read the journal (in a thread: it may hold thousands of alerts) and post the rows."""
        self._reading = True
        try:
            with self._book_lock:
                if self.view is None:
                    self.view = IncidentList(self.fab.workspace.alerts)
                rows = self.view.refresh()
                accounts = {r.id: self.view.account(r.id) for r in rows}
                runbooks = {r.id: self.view.shown[r.id].context.runbook for r in rows}
            self.post_message(IncidentsRead(rows, accounts, runbooks))
        except (RequestError, InputError, OSError, sqlite3.Error) as exc:  # said, not raised
            self.post_message(IncidentsRead([], {}, {}, f"cannot read the alerts journal: "
                                                       f"{type(exc).__name__}: {exc}"))
        finally:
            self._reading = False

    @on(IncidentsRead)
    def _read(self, message: IncidentsRead) -> None:
        status = self.query_one("#incident-status", Static)
        if message.error:
            status.update(message.error)
            return
        table = self.query_one("#incident-list", DataTable)
        keep = self.selected()
        ids = [r.id for r in message.rows]
        self.rows, self.accounts, self.runbooks = message.rows, message.accounts, \
            message.runbooks
        if ids != [str(k.value) for k in table.rows] or \
                any(self._cells(r) != tuple(table.get_row(r.id)) for r in message.rows):
            table.clear()
            for r in message.rows:
                table.add_row(*r.cells, key=r.id)
            if keep in ids:
                table.move_cursor(row=ids.index(keep))
        firing = sum(r.firing for r in message.rows)
        status.update(f"{len(message.rows)} open incident(s), {firing} alert(s) firing · "
                      "fed by `fabtui alerts serve`" if message.rows else
                      "no open incidents (`fabtui alerts serve` writes them as Alertmanager "
                      "sends alerts)")
        self.show_account()

    @staticmethod
    def _cells(row: IncidentRow) -> tuple[str, ...]:
        return row.cells

    def selected(self) -> str | None:
        table = self.query_one("#incident-list", DataTable)
        if not self.rows or table.cursor_row < 0 or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row].id

    @on(DataTable.RowHighlighted, "#incident-list")
    def show_account(self) -> None:
        chosen = self.selected()
        lines = self.accounts.get(chosen, []) if chosen else []
        self.query_one("#incident-account", Static).update("\n".join(lines))

    def action_refresh(self) -> None:
        self.read()

    def action_open_runbook(self) -> None:
        chosen = self.selected()
        runbook = self.runbooks.get(chosen) if chosen else None
        if chosen is None or not runbook:
            self.notify("no runbook for this incident", title="incidents")
            return
        suspect = next(r.suspect for r in self.rows if r.id == chosen)
        self.app.pop_screen()
        self.app.post_message(OpenRunbook(runbook, why=f"incident {chosen}: suspect "
                                                       f"{suspect}"))

    def action_show_fabric(self) -> None:
        chosen = self.selected()
        if chosen is None:
            return
        where = next(r.shown_at or r.suspect for r in self.rows if r.id == chosen)
        self.app.pop_screen()
        self.fab.show_on_fabric(where, where.split(":", 1)[0])

    def action_close_incident(self) -> None:
        chosen = self.selected()
        if chosen is None:
            self.notify("no incident to close", title="incidents")
            return
        suspect = next(r.suspect for r in self.rows if r.id == chosen)

        def closing(reason: str | None) -> None:
            if reason is None:  # Esc: nothing closed
                return
            self.close_incident(chosen, reason)

        self.app.push_screen(Prompt(f"close {chosen} ({suspect})",
                                    "why (journaled with your name) · enter closes · esc "
                                    "cancels", required="a reason is required"), closing)

    @work(thread=True, exclusive=False, group="incidents-close", exit_on_error=False,
          description="close an incident")
    def close_incident(self, incident_id: str, reason: str) -> None:
        """Close it through the workspace (journal writes in a thread), then read again."""
        from fabtui.workspace.alerting import close_incident
        from fabtui.workspace.operator import operator_name

        try:
            with self._book_lock:  # the reading worker uses the same book
                closed = close_incident(self.fab.workspace, incident_id, reason,
                                        operator_name())
        except (RequestError, OSError, sqlite3.Error) as exc:
            self.app.call_from_thread(self.notify, str(exc), title="not closed",
                                      severity="error")
            return
        self.app.call_from_thread(self.notify, f"closed {closed.id}: {closed.close_reason}",
                                  title="incidents")
        self.app.call_from_thread(self.read)

    def action_back(self) -> None:
        self.app.pop_screen()
