"""busbw against message size, drawn in braille on the Line API, with the expected line.

`plot_rows` is pure (text rows and, per character, what it draws) so it is tested without an
app; `BusbwPlot` renders its rows one line at a time and recomputes them only when the series
or its size changes. Measured against textual-plotext (which rebuilds the whole plot through
plotext on every render, and needs plotext < 6): see benchmarks/probe_plot.py and docs/tui.md.

The series is braille dots, the expected figure a dashed `╌` line (`-` in ASCII) named in the
legend: the two differ by shape as well as colour.
"""

from __future__ import annotations

import itertools
import math

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from fabtui.render.table import cut, display_width, pad
from fabtui.views.console import BusbwSeries

LABEL_WIDTH = 6
"""`  480┤`: the y labels and the axis."""
_BRAILLE_BASE = 0x2800
_DOT = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
"""Braille dot bits by (row in the cell, column in the cell)."""
SERIES, EXPECTED, AXIS, TEXT = "s", "e", "a", "t"


def size_label(size: float) -> str:
    """`8B`, `1K`, `16M`, `4G` (powers of 1024, as nccl-tests sizes go)."""
    for limit, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if size >= limit:
            return f"{size / limit:.0f}{suffix}"
    return f"{size:.0f}B"


def y_label(busbw: float) -> str:
    """A y-axis figure in 5 columns, whole: `  480`, then `12.3k` / `  123k` past 99,999 (a
    figure cut to its first five digits read as a tenth of itself)."""
    value = max(busbw, 0.0)
    if round(value) < 100_000:
        return f"{value:5.0f}"
    for scale, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")):
        for digits in (1, 0):
            shown = f"{value / scale:.{digits}f}{suffix}"
            if len(shown) <= 5:
                return shown.rjust(5)
    return f"{value:.0e}".replace("e+", "e").rjust(5)  # 1e16: no busbw, but whole


def legend(series: BusbwSeries, width: int, ascii_only: bool = False) -> str:
    """The plot's first line in `width` columns: what the dots are and the expected figure.
    Narrow, `(out of place)` goes first, then `busbw` and `GB/s` stay, the figure whole; a
    cut ends in `…` (it read `expected 3` for 370)."""
    dots = f"{'*' if ascii_only else '⣿'} {series.collective} busbw GB/s"
    expected = "" if series.expected is None else \
        f"  {'-' if ascii_only else '╌'} expected {series.expected:g}"
    for text in (f"{dots} (out of place){expected}", f"{dots}{expected}"):
        if display_width(text) <= width:
            return text
    return cut(f"{dots}{expected}", width)


def plot_rows(series: BusbwSeries, width: int, height: int,
              ascii_only: bool = False) -> list[tuple[str, str]]:
    """The plot in `width` x `height` cells: per row its text and, per character, one of
    SERIES / EXPECTED / AXIS / TEXT (what colour it takes)."""
    rows = [(pad(legend(series, width, ascii_only), width),
             (SERIES + TEXT * (width - 1))[:width])]
    plot_w, plot_h = width - LABEL_WIDTH, height - 3
    if plot_w < 4 or plot_h < 2:
        return rows
    sizes = [math.log2(s) for s, _ in series.points]
    low, high = min(sizes), max(sizes)
    top = max([b for _, b in series.points] + [series.expected or 0.0]) * 1.1 or 1.0
    dots_w, dots_h = plot_w * 2, plot_h * 4
    cells = [[0] * plot_w for _ in range(plot_h)]

    def x_of(log_size: float) -> float:
        return 0.0 if high == low else (log_size - low) / (high - low) * (dots_w - 1)

    def y_of(busbw: float) -> float:
        return (dots_h - 1) - busbw / top * (dots_h - 1)

    def dot(x: float, y: float) -> None:
        col, row = round(x), round(y)
        if 0 <= col < dots_w and 0 <= row < dots_h:
            cells[row // 4][col // 2] |= _DOT[row % 4][col % 2]

    path = [(x_of(s), y_of(b)) for s, (_, b) in zip(sizes, series.points, strict=True)]
    for (x0, y0), (x1, y1) in itertools.pairwise(path):
        steps = max(1, int(max(abs(x1 - x0), abs(y1 - y0))))
        for i in range(steps + 1):
            dot(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
    for x, y in path[:1]:
        dot(x, y)
    expected_row = None if series.expected is None else int(y_of(series.expected) // 4)
    dash = "-" if ascii_only else "╌"
    for r in range(plot_h):
        busbw_here = top * (1 - (r * 4) / (dots_h - 1))
        if r == expected_row and series.expected is not None:
            busbw_here = series.expected
        elif r == plot_h - 1:
            busbw_here = 0.0
        named = r % 2 == 0 or r in (expected_row, plot_h - 1)
        label = y_label(busbw_here) if named else " " * 5
        axis = ("+" if ascii_only else "┤") if r % 2 == 0 else ("|" if ascii_only else "│")
        text, kinds = label + axis, TEXT * 5 + AXIS
        for c in range(plot_w):
            bits = cells[r][c]
            if bits:
                text += "*" if ascii_only else chr(_BRAILLE_BASE + bits)
                kinds += SERIES
            elif r == expected_row:
                text += dash
                kinds += EXPECTED
            else:
                text += " "
                kinds += TEXT
        rows.append((text, kinds))
    corner, line = ("+", "-") if ascii_only else ("└", "─")
    rows.append((" " * 5 + corner + line * plot_w, TEXT * 5 + AXIS * (plot_w + 1)))
    ticks = [" "] * width
    step = 10 if high - low > 20 else 5
    marks = list(range(math.ceil(low), int(high) + 1, step))
    # The largest message is the one busbw is judged at: named too, at the right end.
    for log_size in [high, *(m for m in marks if m != high)]:
        tick = size_label(2 ** log_size)
        col = min(LABEL_WIDTH + int(x_of(log_size) / 2), width - len(tick))
        free = all(t == " " for t in ticks[max(0, col - 1):col + len(tick)])
        if col + len(tick) <= width and free:
            ticks[col:col + len(tick)] = tick
    rows.append(("".join(ticks), TEXT * width))
    return rows


class BusbwPlot(Widget):
    """See the module docstring."""

    DEFAULT_CSS = "BusbwPlot { height: 1fr; min-height: 8; }"

    def __init__(self, *, ascii_only: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ascii_only = ascii_only
        self.series: BusbwSeries | None = None
        self._rows: list[tuple[str, str]] = []
        self._for: tuple[int, int] = (0, 0)

    def set_series(self, series: BusbwSeries | None) -> None:
        self.series = series
        self._for = (0, 0)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width, height = self.size.width, self.size.height
        if self.series is None:
            return Strip.blank(width)
        if self._for != (width, height):
            self._rows = plot_rows(self.series, width, height, self.ascii_only)
            self._for = (width, height)
        if y >= len(self._rows):
            return Strip.blank(width)
        text, kinds = self._rows[y]
        theme = self.app.current_theme
        styles = {SERIES: Style(color=theme.accent or theme.primary),
                  EXPECTED: Style(color=theme.warning, bold=True),
                  AXIS: Style(dim=True), TEXT: Style()}
        segments: list[Segment] = []
        start = 0
        for i in range(1, len(text) + 1):
            if i == len(text) or kinds[i] != kinds[start]:
                segments.append(Segment(text[start:i], styles[kinds[start]]))
                start = i
        return Strip(segments).adjust_cell_length(width)
