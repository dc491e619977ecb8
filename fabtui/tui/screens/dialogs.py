"""Small modal screens: a one-line prompt (filter, find), a page of text (help, errors), a form
of checked values (runbook inputs, secrets masked as typed) and a gate (yes / no, or a phrase
typed for danger)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class Prompt(ModalScreen[str | None]):
    """Ask for one line; `enter` returns it, `esc` returns None. With `required` (what to say
    when the line is blank), a blank line is refused in place: the prompt stays, saying so."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="prompt.back"),
    ]
    DEFAULT_CSS = """
    Prompt { align: center middle; }
    Prompt > Vertical { width: 64; max-width: 90%; height: auto; border: round $accent;
                        background: $surface; padding: 0 1; }
    Prompt Label.hint { color: $text-muted; }
    """

    def __init__(self, title: str, hint: str, value: str = "", *,
                 required: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.hint = hint
        self.value = value
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(self.value, id="prompt-input", select_on_focus=False)
            yield Label(self.hint, classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self.required is not None and not event.value.strip():
            self.query_one("Label.hint", Label).update(f"{self.required} · {self.hint}")
            return
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

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = self.title_text
            scroll.border_subtitle = "esc: back"
            yield Static(self.body, id="page-body")


Check = Callable[[str, str], str | None]
"""(name, value typed) -> why the value is refused, or None when it is acceptable."""


@dataclass(frozen=True)
class Field:
    """One value a form asks for."""

    name: str
    label: str
    value: str = ""
    secret: bool = False
    """Masked as typed (Input(password=True)); never pre-filled on screen."""


class Form(ModalScreen[dict[str, str] | None]):
    """Ask for several values (a runbook's inputs, one `input` block's value); each is checked
    by `check` when submitted and the form stays open with the reason until all pass.
    `enter` on the last field submits, `ctrl+s` submits every field as it stands (a form
    pre-filled by a hand-over or a triage is one key, not one `enter` a field), `esc` returns
    None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="form.back"),
        Binding("ctrl+s", "submit_all", "Submit", id="form.submit"),
    ]
    DEFAULT_CSS = """
    Form { align: center middle; }
    Form > VerticalScroll { width: 80; max-width: 95%; height: auto; max-height: 90%;
                            border: round $accent; background: $surface; padding: 0 1; }
    Form Label.hint { color: $text-muted; }
    Form Label.error { color: $error; }
    Form Label.field-error { display: none; }
    Form Label.field-error.shown { display: block; }
    Form Input { margin: 0; }
    """

    def __init__(self, title: str, fields: list[Field], check: Check, hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields
        self.check = check
        self.hint = hint
        self._at = 0
        """The field the last `enter` moved to (its focus may not have landed yet)."""
        self._moving: list[int] = []
        """Fields `enter` moved to whose focus has not landed yet."""

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = self.title_text
            if self.hint:
                yield Label(self.hint, classes="hint")
            for number, field in enumerate(self.fields):
                yield Label(field.label + ("  (secret: masked, never stored)" if field.secret
                                           else ""))
                yield Input(field.value, password=field.secret, id=f"field-{number}",
                            select_on_focus=False)
                yield Label("", id=f"field-{number}-error", classes="error field-error")
            yield Label("", id="form-error", classes="error")

    def on_mount(self) -> None:
        if self.fields:
            self.query_one("#field-0", Input).focus()
        self.call_after_refresh(self._ready)

    def _ready(self) -> None:
        """The keys' hint shows once the first field has the focus (`focus()` lands on a
        later turn): what is typed from then on goes into the form, not the screen below."""
        self.query_one(VerticalScroll).border_subtitle = \
            "enter: next / submit · ctrl+s: submit all · esc: back"

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Follow the focus the operator moves (tab, a click); ours landing changes nothing."""
        number = _field_number(event.widget)
        if number is None:
            return
        if number in self._moving:
            del self._moving[:self._moving.index(number) + 1]
        else:
            self._at, self._moving = number, []

    def on_input_submitted(self, event: Input.Submitted) -> None:
        # An `enter` typed ahead of the focus (a slow link, a loaded host) is delivered to
        # the field it left: it still moves one field on from where the last one went.
        number = max(_field_number(event.input) or 0, self._at)
        if number + 1 < len(self.fields):
            self._at = number + 1
            self._moving.append(self._at)
            self.query_one(f"#field-{self._at}", Input).focus()
            return
        self.action_submit_all()

    def action_submit_all(self) -> None:
        """Every field checked as it stands; the first refused takes the focus with its
        reason, else the form returns its values."""
        values = {f.name: self.query_one(f"#field-{i}", Input).value
                  for i, f in enumerate(self.fields)}
        for index, field in enumerate(self.fields):
            why = self.check(field.name, values[field.name])
            for label in self.query(".field-error").results(Label):
                label.remove_class("shown")
            if why is not None:
                # said under the field itself, and the focus there with what was typed
                # selected: what is typed next replaces the bad value, not another field's
                error = self.query_one("#form-error", Label)
                error.update(f"{field.name}: {why}")
                under = self.query_one(f"#field-{index}-error", Label)
                under.update(f"↑ {why}")
                under.add_class("shown")
                self._at, self._moving = index, [index]
                bad = self.query_one(f"#field-{index}", Input)
                bad.focus()
                bad.select_all()
                under.scroll_visible(animate=False)  # below the fold in a long form
                return
        self.dismiss(values)


def _field_number(widget: object) -> int | None:
    """The index of a form field (`field-N`), None for anything else."""
    name = getattr(widget, "id", None) or ""
    return int(name[6:]) if name.startswith("field-") and name[6:].isdigit() else None


class Gate(ModalScreen[str | None]):
    """A gate: `y` / `n` for a question (`n`: not yet, the session waits at the gate), or a
    phrase typed exactly for a dangerous action: `no` declines it (not yet), anything else is
    a typo and is asked again. `esc` answers nothing: the session is interrupted there
    (resumable). `repair`, on the demo fabric: `ctrl+r` makes the repair the question
    is about happen on the simulated fabric (a swapped optic), before it is answered."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Not now", id="gate.back"),
        Binding("y", "answer('yes')", "Yes", id="gate.yes"),
        Binding("n", "answer('no')", "No", id="gate.no"),
        Binding("ctrl+r", "repair", "Demo repair", id="gate.repair"),
    ]
    DEFAULT_CSS = """
    Gate { align: center middle; }
    Gate > Vertical { width: 84; max-width: 95%; height: auto; max-height: 90%;
                      border: thick $warning; background: $surface; padding: 0 1; }
    Gate Label.hint { color: $text-muted; }
    Gate #gate-repaired { color: $success; }
    Gate #gate-typo { color: $error; }
    """

    def __init__(self, prompt: str, phrase: str | None, *, danger: bool = False,
                 repair: tuple[str, Callable[[], str]] | None = None) -> None:
        super().__init__()
        self.prompt = prompt
        self.phrase = phrase
        self.danger = danger
        self.repair = repair

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "DANGER: typed confirmation" if self.danger or self.phrase \
                else "confirm"
            yield Static(Text(self.prompt), id="gate-prompt")
            if self.phrase is not None:
                yield Label(f"type {self.phrase} and enter to go on · no and enter: not yet "
                            "(the session waits here)", classes="hint")
                yield Input("", id="gate-input", select_on_focus=False)
                yield Label("", id="gate-typo", classes="error")
            else:
                yield Label("y: yes · n: not yet (the session waits at this gate)",
                            classes="hint")
            if self.repair is not None:
                yield Label(f"demo fabric: ctrl+r does the repair ({self.repair[0]}) on the "
                            "simulated fabric first", classes="hint")
            yield Label("", id="gate-repaired")
            yield Label("esc: not now (the session stops here and can be resumed)",
                        classes="hint")

    def on_mount(self) -> None:
        if self.phrase is not None:
            self.query_one("#gate-input", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer":
            return self.phrase is None  # with a phrase, y and n are letters typed
        if action == "repair":
            return self.repair is not None
        return True

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)

    def action_repair(self) -> None:
        if self.repair is not None:
            said = self.repair[1]()
            self.query_one("#gate-repaired", Label).update(said)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        typed = event.value.strip()
        if self.phrase is None or typed == self.phrase or typed.lower() in ("n", "no"):
            self.dismiss(event.value)
            return
        # A typo is not a no: said, and asked again (nothing is journaled for it).
        self.query_one("#gate-typo", Label).update(
            f"typed {typed!r}, not {self.phrase!r}: type it again (no: not yet)")
        event.input.value = ""


class Choose(ModalScreen[str | None]):
    """Pick one of several things by name (every match of a find): `enter` returns the key of
    the one highlighted, `esc` none; typing narrows the list."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="choose.back"),
    ]
    DEFAULT_CSS = """
    Choose { align: center middle; }
    Choose > Vertical { width: 80%; max-width: 90; height: auto; max-height: 80%;
                        border: round $accent; background: $surface; padding: 0 1; }
    Choose OptionList { height: auto; max-height: 20; }
    """

    def __init__(self, title: str, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        """(key returned, line shown), in order."""

    def compose(self) -> ComposeResult:
        from textual.widgets import OptionList
        from textual.widgets.option_list import Option

        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = "enter: select · esc: back"
            yield OptionList(*[Option(Text(line, no_wrap=True, overflow="ellipsis"),
                                      id=str(number))
                               for number, (_, line) in enumerate(self.choices)],
                             id="choose-list")

    def on_mount(self) -> None:
        self.query_one("#choose-list").focus()

    def on_option_list_option_selected(self, event: Any) -> None:
        self.dismiss(self.choices[int(event.option.id or 0)][0])
