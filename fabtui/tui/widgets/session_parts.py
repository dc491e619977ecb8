"""Pieces of the guided session screen: a block's state as a badge (glyph and word, never colour
alone), the outline of steps and blocks, and the output stream that batches lines into a Log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from rich.text import Text
from textual.theme import Theme
from textual.widgets import Log

from fabtui.tui.glyphs import health_style
from fabtui.views.guided import SessionView
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


def outline(view: SessionView, theme: Theme, ascii_only: bool = False) -> tuple[Text, int]:
    """Every step with its blocks: the block's badge and id; the block running or last run is
    marked, a decide block names the branch it took. Also the line of the marked block (0:
    none), for scrolling it into view. One line per block, cut with an ellipsis, never wrapped."""
    text = Text(no_wrap=True, overflow="ellipsis")
    line = marked = 0
    for number, step in enumerate(view.book.steps, 1):
        here = step.id == view.step
        text.append(f"{'>' if here else ' '}{number:>2}. {step.title[:40]}\n",
                    "bold" if here else "")
        line += 1
        for block in step.blocks:
            state = view.states.get(block.id, "pending")
            marker = ">" if block.id == view.block else " "
            if block.id == view.block:
                marked = line
            line += 1
            text.append(f"   {marker} ")
            text.append_text(badge(state, theme, ascii_only))
            shown = "" if block.id.startswith(f"{step.id}-") else f" {block.id}"
            text.append(f" {block.kind.value}{shown[:24]}")
            taken = view.decisions.get(block.id, "")
            if block.kind.value == "decide" and taken.startswith("branch taken: "):
                target = taken.removeprefix("branch taken: ").split(" (", 1)[0]
                text.append(f" {'->' if ascii_only else '→'} {target}")
            text.append("\n")
    return text, marked


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
