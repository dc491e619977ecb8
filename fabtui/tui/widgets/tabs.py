"""`ViewTabs`: the line on top of every screen that says where you are (k9s's crumbs, lazygit's
panels): the four views with their keys, the current one lit, then the screens opened inside
it (`Runbooks › session optic-replacement`). One line; cut with `…` when narrow, the crumbs
first kept whole as far as they fit (the view keys are also in `?`).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

VIEWS = (("fabric", "1", "Fabric"), ("runbooks", "2", "Runbooks"), ("cases", "3", "Cases"),
         ("triage", "4", "Triage"))
"""Mode, key, title: the app's top-level views in key order."""
SEPARATOR = " › "


def tabs_text(mode: str, crumbs: list[str], width: int = 0, *,
              ascii_only: bool = False) -> Text:
    """The tab bar for `mode` with `crumbs` (the screens opened in it, outermost first): each
    view as ` 1 Fabric `, the current one reversed, then the crumbs. Given `width`, the views
    not current shrink to their keys (` 2 `) before the crumbs are cut, ending in `…`
    (pure: tested without an app)."""
    separator = " > " if ascii_only else SEPARATOR
    trail = "".join(f"{separator}{crumb}" for crumb in crumbs)

    def build(short: bool) -> Text:
        text = Text()
        for name, key, title in VIEWS:
            if name == mode:
                text.append(f" {key} {title} ", "reverse bold")
            else:
                text.append(f" {key} " if short else f" {key} {title} ", "dim")
        text.append(trail, "bold")
        return text

    text = build(short=False)
    if width > 0 and cell_len(text.plain) > width:
        text = build(short=True)
    if width > 0 and cell_len(text.plain) > width:
        text.truncate(width - 1)
        text.append("…")
    return text


class ViewTabs(Static):
    """See the module docstring. The screen tells it what to show (`show`)."""

    DEFAULT_CSS = """
    ViewTabs { dock: top; height: 1; background: $panel; text-wrap: nowrap; }
    """

    def __init__(self) -> None:
        super().__init__(id="view-tabs")
        self._shown: tuple[str, tuple[str, ...], int] | None = None
        self._wanted: tuple[str, tuple[str, ...]] = ("", ())
        self.ascii_only = False

    def show(self, mode: str, crumbs: list[str], ascii_only: bool = False) -> None:
        """Show view `mode` with `crumbs` (redrawn only when something changed)."""
        self._wanted = (mode, tuple(crumbs))
        self.ascii_only = ascii_only
        self._paint()

    def _paint(self) -> None:
        width = self.content_size.width
        mode, crumbs = self._wanted
        if (mode, crumbs, width) == self._shown:
            return
        self._shown = (mode, crumbs, width)
        self.update(tabs_text(mode, list(crumbs), width, ascii_only=self.ascii_only))

    def on_resize(self) -> None:
        self._paint()
