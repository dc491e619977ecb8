"""Collecting the typed confirmation for a dangerous probe on the command line.

The rule itself lives in `fabtui.probes.danger` (the runner refuses a dangerous probe without its
phrase); this face only asks for the phrase: at the prompt on a terminal, or as `--confirm TEXT`
in a script. Without either it refuses (exit 2) and says how.
"""

from __future__ import annotations

import shlex
import sys

import click

from fabtui.cli.context import UserError
from fabtui.model.probe import ProbeDef
from fabtui.probes.danger import confirmation_phrase, describe, is_confirmed


def interactive() -> bool:
    """True when someone at a terminal can be asked."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def require_confirmation(definition: ProbeDef, target_text: str | None,
                         given: str | None) -> str | None:
    """The phrase the operator confirmed a dangerous probe with, for the runner to check (None
    for a harmless probe); raise `UserError` when they did not.

    Note: prompts on the terminal (stderr / stdin) when `given` is None and one is attached.
    """
    if not definition.danger:
        return None
    phrase = confirmation_phrase(definition, target_text)
    what = describe(definition, phrase)
    if given is not None:
        if not is_confirmed(definition, target_text, given):
            raise UserError(f"--confirm {given!r} does not match: {what}; nothing was run. "
                            f"Type the target: --confirm {shlex.quote(phrase)}")
        return given
    if not interactive():
        raise UserError(f"{what}: not run without typed confirmation. Add --confirm "
                        f"{shlex.quote(phrase)} (or run it at a terminal and type it)")
    typed: str = click.prompt(f"DANGER: {what}.\nType {phrase} to run it", default="",
                              show_default=False, err=True)
    if not is_confirmed(definition, target_text, typed):
        raise UserError(f"not confirmed: typed {typed!r}, not {phrase!r}; nothing was run")
    return typed
