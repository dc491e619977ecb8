"""Cold start of the app to its first frame on the demo fabric, beside a bare Textual app.

Each run is a fresh interpreter (as a user's `fabtui` is) that opens the app headless and
reports the moment its first frame is drawn; the figure is that moment minus the process's
spawn time. The reference, measured in the same runs (interleaved, so machine load weighs on
both alike): a bare Textual app with a 1,000-row DataTable (the issue's 0.47 s). Goal: the
app's first frame <= 0.8 s. Prints figures; never fails on timing.

    python benchmarks/tui_startup.py           # 9 runs each
    python benchmarks/tui_startup.py --smoke   # 2 runs each (CI)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOAL_S = 0.8
REFERENCE_S = 0.47
"""The reference's first frame when the goal was set (the issue's measurement)."""

CHILD = r'''
import sys, time
kind = sys.argv[1]
if kind == "fabtui":
    from fabtui.config import load_settings
    from fabtui.tui.app import FabtuiApp
    from fabtui.workspace import Workspace

    class Bench(FabtuiApp):
        def on_mount(self):  # Textual runs FabtuiApp.on_mount too (handlers run per class)
            self.call_after_refresh(lambda: self.call_after_refresh(self.done))

        def done(self):
            print(time.time(), flush=True)
            self.exit()

    app = Bench(Workspace(load_settings()))
else:
    from textual.app import App
    from textual.widgets import DataTable

    class Bench(App):
        def compose(self):
            yield DataTable()

        def on_mount(self):
            table = self.query_one(DataTable)
            table.add_columns(*(f"c{i}" for i in range(8)))
            table.add_rows([[f"{r}:{c}" for c in range(8)] for r in range(1000)])
            self.call_after_refresh(lambda: self.call_after_refresh(self.done))

        def done(self):
            print(time.time(), flush=True)
            self.exit()

    app = Bench()
app.run(headless=True, size=(100, 40))
'''


def first_frame(kind: str, env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning the interpreter to the first frame."""
    start = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD, kind], env=env, cwd=cwd,
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1]) - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="2 runs each (CI)")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    runs = 2 if args.smoke else args.runs
    with tempfile.TemporaryDirectory(prefix="fabtui-tui-startup-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FABTUI_")}
        env.update(HOME=str(work), XDG_CONFIG_HOME=str(work / "config"),
                   XDG_DATA_HOME=str(work / "data"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])))
        for kind in ("datatable", "fabtui"):  # warm-up: bytecode, the demo's state file
            first_frame(kind, env, work)
        seconds: dict[str, list[float]] = {"datatable": [], "fabtui": []}
        for _ in range(runs):
            for kind in seconds:
                seconds[kind].append(first_frame(kind, env, work))
    ours = statistics.median(seconds["fabtui"])
    ref = statistics.median(seconds["datatable"])
    print(f"{os.cpu_count()} CPUs; median of {runs} runs")
    print(f"{'first frame':<52}{'seconds':>9}{'ratio':>8}")
    print(f"{'bare Textual app, 1,000-row DataTable (reference)':<52}{ref:>9.3f}")
    print(f"{'fabtui app on the demo fabric, poller started':<52}{ours:>9.3f}"
          f"{ours / ref:>7.2f}x   goal <= {GOAL_S} s: {'met' if ours <= GOAL_S else 'NOT met'}")
    # The goal was set beside the reference's 0.47 s on a quiet machine: as a ratio, 1.70x.
    print(f"goal as a ratio to the reference: <= {GOAL_S / REFERENCE_S:.2f}x: "
          f"{'met' if ours / ref <= GOAL_S / REFERENCE_S else 'NOT met'}")


if __name__ == "__main__":
    main()
