"""The key footer every screen shows: Textual's `Footer`, drawn the same, built less often, and
still useful where it is too narrow for every key.

Textual's footer rebuilds all its key widgets whenever the screen's bindings signal a change (a
push, every focus move), and each new key restyles itself twice while mounting (its `compact`
flag set, then bound to the footer's). With a screen's dozen-odd keys that was most of the cost
of opening a guided session. This footer rebuilds its keys only when what it shows changed (as
Textual's, it composes them once the screen's bindings are ready, and again when a resize
changes what fits), and mounts each key already in the footer's style.

Where the keys do not all fit (a guided session at 80 columns cut off after `o Han…`, and `?`
with it), the footer goes narrow: compact spacing, each command's short label
(`fabtui.tui.commands.Command.short`), the screen's own keys first in their table's order, then
the app's while they fit, and always `?` last, labelled `more` when keys were left out: the
help page it opens lists every key, the current screen's first.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from fabtui.tui.commands import short_labels

HELP_ID = "app.help"
"""The binding id of `?` (the help page), which the narrow footer always shows."""


class Row(NamedTuple):
    """One key as the footer shows it."""

    key: str
    display: str
    label: str
    action: str
    enabled: bool
    tooltip: str
    id: str
    """The command's id (`session.next`), "" for a binding outside the command tables."""


Shown = tuple[tuple[Row, ...], bool, bool]
"""What the footer shows: its keys, whether narrow, whether the palette key is shown."""

PALETTE_WIDTH = 14
"""The palette key docked right, as Textual draws it wide (`▏ ^p palette `)."""
PALETTE_NARROW = 11
"""The same, compact (`▏^p palette`)."""


def _wide_width(row: Row) -> int:
    return cell_len(row.display) + cell_len(row.label) + 3  # " n " + "Next "


def _narrow_width(row: Row) -> int:
    return cell_len(row.display) + 1 + cell_len(row.label) + 1  # "n Next" + its margin


def _take(rows: list[Row], room: int) -> list[Row]:
    """The first of `rows` that fit in `room` columns, in order."""
    chosen: list[Row] = []
    for row in rows:
        if _narrow_width(row) > room:
            break  # the rest (in order) are on the help page
        chosen.append(row)
        room -= _narrow_width(row)
    return chosen


def fit(own: list[Row], others: list[Row], help_row: Row | None, width: int,
        palette: bool) -> Shown:
    """The keys shown in `width` columns: all of them as Textual draws them when they fit;
    else narrow (see the module docstring), compact, choosing the first way in which all of
    the screen's own keys fit: full labels beside the palette key, short labels beside it,
    full labels without it, short labels. `own`: the screen's keys, `others` the app's,
    `help_row` the `?` key, `palette`: whether the palette key (`^p palette`) is wanted."""
    everything = [*own, *others, *([help_row] if help_row else [])]
    needed = sum(_wide_width(r) for r in everything) + (PALETTE_WIDTH if palette else 0)
    if width <= 0 or needed <= width:
        return tuple(everything), False, palette
    short = short_labels()
    shortened = [r._replace(label=short.get(r.id, r.label)) for r in (*own, *others)]
    more = help_row._replace(label="more") if help_row else None
    room = width - (_narrow_width(more) if more else 0)
    ways = [(rows, docked) for docked in ((True, False) if palette else (False,))
            for rows in ([*own, *others], shortened)]
    for rows, docked in ways:
        # the last key's margin may run past the edge, not under the palette key
        chosen = _take(rows, room - PALETTE_NARROW if docked else room + 1)
        if len(chosen) >= len(own):
            break
    if help_row is not None and more is not None:
        chosen.append(more if len(chosen) < len(own) + len(others) else help_row)
    return tuple(chosen), True, docked


class KeyFooter(Footer):
    """See the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: Shown | None = None
        """What the keys composed show (None: none composed yet)."""

    def _now_shown(self) -> Shown:
        """The keys the footer would show now, at its current width."""
        app = self.app
        own: list[Row] = []
        others: list[Row] = []
        help_row: Row | None = None
        palette = False
        actions: set[str] = set()
        for node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.key == app.COMMAND_PALETTE_BINDING:
                palette = self.show_command_palette and app.ENABLE_COMMAND_PALETTE
                continue
            if not binding.show or binding.action in actions:
                continue  # one key an action, the first (as Textual's footer: `q` for quit)
            actions.add(binding.action)
            row = Row(binding.key, app.get_key_display(binding), binding.description,
                      binding.action, enabled, tooltip, binding.id or "")
            if binding.id == HELP_ID:
                help_row = row
            else:
                (others if node is app else own).append(row)
        return fit(own, others, help_row, self.size.width, palette)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            self._shown = None
            return
        self._shown = shown = self._now_shown()
        rows, narrow, palette = shown
        if not narrow:
            self.set_class(self.compact, "-compact")
            for widget in super().compose():
                if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                    # mounted in the footer's style (to which Textual binds each key but the
                    # palette's): the key's own `compact` watcher then changes nothing
                    widget.set_reactive(FooterKey.compact, self.compact)
                    widget.set_class(self.compact, "-compact", update=False)
                yield widget
            return
        self.set_class(True, "-compact")
        for row in rows:
            widget = FooterKey(row.key, row.display, row.label, row.action,
                               disabled=not row.enabled, tooltip=row.tooltip)
            widget.set_reactive(FooterKey.compact, True)
            widget.set_class(True, "-compact", update=False)
            yield widget
        if palette:
            _, binding, enabled, _tooltip = self.screen.active_bindings[
                self.app.COMMAND_PALETTE_BINDING]
            yield FooterKey(binding.key, self.app.get_key_display(binding),
                            binding.description, binding.action, classes="-command-palette",
                            disabled=not enabled, tooltip=binding.tooltip or binding.description)

    def _changed(self) -> None:
        if self.is_attached and self._now_shown() != self._shown:
            self.call_after_refresh(self.recompose)

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        self._changed()

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready:
            self._changed()
