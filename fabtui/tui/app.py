"""`FabtuiApp`: the Textual app on one workspace — bindings, screens and the live poller's
lifecycle only; what the fabric looks like comes from `fabtui.views.status`.

Tests and benchmarks build it with `live=False` (no poller) and post snapshots themselves, or
hand it any `StatusSource`; `clock` is injectable so ages and staleness are deterministic.

No worker fails silently: workers run with `exit_on_error=False` and any that raises is
notified by `handle_worker_error` (screens forward theirs: `fabtui.tui.workers`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import App
from textual.binding import BindingType
from textual.command import Provider
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from fabtui.model.triage import TriageReport
from fabtui.tui.commands import (
    APP_COMMANDS,
    GLYPH_LINES,
    REMAP_HINT,
    VIEW_TABLES,
    FabtuiCommands,
    bindings,
    help_sections,
)
from fabtui.tui.messages import Highlight, OpenCase, OpenRunbook, OpenSession
from fabtui.tui.palette import SymptomFinder
from fabtui.tui.screens.cases import CasesScreen
from fabtui.tui.screens.dialogs import TextPage
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.screens.runbooks import RunbooksScreen
from fabtui.tui.screens.triage import TriageScreen
from fabtui.tui.workers import worker_failure
from fabtui.views.crosslinks import Highlights
from fabtui.views.fabricmap import FabricMap
from fabtui.views.poller import DEFAULT_PLAN, PlanItem, Poller
from fabtui.views.status import FabricSnapshot, FabricStatus
from fabtui.views.updates import StatusSource
from fabtui.workspace import Workspace
from fabtui.workspace.probesource import ProbeSource


class FabtuiApp(App[None]):
    """See the module docstring."""

    TITLE = "fabtui"
    CSS_PATH = Path(__file__).with_name("app.tcss")
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {
        FabtuiCommands, SymptomFinder}
    BINDINGS: ClassVar[list[BindingType]] = bindings(APP_COMMANDS)
    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        "fabric": FabricScreen, "runbooks": RunbooksScreen, "cases": CasesScreen,
        "triage": TriageScreen}
    """One screen stack per top-level view; `1`.. switch between them (each keeps its state)."""
    DEFAULT_MODE = "fabric"

    def __init__(self, workspace: Workspace, *, live: bool = True, ascii_only: bool = False,
                 source: StatusSource | None = None, interval: float | None = None,
                 clock: Callable[[], float] = time.time,
                 triage: tuple[tuple[Path, ...], TriageReport | None] | None = None,
                 view: str = "") -> None:
        super().__init__()
        self.workspace = workspace
        self.view = view
        """The Fabric screen's first filter (`job` under `fabtui tui --job`)."""
        self.live = live
        self.ascii_only = ascii_only
        self.clock = clock
        self.interval = interval or workspace.settings.poll_interval
        self.graph = workspace.graph()
        self.fabric = FabricMap.build(self.graph)
        self.status = FabricStatus(self.fabric, clock)
        self.source = source
        self.poller: Poller | None = None
        self._scenario: tuple[float, str | None] = (-1e9, None)
        self._heap_settled = False
        self.highlights = Highlights()
        """What other views marked on the Fabric screen (`Highlight` messages)."""
        self.triage_start = triage
        """Logs to open the Triage screen on (and their report, when already triaged)."""

    # the poller (run by the fabric screen's worker) ---------------------------------------------
    def make_poller(self, emit: Callable[[FabricSnapshot], None]) -> Poller:
        """A poller over the configured plan (or the source given), emitting to `emit`."""
        source = self.source
        if source is None:
            from fabtui.workspace.promsource import live_source

            source = self.source = live_source(self.workspace)
        if source is None:
            plan = self.workspace.settings.poll or DEFAULT_PLAN
            source = ProbeSource(self.workspace, [PlanItem.parse(p) for p in plan],
                                 self.interval)
        self.stop_poller()  # one poller at a time: a second screen replaces the first's
        self.poller = Poller(source, self.status, self.interval, emit)
        return self.poller

    def settle_heap(self) -> None:
        """Once the case library is loaded (its cases, index and listing in memory), move
        everything alive to the collector's permanent generation: with 10,000 cases each full
        collection walked millions of long-lived objects, a pause that fell on a keystroke now
        and then. Process-wide, so the app (not a screen) owns it; only the first call acts."""
        if not self._heap_settled:
            self._heap_settled = True
            gc.collect()
            gc.freeze()

    def stop_poller(self) -> None:
        if self.poller is not None:
            self.poller.cancel()

    def poll_now(self) -> None:
        if self.poller is not None:
            self.poller.poll_now()

    def scenario(self) -> str | None:
        """The scenario the demo fabric plays (read from its state file at most every 2 s once
        known; until then on every call, as the first poll starts the fabric after the first
        frame and a cached "none" would hide the scenario from the header for 2 s)."""
        at, name = self._scenario
        now = time.monotonic()
        if name is None or now - at > 2:
            from fabtui.workspace.simfabric import playing

            name = playing(self.workspace.settings)
            self._scenario = (now, name)
        return name

    # app ----------------------------------------------------------------------------------------
    def on_mount(self) -> None:
        keymap = dict(self.workspace.settings.keymap)
        if keymap:
            self.set_keymap(keymap)
        if self.triage_start is not None:
            self.switch_mode("triage")

    # links between the views --------------------------------------------------------------------
    def on_highlight(self, message: Highlight) -> None:
        """Keep what a view marked; the Fabric screen shows it now or when next shown."""
        self.highlights.set(message.origin, sorted(message.keys), message.why)
        if isinstance(self.screen, FabricScreen):
            self.screen.show_marks()

    @property
    def closing(self) -> bool:
        """Whether the app is shutting down (quit, or a test's app leaving its `run_test`)."""
        return not self._running

    async def _show_mode(self, mode: str) -> bool:
        """Switch to `mode`'s view; False, doing nothing, once the app is closing.

        A message that opens a view (`OpenCase` after `f` files a case, `OpenRunbook` from a
        hand-over) can still be queued when the app is told to quit, and is then handled while
        Textual closes the views' screen stacks one by one. Switching to a mode not shown yet
        adds a stack to the dict it iterates, and the quit ended in `RuntimeError: dictionary
        changed size during iteration` (seen as a flaky app test under load)."""
        if self.closing:
            return False
        await self.switch_mode(mode)
        return True

    def show_on_fabric(self, key: str, *instead: str) -> None:
        """Switch to the Fabric screen with element `key` selected (else the first of
        `instead` the screen shows: an uplink port's leaf)."""
        if self.closing:
            return
        self.switch_mode("fabric")
        self.call_after_refresh(self._select_on_fabric, key, *instead)

    def _select_on_fabric(self, key: str, *instead: str) -> None:
        if isinstance(self.screen, FabricScreen):
            for each in (key, *instead):
                if self.screen.select_element(each):
                    return

    def on_unmount(self) -> None:
        self.stop_poller()

    @on(Worker.StateChanged)
    def handle_worker_error(self, event: Worker.StateChanged) -> None:
        """A worker that raised (the app's own, or a screen's, forwarded): say which and what,
        in one line; the app goes on (every worker runs with `exit_on_error=False`)."""
        if event.state is WorkerState.ERROR:
            self.notify(worker_failure(event.worker), title="error", severity="error",
                        timeout=15)

    def exit(self, *args: Any, **kwargs: Any) -> None:
        """Quit: the poller's thread is told first (the interpreter waits for it to end)."""
        self.stop_poller()
        super().exit(*args, **kwargs)

    def action_help(self) -> None:
        """The keys under headings: the current screen's first ("This view: Fabric"), then
        those that work everywhere, then every other screen's (a narrow footer's `? more`
        lands here)."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        keys = dict(self.workspace.settings.keymap)
        here = tuple(getattr(self.screen, "COMMANDS_TABLE", ()))
        name = next((n for n, table in VIEW_TABLES if table == here), "")
        parts: list[Text | Table] = [Text(REMAP_HINT, style="dim")]
        for heading, rows in help_sections(here, keys, name):
            parts.append(Text(f"\n{heading}", style="bold underline"))
            grid = Table.grid(padding=(0, 1))
            grid.add_column(width=12, no_wrap=True, style="bold")
            grid.add_column(width=9, no_wrap=True, overflow="ellipsis")
            grid.add_column(ratio=1)  # a long help wraps under itself, not at column 0
            for key, label, about in rows:
                grid.add_row(Text(key), Text(label), Text(about))
            parts.append(grid)
        parts.append(Text("\n" + "\n".join(GLYPH_LINES)))
        self.push_screen(TextPage(f"help · {name or 'keys'}", Group(*parts)))

    async def on_open_case(self, message: OpenCase) -> None:
        """Show the case on the Cases screen (its editor when `edit`), from any screen."""
        if not await self._show_mode("cases"):
            return
        cases = self.screen_stack[0]
        assert isinstance(cases, CasesScreen)
        cases.open_case(message.case_id, edit=message.edit)

    async def _runbooks_screen(self) -> RunbooksScreen | None:
        """The Runbooks mode shown, and its library screen (the bottom of its stack); None
        once the app is closing."""
        if not await self._show_mode("runbooks"):
            return None
        screen = self.screen_stack[0]
        assert isinstance(screen, RunbooksScreen)
        return screen

    async def on_open_runbook(self, message: OpenRunbook) -> None:
        """Open the runbook's guided session, inputs pre-filled, in the Runbooks mode (Esc in
        the session comes back to the view it was opened from)."""
        origin = self.current_mode
        screen = await self._runbooks_screen()
        if screen is not None:
            screen.open_runbook(message.runbook, message.inputs, message.why, origin=origin,
                                from_session=message.from_session)

    async def on_open_session(self, message: OpenSession) -> None:
        """Show a recorded session in the Runbooks mode (Esc: back to the view it came from)."""
        origin = self.current_mode
        screen = await self._runbooks_screen()
        if screen is not None:
            screen.show_session(message.session, origin=origin)

    def action_report(self) -> None:
        """Build the newest session's report in a worker and say where it was written."""
        self.run_worker(self._write_report, thread=True, exclusive=True, group="report",
                        exit_on_error=False, description="session report")

    def _write_report(self) -> None:
        from fabtui.errors import RequestError
        from fabtui.workspace import reporting

        try:
            path = reporting.write_newest(self.workspace)
        except RequestError as exc:
            self.call_from_thread(self.notify, str(exc), title="report", severity="error")
            return
        self.call_from_thread(self.notify, f"wrote {path}", title="report")

    def action_incidents(self) -> None:
        """`A`: the open incidents from Alertmanager, on top of the current view."""
        from fabtui.tui.screens.incidents import IncidentsScreen

        if not isinstance(self.screen, IncidentsScreen):
            self.push_screen(IncidentsScreen())

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"


def run_app(workspace: Workspace, *, ascii_only: bool = False,
            triage: tuple[tuple[Path, ...], TriageReport | None] | None = None,
            view: str = "", source: StatusSource | None = None) -> None:
    """Open the app on `workspace` in this terminal until the user quits (on the Triage screen
    of `triage`'s logs when given, showing its report when one is given; `view`: the Fabric
    screen's first filter; the live view reads `source`, by default what the settings choose)."""
    FabtuiApp(workspace, ascii_only=ascii_only, triage=triage, view=view, source=source).run()
