"""The demo screen: play another fault scenario, or inject a fault now (`fabtui sim inject`).

The screen only asks; the fabric screen does it in a worker (it writes the demo's state file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Select
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class DemoRequest:
    """What the user asked the demo fabric to do."""

    play: str | None = None
    fault: str | None = None
    component: str = ""
    length: str = ""


class DemoScreen(ModalScreen[DemoRequest | None]):
    """Scenario list and fault injection; `enter` on a scenario plays it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="demo.back"),
    ]
    DEFAULT_CSS = """
    DemoScreen { align: center middle; }
    DemoScreen > Vertical { width: 96%; max-width: 110; height: auto; max-height: 95%;
                            border: round $accent; background: $surface; padding: 0 1; }
    DemoScreen OptionList { height: auto; max-height: 12; }
    DemoScreen Horizontal { height: auto; }
    DemoScreen > Vertical > Label { width: 100%; }
    DemoScreen Select { width: 26; }
    DemoScreen #demo-component { width: 1fr; }
    DemoScreen #demo-length { width: 10; }
    """

    def __init__(self, scenarios: list[tuple[str, str]], faults: list[str], playing: str | None,
                 component: str) -> None:
        super().__init__()
        self.scenarios = scenarios
        self.faults = faults
        self.playing = playing
        self.component = component

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "demo fabric"
            box.border_subtitle = "enter: play · esc: back"
            yield Label(f"playing: {self.playing or '-'}  ·  choose a scenario (restarts the "
                        "demo's clock):")
            yield OptionList(*[Option(f"{name:<24} {text}", id=name)
                               for name, text in self.scenarios], id="demo-scenarios")
            yield Label("inject a fault now (fault, component, for how long; empty: lasts):")
            with Horizontal():
                yield Select([(f, f) for f in self.faults], prompt="fault", id="demo-fault",
                             value=self.faults[0] if self.faults else Select.NULL)
                yield Input(self.component, placeholder="node001:mlx5_0", id="demo-component")
                yield Input("", placeholder="5m", id="demo-length")
                yield Button("inject", id="demo-inject", variant="warning")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        names = [n for n, _ in self.scenarios]
        if self.playing in names:
            options.highlighted = names.index(self.playing)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(DemoRequest(play=event.option.id))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        fault = self.query_one("#demo-fault", Select).value
        self.dismiss(DemoRequest(fault=str(fault) if fault is not Select.NULL else None,
                                 component=self.query_one("#demo-component", Input).value,
                                 length=self.query_one("#demo-length", Input).value))
