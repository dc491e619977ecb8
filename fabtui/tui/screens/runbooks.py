"""The Runbooks screen (mode `2`): the library searched by symptom, the highlighted runbook's
summary and inputs, the recorded sessions, and a banner offering to resume an interrupted one.

Opening a runbook asks its inputs in a form (pre-filled from `OpenRunbook`, checked as the
engine checks them, secrets masked as typed), then pushes its guided session. Searching is the
matching of `fabtui runbook find` (`guided.find_runbooks`); what a session row says is
`guided.session_rows`. The session list is read again whenever the screen shows.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Input, Label, Static

from fabtui.errors import InputError, RequestError
from fabtui.model.runbook import InputSpec, Runbook
from fabtui.model.table import left, right
from fabtui.tui.commands import RUNBOOKS_COMMANDS, bindings
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.screens.dialogs import Field, Form
from fabtui.tui.screens.session import SessionScreen
from fabtui.tui.widgets.fit_table import fit_data_table
from fabtui.tui.widgets.footer import KeyFooter
from fabtui.tui.widgets.hanging import Hanging
from fabtui.tui.widgets.session_parts import badge
from fabtui.views import guided

SESSIONS_SHOWN = 50
LIBRARY_COLUMNS = (left("runbook"), left("title"))
SESSION_COLUMNS = (left("outcome"), left("status"), right("session"), right("started"),
                   left("runbook"), left("operator"))
"""The ids and times are kept whole (right-aligned: never cut); the names give way."""


class RunbooksScreen(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = RUNBOOKS_COMMANDS
    AFTER_INPUT = "#rb-list"
    SEARCH = "#rb-search"
    BINDINGS: ClassVar[list[BindingType]] = bindings(RUNBOOKS_COMMANDS)
    DEFAULT_CSS = """
    RunbooksScreen #rb-search { margin: 0 0; }
    RunbooksScreen #resume-banner { height: auto; padding: 0 1; background: $warning 30%;
                                    display: none; }
    RunbooksScreen #resume-banner.shown { display: block; }
    RunbooksScreen #rb-body { height: 1fr; }
    /* the gutter kept: the list's scrollbar, shown once the sessions table takes its
       height, must not eat the columns sized without it (titles cut with no `…`) */
    RunbooksScreen #rb-list { width: 1fr; scrollbar-gutter: stable; }
    RunbooksScreen #rb-detail { width: 50%; max-width: 80; padding: 0 1;
                                border-left: vkey $panel; }
    RunbooksScreen #rb-sessions-title { color: $text-muted; padding: 0 1; }
    RunbooksScreen #rb-sessions { height: 9; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[Runbook] = []
        self.rows: list[guided.SessionRow] = []
        self.banner: list[guided.SessionRow] = []
        self._been_away = False
        """A screen was pushed over this one (a session) since it last showed."""


    def compose(self) -> ComposeResult:
        yield Input(placeholder="symptom: low rx power · NCCL timeout · 光模块收光低 · "
                    "empty: every runbook", id="rb-search", select_on_focus=False)
        yield Static(id="resume-banner")
        with Horizontal(id="rb-body"):
            yield DataTable(id="rb-list", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="rb-detail"):
                yield Static(id="rb-detail-text")
        yield Label("sessions (newest first)", id="rb-sessions-title")
        yield DataTable(id="rb-sessions", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self._search("")
        # it looks like a search box and acts as one: what is typed on arrival is the query
        self.query_one("#rb-search", Input).focus()

    def on_screen_resume(self) -> None:
        self.refresh_sessions()
        # back from a session: the list has the focus (enter opens, ctrl+r resumes)
        if self.focused is self.query_one("#rb-search", Input) and self._been_away:
            self.query_one("#rb-list", DataTable).focus()
        self._been_away = False

    def on_screen_suspend(self) -> None:
        self._been_away = True

    # the library --------------------------------------------------------------------------------
    @on(Input.Changed, "#rb-search")
    def _typed(self, event: Input.Changed) -> None:
        self._search(event.value)

    @on(Input.Submitted, "#rb-search")
    def _searched(self) -> None:
        self.query_one("#rb-list", DataTable).focus()

    def _search(self, text: str) -> None:
        self.shown = guided.find_runbooks(self.fab.workspace.library, text)
        self._fill_library()
        self._detail(self.shown[0] if self.shown else None)

    def _fill_library(self) -> None:
        """The library list, its columns sized to the screen (a title cut ends in `…`)."""
        fit_data_table(self.query_one("#rb-list", DataTable), LIBRARY_COLUMNS,
                       [(book.meta.id, book.title) for book in self.shown],
                       [book.meta.id for book in self.shown])

    def on_resize(self) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        self._fill_library()
        self._fill_sessions()

    @on(DataTable.RowHighlighted, "#rb-list")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        book = self.fab.workspace.library.get(str(event.row_key.value))
        self._detail(book)

    def _detail(self, book: Runbook | None) -> None:
        text = Text()
        if book is None:
            text.append("no runbook matches: another word, or empty for every runbook")
        else:
            text.append(f"{book.meta.id} (v{book.meta.version})\n", "bold")
            text.append(f"{book.title}\n\n")
            if book.meta.summary:
                text.append(f"{book.meta.summary.strip()}\n\n")
            if book.meta.symptoms:
                text.append("symptoms: ", "bold")
                text.append("; ".join(book.meta.symptoms) + "\n\n")
            text.append("inputs:\n", "bold")
            for line in guided.input_summary(book) or ["none"]:
                text.append(f"  {line}\n")
            text.append(f"\n{len(book.steps)} steps, {len(book.blocks())} blocks · "
                        "enter: open", "dim")
        self.query_one("#rb-detail-text", Static).update(Hanging(text))

    @on(DataTable.RowSelected, "#rb-list")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.open_runbook(str(event.row_key.value))

    def action_open(self) -> None:
        table = self.query_one("#rb-list", DataTable)
        if self.shown and table.cursor_row < len(self.shown):
            self.open_runbook(self.shown[table.cursor_row].meta.id)

    def action_find(self) -> None:
        self.query_one("#rb-search", Input).focus()

    def action_back(self) -> None:
        """Esc: out of the search field to the list; on the list, clear the search; on the
        sessions, back to the library."""
        if self.leave_input():
            return
        search = self.query_one("#rb-search", Input)
        if self.query_one("#rb-sessions", DataTable).has_focus:
            self.query_one("#rb-list", DataTable).focus()
        elif search.value:
            search.value = ""

    def action_focus_sessions(self) -> None:
        sessions = self.query_one("#rb-sessions", DataTable)
        (self.query_one("#rb-list", DataTable) if sessions.has_focus else sessions).focus()

    def open_runbook(self, name: str, inputs: dict[str, str] | None = None,
                     why: str = "", origin: str | None = None,
                     from_session: str | None = None) -> None:
        """Ask `name`'s inputs (pre-filled with `inputs`), then open its guided session
        (`origin`: the view it was asked from, where Esc in the session goes back to;
        `from_session`: the session whose hand-over opens it)."""
        try:
            book = self.fab.workspace.runbook(name)
        except InputError as exc:
            self.notify(str(exc).splitlines()[0], title="runbook", severity="error")
            return
        given = dict(inputs or {})
        if not book.meta.inputs:
            self._start(book, {}, why, origin, from_session)
            return
        fields = [Field(spec.name, f"{spec.name} ({spec.type.value}"
                        f"{', required' if spec.required else ''})"
                        f"{': ' + spec.description if spec.description else ''}",
                        "" if spec.secret and spec.name not in given else
                        str(given.get(spec.name, "" if spec.default is None else spec.default)),
                        spec.secret)
                  for spec in book.meta.inputs]
        self.app.push_screen(Form(f"{book.meta.id}: inputs", fields, self._checker(book),
                                  why or book.title),
                             lambda values: self._start(book, values, why, origin, from_session)
                             if values is not None else None)

    def _checker(self, book: Runbook, specs: dict[str, InputSpec] | None = None,
                 needed: frozenset[str] = frozenset()) -> Any:
        """A form's check of each field: `specs` (default: the runbook's inputs) by name;
        a required one, or one `needed`, may not be left empty."""
        from fabtui.runbooks.inputs import check_value

        fields = specs if specs is not None else {spec.name: spec for spec in book.meta.inputs}
        graph = self.fab.graph

        def check(name: str, value: str) -> str | None:
            spec = fields[name]
            return check_value(spec, value, graph, empty="required" if spec.required or
                               name in needed else None)

        return check

    def _start(self, book: Runbook, values: dict[str, str], why: str,
               origin: str | None = None, from_session: str | None = None) -> None:
        inputs = {k: v for k, v in values.items() if v != ""}
        self.app.push_screen(SessionScreen(book, inputs=inputs, why=why, origin=origin,
                                           from_session=from_session))

    # sessions -----------------------------------------------------------------------------------
    def refresh_sessions(self) -> None:
        """Read the sessions again; the banner names those that can be resumed."""
        live = [s.session for s in self.app.screen_stack
                if isinstance(s, SessionScreen) and s.session and s.live]
        self.rows = guided.session_rows(self.fab.workspace.sessions(SESSIONS_SHOWN))
        self.banner = guided.interrupted(self.rows, live)
        self._fill_sessions()
        ascii_only = self.fab.ascii_only
        banner = self.query_one("#resume-banner", Static)
        if self.banner:
            first = self.banner[0]
            more = len(self.banner) - 1
            said = "waits at a gate" if first.state == "waiting" else "interrupted"
            banner.update(f"{'!' if ascii_only else '⚠'} {said}: {first.runbook} session "
                          f"{first.id} ({first.state}, started "
                          f"{time.strftime('%H:%M', time.localtime(first.started_at))})"
                          f"{f' and {more} more' if more else ''} · ctrl+r: resume it")
        banner.set_class(bool(self.banner), "shown")

    def _fill_sessions(self) -> None:
        """The sessions list: the session id and when it started kept whole (what `v` and
        `fabtui runbook resume` take), the rest cut with `…` on a narrow screen."""
        theme, ascii_only = self.app.current_theme, self.fab.ascii_only
        fit_data_table(self.query_one("#rb-sessions", DataTable), SESSION_COLUMNS, [
            (badge(row.outcome, theme, ascii_only) if row.outcome else "-", row.state,
             row.id, time.strftime("%m-%d %H:%M", time.localtime(row.started_at)),
             row.runbook, row.operator or "-") for row in self.rows],
            [row.id for row in self.rows])

    def _session_under_cursor(self) -> guided.SessionRow | None:
        table = self.query_one("#rb-sessions", DataTable)
        if table.has_focus and self.rows and table.cursor_row < len(self.rows):
            return self.rows[table.cursor_row]
        return None

    def action_resume(self) -> None:
        row = self._session_under_cursor() or (self.banner[0] if self.banner else None)
        if row is None:
            self.notify("no interrupted session to resume", title="resume")
            return
        if not row.resumable:
            self.notify(f"session {row.id} has finished ({row.outcome}): ctrl+o shows it",
                        title="resume", severity="warning")
            return
        try:
            book = self.fab.workspace.runbook(row.runbook)
        except InputError as exc:
            self.notify(str(exc).splitlines()[0], title="resume", severity="error")
            return
        try:
            asks = self.fab.workspace.resume_needs(row.id)
        except RequestError as exc:
            self.notify(str(exc), title="resume", severity="error")
            return
        if not asks:
            self.app.push_screen(SessionScreen(book, resume=row.id))
            return
        # never stored: asked again (an optional one left empty resumes with its default)
        specs = {a.name: a.spec for a in asks}
        self.app.push_screen(
            Form(f"resume {row.id}: secrets", [Field(a.name, a.name, "", True) for a in asks],
                 self._checker(book, specs, frozenset(a.name for a in asks if a.needed)),
                 "secrets are never stored: type them again"),
            lambda values: self._resume(book, row.id, values))

    def _resume(self, book: Runbook, session: str, secrets: dict[str, str] | None) -> None:
        if secrets is not None:
            self.app.push_screen(SessionScreen(book, resume=session,
                                               inputs={k: v for k, v in secrets.items() if v}))

    @on(DataTable.RowSelected, "#rb-sessions")
    def _session_chosen(self) -> None:
        """Enter on the sessions list: the highlighted session, as ctrl+o shows it."""
        self.action_show_session()

    def action_show_session(self) -> None:
        row = self._session_under_cursor()
        if row is not None:
            self.show_session(row.id)

    def show_session(self, name: str, origin: str | None = None) -> None:
        """Show the recorded session `name` (an id or a unique prefix), read only."""
        ws = self.fab.workspace
        row = guided.find_session(self.rows or guided.session_rows(ws.sessions(500)), name)
        session = row.id if row is not None else name
        try:
            book, events = ws.recorded(session)
        except (RequestError, InputError) as exc:
            self.notify(str(exc).splitlines()[0], title="session", severity="error")
            return
        self.app.push_screen(SessionScreen(book, recorded=events, origin=origin))
