"""Pieces of the guided session screen: a block's state as a badge (glyph and word, never colour
alone), the outline of steps and blocks, and the output stream that batches lines into a Log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.theme import Theme
from textual.widgets import Log

from fabtui.render.table import display_width
from fabtui.tui.glyphs import health_style
from fabtui.views.guided import SessionView
from fabtui.views.listfilter import filter_words, keeps
from fabtui.views.status import Health

_GLYPHS = {"pending": ("·", "."), "running": ("▶", ">"), "ok": ("✓", "+"), "warn": ("!", "!"),
           "fail": ("✗", "X"), "error": ("⊘", "#"), "aborted": ("✗", "X"),
           "skipped": ("–", "-"), "cancelled": ("~", "~"), "waiting": ("‖", "=")}
_HEALTH = {"ok": Health.OK, "warn": Health.WARN, "fail": Health.FAIL, "error": Health.UNREACHABLE,
           "aborted": Health.FAIL, "cancelled": Health.STALE, "skipped": Health.UNKNOWN,
           "pending": Health.UNKNOWN, "waiting": Health.WARN}


def badge(state: str, theme: Theme, ascii_only: bool = False) -> Text:
    """`✓ ok`, `▶ running`, `– skipped` ... styled by the theme (the word carries the meaning)."""
    wide, narrow = _GLYPHS.get(state, ("?", "?"))
    if state == "running":
        return Text(f"{narrow if ascii_only else wide} {state}", style=f"bold {theme.accent}")
    return Text(f"{narrow if ascii_only else wide} {state}",
                health_style(_HEALTH.get(state, Health.UNKNOWN), theme))


@dataclass(frozen=True)
class OutlineLine:
    """One line of the outline: a step (`block` None) or one of its blocks."""

    step: str
    block: str | None
    text: Text


def outline_lines(view: SessionView, theme: Theme, ascii_only: bool = False,
                  width: int = 0) -> list[OutlineLine]:
    """Every step with its blocks: the block's badge and id; the block running or last run is
    marked `>`, a decide block names the branch it took. One line per block; with a `width`,
    a line too long is cut ending in `…` (never wrapped)."""
    lines: list[OutlineLine] = []
    for number, step in enumerate(view.book.steps, 1):
        here = step.id == view.step
        lines.append(OutlineLine(step.id, None, Text(
            f"{'>' if here else ' '}{number:>2}. {step.title}", "bold" if here else "")))
        for block in step.blocks:
            state = view.states.get(block.id, "pending")
            text = Text(f"   {'>' if block.id == view.block else ' '} ")
            text.append_text(badge(state, theme, ascii_only))
            shown = "" if block.id.startswith(f"{step.id}-") else f" {block.id}"
            text.append(f" {block.kind.value}{shown}")
            taken = view.decisions.get(block.id, "")
            if block.kind.value == "decide" and taken.startswith("branch taken: "):
                target = taken.removeprefix("branch taken: ").split(" (", 1)[0]
                text.append(f" {'->' if ascii_only else '→'} {target}")
            lines.append(OutlineLine(step.id, block.id, text))
    if width > 0:
        for line in lines:
            if line.text.cell_len > width:
                line.text.truncate(width - 1)
                line.text.append("…")
    return lines


JUMP_HINT_ROOM = 360
"""Display columns of step names the jump prompt lists (six lines of its 60-column box)."""


def jump_hint(step_ids: list[str], room: int = JUMP_HINT_ROOM) -> str:
    """The jump prompt's list of steps, `1. id · 2. id ...`: whole steps only, as many as fit
    in `room` columns, then how many more and how to reach them (a cut `[:300]` ended it
    mid-name, and the steps after it were not said to exist)."""
    parts: list[str] = []
    used = 0
    for number, step in enumerate(step_ids, 1):
        part = f"{number}. {step}"
        if parts and used + 3 + display_width(part) > room:
            left = len(step_ids) - len(parts)
            parts.append(f"+{left} more ({number}-{len(step_ids)}: type the number the "
                         f"outline gives it, or its id)")
            break
        parts.append(part)
        used += display_width(part) + (3 if used else 0)
    return " · ".join(parts)


def filter_outline(lines: list[OutlineLine], text: str) -> list[OutlineLine]:
    """The outline lines the `/` filter `text` keeps: a block whose line holds every word,
    under its step; a step whose title holds them, with all its blocks."""
    words = filter_words(text)
    if not words:
        return lines
    steps = {line.step for line in lines if line.block is None and keeps(words, [line.text.plain])}
    blocks = {line.block for line in lines if line.block is not None and
              (line.step in steps or keeps(words, [line.text.plain, line.block]))}
    wanted = steps | {line.step for line in lines if line.block in blocks}
    return [line for line in lines if line.step in wanted and
            (line.block is None or line.block in blocks)]


def outline(view: SessionView, theme: Theme, ascii_only: bool = False) -> tuple[Text, int]:
    """The outline as one text, and the line of the block running or last run (0: none)."""
    lines = outline_lines(view, theme, ascii_only)
    text = Text(no_wrap=True, overflow="ellipsis")
    for line in lines:
        text.append_text(line.text)
        text.append("\n")
    marked = next((i for i, line in enumerate(lines) if line.block and
                   line.block == view.block), 0)
    return text, marked


class OutlineList(ScrollView, can_focus=True):
    """The session's outline as a list to move through: up/down, page up/down, home/end, or a
    click selects a step or a block, and the screen shows what it did (`Selected`). The
    cursor follows the block running until the operator moves it (`pinned`); running a block
    (`follow`) lets it follow again. Only arrows and page keys move it: the session's own
    letter keys (`g` to the gate, `j` jump) keep their meaning here. A Line-API view: a long
    runbook's outline is drawn a screen at a time."""

    DEFAULT_CSS = """
    OutlineList { background: $surface; overflow-x: hidden; }
    OutlineList:focus { background-tint: $foreground 4%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home", "move(-1000000)", show=False),
        Binding("end", "move(1000000)", show=False),
        Binding("enter", "choose", show=False),
    ]

    class Selected(Message):
        """The operator put the cursor on a step (`block` None) or a block."""

        def __init__(self, step: str, block: str | None) -> None:
            super().__init__()
            self.step = step
            self.block = block

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[OutlineLine] = []
        self.cursor = 0
        self.pinned = False
        """The operator moved the cursor: it stays where they put it while blocks run."""
        self._strips: dict[int, Strip] = {}

    def set_lines(self, lines: list[OutlineLine], current: str | None) -> None:
        """Show `lines`; the cursor on block `current` (the one running or last run) unless
        the operator pinned it elsewhere."""
        self.lines = lines
        self._strips.clear()
        if not self.pinned:
            self.cursor = next((i for i, line in enumerate(lines)
                                if current and line.block == current), self.cursor)
        self.cursor = max(0, min(self.cursor, len(lines) - 1))
        self.virtual_size = Size(0, len(lines))  # never sideways: a long line ends in `…`
        self._scroll_to_cursor()
        self.refresh()

    def follow(self) -> None:
        """Let the cursor follow the running block again."""
        self.pinned = False

    @property
    def selected(self) -> OutlineLine | None:
        return self.lines[self.cursor] if 0 <= self.cursor < len(self.lines) else None

    def action_move(self, step: int) -> None:
        if self.lines:
            self.move_to(max(0, min(len(self.lines) - 1, self.cursor + step)))

    def action_page(self, pages: int) -> None:
        self.action_move(pages * max(1, self.size.height - 1))

    def action_choose(self) -> None:
        self.move_to(self.cursor)

    def move_to(self, index: int) -> None:
        """The cursor onto line `index`, pinned there; the screen is told."""
        self.pinned = True
        old, self.cursor = self.cursor, index
        self._strips.pop(old, None)
        self._strips.pop(index, None)
        self.refresh()
        self._scroll_to_cursor()
        line = self.selected
        if line is not None:
            self.post_message(self.Selected(line.step, line.block))

    def _scroll_to_cursor(self) -> None:
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        index = event.y + int(self.scroll_offset.y)
        if 0 <= index < len(self.lines):
            self.move_to(index)

    def render_line(self, y: int) -> Strip:
        index = y + int(self.scroll_offset.y)
        width = self.scrollable_content_region.width
        if not 0 <= index < len(self.lines):
            return Strip.blank(width, self.rich_style)
        strip = self._strips.get(index)
        if strip is None:
            text = self.lines[index].text.copy()
            if text.cell_len > width > 1:
                text.truncate(width - 1)
                text.append("…")
            strip = Strip(list(text.render(self.app.console)))
            if index == self.cursor:
                strip = strip.extend_cell_length(width).apply_style(
                    Style(reverse=self.has_focus, bold=True, underline=not self.has_focus))
            self._strips[index] = strip
        # the view's own background under the text (the focus ring's tint shows through)
        return strip.crop_extend(0, width, None).apply_style(self.rich_style)

    def on_resize(self) -> None:
        self._strips.clear()

    def on_focus(self) -> None:
        self._strips.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._strips.clear()
        self.refresh()


class MarkedLog(Log):
    """A `Log` whose line cut at the view's edge says so: `…` in its last cell (and its first
    when scrolled past the start). The output of a block (`[Sat Oct 24 10:08:02 2026]
    mlx5_core 0000:99:00.0: ...`) was cut silently at 80 columns; the rest is one scroll
    sideways away (right/left, or the mouse)."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        index = y + int(self.scroll_offset.y)
        width = min(strip.cell_length, self.scrollable_content_region.width)
        if not 0 <= index < len(self.lines) or width < 2:
            return strip
        x = int(self.scroll_offset.x)
        full = cell_len(self.lines[index].expandtabs())
        mark = Strip([Segment("…", self.rich_style)])
        if full > x + width:
            strip = Strip.join([strip.crop(0, width - 1), mark])
        if x > 0 and full > x:
            strip = Strip.join([mark, strip.crop(1, width)])
        return strip


class OutputStream:
    """Output lines from the engine (any thread), written into a `Log` in batches: `flush` (run
    by the screen every 50 ms) writes what arrived since the last one in one call, so 10,000
    lines a second cost a few redraws, not 10,000."""

    def __init__(self, log: Callable[[], Log]) -> None:
        self._log = log
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self.written = 0
        """Lines written into the log so far (for tests and the benchmark)."""

    def add(self, line: str) -> None:
        with self._lock:
            self._lines.append(line)

    def flush(self) -> None:
        with self._lock:
            lines, self._lines = self._lines, []
        if lines:
            self._log().write_lines(lines)
            self.written += len(lines)
