"""Typed confirmation for dangerous probes on the command line.

A probe the catalog marks `danger` changes state on its target. `fabtui probe run` runs it only
when the operator types its target (the probe's name when it has none): at the prompt on a
terminal, or as `--confirm TEXT` in a script. Without either it refuses (exit 2) and says how.
The same rule holds in runbooks, where the engine asks through its typed-confirmation gate.
"""

from __future__ import annotations

import shlex
import sys

import click

from fabtui.cli.context import UserError
from fabtui.model.probe import ProbeDef


def phrase_for(definition: ProbeDef, target_text: str | None) -> str:
    """What the operator types to run `definition` on `target_text`."""
    return (target_text or "").strip() or definition.name


def interactive() -> bool:
    """True when someone at a terminal can be asked."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def require_confirmation(definition: ProbeDef, target_text: str | None,
                         given: str | None) -> None:
    """Return when the operator confirmed running a dangerous probe; else raise `UserError`.

    Note: prompts on the terminal (stderr / stdin) when `given` is None and one is attached.
    """
    if not definition.danger:
        return
    phrase = phrase_for(definition, target_text)
    what = f"probe {definition.name} changes state on {phrase} ({definition.description})"
    if given is not None:
        if given.strip() != phrase:
            raise UserError(f"--confirm {given!r} does not match: {what}; nothing was run. "
                            f"Type the target: --confirm {shlex.quote(phrase)}")
        return
    if not interactive():
        raise UserError(f"{what}: not run without typed confirmation. Add --confirm "
                        f"{shlex.quote(phrase)} (or run it at a terminal and type it)")
    typed = click.prompt(f"DANGER: {what}.\nType {phrase} to run it", default="",
                         show_default=False, err=True)
    if typed.strip() != phrase:
        raise UserError(f"not confirmed: typed {typed!r}, not {phrase!r}; nothing was run")
