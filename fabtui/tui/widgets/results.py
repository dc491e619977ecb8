"""`SweepTable`: the probe console's one-line-per-target results, in a Line-API view.

A sweep over a rail or a whole fabric is thousands of targets arriving one by one; a DataTable
re-measures and re-renders as rows arrive. Here a row is three strings, only visible lines are
rendered, each rendered line is cached by what it shows (its row, the cursor, the width, the
theme, the focus, the width), and a new row repaints only itself (when visible). A line wider
than the view is cut ending in `…` (the result panel below shows the whole of the highlighted
one). `s` switches the order between arrival and worst first (then by target); the cursor stays
on its row.
"""

from __future__ import annotations

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

from fabtui.model.verdict import Verdict
from fabtui.render.table import cut, display_width, pad
from fabtui.tui.glyphs import glyph, health_style
from fabtui.tui.widgets.fit_table import cut_segments
from fabtui.tui.widgets.keys import list_cursor_bindings
from fabtui.views.status import Health

_HEALTH = {Verdict.OK: Health.OK, Verdict.SKIPPED: Health.OK, Verdict.WARN: Health.WARN,
           Verdict.FAIL: Health.FAIL, Verdict.ERROR: Health.UNREACHABLE,
           Verdict.ABORTED: Health.UNREACHABLE, Verdict.CANCELLED: Health.UNREACHABLE}

VERDICT_WIDTH = 11
"""`✓ cancelled` is the widest badge."""


def health_of(verdict: Verdict) -> Health:
    """How a verdict reads as a badge (an error: the target could not be measured)."""
    return _HEALTH.get(verdict, Health.UNKNOWN)


@dataclass(frozen=True)
class SweepRow:
    """One target's line: who, the verdict, and why (the error or the first finding)."""

    target: str
    verdict: Verdict
    why: str


class SweepTable(ScrollView, can_focus=True):
    """See the module docstring."""

    DEFAULT_CSS = """
    SweepTable { background: $surface; overflow-x: hidden; }
    SweepTable:focus { background-tint: $foreground 3%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *list_cursor_bindings("page(-1)", "page(1)"),
        Binding("s", "sort", "Sort", tooltip="arrival order / worst first"),
    ]

    class Highlighted(Message):
        """The cursor moved onto the row of result number `index` (in arrival order)."""

        def __init__(self, table: SweepTable, index: int) -> None:
            super().__init__()
            self.table = table
            self.index = index

        @property
        def control(self) -> SweepTable:
            return self.table

    def __init__(self, *, ascii_only: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ascii_only = ascii_only
        self.rows: list[SweepRow] = []
        self.order: list[int] = []
        """Display line -> row index (arrival order unless sorted)."""
        self.worst_first = False
        self.cursor = 0
        """The display line the cursor is on."""
        self._cache: dict[int, tuple[object, Strip]] = {}
        self._target_width = 6
        self.rendered = 0
        """Lines rendered anew (not from the cache): what a benchmark reads."""

    # data in ------------------------------------------------------------------------------------
    def clear(self) -> None:
        self.rows, self.order, self.cursor = [], [], 0
        self._cache.clear()
        self._target_width = 6
        self.virtual_size = Size(0, 0)
        self.refresh()

    def add(self, row: SweepRow) -> None:
        """Append a row (sorted in place when worst first); repaints only what moved."""
        index = len(self.rows)
        self.rows.append(row)
        if display_width(row.target) > self._target_width:
            self._target_width = min(40, display_width(row.target))
            self._cache.clear()
            self.refresh()
        if self.worst_first:
            line = self._insertion_line(row)
            self.order.insert(line, index)
            if line <= self.cursor and len(self.order) > 1:
                self.cursor += 1  # the cursor stays on its row
            if line < self.scroll_offset.y + self.size.height:
                self.refresh()  # the lines below it moved (their cache entries then miss)
        else:
            line = len(self.order)
            self.order.append(index)
            self.refresh_line(line)
        self.virtual_size = Size(self._line_width(), len(self.order))

    def _insertion_line(self, row: SweepRow) -> int:
        key = self._sort_key(row)
        low, high = 0, len(self.order)
        while low < high:  # bisect on the sort key (rows arrive unsorted)
            middle = (low + high) // 2
            if self._sort_key(self.rows[self.order[middle]]) <= key:
                low = middle + 1
            else:
                high = middle
        return low

    @staticmethod
    def _sort_key(row: SweepRow) -> tuple[int, str]:
        return -row.verdict.rank, row.target

    @property
    def selected(self) -> int | None:
        """The result number (arrival order) under the cursor."""
        return self.order[self.cursor] if 0 <= self.cursor < len(self.order) else None

    # moving -------------------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        if self.order:
            self._move_to(max(0, min(len(self.order) - 1, self.cursor + step)))

    def action_page(self, pages: int) -> None:
        self.action_move(pages * max(1, self.size.height - 1))

    def action_sort(self) -> None:
        """Arrival order <-> worst first; the cursor stays on its row."""
        keep = self.selected
        self.worst_first = not self.worst_first
        self.order = sorted(range(len(self.rows)), key=lambda i: self._sort_key(self.rows[i])) \
            if self.worst_first else list(range(len(self.rows)))
        self._cache.clear()
        self.refresh()
        if keep is not None:
            self._move_to(self.order.index(keep))

    def _move_to(self, line: int) -> None:
        old, self.cursor = self.cursor, line
        self.refresh_line(old)
        self.refresh_line(line)
        self.scroll_to_region(Region(0, line, 1, 1), animate=False, immediate=True)
        selected = self.selected
        if selected is not None:
            self.post_message(self.Highlighted(self, selected))

    def on_click(self, event: events.Click) -> None:
        line = event.y + self.scroll_offset.y
        if 0 <= line < len(self.order):
            self._move_to(line)

    # drawing ------------------------------------------------------------------------------------
    def _line_width(self) -> int:
        return self._target_width + VERDICT_WIDTH + 4 + 80

    def render_line(self, y: int) -> Strip:
        line = y + self.scroll_offset.y
        width = self.size.width
        if not 0 <= line < len(self.order):
            return Strip.blank(width)
        signature = (self.order[line], line == self.cursor, self.app.theme, self.has_focus,
                     self._target_width, self.ascii_only, width)
        cached = self._cache.get(line)
        if cached is None or cached[0] != signature:
            cached = (signature, self._render_row(self.rows[self.order[line]],
                                                  line == self.cursor, width))
            self._cache[line] = cached
            self.rendered += 1
        return cached[1].crop_extend(self.scroll_offset.x, self.scroll_offset.x + width, None)

    def _render_row(self, row: SweepRow, cursor: bool, width: int) -> Strip:
        """The row in `width` columns: what does not fit ends in `…` (the reason first: the
        result panel says it whole)."""
        theme = self.app.current_theme
        health = health_of(row.verdict)
        base = Style(color=theme.foreground, reverse=cursor and self.has_focus,
                     bold=cursor)
        target = pad(cut(row.target, self._target_width), self._target_width)
        badge = f"{glyph(health, self.ascii_only)} {row.verdict.value}"
        segments = [Segment(f" {target}  ", base),
                    Segment(f"{badge:<{VERDICT_WIDTH}}", health_style(health, theme)),
                    Segment(f"  {row.why}", base)]
        return Strip(cut_segments(segments, width) if width > 0 else segments)

    def on_focus(self) -> None:
        self.refresh()  # the cursor row's look: the cache's signature holds `has_focus`

    def on_blur(self) -> None:
        self.refresh()
