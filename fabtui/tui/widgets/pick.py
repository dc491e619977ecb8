"""`TypedSelect`: a `Select` that takes what is typed on it while closed. Textual's drops the
keys until its menu is open, so text typed into a form's severity field was lost without a
word; here what is typed picks the first option that starts with it (or holds it: `2` picks
`sev2`), and a key that matches nothing says which options there are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual import events
from textual.widgets import Select


def matching(choices: Sequence[tuple[str, str]], typed: str) -> str | None:
    """The value of the first option whose label starts with `typed`, else of the first that
    holds it (case aside); None when none does."""
    typed = typed.lower()
    for test in (str.startswith, str.__contains__):
        for label, value in choices:
            if test(label.lower(), typed):
                return value
    return None


class TypedSelect(Select[str]):
    """See the module docstring."""

    def __init__(self, options: Sequence[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.choices = list(options)
        """(label, value), in order."""
        self.typed = ""
        """What was typed on it since it got the focus (`sev` then `2`: `sev2`)."""

    def take(self, character: str) -> bool:
        """`character` typed: the option matching what was typed so far chosen (else the
        one matching `character` alone); False when nothing matches."""
        for typed in (self.typed + character, character):
            value = matching(self.choices, typed)
            if value is not None:
                self.typed = typed
                self.value = value
                return True
        return False

    async def _on_key(self, event: events.Key) -> None:
        if not self.expanded and event.is_printable and event.character and \
                not event.character.isspace():
            event.stop()
            event.prevent_default()
            if not self.take(event.character):
                self.notify(f"no option matches {(self.typed + event.character)!r}: "
                            f"{', '.join(label for label, _ in self.choices)}",
                            title="select", severity="warning")
        # anything else goes on to Textual's own handling (handlers run along the MRO)

    def _on_blur(self, event: events.Blur) -> None:
        self.typed = ""
