"""The key footer every screen shows: Textual's `Footer`, drawn the same, built less often.

Textual's footer rebuilds all its key widgets whenever the screen's bindings signal a change (a
push, every focus move), and each new key restyles itself twice while mounting (its `compact`
flag set, then bound to the footer's). With a screen's dozen-odd keys that was most of the cost
of opening a guided session. This footer rebuilds its keys only when what it shows changed (as
Textual's, it composes them once the screen's bindings are ready), and mounts each key already in
the footer's style.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

Shown = tuple[tuple[str, str, str, str, bool, str], ...]
"""What the footer shows: each key's binding, display, description, action, enabled, tooltip."""


class KeyFooter(Footer):
    """See the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: Shown | None = None
        """What the keys composed show (None: none composed yet)."""

    def _now_shown(self) -> Shown:
        """The keys the footer would show now (those Textual's `Footer.compose` yields)."""
        app = self.app
        rows = [(binding.key, app.get_key_display(binding), binding.description,
                 binding.action, enabled, tooltip)
                for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
                if binding.show or binding.key == app.COMMAND_PALETTE_BINDING]
        return (*rows, ("", "", "", "", self.show_command_palette, str(self.compact)))

    def compose(self) -> ComposeResult:
        self._shown = self._now_shown() if self._bindings_ready else None
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                # mounted in the footer's style (to which Textual binds each key but the
                # palette's): the key's own `compact` watcher then changes nothing
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if self._now_shown() != self._shown:
            self.call_after_refresh(self.recompose)
