"""Small modal screens: a one-line prompt (filter, find) and a page of text (help, errors)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class Prompt(ModalScreen[str | None]):
    """Ask for one line; `enter` returns it, `esc` returns None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="prompt.back"),
    ]
    DEFAULT_CSS = """
    Prompt { align: center middle; }
    Prompt > Vertical { width: 64; max-width: 90%; height: auto; border: round $accent;
                        background: $surface; padding: 0 1; }
    Prompt Label.hint { color: $text-muted; }
    """

    def __init__(self, title: str, hint: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.hint = hint
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(self.value, id="prompt-input", select_on_focus=False)
            yield Label(self.hint, classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)


class TextPage(ModalScreen[None]):
    """A page of text (help, an element's error), closed with `esc` or `q`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss(None)", "Back", id="page.back"),
    ]
    DEFAULT_CSS = """
    TextPage { align: center middle; }
    TextPage > VerticalScroll { width: 90%; max-width: 100; height: 80%; border: round $accent;
                                background: $surface; padding: 0 1; }
    """

    def __init__(self, title: str, body: Text | str) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = self.title_text
            scroll.border_subtitle = "esc: back"
            yield Static(self.body, id="page-body")
