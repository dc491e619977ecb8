"""`CaseList`: search results (or the whole library) as a Line-API list, three lines a case.

Line one is the case (id, badge, title), line two its snippet with the matched words
highlighted, line three why it matched. Only the visible lines are rendered, each cached by
what it shows, so ten thousand cases cost what a screenful does; a new list replaces the old
one in one call (search-as-you-type sets a list per keystroke).

A line wider than the list is cut ending in `…` (issue 37's rule, missed here: at 80 columns
titles and snippets were cut at the edge with nothing to say so), measured in cells, so a
Chinese title is cut where it meets the edge; the title is last on its line, so the id and the
score before it stay whole. Cut, not wrapped: a case stays three lines (the cursor, a click and
the scroll count on it) and a screenful keeps as many cases, as in k9s or lazygit's lists; the
whole title, why the case matched (the `matched …` line, whole) and the case's text are on
enter (the case view), which the footer shows while the list has the focus. A snippet whose
first matched word would lie past the edge (forty Chinese characters of context are eighty
cells) starts later, after a `…`, so the match is on screen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from fabtui.render.table import ELLIPSIS, char_width, display_width
from fabtui.tui.widgets.fit_table import cut_segments
from fabtui.tui.widgets.keys import list_cursor_bindings

LINES = 3
"""Lines per case."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One case as the list shows it (slots: the listing holds one per case, and the
    collector walks each object it tracks)."""

    id: str
    title: str
    badge: str = ""
    """Status, severity or score, shown between the id and the title."""
    snippet: str = ""
    spans: tuple[tuple[int, int], ...] = ()
    """(start, end) of the matched words in `snippet`."""
    why: str = ""


class CaseList(ScrollView, can_focus=True):
    """See the module docstring."""

    DEFAULT_CSS = """
    CaseList { background: $surface; overflow-x: hidden; }
    CaseList:focus { background-tint: $foreground 3%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        *list_cursor_bindings("move(-5)", "move(5)"),
        # shown in the footer while the list has the focus: what reads a row cut at its `…`
        Binding("enter", "choose", "Open"),
    ]

    class NearEnd(Message):
        """The cursor came to the last few cases: the screen may have more to show."""

    class Chosen(Message):
        """`enter` (or a click) on a case."""

        def __init__(self, case_id: str) -> None:
            super().__init__()
            self.case_id = case_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[Entry] = []
        self.cursor = 0
        self._cache: dict[int, tuple[object, Strip]] = {}
        self.painted = 0
        """Lines rendered anew since mount: what tests and benchmarks read."""
        self.set_at = 0.0
        self.drawn_at = 0.0
        """`perf_counter()` when the entries were last set, and when a line was last rendered:
        a benchmark reads the time from a key to its results on screen from these."""

    # data in ------------------------------------------------------------------------------------
    def set_entries(self, entries: list[Entry], cursor: int = 0) -> None:
        """Show `entries`, the cursor on the first (or on `cursor`, for more of the same)."""
        self.set_at = time.perf_counter()
        self.entries = entries
        self.cursor = max(0, min(cursor, len(entries) - 1))
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(entries) * LINES)
        if cursor:
            self.scroll_to_region(Region(0, self.cursor * LINES, 1, LINES), animate=False,
                                  immediate=True)
        else:
            self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    @property
    def selected(self) -> Entry | None:
        return self.entries[self.cursor] if 0 <= self.cursor < len(self.entries) else None

    # keys ---------------------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        if not self.entries:
            return
        old = self.cursor
        self.cursor = max(0, min(len(self.entries) - 1, self.cursor + step))
        for index in (old, self.cursor):
            for line in range(LINES):
                self.refresh_line(index * LINES + line)
        self.scroll_to_region(Region(0, self.cursor * LINES, 1, LINES), animate=False,
                              immediate=True)
        if step > 0 and self.cursor >= len(self.entries) - 3:
            self.post_message(self.NearEnd())

    def action_choose(self) -> None:
        if self.selected is not None:
            self.post_message(self.Chosen(self.selected.id))

    def on_click(self, event: events.Click) -> None:
        index = (event.y + self.scroll_offset.y) // LINES
        if 0 <= index < len(self.entries):
            self.action_move(index - self.cursor)
            self.action_choose()

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.entries) * LINES)
        self._cache.clear()

    def on_focus(self) -> None:
        self.refresh()  # the cursor row's look: the cache's signature holds `has_focus`

    def on_blur(self) -> None:
        self.refresh()

    # drawing ------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        self.drawn_at = time.perf_counter()
        line = y + self.scroll_offset.y
        width = self.scrollable_content_region.width  # the scrollbar's cells left out
        index, part = divmod(line, LINES)
        if not 0 <= index < len(self.entries):
            return Strip.blank(width, self.rich_style)
        signature = (index == self.cursor, self.has_focus, self.app.theme, width)
        cached = self._cache.get(line)
        if cached is None or cached[0] != signature:
            cached = (signature, self._draw(self.entries[index], part, index == self.cursor,
                                              width))
            self._cache[line] = cached
            self.painted += 1
        return cached[1]

    def _draw(self, entry: Entry, part: int, selected: bool, width: int) -> Strip:
        theme = self.app.current_theme
        base = Style(color=theme.foreground, bgcolor=theme.primary if selected and
                     self.has_focus else None, bold=selected)
        muted = Style(color=theme.foreground, dim=True)
        mark = Style(color=theme.warning, bold=True, underline=True)
        indent = "    "
        segments: list[Segment]
        if part == 0:
            segments = [Segment(("▸ " if selected else "  ") + entry.id, base)]
            if entry.badge:
                segments.append(Segment(f"  {entry.badge}", base + Style(italic=True)))
            segments.append(Segment(f"  {entry.title}", base))
        elif part == 1:
            snippet, spans = in_view(entry.snippet, entry.spans, width - len(indent))
            segments = [Segment(indent)]
            at = 0
            for start, end in spans:
                segments.append(Segment(snippet[at:start], muted))
                segments.append(Segment(snippet[start:end], mark))
                at = end
            segments.append(Segment(snippet[at:], muted))
        else:
            segments = [Segment(indent)]
            if entry.why:
                segments.append(Segment("matched ", muted))
                segments.append(Segment(entry.why, Style(color=theme.accent)))
        return Strip(cut_segments(segments, width)).crop_extend(0, width, None).apply_style(
            self.rich_style)


def in_view(snippet: str, spans: tuple[tuple[int, int], ...],
            room: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    """`snippet` and its `spans`, started later (after a `…`) when its first matched word
    would end past `room` cells, keeping about a quarter of the room before the match; as
    they are otherwise. The snippet's context is counted in characters (forty before the
    match), and forty Chinese characters fill eighty cells: the match was off screen."""
    if not spans or room <= 0 or display_width(snippet[:spans[0][1]]) <= room - 1:
        return snippet, spans
    first = spans[0][0]
    start, lead = first, 0
    while start > 0 and lead + char_width(snippet[start - 1]) <= room // 4:
        start -= 1
        lead += char_width(snippet[start])
    if start == 0:
        return snippet, spans  # the match itself is wider than the room
    space = snippet.find(" ", start, first)  # from a word's start where there is one
    if space != -1 and not snippet[start - 1].isspace():
        start = space + 1
    shift = len(ELLIPSIS) - start
    return ELLIPSIS + snippet[start:], tuple((a + shift, b + shift) for a, b in spans
                                             if a >= start)
