"""How health reads on screen: a glyph (never colour alone) and a theme colour, and sparklines.

Pure functions, so they are tested without an app.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.style import Style
from textual.theme import Theme

from fabtui.views.status import Health

GLYPHS = {Health.OK: "✓", Health.WARN: "!", Health.FAIL: "✗", Health.UNKNOWN: "?",
          Health.UNJUDGED: "…", Health.STALE: "~", Health.UNREACHABLE: "⊘"}
ASCII_GLYPHS = {Health.OK: "+", Health.WARN: "!", Health.FAIL: "X", Health.UNKNOWN: "?",
                Health.UNJUDGED: ".", Health.STALE: "~", Health.UNREACHABLE: "#"}


_BARS = "▁▂▃▄▅▆▇█"
_ASCII_BARS = "_.-=+*#@"


MARK, ASCII_MARK = "◆", "*"
"""What marks an element another view pointed at (`Highlight`) on the Fabric screen."""


def mark(ascii_only: bool = False) -> str:
    return ASCII_MARK if ascii_only else MARK


def glyph(health: Health, ascii_only: bool = False) -> str:
    return (ASCII_GLYPHS if ascii_only else GLYPHS)[health]


def health_style(health: Health, theme: Theme, *, selected: bool = False) -> Style:
    """The cell style of `health` under `theme` (selected: reversed)."""
    colour = {Health.OK: theme.success, Health.WARN: theme.warning, Health.FAIL: theme.error,
              Health.UNREACHABLE: theme.error}.get(health)
    style = Style(color=colour, bold=health in (Health.FAIL, Health.UNREACHABLE),
                  dim=health in (Health.UNKNOWN, Health.UNJUDGED, Health.STALE),
                  reverse=selected or health is Health.UNREACHABLE)
    if selected and health is Health.UNREACHABLE:
        style += Style(reverse=False, underline=True)
    return style


def sparkline(values: Sequence[float], width: int, ascii_only: bool = False) -> str:
    """The last `width` values as bars scaled between their min and max (flat: the lowest)."""
    bars = _ASCII_BARS if ascii_only else _BARS
    tail = [v for v in values[-width:] if math.isfinite(v)]
    if not tail:
        return ""
    low, high = min(tail), max(tail)
    span = high - low
    return "".join(bars[0] if span == 0 else bars[min(7, int((v - low) / span * 8))]
                   for v in tail)


def short_number(value: object) -> str:
    """A value in at most ~8 characters (`12.3k`, `3.2e-09`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    magnitude = abs(value)
    if magnitude == 0:
        return "0"
    if magnitude < 0.001:
        return f"{value:.1e}"
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
        if magnitude >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:.4g}"
