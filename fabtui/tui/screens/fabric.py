"""The fabric screen: the live picture, the matrix, the detail panel, and the live poller.

The poller runs in a thread worker owned by this screen (cancelled when the screen goes); it
posts `SnapshotArrived`, and the screen applies each snapshot in one batch: the header, the
counts, the changed matrix lines, the detail panel. `space` pauses the view while snapshots
keep arriving (the latest is held and shown on resume). A failed round (the source raised) turns
the header red with the error and the next try, and is notified once per run of failures (and
again when it changes or the source answers again), paused or not.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal

from fabtui.errors import InputError, RequestError
from fabtui.model.element import ElementRef
from fabtui.tui.commands import FABRIC_COMMANDS, bindings
from fabtui.tui.glyphs import mark
from fabtui.tui.messages import OpenRunbook, ProbeFinished, SnapshotArrived
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.screens.demo import DemoRequest, DemoScreen
from fabtui.tui.screens.dialogs import Choose, Prompt, TextPage
from fabtui.tui.widgets.detail import DetailPanel, values_text
from fabtui.tui.widgets.footer import KeyFooter
from fabtui.tui.widgets.hanging import Hanging
from fabtui.tui.widgets.header import LayerCounts, StatusHeader, header_text
from fabtui.tui.widgets.matrix import FabricMatrix
from fabtui.views.fabricmap import (
    FilterError,
    ViewFilter,
    looks_like_filter,
    parse_filter,
    selection_elements,
)
from fabtui.views.poller import on_demand
from fabtui.views.status import EMPTY, FabricSnapshot, PollState

if TYPE_CHECKING:
    from fabtui.views.crosslinks import RunbookChoice


class FabricScreen(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = FABRIC_COMMANDS
    BINDINGS: ClassVar[list[BindingType]] = bindings(FABRIC_COMMANDS)
    DEFAULT_CSS = """
    FabricScreen #body { height: 1fr; }
    FabricScreen FabricMatrix { width: auto; }
    FabricScreen DetailPanel { width: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: FabricSnapshot = EMPTY
        self.paused = False
        self.held: FabricSnapshot | None = None
        self.held_count = 0
        self.selected: str | None = None
        self.found: str | None = None
        """The element found by name inside the selected cell (shown first)."""
        self._pending: FabricSnapshot | None = None
        """The newest snapshot from the poller not yet taken (see `_emit`)."""
        self._pending_lock = threading.Lock()
        self._failing: str | None = None
        """The poller's latest failure (set on its thread with `_pending`, so a failed round's
        snapshot replaced before it was taken is still told; None once a round ended well)."""
        self._failure: str | None = None
        """The failure last notified (None: the source answered since)."""
        self._notes_told: set[str] = set()
        """Poll notes already notified: the header's one line cuts a long one at 80 columns,
        so each is also told whole, once."""


    def compose(self) -> ComposeResult:
        app = self.fab
        yield StatusHeader(id="header")
        yield LayerCounts(ascii_only=app.ascii_only, id="counts")
        with Horizontal(id="body"):
            yield FabricMatrix(app.fabric, ascii_only=app.ascii_only, id="matrix")
            yield DetailPanel(app.fabric, app.graph, ascii_only=app.ascii_only, id="detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(FabricMatrix).focus()
        self.show_marks()
        if self.fab.view:
            self._set_filter(self.fab.view)
        self._paint()
        if self.fab.live:
            # Made here, on the app's thread, so that quitting at once still finds it to stop.
            poller = self.fab.make_poller(self._emit)
            self.run_worker(poller.run, thread=True, group="poll", exclusive=True,
                            exit_on_error=False, description="live poller")

    def on_unmount(self) -> None:
        self.fab.stop_poller()

    def _emit(self, snapshot: FabricSnapshot) -> None:
        """Called on the poller's thread: hand the snapshot over as a message. At most one is
        in the queue: a newer snapshot replaces the one not yet taken (so a slow frame never
        lets snapshots pile up in memory, and the view never shows an old one)."""
        with self._pending_lock:
            queued = self._pending is not None
            self._pending = snapshot
            if snapshot.poll is PollState.FAILED:
                self._failing = snapshot.failure or "unknown error"
            elif snapshot.poll is PollState.WAITING:
                self._failing = None
        if not queued:
            self.post_message(SnapshotArrived(snapshot))

    # live data ----------------------------------------------------------------------------------
    @on(SnapshotArrived)
    def _arrived(self, message: SnapshotArrived) -> None:
        with self._pending_lock:
            snapshot, self._pending = self._pending or message.snapshot, None
            failing = self._failing
        self._tell_failure(failing)
        self._tell_note(snapshot.note)
        if self.paused:
            self.held = snapshot
            self.held_count += 1
            self._paint_header()
            return
        self.apply(snapshot)

    def _tell_failure(self, failing: str | None) -> None:
        """Notify a failure of the poller's source (once, not on every retry of the same one;
        again when it changes) and its end."""
        if failing == self._failure:
            return
        if failing is not None:
            self.notify(f"source failed: {failing} (the poller tries again)",
                        title="live poller", severity="error", timeout=10)
        else:
            self.notify("the source answered again", title="live poller")
        self._failure = failing

    def _tell_note(self, note: str | None) -> None:
        """Notify a poll-wide note (a plan item that cannot run: an unknown probe, a set that
        matches nothing, a dangerous probe never polled) the first time it is seen."""
        if note and note not in self._notes_told:
            self._notes_told.add(note)
            self.notify(note, title="live poller", severity="warning", timeout=15)

    def apply(self, snapshot: FabricSnapshot) -> None:
        """Show `snapshot`: every part of the screen in one batch."""
        self.snapshot = snapshot
        with self.app.batch_update():
            self.query_one(FabricMatrix).set_snapshot(snapshot)
            self._paint()

    def _paint(self) -> None:
        self._paint_header()
        self.query_one(LayerCounts).show(self.snapshot)
        self.query_one(DetailPanel).show(self.selected, self.snapshot, self.found)

    def _paint_header(self) -> None:
        app = self.fab
        text = header_text(app.fabric.name, app.scenario(), self.snapshot, paused=self.paused,
                           held=self.held_count, now=app.clock())
        view = self.query_one(FabricMatrix).view
        if view.text:
            text += f" · filter {view.text}"
        if self.snapshot.note:
            text += f" · {self.snapshot.note}"
        if app.highlights.by_origin:
            text += f" · {mark(app.ascii_only)} {', '.join(app.highlights.by_origin)} (n: next)"
        header = self.query_one(StatusHeader)
        header.set_class(self.snapshot.poll is PollState.FAILED and not self.paused, "-failed")
        header.update(text)

    @on(FabricMatrix.Selected)
    def _selected(self, message: FabricMatrix.Selected) -> None:
        self.selected = message.key
        self.found = message.focus
        self.query_one(DetailPanel).show(message.key, self.snapshot, message.focus)

    # actions ------------------------------------------------------------------------------------
    def action_pause(self) -> None:
        self.paused = not self.paused
        if not self.paused:
            held, self.held, self.held_count = self.held, None, 0
            if held is not None:
                self.apply(held)
                return
        self._paint_header()

    def action_poll_now(self) -> None:
        self.fab.poll_now()

    def action_back(self) -> None:
        matrix = self.query_one(FabricMatrix)
        if matrix.view.text:
            matrix.set_view(ViewFilter())
            self._paint_header()
        elif self.fab.highlights.by_origin:
            self.fab.highlights.clear()
            self.show_marks()

    # what other views marked (Highlight) ---------------------------------------------------------
    def show_marks(self) -> None:
        """Draw the app's highlights in the matrix, the detail panel and the header."""
        highlights = self.fab.highlights
        self.query_one(FabricMatrix).set_marks(highlights.cells(self.fab.fabric))
        self.query_one(DetailPanel).set_marks(highlights.elements(), highlights.version)
        self._paint_header()

    def on_screen_resume(self) -> None:
        self.show_marks()

    def select_element(self, key: str) -> bool:
        """Select element `key` (clearing a filter that hides it), as `/` does."""
        matrix = self.query_one(FabricMatrix)
        return matrix.select_key(key) or bool(matrix.view.text and self._unfilter(key))

    def action_next_mark(self, step: int = 1) -> None:
        if self.query_one(FabricMatrix).jump_mark(step) is None:
            self.notify("nothing marked here (a triage or a session marks its elements)",
                        title="marks", severity="warning")

    def action_runbooks(self) -> None:
        """The runbooks for the selected element's findings; the one chosen is opened with the
        element filled in (`OpenRunbook`)."""
        from fabtui.tui.screens.runbook_choice import RunbookChoiceScreen
        from fabtui.views.crosslinks import runbooks_for, with_members

        key = self.selected
        if key is None:
            return
        elements = with_members(self.fab.fabric, self._elements(key, self.found))
        found, choices = runbooks_for(self.fab.workspace.library, self.fab.fabric,
                                      self.snapshot.states, elements)
        element = found or self._element(key)
        if not choices:
            said = "no runbook's symptoms match its findings" if found else \
                "no findings, so no runbook for them"
            self.notify(f"{self.fab.fabric.label(element)}: {said}", title="runbooks",
                        severity="warning")
            return
        self.app.push_screen(RunbookChoiceScreen(self.fab.fabric.label(element), choices),
                             self._open_runbook)

    def _open_runbook(self, choice: RunbookChoice | None) -> None:
        if choice is not None:
            self.post_message(OpenRunbook(choice.runbook, choice.inputs, choice.why))

    def action_filter(self) -> None:
        current = self.query_one(FabricMatrix).view.text
        self.app.push_screen(Prompt("filter", "rail:N · leaf:NAME · node[001-004] · node00* · "
                                    "job · empty: everything", current), self._set_filter)

    def _set_filter(self, text: str | None) -> None:
        if text is None:
            return
        try:
            view = parse_filter(self.fab.fabric, self.fab.graph, text)
        except FilterError as exc:
            self.notify(str(exc), title="filter", severity="error")
            return
        self.query_one(FabricMatrix).set_view(view)
        self._paint_header()

    def action_find(self) -> None:
        self.app.push_screen(Prompt("find or filter", "a node, NIC, GPU, switch, port, optic or "
                                    "link; or a filter: rail:N · leaf:NAME · node[001-004] · "
                                    "node00* · job"), self._find)

    def _find(self, text: str | None) -> None:
        """`/`: a filter when `text` is written as one (`rail:4`, `node00*`), else a find:
        one match is selected, several are all listed to choose from (`mlx5_4` names a NIC
        on each node: none is picked silently)."""
        if not text or not text.strip():
            return
        text = text.strip()
        if looks_like_filter(text):
            self._set_filter(text)
            return
        matrix = self.query_one(FabricMatrix)
        fabric = self.fab.fabric
        found = fabric.find(text)
        if len(found) > 1:
            self.app.push_screen(Choose(f"{len(found)} matches for {text!r}", [
                (key, f"{fabric.label(key)}  ({fabric.kinds[key].value})") for key in found]),
                self._found)
            return
        for key in found:
            if matrix.select_key(key) or (matrix.view.text and self._unfilter(key)):
                return
        self.notify(f"nothing called {text!r} here", title="find", severity="warning")

    def _found(self, key: str | None) -> None:
        if key is not None and not self.select_element(key):
            self.notify(f"{key} is not drawn here", title="find", severity="warning")

    def _unfilter(self, key: str) -> bool:
        matrix = self.query_one(FabricMatrix)
        matrix.set_view(ViewFilter())
        self._paint_header()
        return matrix.select_key(key)

    def _elements(self, key: str, focus: str | None = None) -> list[str]:
        """What selection `key` stands for, as the detail panel lists it: a host cell's worst
        plane first (the one a probe, a runbook or the demo's fault then acts on)."""
        snapshot = self.snapshot
        return selection_elements(self.fab.fabric, key, focus,
                                  lambda element: snapshot.of(element).rank)

    def _element(self, key: str) -> str:
        """The element a selection acts on: the one found by name, else the first that is not
        a cable (a host cell's NIC)."""
        elements = self._elements(key, self.found)
        if self.found in elements:
            return elements[0]
        return next((e for e in elements if not ElementRef.parse(e).is_link), elements[0])

    def action_show_error(self) -> None:
        key = self.selected
        if key is None:
            return
        from fabtui.views.crosslinks import with_members

        text = Text()
        # a node's ✗ is its NIC's finding: what rolls up into the selection is shown too
        for element in with_members(self.fab.fabric, self._elements(key)):
            state = self.snapshot.states.get(element)
            if state is None:
                continue
            for reading in state.readings.values():
                if reading.error:
                    text.append(f"{element}: {reading.probe}: ", "bold")
                    text.append(f"{reading.error}\n")
            for finding in state.findings:
                text.append(f"{element}: {finding.probe}: {finding.line}\n")
        # every value of what the detail panel shows (it lists the first few, names cut to fit)
        for element in self._elements(key):
            state = self.snapshot.states.get(element)
            if state is not None and state.values:
                text.append(f"\n{element}: values\n", "bold")
                text.append_text(values_text(state))
        # a long line wraps under itself, never back to the page's first column
        self.app.push_screen(TextPage(f"errors, findings, values · {self.fab.fabric.label(key)}",
                                      Hanging(text) if text else
                                      "no errors, no findings, no values"))

    def action_probe_now(self) -> None:
        key = self.query_one(FabricMatrix).selected_key
        if key is None:
            return
        element = self._element(key)
        request = on_demand(self.fab.fabric, element)
        if request is None:
            self.notify(f"no probe for {element}", severity="warning")
            return
        self.notify(f"{request[0]} on {request[1]} …", title="probe")
        self._probe(element, *request)

    @work(thread=True, group="probe", exclusive=True, exit_on_error=False,
          description="probe on demand")
    def _probe(self, key: str, probe: str, target: str) -> None:
        try:
            result = asyncio.run(self.fab.workspace.run_probe(probe, target, {}))
        except (RequestError, InputError) as exc:
            self.post_message(ProbeFinished(key, None, str(exc)))
            return
        self.fab.status.apply(result, 2 * self.fab.interval)
        self.post_message(ProbeFinished(key, result, None))

    @on(ProbeFinished)
    def _probed(self, message: ProbeFinished) -> None:
        if message.result is None:
            self.notify(message.error or "failed", title="probe", severity="error")
            return
        result = message.result
        self.notify(f"{result.probe} on {result.target}: {result.verdict.value}"
                    f"{' - ' + result.error if result.error else ''}", title="probe")
        shown = self.snapshot
        self.apply(self.fab.status.snapshot(shown.round, shown.poll, shown.round_s, shown.note,
                                            failure=shown.failure, retry_s=shown.retry_s))

    def action_console(self) -> None:
        """The probe console, on the selected element's probe and target when it has one."""
        from fabtui.tui.screens.probes import ProbeConsole

        key = self.query_one(FabricMatrix).selected_key
        request = on_demand(self.fab.fabric, self._element(key)) if key else None
        self.app.push_screen(ProbeConsole(*request) if request else ProbeConsole())

    def action_demo(self) -> None:
        app = self.fab
        if not app.workspace.simulated():
            self.notify("this is a real fabric: the demo screen drives the simulated one",
                        severity="warning")
            return
        from fabtui.workspace import simfabric

        component = self._element(self.selected) if self.selected else ""
        self.app.push_screen(DemoScreen(simfabric.scenario_list(), simfabric.fault_kinds(),
                                        app.scenario(), component), self._demo)

    def _demo(self, request: DemoRequest | None) -> None:
        if request is not None:
            self._demo_do(request)

    @work(thread=True, group="demo", exclusive=True, exit_on_error=False,
          description="demo fabric change")
    def _demo_do(self, request: DemoRequest) -> None:
        from fabtui.durations import parse_duration
        from fabtui.workspace import simfabric

        app = self.fab
        try:
            if request.play:
                app.workspace.settings = simfabric.play(app.workspace.settings, request.play)
                said = f"playing {request.play}"
            elif request.fault and request.component:
                length = float(parse_duration(request.length)) if request.length else None
                said = simfabric.inject(app.workspace.settings, request.fault,
                                        request.component.strip(), length_s=length)
            else:
                said = "nothing to do: choose a fault and a component"
        except (RequestError, InputError, ValueError) as exc:
            self.app.call_from_thread(self.notify, str(exc).splitlines()[0], title="demo",
                                      severity="error")
            return
        self.app.call_from_thread(self.notify, said, title="demo")
        app.poll_now()
