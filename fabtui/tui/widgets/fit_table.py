"""`FitTable`: a table whose columns are sized to the terminal and whose numbers stay whole.

The app's result tables (the probe console's parser and metrics tables, a session's results
and its before/after readings) showed values cut at the screen's edge: at 80 columns 15.338
read as `1` and 599.372 as `59`. Here the widths come from `fabtui.render.table.column_widths`,
the rule the command line's tables follow: text columns give way first, each cut ending in
`…`; a right-aligned (value) column is never cut. What still does not fit scrolls sideways
(left/right, or the mouse), the heading line staying on top while the rows scroll.

A Line-API view: only the visible lines are drawn, and the layout is worked out again only when
the rows or the width change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.console import Console
from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import DataTable

from fabtui.model.table import Column
from fabtui.render.table import ELLIPSIS, GAP, column_widths, cut, display_width
from fabtui.tui.widgets.hanging import hang

FitCell = str | Text
"""A cell: plain text, or styled text (a verdict badge)."""


def cut_text(text: Text, width: int) -> Text:
    """Styled `text` in at most `width` columns: itself when it fits, else a copy cut where
    `cut` cuts plain text (at a character: a wide one is never halved into a blank) ending in
    `…`, the mark styled as the last character kept (a highlighted word cut stays marked)."""
    plain = text.plain
    shown = cut(plain, width)
    if shown == plain:
        return text
    kept = max(0, len(shown) - len(ELLIPSIS))
    short = text.copy()
    short.right_crop(len(plain) - kept)
    if width <= 0:
        return short
    marks = [span.style for span in short.spans if span.start < kept <= span.end]
    short.append(ELLIPSIS)
    for style in marks:
        short.stylize(style, kept, kept + 1)
    return short


def cut_segments(segments: list[Segment], width: int) -> list[Segment]:
    """`segments` (one line) in at most `width` columns: themselves when they fit, else cut
    where `cut` cuts their joined text, ending in `…` styled as the segment it cuts. What
    `cut_text` does for a `Text`, at a third of the cost for a list's line drawn per keystroke
    (no `Text` to build and render)."""
    plain = "".join(segment.text for segment in segments)
    shown = cut(plain, width)
    if shown == plain:
        return segments
    left = max(0, len(shown) - len(ELLIPSIS))
    out: list[Segment] = []
    style = None
    for segment in segments:
        if left <= 0 and out:
            break
        out.append(Segment(segment.text[:left], segment.style))
        style = segment.style
        left -= len(segment.text)
    if width > 0:
        out.append(Segment(ELLIPSIS, style))
    return out


def fold_text(text: Text, width: int, lines: int, console: Console, *,
              hanging: bool = False) -> tuple[Text, bool]:
    """`text` folded at its words into lines of `width` cells, at most `lines` of them, and
    whether some was left out: then the last line ends in `…` (a box of fixed height crops
    what it cannot hold without a mark). Lines past the room are joined into the last one
    (` · ` between what were lines of their own) as long as that fits. `hanging`: a long
    line's continuation indented under it (`Hanging`). `text` itself while the width is not
    known yet."""
    if width <= 0:
        return text, False
    folded: list[tuple[Text, bool]] = []  # a line, and whether it ends a line of `text`
    for paragraph in text.split("\n", allow_blank=True):
        wrapped = hang(console, paragraph, width) if hanging else \
            list(paragraph.wrap(console, width)) or [Text()]
        folded += [(line, number == len(wrapped) - 1) for number, line in enumerate(wrapped)]
    for line, _ in folded:
        line.rstrip()  # (a fold leaves the space it broke at)
    cut = False
    if len(folded) > lines:
        rest = Text()
        ended = False
        for line, ends in folded[lines - 1:]:
            if rest:
                rest.append(" · " if ended else " ")
                line = line[len(line.plain) - len(line.plain.lstrip(" ")):]  # its indent
            rest.append_text(line)
            ended = ends
        shown = cut_text(rest, width)
        cut = shown is not rest
        folded = [*folded[:lines - 1], (shown, True)]
    return Text("\n").join(line for line, _ in folded), cut


def fit_cell(cell: FitCell, width: int, align: str) -> Text:
    """`cell` in exactly `width` columns: padded, or cut ending in `…` (never for a value
    column, whose widths are made to hold every cell)."""
    text = cut_text(cell.copy() if isinstance(cell, Text) else Text(cell), width)
    fill = width - display_width(text.plain)
    if fill > 0:
        text = Text(" " * fill) + text if align == "right" else text + Text(" " * fill)
    return text


def split_common(texts: Sequence[str], separators: str = ":/") -> tuple[str, list[str]]:
    """What every one of `texts` starts with, up to and including a separator, and what is
    left of each: `leaf-g00-r3:Ethernet16/lane1`, `.../lane2` -> (`leaf-g00-r3:Ethernet16/`,
    [`lane1`, `lane2`]); a text that is the shared part itself (the port beside its lanes)
    leaves ""; all alike -> (the text, [""...]); nothing shared -> ("", texts)."""
    if not texts:
        return "", []
    if all(t == texts[0] for t in texts):
        return texts[0], ["" for _ in texts]
    end = separators[-1]
    padded = [t if t.endswith(tuple(separators)) else t + end for t in texts]
    first = padded[0]
    length = 0
    for index, char in enumerate(first):
        if any(len(t) <= index or t[index] != char for t in padded):
            break
        if char in separators:
            length = index + 1
    return first[:length], [t[length:] for t in texts]


class FitTable(ScrollView, can_focus=True):
    """See the module docstring."""

    DEFAULT_CSS = """
    FitTable { height: auto; max-height: 24; background: $surface; overflow-x: auto;
               overflow-y: auto; }
    FitTable:focus { background-tint: $foreground 4%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "scroll_up", show=False),
        Binding("down,j", "scroll_down", show=False),
        Binding("left,h", "scroll_left", show=False),
        Binding("right,l", "scroll_right", show=False),
        Binding("home", "scroll_home", show=False),
        Binding("end", "scroll_end", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
    ]

    def __init__(self, columns: Sequence[Column] = (),
                 rows: Sequence[Sequence[FitCell]] = (), *, caption: str = "",
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.columns: tuple[Column, ...] = ()
        self.rows: list[tuple[FitCell, ...]] = []
        self.caption = ""
        """A line above the headings: what every row shares (a component, a block)."""
        self.widths: list[int] = []
        """Each column's width, as last laid out."""
        self._laid_for = -1
        self._lines: list[Strip] = []
        self.set_rows(columns, rows, caption)

    def set_rows(self, columns: Sequence[Column], rows: Sequence[Sequence[FitCell]],
                 caption: str = "") -> None:
        """Show `rows` under `columns` (laid out again at the current width)."""
        self.columns = tuple(columns)
        self.rows = [tuple(r) for r in rows]
        self.caption = caption
        self._laid_for = -1
        self._layout(self._room())
        self.refresh(layout=True)

    def _room(self) -> int:
        """Columns the lines have: the view's width less a vertical scrollbar's."""
        return self.scrollable_content_region.width if self.is_attached else 0

    def _layout(self, width: int) -> None:
        """Column widths for `width` columns (the natural ones until the view knows its
        width), and every line drawn once."""
        plain = [[c.plain if isinstance(c, Text) else c for c in row] for row in self.rows]
        self.widths = column_widths(self.columns, plain, width if width > 0 else None)
        self._laid_for = width
        lines = [self._line([Text(c.heading, style="bold") for c in self.columns])]
        if self.caption:
            caption = fit_cell(self.caption, max(width, 1), "left") if width > 0 else \
                Text(self.caption)
            caption.stylize("italic")
            lines.insert(0, self._strip(caption))
        lines += [self._line(list(row)) for row in self.rows]
        self._lines = lines
        total = sum(self.widths) + len(GAP) * max(0, len(self.widths) - 1)
        self.virtual_size = Size(total, len(lines))

    def _line(self, cells: list[FitCell]) -> Strip:
        text = Text()
        for number, (cell, width, column) in enumerate(zip(cells, self.widths, self.columns,
                                                            strict=True)):
            if number:
                text.append(GAP)
            text.append_text(fit_cell(cell, width, column.align))
        return self._strip(text)

    def _strip(self, text: Text) -> Strip:
        return Strip(list(text.render(self.app.console)) if self.is_attached else
                     [Segment(text.plain)])

    @property
    def sticky(self) -> int:
        """Lines that stay on top while the rows scroll: the caption and the headings."""
        return 2 if self.caption else 1

    def on_mount(self) -> None:
        self._layout(self._room())

    def on_resize(self) -> None:
        if self._room() != self._laid_for:
            self._layout(self._room())
            self.refresh()

    def shown_text(self) -> list[str]:
        """Every line as laid out (heading first), whole: what the table says, for tests."""
        return [strip.text for strip in self._lines]

    def render_line(self, y: int) -> Strip:
        width = self._room()
        if width != self._laid_for:  # a scrollbar came or went: the room changed
            self._layout(width)
        # the caption and heading stay on top; the rows scroll under them
        index = y if y < self.sticky else y + int(self.scroll_offset.y)
        if not 0 <= index < len(self._lines):
            return Strip.blank(width, self.rich_style)
        if index == 0 and self.caption:  # the caption does not scroll sideways
            return self._lines[0].crop_extend(0, width, None).apply_style(self.rich_style)
        x = int(self.scroll_offset.x)
        # the view's own background under the cells (the focus ring's tint shows through)
        return self._lines[index].crop_extend(x, x + width, None).apply_style(self.rich_style)


def fit_data_table(table: DataTable[Any], columns: Sequence[Column],
                   rows: Sequence[Sequence[FitCell]], keys: Sequence[str] | None = None,
                   width: int | None = None) -> None:
    """Fill a `DataTable` (a list with a cursor: the runbooks, the sessions) the way a
    `FitTable` is laid out: columns sized to `width` (default: the table's own), text cut with
    `…`, values whole. Called again when the width changes."""
    width = width if width is not None else table.scrollable_content_region.width
    pad = 2 * table.cell_padding
    plain = [[c.plain if isinstance(c, Text) else c for c in row] for row in rows]
    widths = column_widths(columns, plain,
                           width - pad * len(columns) + len(GAP) * (len(columns) - 1)
                           if width > 0 else None)
    table.clear(columns=True)
    for column, size in zip(columns, widths, strict=True):
        table.add_column(cut(column.heading, size), width=size)
    for number, row in enumerate(rows):
        table.add_row(*(fit_cell(cell, size, column.align) for cell, size, column
                        in zip(row, widths, columns, strict=True)),
                      key=keys[number] if keys is not None else None)
