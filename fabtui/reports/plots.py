"""Plots people would rather look at than read: busbw against message size per collective with
the expected line, and RDMA bandwidth per pair as a heatmap. PNG bytes from matplotlib's
non-interactive Agg backend (imported only when a plot is drawn: it costs ~0.3 s)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from fabtui.model.report import Curve, PairResult, Series


def _figure(width: float, height: float) -> Any:
    """A bare Figure (no pyplot: no GUI backend, no global figure list, half the import)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=90)
    # Fixed margins: the constrained layout engine costs more than the drawing itself.
    figure.subplots_adjust(left=0.1, right=0.97, bottom=0.2, top=0.88)
    return figure


def busbw_plot(collective: str, curves: Sequence[Curve]) -> bytes:
    """busbw (GB/s) against message size (bytes, log scale) for the runs of one collective; a
    dashed line per distinct expected figure."""
    figure = _figure(7.5, 3.6)
    axes = figure.add_subplot()
    for curve in curves:
        points = [(p.size_bytes, p.busbw) for p in curve.points if p.busbw is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            axes.plot(xs, ys, marker=".", linewidth=1.2,
                      label=f"{curve.target}" + (f" ({curve.ranks} ranks)"
                                                 if curve.ranks else ""))
    for expected in sorted({c.expected_busbw for c in curves if c.expected_busbw}):
        axes.axhline(expected, linestyle="--", color="grey", linewidth=1)
        axes.annotate(f"expected {expected:g}", (0.01, expected), xycoords=("axes fraction",
                      "data"), fontsize=8, color="grey", va="bottom")
    axes.set_xscale("log", base=2)
    axes.set_xlabel("message size (bytes)")
    axes.set_ylabel("busbw (GB/s)")
    axes.set_title(f"{collective}: bus bandwidth by message size")
    axes.grid(True, alpha=0.3)
    if len(curves) <= 12:
        axes.legend(fontsize=7, loc="lower right")
    return _png(figure)


def pair_heatmap(pairs: Sequence[PairResult]) -> bytes:
    """Average RDMA bandwidth (Gb/s) per client (rows) x server (columns), values written in."""
    clients = sorted({p.client for p in pairs})
    servers = sorted({p.server for p in pairs})
    grid = [[float("nan")] * len(servers) for _ in clients]
    for pair in pairs:
        if pair.bandwidth_gbps is not None:
            grid[clients.index(pair.client)][servers.index(pair.server)] = pair.bandwidth_gbps
    figure = _figure(max(4.0, 0.9 * len(servers) + 2.5), max(2.5, 0.4 * len(clients) + 1.5))
    axes = figure.add_subplot()
    image = axes.imshow(grid, cmap="viridis", aspect="auto")
    axes.set_xticks(range(len(servers)), servers, rotation=45, ha="right", fontsize=7)
    axes.set_yticks(range(len(clients)), clients, fontsize=7)
    for row, values in enumerate(grid):
        for column, value in enumerate(values):
            if value == value:  # not NaN
                axes.text(column, row, f"{value:.0f}", ha="center", va="center",
                          fontsize=7, color="white")
    figure.colorbar(image, ax=axes, label="Gb/s")
    axes.set_title("RDMA write bandwidth per pair (Gb/s)")
    return _png(figure)


def series_plot(metric: str, series: Sequence[Series]) -> bytes:
    """One counter over time, a line per component (before / after a repair, a soak)."""
    from datetime import datetime

    figure = _figure(7.5, 3.0)
    axes = figure.add_subplot()
    for line in series:
        times = [datetime.fromisoformat(p.at.replace("Z", "+00:00")) for p in line.points]
        axes.plot(times, [p.value for p in line.points], marker="o", linewidth=1.2,
                  label=line.component)
    unit = series[0].unit if series else ""
    axes.set_ylabel(f"{metric}" + (f" ({unit})" if unit else ""))
    axes.set_title(f"{metric} over time")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=7)
    figure.autofmt_xdate()
    return _png(figure)


def _png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
