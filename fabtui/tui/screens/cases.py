"""The Cases screen ("have we seen this before?"): search the case library as you type.

Each keystroke starts a search in an exclusive thread worker (a newer keystroke cancels the
older one) and numbers it; only the newest search's results are shown, whatever order the
threads finish in. The query line takes the CLI's filters beside the words (`rail:3
status:resolved since:2026-03-02`, see `fabtui.cases.present.split_filters`); an empty query
lists the whole library. `S` lists the cases similar to the newest session's draft. Opening a
case pushes the case view onto this mode's stack; `OpenCase` from anywhere lands here (with a
session id: the draft that session would file, and its similar cases).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Input, Static
from textual.worker import Worker, get_current_worker

from fabtui.cases.present import as_you_type, split_filters, why
from fabtui.errors import InputError, RequestError
from fabtui.lexicon.spelling import no_match
from fabtui.tui.commands import CASES_COMMANDS, bindings
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.screens.case_actions import export_case
from fabtui.tui.widgets.case_list import CaseList, Entry
from fabtui.tui.widgets.cut_input import CutInput
from fabtui.tui.widgets.fit_table import fold_text
from fabtui.tui.widgets.footer import KeyFooter

LIMIT = 16
"""Search results asked for at first: a snippet costs up to 1.5 ms a hit the first time its case
comes back, so a keystroke asks for what one screen shows (15 cases at 160x50) and one more;
moving to the end of the list asks for twice as many (the listing shows every case)."""
STATUS_LINES = 3
"""The status line's most lines (a count, the words that matched nothing, a filter's error)."""


@dataclass(frozen=True)
class Found:
    """What one search gave: the entries and the status line above them; `total` matching
    cases (more than the entries when only the best were asked for)."""

    entries: list[Entry]
    status: str
    total: int = 0


class CasesFound(Message):
    """Search number `search` finished (a newer search makes it stale); `more`: it asked for
    more of the query on screen (the cursor stays where it is)."""

    def __init__(self, search: int, query: str, found: Found, more: bool = False) -> None:
        super().__init__()
        self.search = search
        self.query = query
        self.found = found
        self.more = more


class CasesScreen(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = CASES_COMMANDS
    AFTER_INPUT = "#case-list"
    SEARCH = "#case-query"
    BINDINGS: ClassVar[list[BindingType]] = bindings(CASES_COMMANDS)
    DEFAULT_CSS = """
    CasesScreen #case-query { margin: 0 0; }
    CasesScreen #case-status { height: 1; padding: 0 1; color: $text-muted; }
    CasesScreen CaseList { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.search_no = 0
        self.shown_query: str | None = None
        """The query whose results are on screen (None: none yet)."""
        self.typed = ""
        """The query line as typed last."""
        self.limit = self.first_limit = LIMIT
        self.total = 0
        self._warmed = threading.Event()
        self._listed: tuple[str, list[Entry]] | None = None
        """The listing and the store generation it was made at."""
        self._to_list = False
        """`enter` in the query moved the focus to the list and it has not landed yet."""
        self.status = ""
        """The status line's text, whole (the line shows it folded, see `_show_status`)."""
        self._status_rows = 1


    def compose(self) -> ComposeResult:
        yield CutInput(placeholder="symptom · 现象 (pfc storm pause · 光模块 误码) · filters: "
                    "rail:3 tag:optic status:resolved since:2026-03-02", id="case-query",
                    select_on_focus=False)
        yield Static("", id="case-status", markup=False)
        yield CaseList(id="case-list")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#case-query", Input).focus()
        self.search("")

    # searching ----------------------------------------------------------------------------------
    @on(Input.Changed, "#case-query")
    def _typed(self, message: Input.Changed) -> None:
        self.typed = message.value
        self.first_limit = LIMIT
        self.search(message.value)

    @on(Input.Submitted, "#case-query")
    def _submitted(self) -> None:
        listing = self.query_one(CaseList)
        if self._to_list:
            # `enter`, `enter` typed at once (a loaded host, a slow link): the second reached
            # the query field before the focus had moved; it was meant for the list
            listing.action_choose()
            return
        self._to_list = True
        listing.focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._to_list = False  # the focus landed (the list's, or where the operator moved it)

    def search(self, line: str, limit: int | None = None) -> None:
        """Search for `line` in a worker (the best `limit`, default `LIMIT`); the results
        replace the list when they are the newest."""
        self.search_no += 1
        self.limit = limit = limit or LIMIT
        self._search(self.search_no, line, limit)

    @work(thread=True, exclusive=True, group="case-search", exit_on_error=False,
          description="case search")
    def _search(self, number: int, line: str, limit: int) -> None:
        worker = get_current_worker()
        if worker.is_cancelled:
            return  # a newer keystroke came while the older search ran: skip this one
        found = self.run_query(line, limit)
        self.fab.settle_heap()
        if not worker.is_cancelled:
            self.post_message(CasesFound(number, line, found, more=limit > self.first_limit))
        if not self._warmed.is_set():
            self._warm(worker)

    def _warm(self, worker: Worker[None]) -> None:
        """Once, after the first list is shown: open the search index (bringing it up to the
        store) and decode its most used postings (`CaseLibrary.warm`), so that the first
        keystrokes pay a search, not the opening. Step by step (the library holds its lock
        for one step at a time): a keystroke meanwhile waits for one step at most, and cancels
        the rest (an exclusive worker)."""
        self._warmed.set()
        steps = self.fab.workspace.cases.warm()
        while not worker.is_cancelled:
            try:
                next(steps)
            except StopIteration:
                return
            except Exception:  # best effort, documented: the next search says what is wrong
                return

    @on(CaseList.NearEnd)
    def _more(self) -> None:
        """Near the end of the best results: ask for twice as many (the cursor stays)."""
        if self.shown_query is not None and self.shown_query == self.typed \
                and self.total > len(self.query_one(CaseList).entries):
            self.search(self.typed, self.limit * 2)

    def run_query(self, line: str, limit: int) -> Found:
        """What `line` finds (on the worker's thread; also what a slow-search test wraps)."""
        typed = split_filters(line)
        library = self.fab.workspace.cases
        problem = f" · {typed.error}" if typed.error else ""
        try:
            if len(typed.text.strip()) == 1 and typed.text.strip().isascii():
                return Found([], "keep typing: one letter matches too much" + problem)
            if not typed.text.strip():
                if typed.filters:
                    return Found([], "type a symptom to search with the filters" + problem)
                return self._listing(problem)
            typing = line.rstrip() == line and line.split()[-1] == typed.text.split()[-1]
            result = library.search(as_you_type(typed.text) if typing else typed.text,
                                    limit=limit, **typed.filters)
        except (RequestError, InputError) as exc:
            return Found([], str(exc).splitlines()[0])
        entries = [Entry(h.id, h.title, f"{h.score:.1f}", h.snippet, tuple(h.highlights),
                         why(h.matched)) for h in result.hits]
        status = f"{result.total} case{'s' if result.total != 1 else ''} match"
        if result.total > len(entries):
            status += f" (best {len(entries)} shown)"
        unknown = no_match(result.unknown)
        if unknown:
            status += f" · {unknown}"
        if getattr(result, "note", None):
            status += f" · {result.note}"
        return Found(entries, status + problem, result.total)

    def _listing(self, problem: str) -> Found:
        """Every case, most recently changed first: built once per state of the store (the
        query line is cleared often, and 10,000 new entries a time fed the collector)."""
        library = self.fab.workspace.cases
        generation = library.store.generation()
        if self._listed is None or self._listed[0] != generation:
            rows = library.list()
            self._listed = generation, [
                Entry(r.id, r.title, " ".join(filter(None, (r.status, r.severity))),
                      f"{r.symptom_class} · opened {r.opened or '?'}") for r in rows]
        entries = self._listed[1]
        return Found(entries, f"{len(entries)} cases in the library" + problem, len(entries))

    @on(CasesFound)
    def _found(self, message: CasesFound) -> None:
        if message.search != self.search_no:
            return  # a newer search was started: its results are the ones to show
        self.show(message.found, message.query, more=message.more)

    def show(self, found: Found, query: str | None, *, more: bool = False) -> None:
        listing = self.query_one(CaseList)
        with self.app.batch_update():
            listing.set_entries(found.entries, listing.cursor if more else 0)
            self.status = found.status
            self._show_status()
        self.shown_query = query
        self.total = found.total

    def _show_status(self) -> None:
        """The status folded to the line's width: as many lines as it needs, up to
        `STATUS_LINES`. At 80 columns a misspelt word and a bad filter (`no match for
        'storrm'; did you mean storm? · rail:x: expected a rail number 0-255`) ran past the
        edge and the filter's error was lost. The lines are counted here, so the layout is
        worked out again only when their number changes (a reflow per keystroke was the cost
        that made the line one line high)."""
        line = self.query_one("#case-status", Static)
        text, _ = fold_text(Text(self.status), line.content_region.width, STATUS_LINES,
                            self.app.console)
        rows = len(text.split())
        if rows != self._status_rows:
            self._status_rows = rows
            line.styles.height = rows  # (a layout pass)
            line.update(text)
        else:
            line.update(text, layout=False)

    def on_resize(self) -> None:
        self.call_after_refresh(self._show_status)  # folded again at the new width

    # similar cases for the newest session -------------------------------------------------------
    def action_similar_session(self, session: str = "last") -> None:
        """List the cases similar to what `session` (default: the newest) would file."""
        self.search_no += 1  # a search still running must not replace this list
        self._similar(self.search_no, session)

    @work(thread=True, exclusive=True, group="case-search", exit_on_error=False,
          description="similar cases")
    def _similar(self, number: int, session: str) -> None:
        workspace = self.fab.workspace
        try:
            draft = workspace.case_or_session(session)
            similar = workspace.cases.similar(draft, limit=20)
        except (RequestError, InputError) as exc:
            found = Found([], f"similar cases: {str(exc).splitlines()[0]}")
        else:
            entries = [Entry(c.id, c.title, f"[{c.status}] {c.score:.1f}", "",
                             why=why(c.matched)) for c in similar.cases]
            found = Found(entries, f"like {draft.sessions[0] if draft.sessions else draft.id}"
                          f" · {similar.symptom_class}: {similar.commonness} ({similar.seen} "
                          f"past) · {len(entries)} similar")
        if not get_current_worker().is_cancelled:
            self.post_message(CasesFound(number, f"similar:{session}", found))

    # actions ------------------------------------------------------------------------------------
    def _selected(self) -> str | None:
        entry = self.query_one(CaseList).selected
        if entry is None:
            self.notify("no case selected", title="cases", severity="warning")
        return entry.id if entry else None

    @on(CaseList.Chosen)
    def _chosen(self, message: CaseList.Chosen) -> None:
        self.open_case(message.case_id, matched=self._why(message.case_id))

    def action_open(self) -> None:
        case_id = self._selected()
        if case_id:
            self.open_case(case_id, matched=self._why(case_id))

    def _why(self, case_id: str) -> str:
        """Why the selected case `case_id` matched, whole ("" when another is selected)."""
        entry = self.query_one(CaseList).selected
        return entry.why if entry is not None and entry.id == case_id else ""

    def open_case(self, case_id: str, *, edit: bool = False, matched: str = "") -> None:
        """Show `case_id` on top of this screen (its editor too when `edit`), with `matched`,
        why it matched the search, whole in its header. A session id (or `last`) shows the
        draft that session would file, with its similar cases: "have we seen this before?"
        from a live session."""
        from fabtui.tui.screens.case_view import CaseView

        workspace = self.fab.workspace
        try:
            case = workspace.case_or_session(case_id)
            stored = workspace.cases.has(case.id)
        except (RequestError, InputError) as exc:
            self.notify(str(exc).splitlines()[0], title="cases", severity="error")
            return
        while len(self.app.screen_stack) > 1 and self.app.screen_stack[0] is self:
            self.app.pop_screen()
        view = CaseView(case, stored=stored, matched=matched)
        self.app.push_screen(view)
        if edit:
            view.action_edit()

    def action_edit(self) -> None:
        case_id = self._selected()
        if case_id:
            self.open_case(case_id, edit=True)

    def action_export(self) -> None:
        case_id = self._selected()
        if case_id:
            export_case(self.fab, case_id)

    def action_focus_search(self) -> None:
        self.query_one("#case-query", Input).focus()

    def action_back(self) -> None:
        """Esc: out of the search field to the results; on the results, clear the search."""
        if self.leave_input():
            return
        query = self.query_one("#case-query", Input)
        if query.value:
            query.value = ""
