"""Key bindings the app's Line-API lists share, so every list moves the same way."""

from __future__ import annotations

from textual.binding import Binding, BindingType


def list_cursor_bindings(page_up: str, page_down: str) -> list[BindingType]:
    """Up/down (and k/j), page up/down (`page_up`/`page_down`: the widget's own actions) and
    home/end (g/G) for a one-column list whose `move(step)` action clamps the cursor."""
    return [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", page_up, show=False),
        Binding("pagedown", page_down, show=False),
        Binding("home,g", "move(-1000000000)", show=False),
        Binding("end,G", "move(1000000000)", show=False),
    ]
