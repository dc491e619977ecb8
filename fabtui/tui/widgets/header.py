"""The app's header line and the per-layer problem counts under it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from fabtui.tui.glyphs import glyph, health_style
from fabtui.views.fabricmap import Layer
from fabtui.views.status import FabricSnapshot, Health, LayerCount, PollState


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
    StatusHeader { height: 1; background: $primary; color: $text; padding: 0 1;
                   text-wrap: nowrap; text-overflow: ellipsis; }
    StatusHeader.-failed { background: $error; color: $text; text-style: bold; }
    """


def layer_parts(counts: Mapping[Layer, LayerCount]) -> list[tuple[str, Health, int, int]]:
    """Per layer shown: (its name, the health its figure counts, the figure, the total). The
    figure is how many elements are in that state, so `NICs ✗1/64` reads "1 of 64 NICs has a
    problem, the worst a failure" and `GPUs ✓64/64` "all 64 fine"; with no problem but some not
    read yet, `GPUs ?24/64` counts those unknown (a `✓0/64` read as "none fine"), and
    `GPUs …24/64` those not known of which some have series not judged yet (`UNJUDGED`)."""
    parts = []
    for layer in Layer:
        count = counts.get(layer)
        if count is None or count.total == 0:
            continue
        if count.problems:
            worst = Health.UNREACHABLE if count.unreachable else Health.FAIL if count.fail \
                else Health.WARN if count.warn else Health.STALE
            parts.append((layer.value, worst, count.problems, count.total))
        elif count.ok < count.total:
            waiting = Health.UNJUDGED if count.unjudged else Health.UNKNOWN
            parts.append((layer.value, waiting, count.total - count.ok, count.total))
        else:
            parts.append((layer.value, Health.OK, count.total, count.total))
    return parts


def counts_plain(parts: list[tuple[str, Health, int, int]], width: int,
                 ascii_only: bool = False) -> list[str]:
    """Each layer's text as it fits `width` columns: `NICs ✗1/64` when every layer fits so,
    else without the totals (`NICs ✗1`); what still does not fit is cut by the widget with
    `…` (pure: tested without an app)."""
    full = [f"{name} {glyph(h, ascii_only)}{n}/{total}" for name, h, n, total in parts]
    if width <= 0 or cell_len("  ".join(full)) <= width:
        return full
    return [f"{name} {glyph(h, ascii_only)}{n}" for name, h, n, _ in parts]


class LayerCounts(Static):
    """Counts per layer: `NICs ✗1/64`, see `layer_parts` (glyph and colour from the worst
    state); one line, cut with `…` when even the short form does not fit."""

    DEFAULT_CSS = """
    LayerCounts { height: 1; padding: 0 1; background: $panel; text-wrap: nowrap;
                  text-overflow: ellipsis; }
    """

    def __init__(self, *, ascii_only: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ascii_only = ascii_only
        self._shown: object = None
        self._snapshot: FabricSnapshot | None = None

    def show(self, snapshot: FabricSnapshot) -> None:
        self._snapshot = snapshot
        width = self.content_size.width
        signature = (tuple(snapshot.counts.items()), self.app.theme, width)
        if signature == self._shown:
            return
        self._shown = signature
        theme = self.app.current_theme
        parts = layer_parts(snapshot.counts)
        text = Text()
        for (name, health, _, _), shown in zip(parts, counts_plain(parts, width,
                                                                   self.ascii_only),
                                               strict=True):
            if text:
                text.append("  ")
            text.append(f"{name} ")
            text.append(shown.removeprefix(f"{name} "), health_style(health, theme))
        self.update(text)

    def on_resize(self) -> None:
        if self._snapshot is not None:
            self.show(self._snapshot)


