"""The probe console's sweep table with 8,192 targets (every NIC of a 1,024-node fabric).

The console is the real one (`ProbeConsole` on the demo workspace); the sweep's results are
posted to it as `ConsoleResult` messages, as its run's thread does, so what is measured is the
table, not the probes. The table alone (`SweepTable` in a bare app) is measured beside the
reference, a bare app whose DataTable gets the same rows (what the console had before the Line
API), in the same run:
  - fill: every result arrived and the frame drawn;
  - scroll: pagedown / pageup / end / home, each key answered with its frame drawn (in the
    console each cursor move also shows that result's panel);
  - sort (the console only): worst first and back, the cursor staying on its row.
Prints figures; never fails on timing.

    python benchmarks/tui_console_scale.py            # 8,192 rows
    python benchmarks/tui_console_scale.py --smoke    # 512 rows (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fabtui.model.probe import ProbeResult  # noqa: E402
from fabtui.model.verdict import Verdict  # noqa: E402
from tests.support.tui_support import result  # noqa: E402

SIZE = (160, 50)
KEYS = ["pagedown"] * 10 + ["end"] + ["pageup"] * 10 + ["home"]


def sweep(rows: int) -> list[ProbeResult]:
    """`rows` nic.ethtool results, one NIC in 50 failing, one in 20 warning."""
    out = []
    for n in range(rows):
        nic = f"node{n // 8 + 1:04d}:mlx5_{n % 8}"
        verdict = Verdict.FAIL if n % 50 == 7 else Verdict.WARN if n % 20 == 3 else Verdict.OK
        out.append(result("nic.ethtool", nic, [(nic, "rate.tx_prio3_pause",
                                                 5000.0 if verdict is Verdict.FAIL else 0.0,
                                                 verdict)]))
    return out


async def keys(pilot, names: list[str]) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for name in names:
        start = time.perf_counter()
        await pilot.press(name)
        await pilot.pause()
        times.append(time.perf_counter() - start)
    return times


async def measure_console(results: list[ProbeResult]) -> dict[str, list[float]]:
    from fabtui.tui.screens.probes import ConsoleResult, ConsoleRunEnded, ProbeConsole
    from fabtui.tui.widgets.results import SweepTable
    from tests.support.tui_support import make_app, workspace

    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=SIZE) as pilot:
        console = ProbeConsole("nic.ethtool", "node*:*")
        await app.push_screen(console)
        await pilot.pause()
        console.run_no, console.running = 1, True
        start = time.perf_counter()
        for each in results:
            console.post_message(ConsoleResult(1, each))
        console.post_message(ConsoleRunEnded(1, None, 1.0))
        while console.running:
            await pilot.pause()
        fill = time.perf_counter() - start
        table = console.query_one(SweepTable)
        assert len(table.rows) == len(results)
        table.focus()
        await pilot.pause()
        scroll = await keys(pilot, KEYS)
        sort = await keys(pilot, ["s", "s"])
        return {"fill": [fill], "scroll": scroll, "sort": sort,
                "rendered": [float(table.rendered)]}


async def measure_bare(results: list[ProbeResult], kind: str) -> dict[str, list[float]]:
    """The table alone in a bare app: `datatable` (what the console had) or `sweep` (ours)."""
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    from fabtui.tui.widgets.results import SweepRow, SweepTable

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable(cursor_type="row") if kind == "datatable" else SweepTable()

    app = Bare()
    async with app.run_test(size=SIZE) as pilot:
        widget = app.query_one(DataTable if kind == "datatable" else SweepTable)
        if isinstance(widget, DataTable):
            widget.add_columns("target", "verdict", "why")
        await pilot.pause()
        start = time.perf_counter()
        for number, each in enumerate(results):  # one row per arriving message
            why = next((f.message for f in each.findings), "")
            if isinstance(widget, DataTable):
                widget.add_row(each.target, Text(f"✓ {each.verdict.value}"), why,
                               key=str(number))
            else:
                widget.add(SweepRow(each.target, each.verdict, why))
            if number % 64 == 0:
                await pilot.pause(0)  # messages arrive spread out: the app draws meanwhile
        await pilot.pause()
        fill = time.perf_counter() - start
        widget.focus()
        await pilot.pause()
        scroll = await keys(pilot, KEYS)
        return {"fill": [fill], "scroll": scroll}


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:9.1f} {max(values) * 1000:9.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="512 rows (CI)")
    parser.add_argument("--rows", type=int, default=8192)
    args = parser.parse_args()
    rows = 512 if args.smoke else args.rows
    with tempfile.TemporaryDirectory(prefix="fabtui-console-scale-") as tmp:
        os.environ.update(HOME=tmp, XDG_DATA_HOME=str(Path(tmp) / "data"),
                          XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        os.environ.pop("FABTUI_CONFIG", None)
        results = sweep(rows)
        console = asyncio.run(measure_console(results))
        bare = asyncio.run(measure_bare(results, "sweep"))
        reference = asyncio.run(measure_bare(results, "datatable"))
    print(f"{os.cpu_count()} CPUs; a sweep of {rows:,} targets; {SIZE[0]}x{SIZE[1]}")
    print(f"{'figure':<58}{'median ms':>10}{'max ms':>10}")
    print("fill: rows added one by one, then the frame; scroll: page/end/home answered")
    for label, figures in (("SweepTable (Line API), bare app", bare),
                           ("reference: DataTable, bare app", reference),
                           ("the console (table and result panel)", console)):
        print(f"{label + ': fill':<58}{ms(figures['fill'])}")
        print(f"{label + ': scroll':<58}{ms(figures['scroll'])}")
    print(f"{'console: sort worst first / arrival order':<58}{ms(console['sort'])}")
    print(f"console lines rendered anew over the whole run: {console['rendered'][0]:.0f} "
          f"(of {rows:,} rows)")


if __name__ == "__main__":
    main()
