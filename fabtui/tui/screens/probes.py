"""The probe console: pick a probe and a target (or a target set), run it, read the result.

The run goes through the workspace (`run_probe` for one target, `sweep` for a set) on a thread
of its own with its own event loop; each result arrives as a `ConsoleResult` message. Leaving
the screen (or starting another run) cancels the run's task on that loop, which cancels the
targets still running. A result shows as its verdict badges (glyph and colour), the parser's
tables (the columns of `fabtui parse --table`) and its metrics; an nccl-tests result also as
busbw against message size with the expected line for the hardware; `o` shows the raw output.
A probe the catalog marks `danger` runs only once its target is typed, as on the command line.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Label, Select, Static

from fabtui.errors import InputError, RequestError
from fabtui.model.probe import ProbeDef, ProbeResult
from fabtui.model.table import Table
from fabtui.model.verdict import Verdict
from fabtui.probes.danger import confirmation_phrase, is_confirmed
from fabtui.render.table import cell_text
from fabtui.tui.commands import CONSOLE_COMMANDS, bindings
from fabtui.tui.glyphs import glyph, health_style, short_number
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.screens.dialogs import Prompt
from fabtui.tui.widgets.busbw_plot import BusbwPlot
from fabtui.tui.widgets.fit_table import FitCell, FitTable, fold_text
from fabtui.tui.widgets.footer import KeyFooter
from fabtui.tui.widgets.results import SweepRow, SweepTable, health_of
from fabtui.views.console import (
    busbw_series,
    parse_request,
    result_tables,
    sweep_why,
    worst_first,
)

PROBLEMS_SHOWN = 3
STATUS_LINES = 3
"""Lines of the status above the results (its CSS `max-height`)."""
"""Metrics out of range named under the result's badge (the rest: the metrics table)."""


class ConsoleResult(Message):
    """One target's result of the console's run came back."""

    def __init__(self, run: int, result: ProbeResult) -> None:
        super().__init__()
        self.run = run
        self.result = result


class ConsoleRunEnded(Message):
    """The console's run ended: every target answered, or `error` says why it could not run."""

    def __init__(self, run: int, error: str | None, seconds: float) -> None:
        super().__init__()
        self.run = run
        self.error = error
        self.seconds = seconds


class ProbeConsole(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = CONSOLE_COMMANDS
    AFTER_INPUT = "#console-body"
    CRUMB = "console"
    BINDINGS: ClassVar[list[BindingType]] = bindings(CONSOLE_COMMANDS)
    DEFAULT_CSS = """
    ProbeConsole #pick { height: 3; }
    ProbeConsole #probe-select { width: 30; }
    ProbeConsole #probe-target { width: 1fr; }
    ProbeConsole #console-status { height: auto; max-height: 3; padding: 0 1; }
    ProbeConsole #console-results { height: auto; max-height: 8; }
    ProbeConsole #console-body { height: 1fr; }
    ProbeConsole #console-body FitTable { height: auto; max-height: 24; }
    ProbeConsole #console-body Label { color: $text-muted; padding: 0 1; width: 100%; }
    ProbeConsole BusbwPlot { height: 14; }
    ProbeConsole #console-raw { height: 1fr; display: none; }
    ProbeConsole.raw #console-raw { display: block; }
    ProbeConsole.raw #console-body { display: none; }
    """

    def __init__(self, probe: str | None = None, target: str = "") -> None:
        super().__init__()
        self.probe = probe
        self.target = target
        self.results: list[ProbeResult] = []
        self.tally: Counter[Verdict] = Counter()
        """Results per verdict, kept as they arrive (a count per result would be quadratic)."""
        self.shown: ProbeResult | None = None
        self.run_no = 0
        self.running = False
        self.status_text = "pick a probe and a target, then enter (or r)"
        self._flight: tuple[asyncio.AbstractEventLoop, asyncio.Task[None]] | None = None
        self._flight_lock = threading.Lock()
        self._cancelled_run = 0
        """Runs up to this number are cancelled (even one whose task does not exist yet)."""
        self._status_timer: Timer | None = None
        self.outcome: str | None = None
        """How the last run ended: `done`, `cancelled` or its error (set on its thread)."""


    def compose(self) -> ComposeResult:
        catalog = self.fab.workspace.catalog
        options = [(name, name) for name in sorted(catalog)]
        with Horizontal(id="pick"):
            yield Select(options, value=self.probe if self.probe in catalog else Select.NULL,
                         prompt="probe", id="probe-select")
            yield Input(self.target, placeholder="target: node001 · node00* · leaf-g00-r4 · "
                        "rail:3 · then name=value parameters", id="probe-target")
        yield Static(id="console-status")
        yield SweepTable(ascii_only=self.fab.ascii_only, id="console-results")
        yield VerticalScroll(id="console-body")
        with VerticalScroll(id="console-raw"):
            yield Static(id="raw-text", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#console-results", SweepTable).display = False
        self.query_one("#probe-target" if self.probe else "#probe-select").focus()
        self._paint_status()

    def on_unmount(self) -> None:
        self._cancel()

    # running ------------------------------------------------------------------------------------
    @on(Input.Submitted, "#probe-target")
    def _submitted(self) -> None:
        self.action_run()
        self.query_one("#console-body").focus()  # so that the console's keys answer

    def action_run(self) -> None:
        probe = self.query_one("#probe-select", Select).value
        if not isinstance(probe, str):
            self.notify("pick a probe first", title="console", severity="warning")
            return
        try:
            target, params = parse_request(self.query_one("#probe-target", Input).value)
        except ValueError as exc:
            self.notify(str(exc), title="console", severity="error")
            return
        definition = self.fab.workspace.catalog.get(probe)
        if definition is not None and definition.danger:
            # As `fabtui probe run`: the operator types the target (the probe's name without).
            phrase = confirmation_phrase(definition, target)
            self.app.push_screen(
                Prompt(f"{probe} changes state on {phrase}",
                       f"{definition.description} · type {phrase} to run it"),
                lambda typed: self._confirmed(definition, target, params, typed))
            return
        self._start(probe, target, params)

    def _confirmed(self, definition: ProbeDef, target: str, params: dict[str, str],
                   typed: str | None) -> None:
        probe, phrase = definition.name, confirmation_phrase(definition, target)
        if is_confirmed(definition, target, typed):
            self._start(probe, target, params, typed)
        else:
            self.notify(f"not run: {probe} needs {phrase!r} typed to confirm", title="console",
                        severity="warning")

    def _start(self, probe: str, target: str, params: dict[str, str],
               confirmed: str | None = None) -> None:
        self._cancel()
        self.run_no += 1
        self.probe, self.target = probe, target
        self.results, self.shown, self.running = [], None, True
        self.tally = Counter()
        self.query_one("#console-results", SweepTable).clear()
        self.status_text = f"running {probe} on {target or 'this machine'} …"
        self._show(None)
        self._run(self.run_no, probe, target, params, confirmed)

    @work(thread=True, group="console", exclusive=True, exit_on_error=False,
          description="probe console run")
    def _run(self, run: int, probe: str, target: str, params: dict[str, str],
             confirmed: str | None) -> None:
        loop = asyncio.new_event_loop()
        started = time.monotonic()
        task = loop.create_task(self._drive(run, probe, target, params, confirmed))
        with self._flight_lock:
            self._flight = (loop, task)
            if self._cancelled_run >= run:
                task.cancel()
        error: str | None = None
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            error = "cancelled"
        except (RequestError, InputError) as exc:
            error = str(exc)  # whole: the status line folds it, the body says it all
        finally:
            with self._flight_lock:
                self._flight = None
            loop.close()
        self.outcome = error or "done"
        self.post_message(ConsoleRunEnded(run, error, time.monotonic() - started))

    async def _drive(self, run: int, probe: str, target: str, params: dict[str, str],
                     confirmed: str | None) -> None:
        workspace = self.fab.workspace
        targets = workspace.sweep_targets(probe, target or None)
        if targets is None:
            result = await workspace.run_probe(probe, target or None, params,
                                               confirmed=confirmed)
            self.post_message(ConsoleResult(run, result))
            return
        async for result in workspace.sweep(probe, targets, params, confirmed=confirmed,
                                            named=target):
            self.post_message(ConsoleResult(run, result))

    def _cancel(self) -> None:
        """Cancel the run in flight, if any (its targets still running are cancelled)."""
        with self._flight_lock:
            self._cancelled_run = self.run_no
            if self._flight is not None:
                loop, task = self._flight
                loop.call_soon_threadsafe(task.cancel)

    @on(ConsoleResult)
    def _arrived(self, message: ConsoleResult) -> None:
        if message.run != self.run_no:
            return
        result = message.result
        self.results.append(result)
        self.tally[result.verdict] += 1
        table = self.query_one("#console-results", SweepTable)
        table.add(SweepRow(result.target, result.verdict, sweep_why(result)))
        if len(self.results) == 2:
            table.display = True
        if self.shown is None:
            self._show(result)
            self._paint_status()
        elif self._status_timer is None:  # a sweep of thousands: the counts at most 10 times/s
            self._status_timer = self.set_timer(0.1, self._flush_status)

    def on_resize(self) -> None:
        self.call_after_refresh(self._paint_status)  # folded to the new width

    def _flush_status(self) -> None:
        self._status_timer = None
        self._paint_status()

    @on(ConsoleRunEnded)
    def _ended(self, message: ConsoleRunEnded) -> None:
        if message.run != self.run_no:
            return
        self.running = False
        if message.error:
            self.status_text = f"{self.probe} on {self.target or 'this machine'}: " \
                               f"{message.error}"
            if message.error != "cancelled":
                self.notify(message.error, title="console", severity="error")
                if not self.results:  # the status holds 3 lines: the error whole below
                    self.query_one("#console-body", VerticalScroll).mount(
                        Static(Text(f"not run: {message.error}"), classes="headline"))
        else:
            count = len(self.results)
            self.status_text = f"{self.probe} on {self.target or 'this machine'}: " \
                               f"{count} result{'s' if count != 1 else ''} in " \
                               f"{message.seconds:.1f}s"
        self._paint_status()

    @on(SweepTable.Highlighted, "#console-results")
    def _pick_result(self, message: SweepTable.Highlighted) -> None:
        index = message.index
        if 0 <= index < len(self.results) and self.results[index] is not self.shown:
            self._show(self.results[index])

    # drawing ------------------------------------------------------------------------------------
    def _badge(self, verdict: Verdict) -> Text:
        health = health_of(verdict)
        return Text(f"{glyph(health, self.fab.ascii_only)} {verdict.value}",
                    health_style(health, self.app.current_theme))

    def _paint_status(self) -> None:
        text = Text(self.status_text)
        counts = worst_first(self.tally)
        if counts:
            text.append("  ")
            for verdict, count in counts.items():
                text.append_text(self._badge(verdict))
                text.append(f" {count}  " if len(self.results) > 1 else "  ")
        status = self.query_one("#console-status", Static)
        # STATUS_LINES at most: what they cannot hold ends in `…` (was cropped unmarked)
        status.update(fold_text(text, status.content_size.width, STATUS_LINES,
                                self.app.console)[0])

    def _show(self, result: ProbeResult | None) -> None:
        """Draw `result` (None: nothing yet) in the body and the raw page."""
        self.shown = result
        body = self.query_one("#console-body", VerticalScroll)
        raw = self.query_one("#raw-text", Static)
        with self.app.batch_update():
            body.remove_children()
            if result is None:
                raw.update("no output yet")
                return
            widgets: list[Label | FitTable | BusbwPlot | Static] = []
            headline = Text()
            headline.append_text(self._badge(result.verdict))
            headline.append(f"  {result.probe} on {result.target}")
            if result.error:  # whole, every line: a sweep's row says only the first
                first, *rest = result.error.splitlines() or [""]
                headline.append(f"  {first}")
                for line in rest:
                    headline.append(f"\n    {line}")
            bad = sorted((m for m in result.metrics if m.verdict.rank > Verdict.OK.rank),
                         key=lambda m: -m.verdict.rank)
            for metric in bad[:PROBLEMS_SHOWN]:
                headline.append("\n")
                headline.append_text(self._badge(metric.verdict))
                headline.append(f"  {metric.component}  {metric.name} = "
                                f"{short_number(metric.value)}{metric.unit}")
            if len(bad) > PROBLEMS_SHOWN:
                headline.append(f"\n  … {len(bad) - PROBLEMS_SHOWN} more in the metrics table")
            widgets.append(Static(headline, classes="headline"))
            series = busbw_series(result)
            if series is not None:
                plot = BusbwPlot(ascii_only=self.fab.ascii_only, id="busbw-plot")
                plot.set_series(series)
                widgets.append(plot)
            definition = self.fab.workspace.catalog.get(result.probe)
            for table in result_tables(result, definition):
                widgets += self._table_widgets(table)
            body.mount_all(widgets)
            raw.update(self._raw_text(result))

    def _table_widgets(self, table: Table) -> list[Label | FitTable]:
        """A parser's table (or the metrics table): columns sized to the screen, values
        whole, text cut with `…` (`FitTable`)."""
        out: list[Label | FitTable] = [Label(line) for line in table.title]
        if table.columns:
            rows: list[list[FitCell]] = []
            for row in table.rows:
                cells: list[FitCell] = []
                for column, value in zip(table.columns, row, strict=True):
                    if column.name == "verdict" and isinstance(value, str) and \
                            value in Verdict._value2member_map_:
                        cells.append(self._badge(Verdict(value)))
                    else:
                        cells.append(cell_text(value))
                rows.append(cells)
            out.append(FitTable(table.columns, rows))
        out += [Label(line) for line in table.notes]
        return out

    @staticmethod
    def _raw_text(result: ProbeResult) -> str:
        parts = [f"$ {result.command}"]
        for number, raw in enumerate(result.raw, 1):
            if len(result.raw) > 1:
                parts.append(f"--- sample {number} ---")
            parts.append(raw.output)
            if raw.stderr:
                parts.append(f"--- stderr ---\n{raw.stderr}")
        if result.error:
            parts.append(f"error: {result.error}")
        return "\n".join(parts)

    # actions ------------------------------------------------------------------------------------
    def action_raw(self) -> None:
        self.toggle_class("raw")

    def action_focus_target(self) -> None:
        self.query_one("#probe-target", Input).focus()

    def action_back(self) -> None:
        if self.leave_input():
            return
        if self.has_class("raw"):
            self.remove_class("raw")
            return
        self.dismiss(None)
