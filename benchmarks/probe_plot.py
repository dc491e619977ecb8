"""The console's busbw plot: fabtui's braille Line-API plot beside textual-plotext.

What each costs on the demo fabric's all_reduce result (32 sizes, 8 B to 16 GiB, and the
expected line), at the console's plot sizes (78x14 for 80x24, 158x14 for 160x50):

- import: a fresh interpreter importing the widget module (textual and fabtui.model, which
  the app has loaded by then, already imported);
- repaint: what every frame of the plot costs. textual-plotext rebuilds the whole plot through
  plotext on every `render()` (plotsize + build + `Text.from_ansi`); fabtui's widget keeps its
  rows and only turns them into strips (`render_line` per row);
- rebuild: fabtui's cost when the data or the size changes (`plot_rows`).

textual-plotext is optional here (it needs plotext < 6 and is not a dependency): install both
somewhere and put it on PYTHONPATH, e.g.

    pip install --no-deps --target /tmp/plotext_pkgs textual-plotext==1.0.1 'plotext<6'
    PYTHONPATH=$PWD:/tmp/plotext_pkgs python benchmarks/probe_plot.py

Prints figures; never fails on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIZES = [(78, 14), (158, 14)]


def _import_s(module: str, runs: int) -> float:
    code = ("import time, textual.app, textual.widget, fabtui.model.probe; "
            "t = time.perf_counter(); "
            f"import {module}; print(time.perf_counter() - t)")
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout) for _ in range(runs)]
    return statistics.median(times)


def _series():  # type: ignore[no-untyped-def]
    from fabtui.config import load_settings
    from fabtui.views.console import busbw_series
    from fabtui.workspace import Workspace

    result = asyncio.run(Workspace(load_settings()).run_probe("nccl.all_reduce", "node001", {}))
    series = busbw_series(result)
    assert series is not None
    return series


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def _in_app(series, repeat: int) -> dict[str, dict[tuple[int, int], float]]:  # type: ignore[no-untyped-def]
    figures: dict[str, dict[tuple[int, int], float]] = {"fabtui repaint": {},
                                                         "fabtui rebuild": {}}
    try:
        from textual_plotext import PlotextPlot
    except ImportError:
        PlotextPlot = None
    else:
        figures["textual-plotext repaint"] = {}
    for width, height in SIZES:
        for name, seconds in (await _one_size(series, width, height, repeat,
                                              PlotextPlot)).items():
            figures[name][(width, height)] = seconds
    return figures


async def _one_size(series, width: int, height: int, repeat: int,  # type: ignore[no-untyped-def]
                    plotext_widget) -> dict[str, float]:
    from textual.app import App, ComposeResult

    from fabtui.tui.widgets.busbw_plot import BusbwPlot, plot_rows

    class Bench(App[None]):
        def compose(self) -> ComposeResult:
            plot = BusbwPlot(id="ours")
            plot.styles.height = height
            yield plot
            if plotext_widget is not None:
                other = plotext_widget(id="theirs")
                other.styles.height = height
                yield other

    figures: dict[str, float] = {}
    app = Bench()
    async with app.run_test(size=(width, 2 * height + 2)) as pilot:
        ours = app.query_one("#ours", BusbwPlot)
        ours.set_series(series)
        await pilot.pause()

        def repaint_ours() -> None:
            for y in range(ours.size.height):
                ours.render_line(y)

        repaint_ours()  # the rows are built once, on the first line drawn
        figures["fabtui repaint"] = _best(repaint_ours, repeat)
        figures["fabtui rebuild"] = _best(lambda: plot_rows(series, width, height), repeat)
        if plotext_widget is not None:
            theirs = app.query_one("#theirs", plotext_widget)
            plt = theirs.plt
            # log2 sizes on a linear axis: plotext's log x scale breaks its hline
            plt.plot([math.log2(s) for s, _ in series.points],
                     [b for _, b in series.points], marker="braille")
            if series.expected is not None:
                plt.hline(series.expected)
            await pilot.pause()
            figures["textual-plotext repaint"] = _best(theirs.render, repeat)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="few runs (CI)")
    args = parser.parse_args()
    runs, repeat = (2, 20) if args.smoke else (5, 200)
    series = _series()
    figures = asyncio.run(_in_app(series, repeat))
    print(f"busbw plot, {len(series.points)} sizes, median of {repeat}")
    for name, by_size in figures.items():
        cells = "  ".join(f"{w}x{h}: {s * 1000:6.3f} ms" for (w, h), s in by_size.items())
        print(f"  {name:<24} {cells}")
    print(f"import (median of {runs} fresh interpreters; textual and fabtui.model already "
          "imported, as in the app)")
    ours = _import_s("fabtui.tui.widgets.busbw_plot", runs)
    print(f"  fabtui.tui.widgets.busbw_plot  {ours:.3f} s")
    try:
        import textual_plotext  # noqa: F401
    except ImportError:
        print("  textual_plotext                not installed (see the docstring)")
    else:
        print(f"  textual_plotext                {_import_s('textual_plotext', runs):.3f} s")


if __name__ == "__main__":
    main()
