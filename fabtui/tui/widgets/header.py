"""The app's header line and the per-layer problem counts under it."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.widgets import Static

from fabtui.tui.glyphs import glyph, health_style
from fabtui.views.fabricmap import Layer
from fabtui.views.status import FabricSnapshot, Health, PollState


def header_text(fabric: str, scenario: str | None, snapshot: FabricSnapshot, *, paused: bool,
                held: int, now: float) -> str:
    """`fabric · scenario · poll state · last data` (pure: tested without an app). A failed
    round says so in the poll state's place: `source failed: KeyError: 'x' · retry in 2s`."""
    parts = [fabric]
    if scenario:
        parts.append(f"scenario {scenario}")
    if paused:
        parts.append(f"PAUSED ({held} new)" if held else "PAUSED")
    else:
        state = snapshot.poll.value
        if snapshot.poll is PollState.WAITING and snapshot.round_s is not None:
            state = f"poll {snapshot.round} done in {snapshot.round_s:.1f}s"
        elif snapshot.poll is PollState.POLLING:
            state = f"polling #{snapshot.round + 1}"
        elif snapshot.poll is PollState.FAILED:
            state = f"source failed: {snapshot.failure or 'unknown error'}"
            if snapshot.retry_s is not None:
                state += f" · retry in {_seconds(snapshot.retry_s)}"
        parts.append(state)
    if snapshot.last_data:
        stamp = datetime.fromtimestamp(snapshot.last_data).strftime("%H:%M:%S")
        parts.append(f"data {stamp} ({max(0, now - snapshot.last_data):.0f}s ago)")
    else:
        parts.append("no data yet")
    return " · ".join(parts)


def _seconds(value: float) -> str:
    """`2s`, `0.5s`, `60s`."""
    return f"{value:.1f}".rstrip("0").rstrip(".") + "s"


class StatusHeader(Static):
    """One line: what fabric, what the demo plays, what the poller does, how old the data is.
    Class `-failed` (the last round failed) draws it in the theme's error colour."""

    DEFAULT_CSS = """
    StatusHeader { height: 1; background: $primary; color: $text; padding: 0 1; }
    StatusHeader.-failed { background: $error; color: $text; text-style: bold; }
    """


class LayerCounts(Static):
    """Problem counts per layer: `NICs ✗1/64` (glyph and colour from the worst problem)."""

    DEFAULT_CSS = """
    LayerCounts { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, *, ascii_only: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ascii_only = ascii_only
        self._shown: object = None

    def show(self, snapshot: FabricSnapshot) -> None:
        signature = (tuple(snapshot.counts.items()), self.app.theme)
        if signature == self._shown:
            return
        self._shown = signature
        theme = self.app.current_theme
        text = Text()
        for layer in Layer:
            count = snapshot.counts.get(layer)
            if count is None or count.total == 0:
                continue
            worst = Health.UNREACHABLE if count.unreachable else Health.FAIL if count.fail \
                else Health.WARN if count.warn else Health.STALE if count.stale else Health.OK
            text.append(f"{layer.value} ")
            text.append(f"{glyph(worst, self.ascii_only)}{count.problems}",
                        health_style(worst, theme))
            text.append(f"/{count.total}  ")
        self.update(text)


