"""`FabricMatrix`: the spine–leaf–rail picture and the node x rail matrix, in one Line-API view.

One line per row (the spine tiers and every rail's uplinks and leaves, laid out for the view's
width and aggregated when a tier does not fit; each group's uplinks and leaves, a row of each per
plane in a multi-plane fabric; then one line per node, a cell per rail standing for the node's
NIC on it in every plane), one cell per element or per set of elements; only visible lines are
rendered, each rendered line is cached by what it shows (the health of its cells, the cursor,
the theme), and a new snapshot repaints only the lines whose cells changed. A 1,024-node fabric
is a thousand lines, not thousands of widgets.
"""

from __future__ import annotations

import math
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

from fabtui.render.table import cut_middle, display_width, pad
from fabtui.tui.glyphs import glyph, health_style, mark
from fabtui.views.fabricmap import SET, FabricMap, ViewFilter
from fabtui.views.status import EMPTY, FabricSnapshot, Health, worst_health

CELL = 4
"""Columns per rail cell: a space, the glyph, two spaces."""


@dataclass(frozen=True)
class Cell:
    """One selectable cell: the element it selects and those whose health colours it."""

    key: str
    health_keys: tuple[str, ...]
    caption: str = ""


@dataclass(frozen=True)
class Row:
    """One line: a label and its cells, or a heading (not selectable)."""

    label: str
    cells: tuple[Cell, ...] = ()
    heading: str | None = None
    indent: int = 0
    """Blank columns before the first cell: a row of one cell per rail (a group's leaves and
    uplinks) starts under the node rows' first rail, past their node column."""
    rails: tuple[int, ...] = ()
    """A heading that names the rails (`node r0  r1 ...`): the rails it names, in order, so a
    view too narrow for them all says which are out of sight."""
    group: str = ""
    """The group label a group's row is labelled with (`g00 leaf`: `g00`); cut first when the
    label does not fit (`row_label`)."""


GROUP_TAIL = len(" leaf")
"""Cells a group row keeps after its group label (` up`, ` leaf`): both rows of a group cut
its label alike."""


def label_width(fabric: FabricMap) -> int:
    """Columns of the label column: the widest node name in cells (a wide character is two),
    at least `uplinks`, then a space."""
    return max([display_width(n) for n in fabric.nodes] + [9]) + 1


def row_label(row: Row, width: int) -> str:
    """`row`'s label padded to `width` cells. A group row's label (`<group> leaf`) longer than
    that (a plane's name as long as a topology makes it pushed its row's cells out from under
    their rails) has its group label cut in the middle, keeping ` up`/` leaf` and one blank
    before the cells: both ends stay, where labels that share a start differ (`pod-east-a`,
    `pod-east-b`). The whole label is on the detail panel (a leaf's `group`). Other labels
    are never cut: node names set the column's width, and a tier's name (`super-spines`)
    sits on no rail."""
    label = row.label
    room = width - 1
    if row.group and label.startswith(row.group) and \
            display_width(row.group) + GROUP_TAIL > room:  # (` up` too: its group's cut alike)
        label = cut_middle(row.group, max(1, room - GROUP_TAIL)) + label[len(row.group):]
    return pad(label, width)


RAIL_AXIS = CELL
"""Where a rail's cell starts after the label: node rows draw the node's own cell first."""


def rail_heading(rails: list[int], lead: str = "") -> str:
    """`lead` then `r0  r1  ...`, each rail's `r` over the glyph of its cells (a cell is a
    space then the glyph)."""
    return f"{lead:<{RAIL_AXIS + 1}}" + "".join(f"r{r:<{CELL - 1}}" for r in rails)


PICTURE_WIDTH = 80
"""The width the picture is laid out for until the view knows its own."""
MIN_WIDTH = 30
"""The matrix is never narrower than this (the label and a few rails)."""
DETAIL_ROOM = 30
"""Columns the matrix leaves beside it for the detail panel, at the least."""
DETAIL_SHARE = 0.46
"""The share of the screen's width the detail panel keeps whatever the picture's width: the
panel had 46 % before the matrix became picture-wide, and taking two or three of its columns
at 80 cut its metric names and values shorter (issue 37). A wide screen still gives the panel
everything the picture does not need."""
TIER_LINES = 2
"""Lines a tier of switches (spines, super-spines) may take before its cells are aggregated."""


def build_rows(fabric: FabricMap, view: ViewFilter, width: int = PICTURE_WIDTH) -> list[Row]:
    """The lines the matrix shows under `view`, laid out for `width` columns: the spine-leaf-rail
    picture (every layer, however big the fabric: a tier too wide for the view is drawn as
    cells of several switches each), then each group's uplinks and leaves (a row of each per
    plane) and its nodes."""
    rails = [r for r in fabric.rails if view.shows_rail(r)]
    room = max(1, (width - label_width(fabric)) // CELL)  # cells a line holds
    rows = _tier_rows("super-spines", fabric.super_spines, room) if fabric.super_spines else []
    rows += _tier_rows("spines", fabric.spines, room)
    blocks: dict[str, list[tuple[str, dict[int, str]]]] = {}  # a block of nodes: its leaf rows
    for label, by_rail in fabric.groups:
        blocks.setdefault(fabric.row_block.get(label, label), []).append((label, by_rail))
    if len(blocks) > 1 and rails:  # every rail's leaves at a glance, above the groups
        rows.append(Row("rails", heading=rail_heading(rails).rstrip(), rails=tuple(rails)))
        if fabric.leaf_uplinks:
            rows.append(Row("uplinks", tuple(_set_cell(fabric, f"{SET}uplinks:r{r}")
                                             for r in rails), indent=RAIL_AXIS))
        rows.append(Row("leaves", tuple(_set_cell(fabric, f"{SET}leaves:r{r}") for r in rails),
                        indent=RAIL_AXIS))
    for block, leaf_rows in blocks.items():
        nodes = [n for n in fabric.group_nodes.get(block, []) if view.shows_node(n)]
        if view.nodes is not None and not nodes:
            continue
        for label, by_rail in leaf_rows:  # one row of leaves per plane in a multi-plane fabric
            leaves = [(r, by_rail.get(r)) for r in rails]
            if fabric.leaf_uplinks:  # a fabric of leaves only has no uplinks to show
                rows.append(Row(f"{label} up", tuple(
                    Cell(f"uplinks:{leaf}", fabric.leaf_uplinks.get(leaf, ())) if leaf else
                    Cell("", ()) for _, leaf in leaves), indent=RAIL_AXIS, group=label))
            rows.append(Row(f"{label} leaf", tuple(
                Cell(leaf, (leaf,)) if leaf else Cell("", ()) for _, leaf in leaves),
                indent=RAIL_AXIS, group=label))
        rows.append(Row("", heading=rail_heading(rails, "node").rstrip(), rails=tuple(rails)))
        for node in nodes:
            cells = [Cell(node, (node,))]
            for rail in rails:
                attached = fabric.cells.get((node, rail), ())
                # the node's NICs on the rail, every plane's: the worst of them shows
                cells.append(Cell(f"{node}@{rail}", tuple(c.link or c.nic for c in attached))
                             if attached else Cell("", ()))
            rows.append(Row(node, tuple(cells)))
    unplaced = [n for n in fabric.group_nodes.get("", []) if view.shows_node(n)]
    if unplaced:
        rows.append(Row("", heading="unattached"))
        rows += [Row(n, (Cell(n, (n,)),)) for n in unplaced]
    return rows


def _tier_rows(name: str, switches: list[str], room: int) -> list[Row]:
    """One tier of switches in at most TIER_LINES lines of `room` cells: named cells when
    they fit, bare glyphs when only those fit, else cells of several switches each (worst
    health), with a line saying how many a cell holds. No switches: a line that says so."""
    if not switches:
        return [Row(name, heading="none in the topology")]
    widest = max(len(s) for s in switches) + 1
    named = max(1, room * CELL // (CELL + widest))
    if len(switches) <= named * TIER_LINES:
        cells = [Cell(s, (s,), s) for s in switches]
        per_line = named
    elif len(switches) <= room * TIER_LINES:
        cells = [Cell(s, (s,)) for s in switches]
        per_line = room
    else:
        size = -(-len(switches) // (room * TIER_LINES))
        cells = [Cell(f"{SET}{name}:{start + 1}-{min(start + size, len(switches))}",
                      tuple(switches[start:start + size]))
                 for start in range(0, len(switches), size)]
        per_line = room
    rows = [Row(name if start == 0 else "", tuple(cells[start:start + per_line]))
            for start in range(0, len(cells), per_line)]
    if cells[0].key.startswith(SET):
        size = len(cells[0].health_keys)
        rows.append(Row("", heading=f"{len(switches)} {name}, {size} a cell"))
    return rows


def _span(rails: list[int]) -> str:
    """`r5`, or `r5-r7` for several."""
    return f"r{rails[0]}" if len(rails) == 1 else f"r{rails[0]}-r{rails[-1]}"


def _set_cell(fabric: FabricMap, key: str) -> Cell:
    members = fabric.set_members(key)
    return Cell(key, members) if members else Cell("", ())


class FabricMatrix(ScrollView, can_focus=True):
    """The fabric's elements as a grid of health glyphs; see the module docstring."""

    DEFAULT_CSS = """
    FabricMatrix { background: $surface; }
    FabricMatrix:focus { background-tint: $foreground 3%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1, 0)", "Up", show=False),
        Binding("down,j", "move(1, 0)", "Down", show=False),
        Binding("left,h", "move(0, -1)", "Left", show=False),
        Binding("right,l", "move(0, 1)", "Right", show=False),
        Binding("pageup", "move(-10, 0)", show=False),
        Binding("pagedown", "move(10, 0)", show=False),
        Binding("home,g", "move(-100000, 0)", show=False),
        Binding("end,G", "move(100000, 0)", show=False),
    ]

    class Selected(Message):
        """The cursor moved onto an element."""

        def __init__(self, key: str, focus: str | None = None) -> None:
            super().__init__()
            self.key = key
            self.focus = focus
            """The element found inside the cell (a leaf port in a host cell), if any."""

    def __init__(self, fabric: FabricMap, *, ascii_only: bool = False,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.fabric = fabric
        self.ascii_only = ascii_only
        self.view = ViewFilter()
        self.snapshot: FabricSnapshot = EMPTY
        self.rows: list[Row] = []
        self._healths: list[tuple[Health, ...]] = []
        self._cache: dict[int, tuple[object, Strip]] = {}
        self.cursor = (0, 0)
        self.label_width = label_width(fabric)
        self.repainted = 0
        """Lines rendered anew (not from the cache) since mount: what a benchmark reads."""
        self.marks: dict[str, str] = {}
        """Marked cell key -> the marked element it shows (kept across snapshots and views)."""
        self._room = 0
        """Cells a line of the picture holds at the current width (0: not laid out yet)."""
        self._set_rows(build_rows(fabric, self.view))

    # data in ------------------------------------------------------------------------------------
    def set_view(self, view: ViewFilter) -> None:
        """Show what `view` lets through; the cursor stays on its element when still shown."""
        key = self.selected_key
        self.view = view
        self._set_rows(build_rows(self.fabric, view, self._width()))
        self._cache.clear()
        if key is None or not self.select_key(key):
            self.cursor = (self._first_selectable(0), 0)
            self._announce()
        self.refresh()

    def _width(self) -> int:
        return self.size.width or PICTURE_WIDTH

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """As wide as the picture (a wide screen gives the rest to the detail panel), leaving
        the detail panel at least `DETAIL_ROOM` columns; what does not fit scrolls sideways and
        a rails heading says which rails are out of sight."""
        gutter = self.styles.scrollbar_size_vertical if \
            self.virtual_size.height > container.height else 0
        room = max(DETAIL_ROOM, math.ceil(container.width * DETAIL_SHARE))
        return max(MIN_WIDTH, min(self.virtual_size.width + gutter, container.width - room))

    def on_resize(self) -> None:
        """Lay the picture out again when a line holds another number of cells."""
        room = (self._width() - self.label_width) // CELL
        if room != self._room:
            first = self._room == 0
            self._room = room
            if first and build_rows(self.fabric, self.view, self._width()) == self.rows:
                return
            self.set_view(self.view)

    def set_snapshot(self, snapshot: FabricSnapshot) -> int:
        """Take a new snapshot; repaint only the lines whose cells changed. Returns how many."""
        self.snapshot = snapshot
        changed = 0
        top = self.scroll_offset.y
        bottom = top + self.size.height
        for index, row in enumerate(self.rows):
            healths = self._row_healths(row)
            if healths != self._healths[index]:
                self._healths[index] = healths
                if top <= index < bottom:  # off screen: drawn anew when scrolled to
                    self.refresh_line(index)
                changed += 1
        return changed

    def _set_rows(self, rows: list[Row]) -> None:
        self.rows = rows
        self._healths = [self._row_healths(r) for r in rows]
        width = self.label_width + max((self._row_width(r) for r in rows), default=0)
        if Size(width, len(rows)) != self.virtual_size:
            self.virtual_size = Size(width, len(rows))
            if self.is_attached:
                self.refresh(layout=True)

    def _row_width(self, row: Row) -> int:
        if row.heading is not None:
            return len(row.heading)
        return row.indent + sum(CELL + (len(c.caption) + 1 if c.caption else 0)
                                for c in row.cells)

    def _row_healths(self, row: Row) -> tuple[Health, ...]:
        get = self.snapshot.health.get
        unknown = Health.UNKNOWN
        return tuple(get(c.health_keys[0], unknown) if len(c.health_keys) == 1 else
                     worst_health(get(k, unknown) for k in c.health_keys)
                     for c in row.cells)

    def set_marks(self, marks: dict[str, str]) -> None:
        """Mark these cells (cell key -> the marked element in it); redraws every line."""
        if marks != self.marks:
            self.marks = dict(marks)
            self._cache.clear()
            self.refresh()

    def jump_mark(self, step: int = 1) -> str | None:
        """Move to the next (`step` 1) or previous (-1) marked cell the view shows, after the
        cursor, wrapping; the marked element it shows, or None when none is shown."""
        spots = [(r, c) for r, row in enumerate(self.rows) for c, cell in enumerate(row.cells)
                 if cell.key in self.marks]
        if not spots:
            return None
        after = [s for s in spots if (s > self.cursor if step > 0 else s < self.cursor)]
        row, col = (after[0] if after else spots[0]) if step > 0 else \
            (after[-1] if after else spots[-1])
        element = self.marks[self.rows[row].cells[col].key]
        self._move_to(row, col, focus=element if element != self.rows[row].cells[col].key
                      else None)
        return element

    # selection ----------------------------------------------------------------------------------
    @property
    def selected_key(self) -> str | None:
        row, col = self.cursor
        if not 0 <= row < len(self.rows) or not self.rows[row].cells:
            return None
        cells = self.rows[row].cells
        key = cells[min(col, len(cells) - 1)].key
        return key or None

    def select_key(self, key: str) -> bool:
        """Put the cursor on the cell of `key` (a NIC, port, GPU or optic selects its host
        cell). False when the view does not show it."""
        cell = self.fabric.cell_of(key)
        wanted = f"{cell.node}@{cell.rail}" if cell is not None else key
        for index, row in enumerate(self.rows):
            for col, each in enumerate(row.cells):
                if each.key == wanted:
                    self._move_to(index, col, focus=key if key != wanted else None)
                    return True
        return False

    def action_move(self, rows: int, cols: int) -> None:
        row, col = self.cursor
        if rows:
            step = 1 if rows > 0 else -1
            target = max(0, min(len(self.rows) - 1, row + rows))
            while 0 <= target < len(self.rows) and self.rows[target].heading is not None:
                target += step
            if not 0 <= target < len(self.rows):
                target = row
            row = target
        if cols and self.rows:
            col = max(0, min(len(self.rows[row].cells) - 1, col + cols))
        self._move_to(row, col)

    def _move_to(self, row: int, col: int, focus: str | None = None) -> None:
        old = self.cursor[0]
        if self.rows and self.rows[row].cells:
            col = min(col, len(self.rows[row].cells) - 1)
        self.cursor = (row, col)
        self.refresh_line(old)
        self.refresh_line(row)
        self.scroll_to_region(Region(0, row, 1, 1), animate=False, immediate=True)
        self._announce(focus)

    def _announce(self, focus: str | None = None) -> None:
        key = self.selected_key
        if key is not None:
            self.post_message(self.Selected(key, focus))

    def _first_selectable(self, start: int) -> int:
        for index in range(start, len(self.rows)):
            if self.rows[index].heading is None and self.rows[index].cells:
                return index
        return 0

    def on_mount(self) -> None:
        nodes = set(self.fabric.nodes)
        first_node = next((i for i, r in enumerate(self.rows) if r.label in nodes), None)
        self.cursor = (first_node if first_node is not None else self._first_selectable(0), 0)
        self._announce()

    def on_click(self, event: events.Click) -> None:
        row = event.y + self.scroll_offset.y
        if not 0 <= row < len(self.rows) or not self.rows[row].cells:
            return
        x = event.x + self.scroll_offset.x - self.label_width - self.rows[row].indent
        if x < 0:
            return
        for col, cell in enumerate(self.rows[row].cells):
            x -= CELL + (len(cell.caption) + 1 if cell.caption else 0)
            if x < 0:
                self._move_to(row, col)
                return

    # drawing ------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        index = y + self.scroll_offset.y
        width = self.size.width
        if not 0 <= index < len(self.rows):
            return Strip.blank(width, self.rich_style)
        selected = self.cursor[1] if index == self.cursor[0] else -1
        signature = (self._healths[index], selected, self.app.theme, self.ascii_only,
                     self.has_focus)
        cached = self._cache.get(index)
        if cached is None or cached[0] != signature:
            cached = (signature, self._render_row(index, selected))
            self._cache[index] = cached
            self.repainted += 1
        strip = cached[1].crop_extend(self.scroll_offset.x, self.scroll_offset.x + width, None)
        if self.rows[index].rails:
            strip = self._announce_hidden(self.rows[index], strip, width)
        # the view's own background under the cells (the focus ring's tint shows through)
        return strip.apply_style(self.rich_style)

    def hidden_rails(self, row: Row) -> tuple[list[int], list[int]]:
        """The rails heading `row` names that are out of sight: left of the view (scrolled
        past), and right of it (the view is too narrow)."""
        left = self.scroll_offset.x
        # the lines' own width: a vertical scrollbar hides what is under it (a 1,024-node
        # picture's last rail went under it unannounced)
        right = left + self.scrollable_content_region.width
        columns = [(rail, self.label_width + RAIL_AXIS + CELL * i + 1)
                   for i, rail in enumerate(row.rails)]
        return ([r for r, x in columns if x < left], [r for r, x in columns if x >= right])

    def _announce_hidden(self, row: Row, strip: Strip, width: int) -> Strip:
        """A rails heading names the rails out of sight at the edge they are past
        (`r5-r7 →`), so a narrow view never hides a rail silently."""
        before, after = self.hidden_rails(row)
        style = Style(color=self.app.current_theme.accent, bold=True)
        if after:
            note = f"{_span(after)} {'->' if self.ascii_only else '→'}"
            if self.scroll_offset.x == 0 and len(note) < self.label_width:
                # in the heading's own label column, which is blank: no rail name covered
                strip = Strip.join([Strip([Segment(note.ljust(self.label_width), style)]),
                                    strip.crop(self.label_width, width)])
            else:
                strip = Strip.join([strip.crop(0, max(0, width - len(note) - 1)),
                                    Strip([Segment(f" {note}", style)])]).crop(0, width)
        if before:
            note = f"{'<-' if self.ascii_only else '←'} {_span(before)} "
            strip = Strip.join([Strip([Segment(note, style)]),
                                strip.crop(len(note), width)]).crop(0, width)
        return strip

    def _render_row(self, index: int, selected: int) -> Strip:
        row = self.rows[index]
        theme = self.app.current_theme
        muted = Style(color=theme.foreground, dim=True)
        if row.heading is not None:
            return Strip([Segment(row_label(row, self.label_width), muted),
                          Segment(row.heading, muted)])
        # a row indented past the node column may label itself in those blank columns too
        # (its blanks past the label column unstyled, as they were before labels spilled)
        label = pad(row_label(row, self.label_width + row.indent).rstrip(), self.label_width)
        segments = [Segment(label, Style(bold=selected >= 0, color=theme.foreground))]
        rest = self.label_width + row.indent - display_width(label)
        if rest > 0:
            segments.append(Segment(" " * rest))
        for col, (cell, health) in enumerate(zip(row.cells, self._healths[index], strict=True)):
            if not cell.key:
                segments.append(Segment(" " * CELL))
                continue
            style = health_style(health, theme, selected=col == selected and self.has_focus)
            caption = f" {cell.caption}" if cell.caption else ""
            text = f" {glyph(health, self.ascii_only)}{caption} "
            if cell.key in self.marks:  # the mark takes the cell's leading space
                segments.append(Segment(mark(self.ascii_only),
                                        Style(color=theme.accent, bold=True)))
                text = text[1:]
            segments.append(Segment(text, style))
            segments.append(Segment(" " * (CELL - 3)))
        return Strip(segments)

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()
