"""The one renderer of `fabtui.model.table.Table` for the terminal.

Widths are display columns, not characters: CJK ideographs and other East Asian wide or
full-width characters take two columns, combining marks and zero-width characters none, so a
table with Chinese cells still lines up. Given a `width`, the widest text columns are cut
(ending in `…`) until the table fits; right-aligned (numeric) cells are never cut, because a
shortened number reads as a different number. Without a width (output to a pipe or a file)
nothing is cut.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence

from fabtui.model.table import Cell, Column, Table

GAP = "  "
"""Between two columns."""
ELLIPSIS = "…"
MIN_TEXT_WIDTH = 6
"""No column is cut narrower than this (or its natural width, if smaller)."""
MISSING = "-"
_WORD_ENDS = "._-:/ "
"""Where a name's words end (`rate.tx_prio3_pause`, `leaf-g00-r4:Ethernet40`)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@functools.lru_cache(maxsize=8192)
def char_width(char: str) -> int:
    """Display columns of one character: 2 for wide/full-width, 0 for combining or format.
    Cached: three Unicode look-ups a character made the app's per-line cuts cost ~100 us."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Display columns `text` takes on a terminal."""
    if text.isascii():
        return len(text)
    return sum(char_width(c) for c in text)


def cut(text: str, width: int) -> str:
    """`text` in at most `width` display columns, ending in `…` when something was cut (`text`
    itself when it fits). One pass that stops at the edge: a long text costs what fits."""
    if text.isascii():
        return text if len(text) <= width else text[:width - 1] + ELLIPSIS if width > 0 else ""
    used = 0
    short = 0  # the characters that fit in `width - 1` columns (the room beside the `…`)
    for index, char in enumerate(text):
        used += char_width(char)
        if used <= width - 1:
            short = index + 1
        elif used > width:
            return text[:short] + ELLIPSIS if width > 0 else ""
    return text


def cut_middle(text: str, width: int) -> str:
    """`text` in at most `width` display columns, its middle replaced by `…` when something was
    cut (`text` itself when it fits): both ends kept, where names that share a start differ
    (`rate.rx_prio3_pause`, `rate.rx_prio3_marked` -> `rate.rx…_pause`, `rate.rx…marked`;
    cut at the end both read `rate.rx_prio3…`)."""
    if display_width(text) <= width:
        return text
    if width <= 2:
        return cut(text, width)
    head, tail = 0, len(text)  # text[:head] and text[tail:] are kept
    room = width - 1
    side = 0  # a character from the start, then from the end, in turn, while they fit
    while head < tail:
        for turn in (side, 1 - side):
            index = head if turn == 0 else tail - 1
            if char_width(text[index]) <= room:
                room -= char_width(text[index])
                head, tail = (head + 1, tail) if turn == 0 else (head, tail - 1)
                side = 1 - turn
                break
        else:
            break
    # a word cut short at the tail's start (`x_prio3` of `tx_prio3`) is kept whole when that
    # costs the head at most three characters
    start = tail
    while start > head and text[start - 1] not in _WORD_ENDS and tail - start < 3:
        start -= 1
    moved = tail - start
    if moved and text[start - 1] in _WORD_ENDS and head - moved >= 3 and \
            display_width(text[head - moved:head]) >= display_width(text[start:tail]):
        head, tail = head - moved, start
    return text[:head] + ELLIPSIS + text[tail:]


def pad(text: str, width: int, align: str = "left") -> str:
    """`text` padded with spaces to `width` display columns (never cut)."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if align == "right" else text + fill


def cell_text(value: Cell) -> str:
    """How a cell value reads: `-` for missing, `yes`/`no`, floats without noise digits."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    # A newline or tab inside a cell would break the row apart.
    return _CONTROL.sub(" ", str(value))


def column_widths(columns: Sequence[Column], rows: Sequence[Sequence[str]],
                  width: int | None) -> list[int]:
    """Each column's width for a table `width` columns wide (None: natural widths): text
    columns are cut, the widest first, down to `MIN_TEXT_WIDTH`; a right-aligned (value)
    column keeps every cell whole. The sum may exceed `width` when the floors do (a screen
    then scrolls sideways)."""
    natural = [max([display_width(c.heading)] + [display_width(r[i]) for r in rows])
               for i, c in enumerate(columns)]
    if width is None:
        return natural
    budget = width - len(GAP) * (len(columns) - 1)
    if sum(natural) <= budget:
        return natural
    # Numbers keep their cells whole (only a long heading is cut); text columns give way.
    floors = [max([min(natural[i], MIN_TEXT_WIDTH)]
                  + ([display_width(r[i]) for r in rows] if c.align == "right" else []))
              for i, c in enumerate(columns)]

    def fitted(cap: int) -> list[int]:
        return [min(n, max(f, cap)) for n, f in zip(natural, floors, strict=True)]

    low, high = 0, max(natural)
    while low < high:  # the widest cap at which the table fits
        mid = (low + high + 1) // 2
        if sum(fitted(mid)) <= budget:
            low = mid
        else:
            high = mid - 1
    widths = fitted(low)
    # Hand the columns left under the cap to the cut ones, widest natural first.
    spare = budget - sum(widths)
    for i in sorted(range(len(widths)), key=lambda i: -natural[i]):
        if spare <= 0:
            break
        extra = min(spare, natural[i] - widths[i])
        widths[i] += extra
        spare -= extra
    return widths


def render_table(table: Table, width: int | None = None) -> str:
    """The table as lines: title, headings, rows (or `(no rows)`), notes. No final newline."""
    out = list(table.title)
    if table.columns:
        rows = [[cell_text(v) for v in row] for row in table.rows]
        widths = column_widths(table.columns, rows, width)

        def line(cells: Sequence[str]) -> str:
            return GAP.join(pad(cut(text, w), w, col.align) for text, w, col
                            in zip(cells, widths, table.columns, strict=True)).rstrip()

        out.append(line([c.heading for c in table.columns]))
        out.extend(line(row) for row in rows)
        if not rows:
            out.append("(no rows)")
    out.extend(table.notes)
    return "\n".join(out)


def render_tables(tables: Iterable[Table], width: int | None = None) -> str:
    """Several tables, a blank line between two. No final newline."""
    return "\n\n".join(render_table(t, width) for t in tables)
