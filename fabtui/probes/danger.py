"""The danger rule: a probe the catalog marks `danger` changes state on its target, so it runs
only when the operator typed its confirmation phrase.

One rule for every door: the probe runner refuses a dangerous probe whose phrase was not given
(`ProbeRunner.run` / `sweep(…, confirmed=…)`), so the workspace, the live poller, the command line,
the app's console and the runbook engine cannot run one unconfirmed. Faces only collect the phrase.
"""

from __future__ import annotations

from fabtui.errors import RequestError
from fabtui.model.probe import ProbeDef


class DangerRefused(RequestError):
    """A dangerous probe asked to run without its typed confirmation; nothing ran."""

    def __init__(self, definition: ProbeDef, phrase: str, given: str | None) -> None:
        self.definition = definition
        self.phrase = phrase
        """What the operator must type."""
        self.given = given
        what = describe(definition, phrase)
        if given is None:
            message = f"{what}: not run without typed confirmation (type {phrase!r})"
        else:
            message = f"{what}: {given.strip()!r} does not match {phrase!r}; nothing was run"
        super().__init__(message)


def confirmation_phrase(definition: ProbeDef, target_text: str | None) -> str:
    """What the operator types to run `definition` on `target_text` (a target, a set such as
    `node*:mlx5_0`): the target as they named it, or the probe's name when it has none."""
    return (target_text or "").strip() or definition.name


def describe(definition: ProbeDef, phrase: str) -> str:
    """One line saying what a dangerous probe does where (for a prompt or a refusal)."""
    return f"probe {definition.name} changes state on {phrase} ({definition.description})"


def is_confirmed(definition: ProbeDef, target_text: str | None, given: str | None) -> bool:
    """True when `definition` may run on `target_text`: it is harmless, or `given` is its
    phrase (surrounding blanks ignored)."""
    if not definition.danger:
        return True
    return given is not None and given.strip() == confirmation_phrase(definition, target_text)


def require_confirmed(definition: ProbeDef, target_text: str | None, given: str | None) -> None:
    """Return when `definition` may run on `target_text` (see `is_confirmed`); else raise
    `DangerRefused` naming the phrase."""
    if not is_confirmed(definition, target_text, given):
        raise DangerRefused(definition, confirmation_phrase(definition, target_text), given)
