"""A guided runbook session: the current step's prose, every block with its state, the output
as it streams, the last result as a table (an "after" reading beside its "before"), and the
operator's keys (next, to the next gate, skip, jump, re-run, note, abandon, file as case).

The engine runs in one async worker on the app's loop, for the screen's lifetime: keys queue
commands to it, so one block runs at a time. The screen is the engine's `Operator`: a gate or an
input pushes a dialog and the engine awaits a future the dialog resolves; `n` at a gate (not
yet) leaves the session waiting there (journaled `session_waiting`) and `esc` interrupts it
there (journaled `cancelled`): both resumable, the next `n` or `g` resumes it through
`Workspace.resume` and asks the gate again; a mistyped phrase is asked again in the dialog.
Only `x` (abandon, with a reason) ends a session unfinished. Closing the screen cancels the
worker: a running block is journaled
`cancelled` (resumable, per the engine), an idle session is marked interrupted. A command that
raises what nothing expects (a journal that cannot be written, an `OSError`) is shown (a notice,
a line in the output) and interrupts the session there, resumable by the next key: the worker
keeps serving the keys (`_failed`).

A recorded session (`OpenSession`, the sessions list) opens read-only from its journal events,
drawn by the same `SessionView` the live one is.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group
from rich.markdown import Markdown
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Log, Static

from fabtui.errors import InputError, RequestError, one_line
from fabtui.model.events import Event, EventKind
from fabtui.model.runbook import Block, InputSpec, Runbook
from fabtui.model.table import Column, left, right
from fabtui.render.table import cell_text, cut
from fabtui.runbooks.engine import Engine, Observer, var_name
from fabtui.tui.commands import SESSION_COMMANDS, bindings
from fabtui.tui.messages import Highlight, OpenCase, OpenRunbook
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.screens.dialogs import Field, Form, Gate, Prompt
from fabtui.tui.widgets.fit_table import FitCell, FitTable, fold_text, split_common
from fabtui.tui.widgets.footer import KeyFooter
from fabtui.tui.widgets.session_parts import (
    MarkedLog,
    OutlineList,
    OutputStream,
    badge,
    filter_outline,
    jump_hint,
    outline_lines,
)
from fabtui.views import guided
from fabtui.views.listfilter import filter_words, keeps
from fabtui.workspace.operator import operator_name

if TYPE_CHECKING:
    from fabtui.workspace.core import Resumed

WAITING_HINT = "n or g asks it again when ready · x abandons it (with a reason)"
"""What the operator can do with a session waiting at a gate."""
FLUSH_S = 0.05
"""Streamed output is written into the log at most this often (one batch per flush)."""
LOG_LINES = 20_000
"""Lines the output log keeps (older ones scroll away)."""
HEAD_LINES = 3
"""Lines of the session's head (its CSS `max-height`)."""
BLOCK_HEAD_LINES = 4
"""Lines of the block's head under the step's text (its CSS `max-height`)."""


class _Interrupted(Exception):
    """The operator answered a gate with `esc`: stop the session there (resumable)."""


class _Watch(Observer):
    """The engine's observer: events into the screen's view, output into the stream."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen

    def event(self, event: Event) -> None:
        self.screen.engine_event(event)

    def output_chunk(self, block: Block, text: str) -> None:
        self.screen.stream.add(text)


class _Operator:
    """The screen answers the engine's gates and inputs through dialogs (`Operator`)."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen

    async def confirm(self, block: Block, prompt: str, phrase: str | None) -> str | None:
        return await self.screen.ask_gate(block, prompt, phrase)

    async def ask(self, block: Block, prompt: str, spec: InputSpec) -> str | None:
        return await self.screen.ask_input(block, prompt, spec)


class SessionScreen(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = SESSION_COMMANDS
    FILTERS = "the outline and the results"
    FILTER_LIST = "#outline"
    BINDINGS: ClassVar[list[BindingType]] = bindings(SESSION_COMMANDS)
    DEFAULT_CSS = """
    SessionScreen #session-head { height: auto; max-height: 3; padding: 0 1;
                                  background: $boost; }
    SessionScreen #session-body { height: 1fr; }
    SessionScreen #outline { width: 40; max-width: 38%; border-right: vkey $panel; }
    SessionScreen #prose { height: auto; max-height: 30%; }
    SessionScreen #prose-text { padding: 0 1; }
    SessionScreen #block-head { height: auto; max-height: 4; padding: 0 1; }
    SessionScreen #output, SessionScreen #block-output { height: 1fr; min-height: 3;
                                                         border-top: hkey $panel; }
    SessionScreen #block-output { display: none; }
    SessionScreen.picked #block-output { display: block; }
    SessionScreen.picked #output { display: none; }
    SessionScreen #result { height: auto; max-height: 45%; }
    """

    def __init__(self, book: Runbook, *, inputs: dict[str, Any] | None = None,
                 why: str = "", resume: str | None = None,
                 recorded: list[Event] | None = None, origin: str | None = None,
                 from_session: str | None = None) -> None:
        super().__init__()
        self.from_session = from_session
        """The session whose hand-over opened this one (journaled as linked when it runs)."""
        self.origin = origin
        """The view the session was opened from (`triage`): Esc goes back there."""
        self.book = book
        self.inputs = dict(inputs or {})
        self.why = why
        self.resume_id = resume
        self.recorded = recorded
        self.view = guided.SessionView.of(book, recorded or ())
        self.engine: Engine | None = None
        self.stream = OutputStream(lambda: self.query_one("#output", Log))
        self.busy = False
        self._queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._highlighted: frozenset[str] = frozenset()
        self._shown_step: str | None = "?"
        self._heads = (Text(), Text())
        """The session's head and the block's, as painted (folded to their boxes)."""
        self._head_whole: Text | None = None
        """The session's head, whole, while its box cuts it (shown above the step's text)."""
        self._shown_result: tuple[str, ...] | None = None
        self.session: str | None = recorded[0].session if recorded else None
        self.filed: str | None = None
        self.closing = False
        self.picked: tuple[str, str | None] | None = None
        """The step (and block) the operator picked in the outline to read again; None: the
        screen follows the session (the block running or last run)."""
        self._shown_output: str | None = None


    @property
    def live(self) -> bool:
        return self.recorded is None

    def crumb(self) -> str:
        return f"{'session' if self.live else 'recorded session'} {self.book.meta.id}"

    # building -----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="session-head")
        with Horizontal(id="session-body"):
            yield OutlineList(id="outline")
            with Vertical(id="session-main"):
                with VerticalScroll(id="prose"):
                    yield Static(id="prose-text")
                yield Static(id="block-head")
                yield MarkedLog(id="output", max_lines=LOG_LINES, auto_scroll=True)
                yield MarkedLog(id="block-output", max_lines=LOG_LINES, auto_scroll=False)
                # the result table is mounted with the first result (`_result_table`)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.set_interval(FLUSH_S, self.stream.flush)
        if self.live:
            try:
                self._make_engine()
            except (InputError, RequestError) as exc:
                self.notify(str(exc).splitlines()[0], title="runbook", severity="error")
            else:
                self._drive()
        else:
            self._post_highlight()
            for block in self.book.blocks():
                if block.id in self.view.outputs:
                    self.stream.add(f"── {block.id} ──")
                    for line in self.view.outputs[block.id].splitlines():
                        self.stream.add(line)
        self.query_one(OutlineList).focus()
        self._paint()
        self._paint_prose()

    def _make_engine(self) -> None:
        ws = self.fab.workspace
        observers = [_Watch(self)]
        if self.resume_id is not None:
            self._take(ws.resume(self.resume_id, inputs=self.inputs, operator=_Operator(self),
                                 observers=observers, operator_name=operator_name()))
            return
        self.engine = ws.open_run(self.book.meta.id, inputs=self.inputs,
                                  operator=_Operator(self), observers=observers,
                                  operator_name=operator_name(),
                                  handed_over_from=self.from_session)
        self.inputs = dict(self.engine.inputs)

    def _take(self, resumed: Resumed) -> None:
        """Drive the resumed session's engine from here on; its notes told."""
        self.engine = resumed.engine
        self.session = self.engine.session
        assert self.resume_id is not None
        self.view = guided.SessionView.of(self.book, self.fab.workspace.events(self.resume_id))
        for note in resumed.notes:
            self.notify(note, title="resume")
        self.inputs = dict(self.engine.inputs)

    # the engine's worker ------------------------------------------------------------------------
    @work(exclusive=True, group="session", exit_on_error=False, description="runbook session")
    async def _drive(self) -> None:
        """Run what the keys ask, one command at a time, until the screen closes."""
        try:
            while True:
                command, argument = await self._queue.get()
                self.busy = True
                self._paint()
                try:
                    try:
                        await self._do(command, argument)
                    except _Interrupted:
                        assert self.engine is not None
                        self.engine.mark_cancelled(None, "the operator stopped at a gate")
                        self.notify("stopped at the gate: the session can be resumed (n, g)",
                                    title="session")
                    except (InputError, RequestError, ValueError) as exc:
                        self.notify(str(exc).splitlines()[0], title="session", severity="error")
                except Exception as exc:  # anything else: shown, and the keys still work
                    self._failed(command, exc)
                finally:
                    self.busy = False
                self._paint()
        finally:
            engine = self.engine
            if engine is not None:
                engine.mark_cancelled(None, "the session screen was closed")
                await engine.close()

    def _failed(self, command: str, exc: Exception) -> None:
        """A command raised what nothing expects (a journal that cannot be written, an
        `OSError` from a transport): a notice and a line in the output say what; the session is
        marked interrupted there (journaled with the error, resumable as after `esc` at a gate:
        the next `n` or `g` resumes it from the journal, running the block that failed again),
        and the driver goes on serving the keys."""
        said = one_line(exc)
        self.stream.add(f"── {command} failed: {said} ──")
        engine = self.engine
        then = "n tries again"
        if engine is not None and engine.session is not None and not engine.finished:
            then = "the session stopped there: n or g resumes it"
            try:
                engine.mark_cancelled(None, f"stopped by an error: {said}")
            except Exception as again:  # the journal itself failing: said, never raised
                said += f" (not journaled: {one_line(again)})"
        self.notify(f"{command} failed: {said}; {then}", title="session", severity="error",
                    timeout=15)

    async def _do(self, command: str, argument: str) -> None:
        if command == "file":
            if self.session is not None:
                self._file(self.session)
            return
        engine = await self._live_engine()
        if engine.finished:
            outcome = engine.summary.outcome.value if engine.summary is not None else "ended"
            self.notify(f"the session has ended ({outcome}): f files it as a case; open "
                        f"{self.book.meta.id} again (2) for a new session", title="session")
            return
        if command == "next":
            await engine.run_next()
        elif command == "gate":
            await engine.run_to_gate()
        elif command == "rerun":
            await engine.rerun(argument)

    async def _live_engine(self) -> Engine:
        """The engine, resumed first when the session was interrupted at a gate or waits at
        one (answered no, not yet): the gate is asked again."""
        engine = self.engine
        assert engine is not None
        if (engine.cancelled or engine.waiting) and engine.session is not None:
            self.resume_id = engine.session
            resumed = await self.fab.workspace.continue_interrupted(
                engine, operator=_Operator(self), observers=[_Watch(self)],
                operator_name=operator_name())
            self._take(resumed)
            engine = resumed.engine
        return engine

    def engine_event(self, event: Event) -> None:
        """An event the engine journaled (on the app's loop): into the view, then drawn."""
        self.session = event.session
        self.view.apply(event)
        if event.kind is EventKind.SESSION_WAITING and not self.closing:
            self.notify(f"{self.view.reason}. {WAITING_HINT}", title="waiting at the gate",
                        timeout=10)
        if event.kind is EventKind.BLOCK_STARTED and event.block:
            self.stream.add(f"── {event.block} ──")
        if event.kind is EventKind.BLOCK_FINISHED and not self.closing:
            self._post_highlight()
        self._paint()

    def _post_highlight(self) -> None:
        scope = self.engine.scope() if self.engine is not None else self.view.scope
        keys = guided.touched(self.fab.fabric, self.book, scope)
        if keys != self._highlighted:
            self._highlighted = keys
            self.app.post_message(Highlight("session", keys, f"runbook {self.book.meta.id} "
                                            f"(session {self.session})"))

    # the operator -------------------------------------------------------------------------------
    async def _answer(self, dialog: Gate | Form) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(value: Any) -> None:
            if not future.done():
                future.set_result(value)

        self.stream.flush()
        self.app.push_screen(dialog, done)
        try:
            return await future
        finally:
            if dialog.is_attached and dialog in self.app.screen_stack:
                dialog.dismiss(None)

    async def ask_gate(self, block: Block, prompt: str, phrase: str | None) -> str:
        danger = phrase is not None
        repair = None
        component = guided.repair_component(self.book, self.inputs)
        if not danger and component and self.fab.workspace.simulated():
            repair = (f"repair {component}", lambda: self._demo_repair(component))
        answer = await self._answer(Gate(prompt, phrase, danger=danger, repair=repair))
        if answer is None:
            raise _Interrupted
        return str(answer)

    def _demo_repair(self, component: str) -> str:
        from fabtui.workspace import simfabric

        ended = simfabric.repair(self.fab.workspace.settings, component)
        said = f"repaired {component} on the demo fabric" + \
            (f": ended {', '.join(ended)}" if ended else " (no fault was active on it)")
        if self.engine is not None:
            self.engine.note(said, by="demo")
        return said

    async def ask_input(self, block: Block, prompt: str, spec: InputSpec) -> str | None:
        from fabtui.runbooks.inputs import check_value

        graph = self.fab.graph

        def check(name: str, value: str) -> str | None:
            return check_value(spec, value, graph, empty="a value is needed")

        shown = "" if spec.secret or spec.default is None else str(spec.default)
        kind = spec.type.value + (f": one of {', '.join(spec.choices)}" if spec.choices else "")
        values = await self._answer(Form(f"input {spec.name}", [
            Field(spec.name, f"{spec.name} ({kind})", shown, spec.secret)], check, prompt))
        if values is None:
            raise _Interrupted
        return str(values[spec.name]) or None

    # drawing ------------------------------------------------------------------------------------
    def on_unmount(self) -> None:
        self.closing = True  # the worker's last events come after: nothing is drawn then

    def on_resize(self) -> None:
        self.call_after_refresh(self._fold_heads)  # to their new width

    def _fold_heads(self) -> None:
        """The session's head and the block's, each in the lines its box holds: what a box
        cannot hold ends in `…` (it was cropped unmarked); the session's head, then cut, is
        said whole above the step's text."""
        head, block = self._heads
        box = self.query_one("#session-head", Static)
        shown, cut_off = fold_text(head, box.content_size.width, HEAD_LINES, self.app.console)
        box.update(shown)
        if (head if cut_off else None) != self._head_whole:
            self._head_whole = head if cut_off else None
            self._shown_step = "?"  # the prose pane says it again
            self._paint_prose()
        box = self.query_one("#block-head", Static)
        shown, _ = fold_text(block, box.content_size.width, BLOCK_HEAD_LINES, self.app.console,
                             hanging=True)
        box.update(shown)

    def _paint(self) -> None:
        if self.closing:
            return
        theme, ascii_only = self.app.current_theme, self.fab.ascii_only
        view = self.view
        head = Text()
        head.append(f"{self.book.meta.id}", "bold")
        head.append(f" · {cut(self.book.title, 60)}\n")
        if view.handover and view.state == "finished":
            # the next thing to do, second: seen at 80x24, where the block's own line under
            # the prose and the head's last lines are pushed out of the screen
            head.append(f"next: runbook {view.handover} (o opens it)\n", "bold")
        head.append(f"session {self.session or '(not started)'} · ")
        state = view.state if not self.busy else "running"
        if self._queue.qsize():
            state += f" ({self._queue.qsize()} typed ahead)"
        if view.state == "finished":
            head.append("finished ")
            head.append_text(badge(view.outcome, theme, ascii_only))
        else:
            head.append(state)
        counts = view.counts()
        head.append(" · " + " ".join(f"{counts[s]} {s}" for s in
                                     ("ok", "warn", "fail", "error", "skipped", "pending")
                                     if counts.get(s)))
        if self.why:
            head.append(f"\nwhy: {self.why}")
        elif view.state == "waiting":
            head.append(f"\n{view.reason} · {WAITING_HINT}", "bold")
        elif view.reason:
            head.append(f"\n{view.reason}")
        elif not self.live:
            head.append("\nrecorded session (read only)")
        self._heads = (head, self._heads[1])
        lines = outline_lines(view, theme, ascii_only)
        kept = filter_outline(lines, self.view_filter)
        self.query_one(OutlineList).set_lines(kept, view.block)
        self.say_filtered(sum(1 for line in kept if line.block),
                          sum(1 for line in lines if line.block), "blocks")
        self._paint_prose()
        self._paint_block()

    def _paint_prose(self) -> None:
        step_id = self.picked[0] if self.picked else \
            self.view.step or (self.book.steps[0].id if self.book.steps else None)
        if step_id == self._shown_step:
            return
        self._shown_step = step_id
        step = self.book.step(step_id) if step_id else None
        if step is None:
            text = self.book.intro
        else:
            prose = guided.render_prose(step.prose, self.engine) if self.engine else step.prose
            text = f"## {step.title}\n\n{prose}"
        # rich's Markdown in one Static: Textual's Markdown widget builds a widget per
        # paragraph, which made opening a runbook cost a second of styling and layout
        whole = self._head_whole
        self.query_one("#prose-text", Static).update(
            Markdown(text) if whole is None else Group(whole, Text(""), Markdown(text)))

    def _paint_block(self) -> None:
        view = self.view
        block = self.picked[1] if self.picked else view.block
        text = Text()
        upcoming = self.engine.next_block() if self.engine and not self.busy else None
        if self.picked and block is None:
            step = self.book.step(self.picked[0])
            states = [view.states.get(b.id, "pending") for b in step.blocks] if step else []
            text.append(f"step {self.picked[0]}", "bold")
            text.append(f"  {len(states)} blocks: " + ", ".join(
                f"{states.count(s)} {s}" for s in dict.fromkeys(states)))
        if block is not None:
            text.append_text(badge(view.states.get(block, "pending"), self.app.current_theme,
                                   self.fab.ascii_only))
            text.append(f"  {block}  {cut(view.messages.get(block, ''), 200)}")
            if block in view.commands:
                text.append(f"\n$ {cut(view.commands[block], 200)}", "dim")
            if block in view.decisions:
                text.append(f"\n{view.decisions[block]}", "italic")
        if self.picked and self.live:
            text.append("\nreading back: n or g runs on from where the session is", "dim")
        if view.handover:
            text.append(f"\nnext: runbook {view.handover} (o opens it)", "bold")
        if upcoming is not None and self.live and view.state != "finished":
            text.append(f"\nnext: {upcoming.kind.value} {upcoming.id}"
                        f"{' (a gate)' if guided.is_gate(upcoming) else ''}", "bold")
        self._heads = (self._heads[0], text)
        self._fold_heads()
        self._paint_output(block)
        self._paint_result()

    def _paint_result(self) -> None:
        """The current step's "after" readings beside their "before" when it has any, else the
        last block's metrics; the table stays as it is while neither changes."""
        view = self.view
        values = {var_name(k): v for k, v in view.results.items()}
        picked_step, picked_block = self.picked or (view.step, view.block)
        step = self.book.step(picked_step) if picked_step else None
        pairs = []
        if step is not None:
            fabric = self.fab.fabric
            about = self._highlighted

            def ours(component: str) -> bool:
                return not about or fabric.element_of(component)[0] in about

            blocks = [b for b in step.blocks if self.picked is None or picked_block is None
                      or b.id == picked_block]
            pairs = [p for b in blocks if view.states.get(b.id) not in ("pending", None)
                     and (p := guided.comparison(self.book, values, b.id, ours)) and p.rows]
        shown = picked_block or ""
        key = ("pairs", self.view_filter, *(p.after for p in pairs)) if pairs else \
            ("block", self.view_filter, shown) if view.results.get(shown, {}).get("metrics") \
            else None
        if key is None and self.picked is not None:
            self._result_table().display = False
            self._shown_result = None
            return
        if key is None or key == self._shown_result:
            return
        self._shown_result = key
        theme, ascii_only = self.app.current_theme, self.fab.ascii_only
        rows: list[tuple[FitCell, ...]]
        columns: tuple[Column, ...]
        if pairs:
            # What every row shares goes above the table (the port, the block pair), so the
            # columns left are the lane, the metric and the readings: at 80 columns a value is
            # never what gives way (the names are, ending in `…`).
            changed = [(pair, row) for pair in pairs for row in pair.rows
                       if row[2] != row[3] or row[4] != "ok"]  # what the repair changed
            # A reading in words (mlxlink's recommendation) would push the readings off an
            # 80-column pane: it stays in its block's table (`enter` on the block), and the
            # caption says how many are there.
            worded = [(pair, row) for pair, row in changed if _prose(row[2]) or _prose(row[3])]
            changed = [item for item in changed if item not in worded]
            where, lanes = split_common([row[0] for _, row in changed])
            named = {f"{pair.after} (before: {pair.before})" for pair, _ in changed}
            caption = " · ".join(filter(None, [
                where.rstrip(":/"), *(sorted(named) if len(named) == 1 else []),
                f"{len(worded)} reading(s) in words in their blocks" if worded else ""]))
            columns = (left("component" if not where else "part"), left("metric"),
                       right("before"), right("after"), left("verdict"),
                       left("after (before)"))
            rows = [(lane or "-", metric, _reading(before), _reading(after),
                     badge(verdict, theme, ascii_only), f"{pair.after} ({pair.before})")
                    for (pair, (_, metric, before, after, verdict)), lane
                    in zip(changed, lanes, strict=True)]
            if len(named) == 1:
                columns, rows = columns[:-1], [r[:-1] for r in rows]
            if all(not lane for lane in lanes):
                columns, rows = columns[1:], [r[1:] for r in rows]
        else:
            metrics = view.results[shown]["metrics"]
            where, parts = split_common([str(m["component"]) for m in metrics])
            caption = " · ".join(filter(None, [f"block {shown}", where.rstrip(":/")]))
            # the values before the names: a narrow screen cuts the names, never a value
            columns = (left("verdict"), right("value"), left("unit"),
                       left("component" if not where else "part"), left("metric"))
            rows = [(badge(m["verdict"], theme, ascii_only), _reading(m["value"]), m["unit"],
                     part or "-", m["name"]) for m, part in zip(metrics, parts, strict=True)]
            if all(not part for part in parts):
                columns, rows = (*columns[:3], columns[4]), [(*r[:3], r[4]) for r in rows]
        words = filter_words(self.view_filter)
        if words:
            kept = [row for row in rows if keeps(words, row)]
            caption = f"{caption} · filter {self.view_filter!r}: {len(kept)} of {len(rows)} rows"
            rows = kept
        table = self._result_table()
        table.set_rows(columns, rows, caption)
        table.display = True

    def _paint_output(self, block: str | None) -> None:
        """The output of the block picked in the outline (its journaled output), or, while
        following, the session's output as it streams."""
        picked = self.picked is not None
        self.set_class(picked, "picked")
        if not picked:
            self._shown_output = None
            return
        shown = f"{block}:{len(self.view.outputs.get(block or '', ''))}"
        if shown == self._shown_output:
            return
        self._shown_output = shown
        log = self.query_one("#block-output", Log)
        log.clear()
        if block is None:
            log.write_line("(a step: pick one of its blocks for its output)")
            return
        output = self.view.outputs.get(block)
        command = self.view.commands.get(block)
        if command:
            log.write_line(f"$ {command}")
        log.write_lines(output.splitlines() if output else ["(no output recorded)"])
        log.scroll_home(animate=False)

    def _result_table(self) -> FitTable:
        """The result table, mounted the first time there is a result."""
        tables = self.query("#result").results(FitTable)
        for table in tables:
            return table
        table = FitTable(id="result")
        self.query_one("#session-main", Vertical).mount(table)
        return table

    @on(OutlineList.Selected)
    def _picked(self, message: OutlineList.Selected) -> None:
        """The operator picked a step or block in the outline: show what it did."""
        self.picked = (message.step, message.block)
        self._shown_result = None
        self._paint()

    def _follow(self) -> None:
        """Back to following the session (a key that runs a block)."""
        if self.picked is not None:
            self.picked = None
            self._shown_result = None
            self.query_one(OutlineList).follow()

    # actions ------------------------------------------------------------------------------------
    def _idle_engine(self) -> Engine | None:
        if not self._live_session():
            return None
        if self.busy:
            self.notify("a block is running: wait, or x aborts", title="session",
                        severity="warning")
            return None
        return self.engine

    def _live_session(self) -> bool:
        if not self.live or self.engine is None:
            self.notify("a recorded session: nothing runs here", title="session",
                        severity="warning")
            return False
        return True

    def _type_ahead(self, command: str) -> None:
        """Queue `command` for the engine's worker, a block running or not: an operator who
        presses `g` as a gate is answered types ahead of the block that gate guards, and the
        key is done when that block ends (it was refused, and lost, before)."""
        self._queue.put_nowait((command, ""))
        self._paint()

    def action_run_next(self) -> None:
        if self._live_session():
            self._follow()
            self._type_ahead("next")

    def action_run_to_gate(self) -> None:
        if self._live_session():
            self._follow()
            self._type_ahead("gate")

    def action_skip(self) -> None:
        engine = self._idle_engine()
        if engine is None:
            return
        block = engine.next_block()
        if block is None or engine.finished:
            self.notify("no block left to skip", title="session")
            return
        self.app.push_screen(Prompt(f"skip {block.id}", "why (recorded in the journal)"),
                             lambda reason: self._skip(block.id, reason))

    def _skip(self, block_id: str, reason: str | None) -> None:
        if reason and self.engine is not None:
            try:
                self.engine.skip(block_id, reason)
            except ValueError as exc:
                self.notify(str(exc), title="skip", severity="error")
            self._paint()

    def action_jump(self) -> None:
        if self._idle_engine() is None:
            return
        self.app.push_screen(Prompt("jump to step", jump_hint([s.id for s in self.book.steps])),
                             self._jump)

    def _jump(self, text: str | None) -> None:
        if not text or self.engine is None:
            return
        text = text.strip()
        steps = self.book.steps
        step = steps[int(text) - 1].id if text.isdigit() and 0 < int(text) <= len(steps) \
            else text
        try:
            self.engine.jump(step, "the operator's choice")
        except ValueError as exc:
            self.notify(str(exc), title="jump", severity="error")
        self._paint()

    def action_rerun(self) -> None:
        if self._idle_engine() is None:
            return
        self.app.push_screen(Prompt("re-run a block", "its id", self.view.block or ""),
                             self._rerun)

    def _rerun(self, block_id: str | None) -> None:
        if block_id:
            self._queue.put_nowait(("rerun", block_id.strip()))

    def action_note(self) -> None:
        if self.live and self.engine is not None:
            self.app.push_screen(Prompt("note", "recorded in the session's journal"),
                                 self._note)

    def _note(self, text: str | None) -> None:
        if text and self.engine is not None:
            self.engine.note(text)
            self.notify("noted", title="session")

    def action_abort(self) -> None:
        """Abandon the session for good, with a reason (the only way one ends unfinished): a
        live one (a running block is stopped first), or a recorded one that waits or was
        interrupted."""
        engine = self.engine if self.live else None
        ended = self.view.state == "finished" if engine is None else \
            engine.finished and not engine.waiting
        if self.session is None or ended:
            self.notify("nothing to abandon: the session has "
                        + ("ended: f files it as a case" if ended else "not started"),
                        title="abandon", severity="warning")
            return
        self.app.push_screen(Prompt(f"abandon session {self.session} for good",
                                    "why (recorded). A no at a gate only pauses a session: "
                                    "esc keeps it, n or g goes on"), self._abort)

    def _abort(self, reason: str | None) -> None:
        if not reason or not reason.strip() or self.session is None:
            return
        ws = self.fab.workspace
        try:
            ws.abandon(self.session, reason, engine=self.engine if self.live else None)
        except RequestError as exc:
            self.notify(str(exc), title="abandon", severity="error")
            return
        if not self.live:  # a recorded session: its end read back from the journal
            self.view = guided.SessionView.of(self.book, ws.events(self.session))
        self.notify(f"session {self.session} abandoned: f files it as a case",
                    title="abandon")
        self._paint()

    def action_handover(self) -> None:
        """Open the runbook this session handed over to, inputs carried from the session."""
        name = self.view.handover
        if name is None:
            self.notify("no hand-over: the session has not ended on `next: runbook ...`",
                        title="hand over", severity="warning")
            return
        try:
            target = self.fab.workspace.runbook(name)
        except InputError as exc:
            self.notify(str(exc).splitlines()[0], title="hand over", severity="error")
            return
        scope = self.engine.scope() if self.engine is not None else self.view.scope
        self.app.post_message(OpenRunbook(name, guided.handover_inputs(self.book, target, scope),
                                          f"hand-over from {self.book.meta.id} "
                                          f"(session {self.session})",
                                          from_session=self.session))

    def action_similar(self) -> None:
        """The draft this session would file, beside the past cases like it (Cases view)."""
        if self.session is None:
            self.notify("nothing recorded yet: run a block first", title="similar",
                        severity="warning")
            return
        self.app.post_message(OpenCase(self.session))

    def action_file_case(self) -> None:
        if self.session is None:
            self.notify("nothing recorded yet: run a block first", title="file case",
                        severity="warning")
            return
        if self.busy and self.live:
            self.notify("a block is running: the session is filed when it has stopped",
                        title="file case")
            self._type_ahead("file")
            return
        self._file(self.session)

    @work(thread=True, exclusive=True, group="file-case", exit_on_error=False,
          description="file the session as a case")
    def _file(self, session: str) -> None:
        try:
            case = self.fab.workspace.file_case(session)
        except (RequestError, InputError) as exc:
            self.app.call_from_thread(self.notify, str(exc).splitlines()[0], title="file case",
                                      severity="error")
            return
        self.filed = case.id
        self.app.call_from_thread(self.notify, f"filed {case.id}: {case.title}",
                                  title="file case")
        self.app.post_message(OpenCase(case.id, edit=True))

    def apply_view_filter(self, text: str) -> None:
        self._shown_result = None
        self._paint()

    def action_back(self) -> None:
        """Back one level: out of the `/` filter first (then the filter cleared); else to
        the screen under this one and, when the session was opened from another view
        (Triage's `o`, a case's runbook), to that view."""
        if self.leave_filter():
            self._shown_result = None
            self._paint()
            return
        self.dismiss(None)
        if self.origin and self.origin != self.app.current_mode:
            self.app.switch_mode(self.origin)


def _prose(value: Any) -> bool:
    """Whether a reading is words, not a number or a one-word state (`Check the cable and the
    remote side` against `Active`, `-1.32`)."""
    return isinstance(value, str) and " " in value.strip()


def _reading(value: Any) -> str:
    """A reading as the session's tables show it: floats to 4 significant digits (a BER of
    0.0005877774854678517 pushed the after column out of a 120-column screen); the
    journal and the case keep every digit."""
    if isinstance(value, float) and not isinstance(value, bool):
        return f"{value:.4g}"
    return cell_text(value)
