"""Memory of the app on a 1,024-node x 8-rail fabric polled every second: flat is the goal.

The fabric is `fabtui topo generate rail-optimized --param nodes=1024` with `simulate = true`.
Each poll cycle goes through the real thing: the app's `Poller` on its worker thread, a
`StatusSource` measuring every NIC and every leaf port (5 % of them change verdict and
counters each cycle, as a storm spreading and healing would), the snapshot posted as a message,
the fabric screen applying it, the frame drawn, and a cursor key pressed. Time is simulated:
the clock the app reads advances one second per cycle, so 600 cycles are ten minutes of
polling at 1 Hz (ages, staleness and sparkline histories all see ten minutes).

The status model (`FabricStatus`, what the poller feeds and the screen draws from) is run
headless for the 600 cycles (~0.7 s of CPU a cycle: 1,280 results, ~49,000 element updates),
and the whole app for fewer (`--app-cycles`, 120: each of its cycles also drives Textual, and
600 took over 25 minutes on the shared machine).
Printed at the start, after 60, 300 and 600 cycles: RSS, the interpreter's allocated blocks
and the objects the garbage collector tracks (both free to read, so the run is not slowed),
with `--trace` the Python heap traced by tracemalloc too, and the growth since the start
(after 60 cycles every history is full: from there on it must not grow); beside them a
reference measured in the same run, a bare Textual app doing the same number of refreshes (a
Line-API view repainting the same share of 1,024 lines per cycle), so Textual's own drift is
told from the app's. Frame
update (<= 50 ms) and key press (<= 100 ms) figures are printed too (`benchmarks/tui_scale.py`
has them beside a DataTable reference). `--top N` (implies `--trace`) lists the N allocation
sites that grew most after the first checkpoint (what to look at when the growth is not
flat). Prints figures; never fails.

    python benchmarks/tui_memory.py                 # the model 600 cycles, the app 120
    python benchmarks/tui_memory.py --app-cycles 600  # the whole app for all 600 (slow)
    python benchmarks/tui_memory.py --smoke         # 30 cycles of the model, 10 of the app (CI)
    python benchmarks/tui_memory.py --minutes 10    # real time: one poll a second, untraced
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import AsyncGenerator, Callable
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.tui_scale import FRAME_GOAL_MS, KEY_GOAL_MS, SIZE, generate, rss_mb  # noqa: E402
from fabtui.config import load_settings  # noqa: E402
from fabtui.model.probe import ProbeResult  # noqa: E402
from fabtui.model.verdict import Verdict  # noqa: E402
from fabtui.views.fabricmap import FabricMap, HostCell  # noqa: E402
from fabtui.views.updates import Results, StatusUpdate  # noqa: E402
from fabtui.workspace import Workspace  # noqa: E402
from tests.support.tui_support import result  # noqa: E402

CHECKPOINTS = (60, 300, 600)
START = 1_790_000_000.0


class SimClock:
    """Seconds that advance only when told (thread-safe: the poller reads it too)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class SyntheticSource:
    """Every NIC and every leaf port measured each poll (one result per node, as
    `nic.ethtool@node*:*` summed per host, and one per leaf, as `switch.pfc@leaf*`); 5 % of
    the host cells change verdict and counters per poll.

    With `gate`, each poll waits for the benchmark to release it (one cycle per release) and
    advances the clock by one second; without, it runs freely (real time)."""

    def __init__(self, fabric: FabricMap, clock: Callable[[], float],
                 gate: threading.Semaphore | None, advance: Callable[[], None]) -> None:
        self.cells = list(fabric.attachments())
        self.by_node: dict[str, list[HostCell]] = {}
        self.by_leaf: dict[str, list[HostCell]] = {}
        for cell in self.cells:
            self.by_node.setdefault(cell.node, []).append(cell)
            if cell.leaf:
                self.by_leaf.setdefault(cell.leaf, []).append(cell)
        self.clock = clock
        self.gate = gate
        self.advance = advance
        self.rng = random.Random(7)
        self.state: dict[str, tuple[Verdict, float]] = {}
        self.notes: list[str] = []
        self.stopped = threading.Event()
        self.built: dict[str, tuple[tuple[tuple[Verdict, float], ...], ProbeResult]] = {}
        for cell in self.cells:  # stationary from the first poll: the storm has spread already
            self._draw(cell)

    async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
        if self.gate is not None:
            while not self.gate.acquire(timeout=0.05):
                if self.stopped.is_set():  # the app is closing: its poller waits for this
                    return
                await asyncio.sleep(0)
        self.advance()
        for cell in self.rng.sample(self.cells, len(self.cells) // 20):
            self._draw(cell)
        at = self.clock()
        for node, cells in self.by_node.items():
            yield Results(self._result("nic.ethtool", node, "rate.tx_prio3_pause",
                                       [(c.nic, c.nic) for c in cells], at), 2.5)
        for leaf, cells in self.by_leaf.items():
            yield Results(self._result("switch.pfc", leaf, "rate.rx.PFC3",
                                       [(str(c.port), c.nic) for c in cells], at), 2.5)

    def _draw(self, cell: HostCell) -> None:
        verdict = self.rng.choice((Verdict.OK, Verdict.OK, Verdict.WARN, Verdict.FAIL))
        self.state[cell.nic] = (verdict, self.rng.uniform(0, 5000))

    def _result(self, probe: str, target: str, metric: str, parts: list[tuple[str, str]],
                at: float) -> ProbeResult:
        """A new result each poll: built anew when a verdict in it changed, else a copy of the
        last one with this poll's time (cheaper; the app gets a new object either way)."""
        ok = (Verdict.OK, 0.0)
        values = tuple(self.state.get(nic, ok) for _, nic in parts)
        cached = self.built.get(target)
        if cached is not None and cached[0] == values:
            when = datetime.fromtimestamp(at, UTC)
            return cached[1].model_copy(update={"started_at": when, "ended_at": when})
        built = result(probe, target, [(component, metric, pauses, verdict)
                                       for (component, _), (verdict, pauses)
                                       in zip(parts, values, strict=True)], at=at)
        self.built[target] = (values, built)
        return built


@dataclasses.dataclass
class Memory:
    """RSS and traced heap (MB) at each checkpoint."""

    cycles: list[int] = dataclasses.field(default_factory=list)
    rss: list[float] = dataclasses.field(default_factory=list)
    blocks: list[float] = dataclasses.field(default_factory=list)
    """Thousands of memory blocks the interpreter has allocated (`sys.getallocatedblocks`)."""
    objects: list[float] = dataclasses.field(default_factory=list)
    """Thousands of objects the garbage collector tracks."""
    heap: list[float] = dataclasses.field(default_factory=list)

    def take(self, cycle: int) -> None:
        gc.collect()
        self.cycles.append(cycle)
        self.rss.append(rss_mb())
        self.blocks.append(sys.getallocatedblocks() / 1000)
        self.objects.append(len(gc.get_objects()) / 1000)
        self.heap.append(tracemalloc.get_traced_memory()[0] / 2**20
                         if tracemalloc.is_tracing() else float("nan"))


async def measure_app(topology: Path, cycles: int, checkpoints: list[int],
                      top: int) -> tuple[Memory, list[float], list[float], list[float]]:
    from fabtui.tui.app import FabtuiApp

    settings = dataclasses.replace(load_settings(), topology=topology, simulated=True,
                                   topology_is_default=False, scenario="healthy")
    clock = SimClock(START)
    gate = threading.Semaphore(0)
    ws = Workspace(settings)
    app = FabtuiApp(ws, source=None, interval=0.001, clock=clock)

    def advance() -> None:
        clock.now += 1.0

    source = SyntheticSource(app.fabric, clock, gate, advance)
    app.source = source
    memory = Memory()
    cycle_s: list[float] = []
    frames: list[float] = []
    keys: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        applied = [0.0]
        apply = screen.apply  # type: ignore[attr-defined]

        def timed_apply(snapshot: object) -> None:
            applied[0] = time.perf_counter()
            apply(snapshot)

        screen.apply = timed_apply  # type: ignore[attr-defined]
        await pilot.pause()
        memory.take(0)
        first = None
        for n in range(1, cycles + 1):
            start = time.perf_counter()
            gate.release()
            while screen.snapshot.round < n:  # type: ignore[attr-defined]
                await asyncio.sleep(0.001)
            await pilot.pause()
            end = time.perf_counter()
            cycle_s.append(end - start)
            frames.append(end - applied[0])
            start = time.perf_counter()
            await pilot.press("down" if n % 40 < 20 else "up")
            await pilot.pause()
            keys.append(time.perf_counter() - start)
            if n in checkpoints:
                memory.take(n)
                print(f"  cycle {n}: RSS {memory.rss[-1]:.1f} MB, {memory.blocks[-1]:.1f}k "
                      "blocks", file=sys.stderr, flush=True)  # a long run shows it is alive
                if top and first is None:  # the baseline: once every history is full
                    first = tracemalloc.take_snapshot()
        source.stopped.set()
        if first is not None:
            gc.collect()
            for stat in tracemalloc.take_snapshot().compare_to(first, "lineno")[:top]:
                print(f"  {stat}")
    return memory, cycle_s, frames, keys


async def measure_model(topology: Path, cycles: int, checkpoints: list[int]) -> tuple[
        Memory, list[float]]:
    """The live view's status model alone, headless: each cycle the synthetic source's poll is
    taken into `FabricStatus` and frozen into a snapshot (what the app's poller does on its
    worker thread, and all the app keeps of a poll), the last snapshot held as the screen
    holds it. No Textual: what grows here is the model's; the app's run adds the screen's."""
    from fabtui.views.status import FabricStatus, PollState

    settings = dataclasses.replace(load_settings(), topology=topology, simulated=True,
                                   topology_is_default=False, scenario="healthy")
    clock = SimClock(START)
    fabric = FabricMap.build(Workspace(settings).graph())
    status = FabricStatus(fabric, clock)

    def advance() -> None:
        clock.now += 1.0

    source = SyntheticSource(fabric, clock, None, advance)
    memory = Memory()
    cycle_s: list[float] = []
    held = status.snapshot(0, PollState.WAITING)
    memory.take(0)
    for n in range(1, cycles + 1):
        start = time.perf_counter()
        async for update in source.poll():
            status.take(update)
        held = status.snapshot(n, PollState.WAITING, 0.01)
        cycle_s.append(time.perf_counter() - start)
        if n in checkpoints:
            memory.take(n)
            print(f"  model cycle {n}: RSS {memory.rss[-1]:.1f} MB", file=sys.stderr, flush=True)
    del held
    return memory, cycle_s


async def measure_reference(cycles: int, checkpoints: list[int]) -> Memory:
    """A bare Textual app: a Line-API view of 1,024 lines, 5 % of them repainted per cycle."""
    from rich.segment import Segment
    from textual.app import App, ComposeResult
    from textual.geometry import Size
    from textual.scroll_view import ScrollView
    from textual.strip import Strip

    class Lines(ScrollView):
        def __init__(self) -> None:
            super().__init__()
            self.values = ["✓" * 8] * 1024
            self.virtual_size = Size(40, 1024)

        def render_line(self, y: int) -> Strip:
            index = y + self.scroll_offset.y
            if index >= len(self.values):
                return Strip.blank(self.size.width)
            return Strip([Segment(f"node{index:04d} {self.values[index]}")])

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Lines()

    app = Bare()
    rng = random.Random(7)
    memory = Memory()
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(Lines)
        await pilot.pause()
        memory.take(0)
        for n in range(1, cycles + 1):
            for index in rng.sample(range(1024), 1024 // 20):
                view.values[index] = "".join(rng.choice("✓!✗") for _ in range(8))
                view.refresh_line(index)
            await pilot.pause()
            await pilot.press("down")
            await pilot.pause()
            if n in checkpoints:
                memory.take(n)
    return memory


async def real_time(topology: Path, minutes: float) -> None:
    """The app with the synthetic source polled once a second on the wall clock."""
    from fabtui.tui.app import FabtuiApp

    settings = dataclasses.replace(load_settings(), topology=topology, simulated=True,
                                   topology_is_default=False, scenario="healthy")
    app = FabtuiApp(Workspace(settings), interval=1.0)
    app.source = SyntheticSource(app.fabric, time.time, None, lambda: None)
    started = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.pause(2)
        gc.collect()
        base, blocks = rss_mb(), sys.getallocatedblocks() / 1000
        print(f"{'minute':>6}{'polls':>7}{'RSS MB':>9}{'growth':>9}{'blocks k':>10}{'growth':>9}")
        print(f"{0:>6}{screen.snapshot.round:>7}{base:>9.1f}{0:>+9.1f}"  # type: ignore[attr-defined]
              f"{blocks:>10.1f}{0:>+9.1f}")
        for minute in range(1, int(minutes) + 1):
            while time.monotonic() - started < 60 * minute:
                await pilot.pause(0.5)
                await pilot.press("down" if int(time.monotonic()) % 40 < 20 else "up")
            gc.collect()
            now, held = rss_mb(), sys.getallocatedblocks() / 1000
            print(f"{minute:>6}{screen.snapshot.round:>7}{now:>9.1f}"  # type: ignore[attr-defined]
                  f"{now - base:>+9.1f}{held:>10.1f}{held - blocks:>+9.1f}")


def row(label: str, memory: Memory, field: str) -> str:
    values: list[float] = getattr(memory, field)
    cells = "".join(f"{v:>9.1f}" for v in values)
    return f"{label:<44}{cells}{values[-1] - values[0]:>+10.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="30 cycles of the model, 10 of the app (CI)")
    parser.add_argument("--cycles", type=int, default=600,
                        help="cycles of the status model, headless (default 600)")
    parser.add_argument("--app-cycles", type=int, default=APP_CYCLES,
                        help=f"cycles of the whole app (default {APP_CYCLES}; 0: none)")
    parser.add_argument("--minutes", type=float, help="real time instead: one poll a second")
    parser.add_argument("--trace", action="store_true", help="trace the heap (slower)")
    parser.add_argument("--top", type=int, default=0,
                        help="list the allocation sites that grew most (in the app's run)")
    args = parser.parse_args()
    cycles, app_cycles = (30, 10) if args.smoke else (args.cycles, args.app_cycles)
    with tempfile.TemporaryDirectory(prefix="fabtui-tui-memory-") as tmp:
        os.environ.update(HOME=tmp, XDG_DATA_HOME=str(Path(tmp) / "data"),
                          XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        os.environ.pop("FABTUI_CONFIG", None)
        topology = generate(Path(tmp))
        if args.minutes:
            asyncio.run(real_time(topology, args.minutes))
            return
        if args.trace or args.top:
            tracemalloc.start()
        start = time.perf_counter()
        model, model_s = asyncio.run(measure_model(topology, cycles, _marks(cycles, args.smoke)))
        model_total = time.perf_counter() - start
        if app_cycles:
            marks = _marks(app_cycles, args.smoke)
            start = time.perf_counter()
            memory, cycle_s, frames, keys = asyncio.run(measure_app(topology, app_cycles, marks,
                                                                    args.top))
            total = time.perf_counter() - start
            reference = asyncio.run(measure_reference(app_cycles, marks))
        tracemalloc.stop()
    traced = args.trace or args.top
    print(f"{os.cpu_count()} CPUs; 1,024 nodes x 8 rails; poll cycles at 1 Hz of simulated time; "
          f"the status model headless, {cycles} cycles in {model_total:.1f} s (median "
          f"{statistics.median(model_s) * 1000:.0f} ms a cycle)")
    _table("status model, headless: after N cycles", model, None, traced)
    _flat(model, None)
    if not app_cycles:
        return
    print(f"the whole app through the poller, {SIZE[0]}x{SIZE[1]}: {app_cycles} cycles in "
          f"{total:.1f} s")
    _table("app: after N cycles", memory, reference, traced)
    _flat(memory, reference)
    print(f"{'median / max ms':<58}{'median':>9}{'max':>9}")
    for label, values, goal in (
            ("poll cycle (1,280 results applied, snapshots, frame)", cycle_s, None),
            ("frame update (the last snapshot applied and drawn)", frames, FRAME_GOAL_MS),
            ("key press answered (cursor moved, frame drawn)", keys, KEY_GOAL_MS)):
        median = statistics.median(values) * 1000
        said = "" if goal is None else \
            f"   goal <= {goal} ms: {'met' if median <= goal else 'NOT met'}"
        print(f"{label:<58}{median:9.1f}{max(values) * 1000:9.1f}{said}")


APP_CYCLES = 120
"""The whole app's cycles by default: each also drives Textual (a frame, a key press); 600 of
them took over 25 minutes on the shared machine."""


def _marks(cycles: int, smoke: bool) -> list[int]:
    if smoke:
        return [c for c in (5, 10, 20, 30) if c <= cycles]
    return sorted({c for c in (*CHECKPOINTS, 60 if cycles < 300 else 0) if 0 < c < cycles}
                  | {cycles})


def _table(title: str, memory: Memory, reference: Memory | None, traced: bool) -> None:
    print(f"{title:<44}{''.join(f'{c:>9}' for c in memory.cycles)}{'growth':>10}")
    for label, field in (("RSS MB", "rss"), ("allocated blocks (k)", "blocks"),
                         ("gc-tracked objects (k)", "objects"), ("traced heap MB", "heap")):
        if field != "heap" or traced:
            print(row(f"  {label}", memory, field))
            if reference is not None:
                print(row(f"  reference: bare app {label}", reference, field))


def _flat(memory: Memory, reference: Memory | None) -> None:
    """Growth from the first checkpoint (every history full from cycle 60) to the last."""
    if len(memory.cycles) <= 2:
        return
    grown = memory.blocks[-1] - memory.blocks[1]
    rss = memory.rss[-1] - memory.rss[1]
    bare = "" if reference is None else \
        f"; the reference: {reference.blocks[-1] - reference.blocks[1]:+.1f}k"
    print(f"  from cycle {memory.cycles[1]} to {memory.cycles[-1]}: RSS {rss:+.1f} MB, "
          f"allocated blocks {grown:+.1f}k ({'flat' if abs(grown) < 5 else 'NOT flat'}: "
          f"within 5k{bare})")


if __name__ == "__main__":
    main()
