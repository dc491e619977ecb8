"""`DetailPanel`: everything known about the selected element.

Identity in the topology, health, latest values, sparklines of its counters (pause/s, FEC/s,
rx power) and the findings that touch it. It redraws only when the selection or the states of
the elements it shows changed, so a flood of snapshots costs nothing while nothing moves.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from fabtui.model.element import ElementRef
from fabtui.render.table import cut_middle, display_width, pad
from fabtui.topology.graph import FabricGraph
from fabtui.tui.glyphs import glyph, health_style, mark, short_number, sparkline
from fabtui.tui.widgets.hanging import Hanging
from fabtui.views.crosslinks import Mark
from fabtui.views.fabricmap import SET, FabricMap, host_cells, identity, selection_elements
from fabtui.views.status import KEY_COUNTERS, ElementState, FabricSnapshot, Health, Value

SPARK = 16
"""Samples drawn per sparkline."""
VALUES = 8
"""Latest values listed per element (problems first, then counters with a history); the
others are counted under them, and `e` (the element's page, `values_text`) lists them all."""
TROUBLED = 4
"""Members that are not ok listed under a node, cable or switch (why it is red); the others
are counted."""
FINDINGS = 4
"""Findings listed per element; the others are counted, and `e` lists them all."""
VALUE_WIDTH = 8
"""Most columns of the values (`short_number` gives at most ~8); fewer when the widest value
shown needs fewer (the names get them)."""


class DetailPanel(VerticalScroll):
    """See the module docstring."""

    DEFAULT_CSS = """
    DetailPanel { border-left: vkey $foreground 20%; padding: 0 1; }
    """

    def __init__(self, fabric: FabricMap, graph: FabricGraph, *, ascii_only: bool = False,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.fabric = fabric
        self.graph = graph
        self.ascii_only = ascii_only
        self.key: str | None = None
        self._shown: object = None
        self._shape: tuple[int, int] | None = None
        self._last: tuple[str | None, FabricSnapshot, str | None] | None = None
        self.clock = time.time
        self.marks: dict[str, list[Mark]] = {}
        """Element -> what other views marked it for (`Highlight`), shown under its name."""
        self._marks_version = 0

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="detail-body")

    def show(self, key: str | None, snapshot: FabricSnapshot, focus: str | None = None) -> None:
        """Show `key` as `snapshot` has it (a no-op when nothing it shows changed)."""
        elements = selection_elements(self.fabric, key, focus, _ranker(snapshot)) if key else []
        signature = (key, tuple((e, snapshot.of(e), id(snapshot.states.get(e)))
                                for e in elements), self.app.theme, self.content_size.width,
                     self._marks_version)
        self._last = (key, snapshot, focus)
        if signature == self._shown:
            return
        self._shown = signature
        self.key = key
        text = self.render_text(key, snapshot, focus)
        # A re-layout costs more than the rest of a key press on a big fabric: skip it when
        # the text keeps its height (as many lines, none wrapping).
        width = self.content_size.width
        lines = text.plain.count("\n")
        if lines < self.content_size.height:  # padded to the panel: most texts keep its height
            text.append("\n" * (self.content_size.height - 1 - lines))
        shape = (text.plain.count("\n"), width)
        same = shape == self._shape and all(len(line) < width for line in text.plain.split("\n"))
        self._shape = shape
        # a line too long wraps under itself, never back to the panel's first column
        self.query_one("#detail-body", Static).update(Hanging(text), layout=not same)

    def set_marks(self, marks: dict[str, list[Mark]], version: int) -> None:
        """Show these marks (redraws when `version` changed)."""
        if version != self._marks_version:
            self.marks, self._marks_version = marks, version
            if self._last is not None:
                self.show(*self._last)

    def on_resize(self) -> None:
        if self._last is not None:
            self.show(*self._last)

    def render_text(self, key: str | None, snapshot: FabricSnapshot,
                    focus: str | None = None) -> Text:
        """The panel's text for `key` (pure given the snapshot; tested without an app)."""
        theme = self.app.current_theme
        text = Text()
        if key is None:
            return Text("Select an element (arrows, / to find).", style="dim")
        elements = selection_elements(self.fabric, key, focus, _ranker(snapshot))
        attached = host_cells(self.fabric, key)
        if len(attached) > 1:  # a NIC per plane in one cell: each plane's health, worst first
            text.append(f"{attached[0].node} r{attached[0].rail}: {len(attached)} planes\n",
                        "bold")
            for cell in sorted(attached, key=lambda c: -snapshot.of(c.link or c.nic).rank):
                health = snapshot.of(cell.link or cell.nic)
                text.append(f"{glyph(health, self.ascii_only)} {health.value:<11}",
                            health_style(health, theme))
                text.append(f"{cell.plane or '-'}  {ElementRef.parse(cell.nic).part}\n")
            text.append("\n")
        elif key.startswith(SET):  # many switches or links in one cell: a tally, worst first
            elements.sort(key=lambda e: -snapshot.of(e).rank)
            text.append(f"{self.fabric.label(key)}\n", "bold")
            tally = Counter(snapshot.of(e) for e in elements)
            for health in sorted(tally, key=lambda h: -h.rank):
                text.append(f"{glyph(health, self.ascii_only)} {tally[health]} {health.value}",
                            health_style(health, theme))
                text.append("  ")
            text.append("\n\n")
        elif key.startswith("uplinks:"):  # a leaf's spine links: whose, and its group whole
            leaf = key.removeprefix("uplinks:")
            text.append(f"{leaf} uplinks ({len(elements)})\n", "bold")
            if leaf in self.fabric.leaf_groups:
                text.append(f"  {'group':<10}", "dim")
                text.append(f"{self.fabric.leaf_groups[leaf]}\n")
            text.append("\n")
        for number, element in enumerate(elements):
            health = snapshot.of(element)
            if number:
                text.append("\n")
            text.append(f"{glyph(health, self.ascii_only)} {health.value:<11}",
                        health_style(health, theme))
            text.append(self.fabric.label(element), "bold")
            text.append("\n")
            for marked in self.marks.get(element, ()):
                text.append(f"  {mark(self.ascii_only)} marked by {marked.origin}"
                            f"{': ' + marked.why if marked.why else ''}\n", "bold")
            if number == 0 or len(elements) <= 3:
                for name, value in identity(self.fabric, self.graph, element)[1:]:
                    text.append(f"  {name:<10}", "dim")
                    text.append(f"{value}\n")
            troubled = [m for m in snapshot.troubled_members(self.fabric, element)
                        if m not in elements]  # a NIC listed below is not named twice
            for member in troubled[:TROUBLED]:
                text.append("  from      ", "dim")
                text.append(f"{glyph(snapshot.of(member), self.ascii_only)} "
                            f"{self.fabric.label(member)}\n",
                            health_style(snapshot.of(member), theme))
            if len(troubled) > TROUBLED:
                text.append(f"  +{len(troubled) - TROUBLED} more not ok below it\n", "dim")
            state = snapshot.states.get(element)
            if health is Health.UNJUDGED and (state is None or not state.readings):
                text.append(f"  not judged yet: {snapshot.unjudged_why or 'no verdict yet'}\n",
                            "dim")
                continue
            if state is None:
                if health.value == "unknown":
                    text.append("  no data yet\n", "dim")
                continue
            if state.error:
                text.append(f"  unreachable: {state.error}\n", health_style(health, theme))
            age = max(0.0, snapshot.taken_at - state.updated)
            text.append(f"  updated {age:.0f}s ago by {', '.join(sorted(state.readings))}\n",
                        "dim")
            self._values(text, state, theme)
            for finding in state.findings[:FINDINGS]:
                text.append(f"  {finding.line}\n", "bold" if finding.severity == "error" else "")
            if len(state.findings) > FINDINGS:
                text.append(f"  +{len(state.findings) - FINDINGS} more findings (e: all)\n",
                            "dim")
        return text

    def _values(self, text: Text, state: ElementState, theme: object) -> None:
        ranked = ranked_values(state)
        shown = ranked[:VALUES]
        # two columns spare: a line exactly as wide as the panel wrapped its sparkline onto a
        # line of its own (the panel's scrollbar takes them when it shows)
        avail = max(30, (self.content_size.width or 46) - 2)
        # a narrow panel (80 columns: the matrix takes its picture's width) keeps the names
        # readable before the sparklines
        spark = SPARK if avail >= 56 else 8 if avail >= 44 else 4
        # every unit whole (a unit cut to three columns read `400Gb/`): the names give way,
        # cut in the middle where names that share a start differ (`rate.rx…_pause`)
        units = max((display_width(value.unit) for _, value in shown), default=0)
        numbers = [short_number(value.value) for _, value in shown]
        # as wide as the widest value shown (at most VALUE_WIDTH: a longer word runs on)
        values = min(VALUE_WIDTH, max((display_width(n) for n in numbers), default=0) + 1)
        width = max(10, avail - 2 - values - units - 1 - spark)
        for (name, value), number in zip(shown, numbers, strict=True):
            line = (f"  {pad(cut_middle(name, width), width)}"
                    f"{pad(number, values, 'right')}{pad(value.unit, units)}")
            style = "bold" if value.verdict.rank > 0 else ""
            text.append(line, style)
            history = state.history.get(name)
            if history and len(history) > 1:
                text.append(" " + sparkline(history, spark, self.ascii_only), "cyan")
            text.append("\n")
        if len(ranked) > VALUES:
            text.append(f"  +{len(ranked) - VALUES} more values (e: all)\n", "dim")


def _ranker(snapshot: FabricSnapshot) -> Callable[[str], int]:
    """How bad an element looks in `snapshot` (a host cell lists its worst plane first)."""
    return lambda key: snapshot.of(key).rank


def ranked_values(state: ElementState) -> list[tuple[str, Value]]:
    """An element's latest values in the panel's order: problems first, then the key counters,
    non-zero before zero, those with a history first, then by name."""
    return sorted(state.values.items(), key=lambda item: (
        -item[1].verdict.rank, not item[0].startswith(KEY_COUNTERS),
        item[1].value in (0, 0.0, None), item[0] not in state.history, item[0]))


def values_text(state: ElementState) -> Text:
    """Every latest value of an element, whole (name, value, unit, verdict, probe, limit), in
    the panel's order: what `e` shows beyond the panel's first `VALUES`."""
    text = Text()
    for name, value in ranked_values(state):
        unit = f" {value.unit}" if value.unit else ""
        limit = "" if value.limit is None else f" (limit {value.limit:g}{unit})"
        text.append(f"  {name} = {value.value}{unit}"
                    f"{limit}  ", "bold" if value.verdict.rank > 0 else "")
        text.append(f"{value.verdict.value} · {value.probe}\n", "dim")
    return text
