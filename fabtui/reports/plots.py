"""Plots people would rather look at than read: busbw against message size per collective with
the expected line, RDMA bandwidth per pair as a heatmap, and a counter over time. Each is a
small SVG document written here, embedded in the HTML report as an image.

Why not matplotlib: these three charts have at most a few hundred points, and matplotlib with
what it pulls in (Pillow, fontTools, kiwisolver, contourpy) was ~95 MB of the install and
~0.3 s of import for them. SVG also keeps the text sharp at any zoom and in print, and uses
the page's fonts (the report's CJK-capable stack), where a PNG froze one font into pixels.
Every recorded string is XML-escaped; an SVG shown through `<img>` runs no script and
fetches nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from xml.sax.saxutils import escape

from fabtui.model.report import Curve, PairResult, Series

# A colour-blind-safe qualitative palette (Okabe & Ito), then greys.
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
            "#000000", "#666666", "#999999", "#444444", "#BBBBBB")
_FONT = ("font-family=\"system-ui, 'Noto Sans', 'Noto Sans CJK SC', 'WenQuanYi Zen Hei', "
         "sans-serif\"")
_MARGIN = (62, 18, 58, 36)  # left, right, bottom, top (px)


class _Canvas:
    """An SVG document of `width` x `height` px with a plot area inside the margins, mapping
    data coordinates to pixels (optionally log2 on x)."""

    def __init__(self, width: int, height: int, title: str) -> None:
        self.width, self.height = width, height
        left, right, bottom, top = _MARGIN
        self.x0, self.x1, self.y0, self.y1 = left, width - right, height - bottom, top
        self.parts: list[str] = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {_FONT} font-size="11">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            _text(width / 2, 20, title, size=13, anchor="middle", weight="bold")]

    def add(self, part: str) -> None:
        self.parts.append(part)

    def svg(self) -> str:
        return "".join(self.parts) + "</svg>\n"


def _text(x: float, y: float, text: str, *, size: int = 11, anchor: str = "start",
          weight: str = "normal", fill: str = "#222", rotate: float | None = None) -> str:
    transform = f' transform="rotate({rotate:g} {x:.1f} {y:.1f})"' if rotate is not None else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}"{transform}>{escape(text)}</text>')


def _nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round values covering [low, high] (1, 2, 2.5 or 5 times a power of 10)."""
    if not math.isfinite(low) or not math.isfinite(high):
        return []
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks: list[float] = []
    value = first
    while not ticks or ticks[-1] < high - step * 1e-9:  # the last tick at or above `high`
        ticks.append(round(value, 12))
        value += step
    return ticks


def _number(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.3g}"


def _size_label(size: float) -> str:
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g}{unit}"
    return f"{size:g}"


def _y_axis(canvas: _Canvas, ticks: list[float], scale_y: Callable[[float], float],
            label: str) -> None:
    for tick in ticks:
        y = scale_y(tick)
        canvas.add(f'<line x1="{canvas.x0}" x2="{canvas.x1}" y1="{y:.1f}" y2="{y:.1f}" '
                   'stroke="#ddd"/>')
        canvas.add(_text(canvas.x0 - 6, y + 4, _number(tick), anchor="end", size=10))
    middle = (canvas.y0 + canvas.y1) / 2
    canvas.add(_text(16, middle, label, anchor="middle", rotate=-90))


def _frame(canvas: _Canvas) -> None:
    canvas.add(f'<rect x="{canvas.x0}" y="{canvas.y1}" width="{canvas.x1 - canvas.x0}" '
               f'height="{canvas.y0 - canvas.y1}" fill="none" stroke="#888"/>')


def _text_width(text: str, size: int) -> float:
    """About how wide `text` is at font size `size` (wide East Asian characters count ~2x)."""
    import unicodedata

    return sum(size * (1.0 if unicodedata.east_asian_width(c) in "WF" else 0.6) for c in text)


def _legend(canvas: _Canvas, labels: Sequence[str]) -> None:
    """Labels with their colour swatch in a white box inside the plot's lower right."""
    if not labels:
        return
    width = max(_text_width(label, 9) for label in labels) + 28
    left = canvas.x1 - 6 - width
    top = canvas.y0 - 8 - 14 * len(labels)
    canvas.add(f'<rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" '
               f'height="{14 * len(labels) + 4}" fill="white" fill-opacity="0.85" '
               'stroke="#ccc"/>')
    for index, label in enumerate(labels):
        colour = _PALETTE[index % len(_PALETTE)]
        y = top + 14 * (index + 1)
        canvas.add(f'<rect x="{left + 6:.1f}" y="{y - 5:.1f}" width="12" height="3" '
                   f'fill="{colour}"/>')
        canvas.add(_text(left + 22, y, label, size=9))


def _polyline(points: Sequence[tuple[float, float]], colour: str) -> str:
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.2" fill="{colour}"/>'
                   for x, y in points)
    return (f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.4"/>'
            + dots)


def busbw_plot(collective: str, curves: Sequence[Curve]) -> str:
    """busbw (GB/s) against message size (bytes, log2 scale) for the runs of one collective;
    a dashed line per distinct expected figure. An SVG document."""
    canvas = _Canvas(760, 360, f"{collective}: bus bandwidth by message size")
    series = [[(p.size_bytes, p.busbw) for p in curve.points
               if p.busbw is not None and p.size_bytes > 0] for curve in curves]
    sizes = [size for points in series for size, _ in points]
    expected = sorted({c.expected_busbw for c in curves if c.expected_busbw})
    values = [value for points in series for _, value in points] + expected
    if not sizes:
        return canvas.svg()
    low_x, high_x = math.log2(min(sizes)), math.log2(max(sizes))
    if high_x == low_x:
        high_x = low_x + 1
    y_ticks = _nice_ticks(0.0, max(values) * 1.05 if values else 1.0)
    top = y_ticks[-1] if y_ticks else 1.0

    def scale_x(size: float) -> float:
        return canvas.x0 + (math.log2(size) - low_x) / (high_x - low_x) * (canvas.x1 - canvas.x0)

    def scale_y(value: float) -> float:
        return canvas.y0 - value / top * (canvas.y0 - canvas.y1)

    _y_axis(canvas, y_ticks, scale_y, "busbw (GB/s)")
    step = max(1, math.ceil((high_x - low_x) / 10))
    exponent = math.ceil(low_x)
    while exponent <= high_x:
        x = scale_x(2.0 ** exponent)
        canvas.add(_text(x, canvas.y0 + 16, _size_label(2.0 ** exponent), anchor="middle",
                         size=10))
        exponent += step
    canvas.add(_text((canvas.x0 + canvas.x1) / 2, canvas.height - 12,
                     "message size (bytes)", anchor="middle"))
    for figure in expected:
        y = scale_y(figure)
        canvas.add(f'<line x1="{canvas.x0}" x2="{canvas.x1}" y1="{y:.1f}" y2="{y:.1f}" '
                   'stroke="grey" stroke-dasharray="5,4"/>')
        canvas.add(_text(canvas.x0 + 6, y - 4, f"expected {figure:g}", fill="grey", size=9))
    labels = []
    for index, (curve, points) in enumerate(zip(curves, series, strict=True)):
        colour = _PALETTE[index % len(_PALETTE)]
        if points:
            canvas.add(_polyline([(scale_x(s), scale_y(v)) for s, v in points], colour))
        labels.append(f"{curve.target}" + (f" ({curve.ranks} ranks)" if curve.ranks else ""))
    _frame(canvas)
    if len(curves) <= 12:
        _legend(canvas, labels)
    return canvas.svg()


def _heat_colour(share: float) -> str:
    """Dark blue (low) to yellow (high), the ends of viridis."""
    stops = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))
    share = min(max(share, 0.0), 1.0) * (len(stops) - 1)
    index = min(int(share), len(stops) - 2)
    fraction = share - index
    red, green, blue = (round(a + (b - a) * fraction)
                        for a, b in zip(stops[index], stops[index + 1], strict=True))
    return f"#{red:02x}{green:02x}{blue:02x}"


def pair_heatmap(pairs: Sequence[PairResult]) -> str:
    """Average RDMA bandwidth (Gb/s) per client (rows) x server (columns), values written in.
    An SVG document; a pair without a figure is a grey cell marked `n/a`."""
    clients = sorted({p.client for p in pairs})
    servers = sorted({p.server for p in pairs})
    cell_w, cell_h = 62, 24
    label_w = max(80, 7 * max((len(c) for c in clients), default=4))
    width = label_w + cell_w * len(servers) + 30
    height = 60 + cell_h * len(clients) + 7 * max((len(s) for s in servers), default=4)
    canvas = _Canvas(width, height, "RDMA write bandwidth per pair (Gb/s)")
    grid: dict[tuple[str, str], float] = {
        (p.client, p.server): p.bandwidth_gbps for p in pairs if p.bandwidth_gbps is not None}
    figures = list(grid.values())
    low, high = (min(figures), max(figures)) if figures else (0.0, 1.0)
    for row, client in enumerate(clients):
        y = 40 + row * cell_h
        canvas.add(_text(label_w - 6, y + cell_h / 2 + 4, client, anchor="end", size=10))
        for column, server in enumerate(servers):
            x = label_w + column * cell_w
            value = grid.get((client, server))
            share = 0.0 if value is None or high == low else (value - low) / (high - low)
            fill = "#cccccc" if value is None else _heat_colour(share if high > low else 1.0)
            canvas.add(f'<rect x="{x}" y="{y}" width="{cell_w - 1}" height="{cell_h - 1}" '
                       f'fill="{fill}"/>')
            words = "n/a" if value is None else f"{value:.0f}"
            ink = "#222" if value is None or share > 0.6 else "white"
            canvas.add(_text(x + cell_w / 2, y + cell_h / 2 + 4, words, anchor="middle",
                             size=10, fill=ink))
    bottom = 40 + len(clients) * cell_h
    for column, server in enumerate(servers):
        middle = label_w + column * cell_w + cell_w / 2
        canvas.add(_text(middle, bottom + 10, server, anchor="end", size=10, rotate=-45))
    return canvas.svg()


def series_plot(metric: str, series: Sequence[Series]) -> str:
    """One counter over time, a line per component (before / after a repair, a soak). An SVG
    document; times on the x axis as UTC clock times (dates where they span days)."""
    unit = series[0].unit if series else ""
    canvas = _Canvas(760, 320, f"{metric} over time")
    lines = [[(_when(p.at), p.value) for p in line.points if math.isfinite(p.value)]
             for line in series]
    times = [t for points in lines for t, _ in points]
    values = [v for points in lines for _, v in points]
    if not times:
        return canvas.svg()
    start, end = min(times), max(times)
    if end == start:
        end = start + 1
    low, high = min(values), max(values)
    pad = (high - low) * 0.08 or abs(high) * 0.1 or 1.0
    y_ticks = _nice_ticks(low - pad, high + pad)
    bottom, top = y_ticks[0], y_ticks[-1]

    def scale_x(when: float) -> float:
        return canvas.x0 + (when - start) / (end - start) * (canvas.x1 - canvas.x0)

    def scale_y(value: float) -> float:
        return canvas.y0 - (value - bottom) / (top - bottom) * (canvas.y0 - canvas.y1)

    _y_axis(canvas, y_ticks, scale_y, metric + (f" ({unit})" if unit else ""))
    spans_days = end - start > 86400
    for index in range(5):
        when = start + (end - start) * index / 4
        stamp = datetime.fromtimestamp(when, tz=UTC)
        label = stamp.strftime("%m-%d %H:%M" if spans_days else "%H:%M:%S")
        anchor = "start" if index == 0 else "end" if index == 4 else "middle"
        canvas.add(_text(scale_x(when), canvas.y0 + 16, label, anchor=anchor, size=10))
    canvas.add(_text((canvas.x0 + canvas.x1) / 2, canvas.height - 12, "time (UTC)",
                     anchor="middle"))
    for index, points in enumerate(lines):
        if points:
            canvas.add(_polyline([(scale_x(t), scale_y(v)) for t, v in points],
                                 _PALETTE[index % len(_PALETTE)]))
    _frame(canvas)
    _legend(canvas, [line.component for line in series])
    return canvas.svg()


def _when(at: str) -> float:
    """Seconds since the epoch of an ISO time (`Z` or an offset; a naive time is read as UTC)."""
    moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
