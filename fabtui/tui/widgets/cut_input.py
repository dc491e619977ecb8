"""A one-line input that marks where its text is cut (issue 37: every cut ends in `…`).

Textual's `Input` scrolls a value wider than the field and shows only the part around the
cursor, with nothing to say that more is hidden: a long case title read
`NCCL hang on node003 (…): dark` as if that were all. `CutInput` draws `…` in the edge cell
that hides more (the right one, the left one once scrolled), except where the cursor stands,
and is otherwise the same `Input`: typing, the cursor and scrolling are unchanged, and the
value is never altered. Draws only. An empty field's placeholder cut at the right edge ends
in `…` too (the case search's examples lost `status:resolved since:…` at 80 columns).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widgets import Input

MARK = "…"


class CutInput(Input):
    """See the module docstring."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if y != 0 or self.password:
            return strip
        width = self.scrollable_content_region.width
        if not self.value:
            if cell_len(self.placeholder) > width > 1:
                return _mark(strip, width - 1)
            return strip
        scroll_x = round(self.scroll_offset.x)
        cursor = self.cursor_position - scroll_x if self.has_focus else None
        if self._value.cell_len > scroll_x + width and width > 1 and cursor != width - 1:
            strip = _mark(strip, width - 1)
        if scroll_x > 0 and width > 1 and cursor != 0:
            strip = _mark(strip, 0)
        return strip


def _mark(strip: Strip, cell: int) -> Strip:
    """`strip` with the character at `cell` replaced by `MARK`, in that cell's style."""
    here = list(strip.crop(cell, cell + 1))
    style: Style | None = here[0].style if here else None
    return Strip.join([strip.crop(0, cell), Strip([Segment(MARK, style)], 1),
                       strip.crop(cell + 1, strip.cell_length)])


__all__ = ["MARK", "CutInput"]
