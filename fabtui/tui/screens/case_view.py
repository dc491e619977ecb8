"""One case on screen: its facts, every section, the evidence, timeline, tuning and action items
as tables; beside it the links: the runbooks and sessions it references, and similar cases.

`b` on a runbook posts `OpenRunbook` (its inputs pre-filled from the case's components, see
`fabtui.cases.present.runbook_inputs`), `s` on a session posts `OpenSession`: the Runbooks screen
answers them. Similar cases are found in a worker (the search index may be rebuilt first); enter
on one opens it. `e` edits, `x` exports.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Label, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from fabtui.cases.markdown import SECTIONS
from fabtui.cases.present import runbook_inputs, sections, why
from fabtui.cases.similar import Similar
from fabtui.errors import InputError, RequestError
from fabtui.model.case import Case
from fabtui.paths import display_path
from fabtui.render.table import cut
from fabtui.tui.commands import CASE_VIEW_COMMANDS, bindings
from fabtui.tui.messages import OpenRunbook, OpenSession
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.screens.case_actions import export_case
from fabtui.tui.widgets.footer import KeyFooter


class SimilarFound(Message):
    """The similar cases of the case shown came back (or `error` says why not)."""

    def __init__(self, case_id: str, similar: Similar | None, error: str | None) -> None:
        super().__init__()
        self.case_id = case_id
        self.similar = similar
        self.error = error


def facts(case: Case, stored: bool = True, matched: str = "") -> Text:
    """The header: title, status, severity, class, dates, why the case matched the search it
    was opened from (`matched`, whole: the list's `matched …` line is cut at its edge), then
    components, codes, environment."""
    text = Text()
    text.append(case.title, "bold")
    text.append(f"\n{case.id} · {case.status.value}")
    for value in (case.severity, case.symptom_class.value, case.lang):
        if value:
            text.append(f" · {value}")
    if case.opened:
        text.append(f" · opened {case.opened}" + (f", closed {case.closed}" if case.closed
                                                  else ""))
    if matched:
        text.append("\nmatched ", "dim")
        text.append(matched, "italic")
    for label, values in (("components", case.components), ("error codes", case.error_codes),
                          ("tags", case.tags), ("authors", case.authors),
                          ("references", case.references)):
        if values:
            text.append(f"\n{label}: ", "dim")
            text.append(", ".join(values))
    environment = ", ".join(f"{k} {v}" for k, v in case.environment.model_dump().items() if v)
    if environment:
        text.append("\nenvironment: ", "dim")
        text.append(environment)
    if case.source:
        text.append(f"\nfrom {display_path(Path(case.source))}", "dim")
    if not stored:
        text.append("\nnot filed yet: the draft this session would file", "italic")
    return text


Rows = list[tuple[str, ...]]


def case_tables(case: Case) -> dict[str, tuple[tuple[str, ...], Rows]]:
    """The case's tables by section heading: (columns, rows)."""
    return {"Evidence": (("component · metric", "value", "source"),
                         [(f"{r.component}\n  {r.metric}", r.value, r.source)
                          for r in case.evidence]),
            "Timeline": (("at", "what"), [(t.at, t.text) for t in case.timeline]),
            "Tuning": (("change", "metric", "before", "after"),
                       [(t.change, t.metric, t.before, t.after) for t in case.tuning]),
            "Action items": (("done", "item", "owner"),
                             [("x" if a.done else " ", a.text, a.owner or "")
                              for a in case.action_items])}


def break_name(name: str, width: int) -> str:
    """`name` in lines of at most `width` cells, broken after a `-`, `:` or `/` (a case id
    wrapped by the list broke mid-word: `fec-errors-spine-upli` / `nk-histogram-tail`); a part
    longer than a line is left to wrap as it must."""
    if width <= 0 or cell_len(name) <= width:
        return name
    parts = re.findall(r"[^-:/]+[-:/]?|[-:/]", name)
    lines = [""]
    for part in parts:
        if lines[-1] and cell_len(lines[-1] + part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


VALUES = frozenset({"value", "before", "after"})
"""Columns of readings: the last to give way on a narrow screen."""
READING_WIDTH = 12
"""A reading with its unit is this wide at most (`-0.0000123`, `599.372 /s`): kept whole."""


class CaseTable:
    """A case's table as a document shows it: every cell whole, a long one wrapped inside its
    own column (a DataTable cut the value column at the screen's edge: `4.6e-05（fail` lost
    its limit, a timeline line its end). A column is kept at least as wide as its longest word
    (a number or a name is never broken) while the widths fit; on a screen too narrow for all
    of them the last columns give that up first (they fold), nothing is ever cut."""

    def __init__(self, columns: tuple[str, ...], rows: Rows) -> None:
        self.columns = columns
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 1),
                      header_style="bold")
        widths = self.widths(options.max_width)
        for name, width in zip(self.columns, widths, strict=True):
            table.add_column(name, width=width, overflow="fold")
        for row in self.rows:
            table.add_row(*(str(cell) for cell in row))
        yield table

    def widths(self, width: int) -> list[int]:
        """Each column's width in `width` cells: first its longest word (capped at 30); on a
        screen too narrow for all of them some give way (see below; a word longer than its
        column then folds, every character kept); then what is left shared by how much more
        each column needs for its longest line."""
        count = len(self.columns)
        cells = [[str(row[n]) for row in self.rows] + [self.columns[n]] for n in range(count)]
        words = [min(30, max(cell_len(w) for c in column for w in c.split() or [""]))
                 for column in cells]
        lines = [max(cell_len(line) for c in column for line in c.splitlines() or [""])
                 for column in cells]
        room = max(count, width - 2 * (count - 1))
        least = [max(1, w) for w in words]
        # who gives way, in turn: the last text columns, a value column down to a reading's
        # width (a long log line quoted as a value folds), the first column (the component
        # named), then the value column again
        values = [n for n in range(count) if self.columns[n] in VALUES]
        texts = [n for n in reversed(range(1, count)) if n not in values]
        for columns, floor in ((texts, 8), (values, READING_WIDTH), ([0], 8), (values, 8)):
            for n in columns:
                while sum(least) > room and least[n] > floor:
                    least[n] -= 1
        if sum(least) > room:  # too narrow even for that: shared evenly
            return [max(1, room // count)] * count
        spare = room - sum(least)
        wants = [max(0, line - w) for line, w in zip(lines, least, strict=True)]
        total = sum(wants)
        given = [spare * want // total if total else 0 for want in wants]
        return [w + g for w, g in zip(least, given, strict=True)]


class CaseView(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = CASE_VIEW_COMMANDS

    def crumb(self) -> str:
        return f"case {self.case.id}"
    BINDINGS: ClassVar[list[BindingType]] = bindings(CASE_VIEW_COMMANDS)
    DEFAULT_CSS = """
    CaseView #case-body { width: 1fr; padding: 0 1; }
    CaseView #case-links { width: 34%; max-width: 56; min-width: 24; scrollbar-gutter: stable; }
    CaseView #case-facts { margin-bottom: 1; }
    CaseView .heading { text-style: bold; color: $accent; margin-top: 1; }
    CaseView .case-table { height: auto; width: 1fr; }
    """

    def __init__(self, case: Case, *, stored: bool = True, matched: str = "") -> None:
        super().__init__()
        self.case = case
        self.stored = stored
        """False for a session's draft not filed yet (shown, not editable)."""
        self.matched = matched
        """Why the case matched the search (or the similar cases) it was opened from, as the
        list's `matched …` line says it ("" when opened otherwise): shown whole in the header."""
        self.similar: Similar | None = None
        self.links: list[tuple[str, str]] = []
        """(kind, target) of each line of the links list: runbook, session or case."""
        self._links_painted: list[str] | None = None
        """The links list's lines as last painted."""


    def compose(self) -> ComposeResult:
        with Horizontal():
            yield VerticalScroll(id="case-body")
            yield OptionList(id="case-links")
        yield KeyFooter()

    async def on_mount(self) -> None:
        await self.show(self.case)
        self.query_one("#case-body").focus()

    async def show(self, case: Case) -> None:
        """Draw `case` (again, after an edit) and look for its similar cases."""
        self.case = case
        body = self.query_one("#case-body", VerticalScroll)
        with self.app.batch_update():
            await body.remove_children()
            widgets: list[Static | Label | Markdown] = [
                Static(facts(case, self.stored, self.matched), id="case-facts")]
            tables = case_tables(case)
            prose = dict(sections(case))
            named = [section.heading for section in SECTIONS]
            order = [h for h in named if h in prose or (h in tables and tables[h][1])]
            order += [h for h in prose if h not in named]
            for heading in order:
                widgets.append(Label(heading, classes="heading"))
                if heading in tables and tables[heading][1]:
                    columns, rows = tables[heading]
                    kind = heading.lower().replace(" ", "-")
                    widgets.append(Static(CaseTable(columns, rows),
                                          classes=f"case-table {kind}"))
                if heading in prose:
                    widgets.append(Markdown(prose[heading]))
            await body.mount_all(widgets)
            self._paint_links()
        self._find_similar(case)

    # links --------------------------------------------------------------------------------------
    def _paint_links(self) -> None:
        case = self.case
        links = self.query_one("#case-links", OptionList)
        self.links = []
        options: list[Option] = []
        room = links.scrollable_content_region.width - 2  # the option's padding
        for kind, values in (("runbook", case.runbooks), ("session", case.sessions)):
            for value in values:
                self.links.append((kind, value))
                shown = f"{kind}: {value}"
                options.append(Option(shown if cell_len(shown) <= room or room <= 0 else
                                      f"{kind}:\n{break_name(value, room)}"))
        if not self.links:
            options.append(Option("no runbook or session referenced", disabled=True))
            self.links.append(("", ""))
        if self.similar is None:
            options.append(Option("similar cases: looking …", disabled=True))
            self.links.append(("", ""))
        else:
            options.append(Option(f"similar: {self.similar.symptom_class} is "
                                  f"{self.similar.commonness} ({self.similar.seen} past)",
                                  disabled=True))
            self.links.append(("", ""))
            for found in self.similar.cases:
                label = Text(f"{break_name(found.id, room)} [{found.status}] "
                             f"{found.score:.1f}\n")
                label.append(cut(found.title, 120) + "\n")  # (whole: enter opens it)
                label.append(f"matched {why(found.matched)}", "dim")
                options.append(Option(label))
                self.links.append(("case", found.id))
        painted = [str(o.prompt) for o in options]
        if painted == self._links_painted:
            return  # the same lines: the list (its layout and cursor) stays as it is
        self._links_painted = painted
        links.clear_options()
        links.add_options(options)
        links.border_title = "links · similar"

    def on_resize(self) -> None:
        """Names broken for the list's new width (repainted only when they change)."""
        self.call_after_refresh(self._paint_links)

    def _link(self, kind: str) -> str | None:
        """The link of `kind` under the cursor of the links list, else the first of it."""
        index = self.query_one("#case-links", OptionList).highlighted
        if index is not None and 0 <= index < len(self.links) and self.links[index][0] == kind:
            return self.links[index][1]
        return next((target for each, target in self.links if each == kind), None)

    @on(OptionList.OptionSelected, "#case-links")
    def _picked(self, message: OptionList.OptionSelected) -> None:
        kind, target = self.links[message.option_index]
        if kind == "runbook":
            self._open_runbook(target)
        elif kind == "session":
            self.post_message(OpenSession(target))
        elif kind == "case":
            self._open_other(target, self._similar_why(target))

    def action_runbook(self) -> None:
        name = self._link("runbook")
        if name is None:
            self.notify("this case references no runbook", title="case", severity="warning")
            return
        self._open_runbook(name)

    def _open_runbook(self, name: str) -> None:
        book = self.fab.workspace.library.runbooks.get(name)
        inputs = runbook_inputs(self.case, book) if book is not None else {}
        self.post_message(OpenRunbook(name, inputs, why=f"referenced by case {self.case.id}"))

    def action_session(self) -> None:
        session = self._link("session")
        if session is None:
            self.notify("this case references no session", title="case", severity="warning")
            return
        self.post_message(OpenSession(session))

    def _similar_why(self, case_id: str) -> str:
        """Why similar case `case_id` is similar to this one ("" when it is not listed)."""
        found = next((c for c in self.similar.cases if c.id == case_id), None) \
            if self.similar is not None else None
        return why(found.matched) if found is not None else ""

    def _open_other(self, case_id: str, matched: str = "") -> None:
        try:
            case = self.fab.workspace.cases.get(case_id)
        except RequestError as exc:
            self.notify(str(exc), title="case", severity="error")
            return
        self.app.push_screen(CaseView(case, matched=matched))

    # similar cases ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="case-similar", exit_on_error=False,
          description="similar cases")
    def _find_similar(self, case: Case) -> None:
        try:
            similar = self.fab.workspace.cases.similar(case, limit=8)
        except (RequestError, InputError) as exc:
            self.post_message(SimilarFound(case.id, None, str(exc).splitlines()[0]))
            return
        found = Similar([c for c in similar.cases if c.id != case.id], similar.symptom_class,
                        similar.seen)
        self.post_message(SimilarFound(case.id, found, None))

    @on(SimilarFound)
    def _similar_found(self, message: SimilarFound) -> None:
        if message.case_id != self.case.id:
            return
        if message.error:
            self.notify(message.error, title="similar cases", severity="warning")
            return
        self.similar = message.similar
        self._paint_links()

    # edit, export, back -------------------------------------------------------------------------
    def _refuse_unfiled(self) -> bool:
        if not self.stored:
            session = self.case.sessions[0] if self.case.sessions else self.case.id
            self.notify(f"not filed yet: file the session first (fabtui cases file {session})",
                        title="case", severity="warning")
        return not self.stored

    def action_edit(self) -> None:
        from fabtui.tui.screens.case_edit import CaseEditor

        if self._refuse_unfiled():
            return
        self.app.push_screen(CaseEditor(self.case), self._edited)

    def _edited(self, case: Case | None) -> None:
        if case is not None:
            self.call_later(self.show, case)
            self.notify(f"{case.id}: saved ({case.status.value})", title="case")

    def action_export(self) -> None:
        if not self._refuse_unfiled():
            export_case(self.fab, self.case.id)

    def action_back(self) -> None:
        self.dismiss(None)
