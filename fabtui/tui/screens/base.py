"""What every screen of the app shares: the running app, typed (`fab`), and worker failures
forwarded to the app's one handler (`tui.workers`).

`fab` is a cast, not an import of the app module (posting's pattern): screens never import
`tui.app`, which imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from textual import events, on
from textual.app import ComposeResult
from textual.binding import NoBinding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Label

from fabtui.tui.widgets.tabs import ViewTabs
from fabtui.tui.workers import ForwardsWorkerErrors

if TYPE_CHECKING:
    from fabtui.tui.app import FabtuiApp

ResultType = TypeVar("ResultType")


class FilterField(Input):
    """The view's `/` filter field (see `FabtuiScreen.FILTERS`), in a `FilterBar`."""

    DEFAULT_CSS = """
    FilterField { height: 1; border: none; padding: 0; width: 1fr; }
    """

    def __init__(self, what: str) -> None:
        super().__init__(placeholder=f"filter {what}: words (enter: to the list, esc: out, "
                         "esc again: clear)", id="view-filter", select_on_focus=False)


class FilterBar(Horizontal):
    """One line docked under the view: `/`, the filter field and what it keeps (`1 of 2
    suspects`). Hidden until `/`, shown while a filter is set, so the view never hides rows
    without saying why."""

    DEFAULT_CSS = """
    FilterBar { dock: bottom; height: 1; display: none; background: $boost; }
    FilterBar > Label { width: auto; padding: 0 1; }
    FilterBar > #view-filter-count { color: $text-muted; }
    """

    def __init__(self, what: str) -> None:
        super().__init__(id="view-filter-bar")
        self.what = what

    def compose(self) -> ComposeResult:
        yield Label("/")
        yield FilterField(self.what)
        yield Label("", id="view-filter-count")


class FabtuiAware:
    """For a screen or a modal (a base before `Screen`): `fab`, the running `FabtuiApp`."""

    @property
    def fab(self) -> FabtuiApp:
        return cast("FabtuiApp", cast(Screen[Any], self).app)


class FabtuiScreen(FabtuiAware, ForwardsWorkerErrors, Screen[None]):
    """A full screen of the app (see the module docstring).

    Esc is the same on every screen: first it leaves a text field for the screen's list
    (`AFTER_INPUT`), so that the view's keys (`1`-`4`, its letters) work again instead of
    being typed into the query; then it goes back one level (each screen's `action_back`)."""

    AFTER_INPUT: ClassVar[str] = ""
    """Selector of the widget Esc in a text field moves to (empty: Esc goes back at once)."""
    SEARCH: ClassVar[str] = ""
    """Selector of the view's search field (empty: none): a letter typed on the screen's lists
    goes there (typing `optic` searches; it never runs `o`, `q` never quits), so the screen's
    own commands are on keys that are not typed text (enter, ctrl+...); a digit too, but for
    `1`-`4`, which switch views as the tab bar says."""
    CRUMB: ClassVar[str] = ""
    """How the tab bar's breadcrumb names this screen (empty: the view's name alone)."""

    def crumb(self) -> str:
        """This screen in the breadcrumb (`session optic-replacement`)."""
        return self.CRUMB

    @on(events.Key)
    def _type_to_search(self, event: events.Key) -> None:
        """Type-to-search (see `SEARCH`): while a list of the screen (anything but a text
        field) has the focus, a letter typed goes into the search field, the focus with it,
        whatever key it is elsewhere (`u`, `q` included): typing never runs a command there; a
        digit too, unless it is a key of the screen or the app (`1`-`4` switch views, as the
        tab bar says). Another printable character (`-`, `:`) does too unless a key of the
        screen takes it (`/`, `?`). The focus moves at once, not after a refresh: the rest of
        a burst of keys (`optic` pasted by tmux) is typed into the field, none lost."""
        if not self.SEARCH or not event.is_printable or not event.character:
            return
        search = self.query_one(self.SEARCH, Input)
        # A printable key typed into a text field stops there (`Input._on_key`): one that
        # comes here was sent to a list, even if the focus is on the search already (a burst
        # is delivered to the widget focused when it came, ahead of the focus move).
        if not isinstance(self.focused, Widget) or \
                (isinstance(self.focused, Input) and self.focused is not search):
            return
        if not event.character.isalnum() and self._binds(event.key):
            return
        if event.character.isdigit() and self.focused is not search and self._binds(event.key):
            return  # a digit typed on the list keeps its key (`1`-`4`: the views, as the tab
            #         bar says); the rest of a burst into the search (`Ethernet16`) is typed
        event.stop()
        event.prevent_default()
        if self.focused is not search:
            self.set_focus(search)
        search.insert_text_at_cursor(event.character)

    def _binds(self, key: str) -> bool:
        """Whether a key binding of this screen, the focused widget or the app answers `key`."""
        nodes = [self, self.app, *([self.focused] if self.focused is not None else [])]
        for node in nodes:
            try:
                node._bindings.get_bindings_for_key(key)
            except NoBinding:
                continue
            return True
        return False

    @on(events.Mount)
    def _mount_tabs(self) -> None:
        """The tab bar on top (every screen of the app has it, docked, one line)."""
        self.mount(ViewTabs())
        self.call_after_refresh(self.show_tabs)

    @on(events.ScreenResume)
    def _resume_tabs(self) -> None:
        self.show_tabs()

    def show_tabs(self) -> None:
        """Which view this is and the screens opened in it, in the tab bar."""
        stack = self.app.screen_stack
        below = stack[:stack.index(self) + 1] if self in stack else [self]
        crumbs = [s.crumb() for s in below if isinstance(s, FabtuiScreen) and s.crumb()]
        for tabs in self.query(ViewTabs).results():
            tabs.show(self.app.current_mode, crumbs,
                      bool(getattr(self.app, "ascii_only", False)))

    # the `/` filter -----------------------------------------------------------------------------
    FILTERS: ClassVar[str] = ""
    """What `/` filters on this screen (`suspects and similar cases`), for the field's hint;
    empty: the screen has no `FilterField` (Fabric, Runbooks and Cases filter in their own
    search fields, the same way: `/`, type, enter or Esc back to the list)."""
    FILTER_LIST: ClassVar[str] = ""
    """Selector of the list the focus goes back to from the filter field."""

    @property
    def view_filter(self) -> str:
        """The text the view is filtered by ('' when none)."""
        for field in self.query(FilterField).results():
            return field.value.strip()
        return ""

    def action_filter_view(self) -> None:
        """`/`: the filter field shown under the view, with the focus (its text kept)."""
        for bar in self.query(FilterBar).results():
            bar.display = True
            bar.query_one(FilterField).focus()

    def say_filtered(self, kept: int, of: int, what: str) -> None:
        """What the filter keeps, beside it (`1 of 2 suspects`)."""
        for label in self.query("#view-filter-count").results(Label):
            label.update(f"{kept} of {of} {what}" if self.view_filter else "")

    def apply_view_filter(self, text: str) -> None:
        """Show only what `text` keeps (each screen its own lists; see `views.listfilter`)."""

    @on(Input.Changed, "FilterField")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.apply_view_filter(event.value.strip())

    @on(Input.Submitted, "FilterField")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._focus_filter_list()

    def _focus_filter_list(self) -> None:
        for widget in self.query(self.FILTER_LIST).results() if self.FILTER_LIST else []:
            if widget.display:
                widget.focus()
                return
        self.focus_next()

    def leave_filter(self) -> bool:
        """Esc, before going back a level: out of the filter field to the list (the filter
        kept and still shown), else a filter set is cleared. False when there was neither."""
        for bar in self.query(FilterBar).results():
            field = bar.query_one(FilterField)
            if self.focused is field:
                if not field.value.strip():
                    bar.display = False
                self._focus_filter_list()
                return True
            if field.value.strip():
                field.value = ""
                bar.display = False
                self.apply_view_filter("")
                return True
        return False

    @on(events.Mount)
    def _mount_filter(self) -> None:
        if self.FILTERS:
            self.mount(FilterBar(self.FILTERS))

    def leave_input(self) -> bool:
        """Esc in a text field: the focus to `AFTER_INPUT` (True), else nothing (False)."""
        if isinstance(self.focused, Input) and self.AFTER_INPUT:
            for widget in self.query(self.AFTER_INPUT).results():
                if widget.display:
                    widget.focus()
                    return True
        return False
