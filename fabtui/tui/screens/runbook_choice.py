"""A list of runbooks to choose from (the runbooks for an element's findings): `enter` returns
the one highlighted, `esc` none. Each line says why it is offered and what it will be given."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from fabtui.views.crosslinks import RunbookChoice


class RunbookChoiceScreen(ModalScreen[RunbookChoice | None]):
    """See the module docstring."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="choice.back"),
    ]
    DEFAULT_CSS = """
    RunbookChoiceScreen { align: center middle; }
    RunbookChoiceScreen > Vertical { width: 96%; max-width: 110; height: auto;
                                     max-height: 90%; border: round $accent;
                                     background: $surface; padding: 0 1; }
    RunbookChoiceScreen OptionList { height: auto; max-height: 16; }
    RunbookChoiceScreen Label.hint { color: $text-muted; width: 100%; }
    """

    def __init__(self, about: str, choices: list[RunbookChoice]) -> None:
        super().__init__()
        self.about = about
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"runbooks for {self.about}"
            box.border_subtitle = "enter: open · esc: back"
            yield Label(self.choices[0].why if self.choices else "", classes="hint")
            yield OptionList(*[Option(self._line(c), id=str(i))
                               for i, c in enumerate(self.choices)], id="choice-list")

    @staticmethod
    def _line(choice: RunbookChoice) -> str:
        given = " ".join(f"{k}={v}" for k, v in choice.inputs.items())
        return f"{choice.runbook:<24} {choice.title}" + (f"\n{'':<24} with {given}"
                                                         if given else "")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[int(event.option.id or 0)])
