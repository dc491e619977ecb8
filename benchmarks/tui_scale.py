"""The app on a generated 1,024-node x 8-rail fabric with an update every (simulated) second.

The fabric is `fabtui topo generate rail-optimized --param nodes=1024` with `simulate = true`.
Updates are synthetic (5 % of the NICs and their leaf ports change verdict per update, as a
storm spreading and healing would), applied to the app's own status model and posted as
snapshots, so what is measured is the app, not the simulator. Figures, each beside a reference
measured in the same run:
  - snapshot build (the poller's thread) per update;
  - frame update: applying a snapshot and drawing the frame; reference: a bare Textual
    DataTable of 1,024 x 9 cells updating the same share of cells with `update_cell`;
    goal <= 50 ms;
  - key press answered (cursor down, frame drawn); goal <= 100 ms;
  - memory (RSS) at the start and the end of the run: flat is the goal.
Prints figures; never fails on timing.

    python benchmarks/tui_scale.py            # 600 updates (10 minutes at 1 Hz)
    python benchmarks/tui_scale.py --smoke    # 20 updates (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fabtui.config import load_settings  # noqa: E402
from fabtui.model.verdict import Verdict  # noqa: E402
from fabtui.workspace import Workspace  # noqa: E402
from tests.support.tui_support import result  # noqa: E402

FRAME_GOAL_MS = 50
KEY_GOAL_MS = 100
SIZE = (160, 50)


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def generate(folder: Path) -> Path:
    path = folder / "fabric-1024.yaml"
    subprocess.run([sys.executable, "-m", "fabtui", "topo", "generate", "rail-optimized",
                    "--param", "nodes=1024", "-o", str(path)], check=True, cwd=REPO,
                   env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True)
    return path


def update(app, rng: random.Random, at: float) -> None:  # type: ignore[no-untyped-def]
    """5 % of the host cells get a new verdict and new counters."""
    cells = list(app.fabric.attachments())
    for cell in rng.sample(cells, len(cells) // 20):
        verdict = rng.choice((Verdict.OK, Verdict.OK, Verdict.WARN, Verdict.FAIL))
        pauses = rng.uniform(0, 5000)
        app.status.apply(result("nic.ethtool", cell.nic, [
            (cell.nic, "rate.tx_prio3_pause", pauses, verdict)], at=at), 3600)
        if cell.port:
            app.status.apply(result("switch.pfc", cell.port.partition(":")[0], [
                (cell.port, "rate.rx.PFC3", pauses, verdict)], at=at), 3600)


async def measure_app(topology: Path, updates: int) -> dict[str, list[float]]:
    from fabtui.tui.app import FabtuiApp
    from fabtui.views.status import PollState

    settings = dataclasses.replace(load_settings(), topology=topology, simulated=True,
                                   topology_is_default=False)
    app = FabtuiApp(Workspace(settings), live=False)
    figures: dict[str, list[float]] = {"build": [], "frame": [], "key": [], "rss": [],
                                       "apply": [], "idle": []}
    rng = random.Random(7)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.pause()
        for n in range(updates):
            update(app, rng, time.time())
            start = time.perf_counter()
            snapshot = app.status.snapshot(n, PollState.WAITING, 1.0)
            figures["build"].append(time.perf_counter() - start)
            start = time.perf_counter()
            await pilot.pause()  # nothing to do: what waiting for idle costs by itself
            figures["idle"].append(time.perf_counter() - start)
            start = time.perf_counter()
            screen.apply(snapshot)  # type: ignore[attr-defined]
            figures["apply"].append(time.perf_counter() - start)
            await pilot.pause()
            figures["frame"].append(time.perf_counter() - start)
            start = time.perf_counter()
            await pilot.press("down" if n % 40 < 20 else "up")
            await pilot.pause()
            figures["key"].append(time.perf_counter() - start)
            if n % max(1, updates // 10) == 0 or n == updates - 1:
                figures["rss"].append(rss_mb())
    return figures


async def measure_datatable(updates: int) -> list[float]:
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

    app = Bare()
    rng = random.Random(7)
    frames: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DataTable)
        columns = table.add_columns("node", *(f"r{r}" for r in range(8)))
        rows = table.add_rows([[f"node{r:04d}", *["✓"] * 8] for r in range(1024)])
        await pilot.pause()
        for _ in range(updates):
            start = time.perf_counter()
            with app.batch_update():
                for _ in range(1024 * 8 // 20):
                    table.update_cell(rng.choice(rows), rng.choice(columns[1:]),
                                      rng.choice("✓!✗"))
            await pilot.pause()
            frames.append(time.perf_counter() - start)
    return frames


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.1f} {max(values) * 1000:8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="20 updates (CI)")
    parser.add_argument("--updates", type=int, default=600)
    args = parser.parse_args()
    updates = 20 if args.smoke else args.updates
    with tempfile.TemporaryDirectory(prefix="fabtui-tui-scale-") as tmp:
        os.environ.update(HOME=tmp, XDG_DATA_HOME=str(Path(tmp) / "data"),
                          XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        os.environ.pop("FABTUI_CONFIG", None)
        topology = generate(Path(tmp))
        start = time.perf_counter()
        figures = asyncio.run(measure_app(topology, updates))
        total = time.perf_counter() - start
        reference = asyncio.run(measure_datatable(updates))
    print(f"{os.cpu_count()} CPUs; 1,024 nodes x 8 rails; {updates} updates "
          f"(5 % of host cells each); {SIZE[0]}x{SIZE[1]}; run {total:.1f} s")
    print(f"{'figure':<56}{'median ms':>9}{'max ms':>9}")
    print(f"{'snapshot build (poller thread)':<56}{ms(figures['build'])}")
    print(f"{'reference: DataTable 1,024x9, same share of update_cell':<56}{ms(reference)}")
    print(f"{'  of which applying the snapshot (Python, no drawing)':<56}{ms(figures['apply'])}")
    print(f"{'  Pilot waiting for idle with nothing to do (overhead)':<56}{ms(figures['idle'])}")
    frame = statistics.median(figures["frame"])
    print(f"{'frame update (apply + draw)':<56}{ms(figures['frame'])}   "
          f"{frame / statistics.median(reference):.2f}x the reference; goal <= "
          f"{FRAME_GOAL_MS} ms: {'met' if frame * 1000 <= FRAME_GOAL_MS else 'NOT met'}")
    idle = statistics.median(figures["idle"])
    print(f"{'  frame update net of the idle wait':<56}{(frame - idle) * 1000:8.1f}")
    key = statistics.median(figures["key"])
    print(f"{'key press answered (cursor, frame drawn)':<56}{ms(figures['key'])}   goal <= "
          f"{KEY_GOAL_MS} ms: {'met' if key * 1000 <= KEY_GOAL_MS else 'NOT met'}")
    print(f"{'  key press net of the idle wait':<56}{(key - idle) * 1000:8.1f}")
    rss = figures["rss"]
    print(f"memory (RSS MB) over the run: {' '.join(f'{v:.0f}' for v in rss)} "
          f"(growth {rss[-1] - rss[0]:+.1f} MB)")


if __name__ == "__main__":
    main()
