"""What lint says about the commands an `sh` block can run: the classifier the engine uses
(`fabtui.destructive`), run over the block's text and over every value an input with a fixed
set of choices can put into it.

The engine judges each command again as rendered, so a value nobody could list beforehand (a
free-text input) is still gated when it runs; lint reports what can be known before: a
destructive literal, a choice that makes the command destructive, and a value that decides
which program runs. Pure: nothing is run.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fabtui.destructive import Hazard, judge

_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)
_OPAQUE_VALUE = "$FABTUI_VALUE"
"""What a value nobody can list stands for: an expansion, so a value in the place of a program
reads as a computed command."""
_PLAIN_VALUE = "VALUE"
MAX_RENDERINGS = 64
"""Combinations of choices tried per block (the engine judges every rendering anyway)."""


@dataclass(frozen=True)
class BlockHazard:
    """A destructive command a block can run, and the input values that make it so (empty:
    the text itself)."""

    hazard: Hazard
    values: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        when = " when " + ", ".join(f"{k}={v}" for k, v in self.values) if self.values else ""
        return f"`{self.hazard.command}` {self.hazard.why}{when}"


def block_hazards(body: str, choices: Mapping[str, Sequence[str]]) -> list[BlockHazard]:
    """The destructive commands `body` (an `sh` block's text) can run: with every value it
    substitutes as a plain word, then with each combination of the listed `choices` (input
    name -> its values) of the names it substitutes bare (`{{ action }}`)."""
    found = [BlockHazard(h) for h in judge(_substitute(body, {}), switch=True)]
    known = {h.hazard for h in found}
    names = [n for n in dict.fromkeys(m.group(1).strip() for m in _TEMPLATE.finditer(body))
             if n in choices]
    combos = itertools.islice(itertools.product(*(choices[n] for n in names)), MAX_RENDERINGS)
    for combo in combos if names else ():
        values = dict(zip(names, combo, strict=True))
        for hazard in judge(_substitute(body, values), switch=True):
            if hazard not in known:
                known.add(hazard)
                found.append(BlockHazard(hazard, tuple(values.items())))
    return found


def value_decides_program(body: str) -> list[str]:
    """The `{{ }}` expressions of `body` that stand where a program's name is: the value
    decides which command runs."""
    def opaque(script: str) -> set[Hazard]:
        return {h for h in judge(script) if "computed" in h.why}

    already = opaque(_substitute(body, {}))
    deciding: list[str] = []
    for match in _TEMPLATE.finditer(body):
        marked = body[:match.start()] + _OPAQUE_VALUE + body[match.end():]
        if opaque(_substitute(marked, {})) - already:
            deciding.append(match.group(1).strip())
    return deciding


def _substitute(body: str, values: Mapping[str, str]) -> str:
    """`body` with each `{{ expr }}` replaced: a listed value (quoted as the engine quotes),
    else a plain word."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        return shlex.quote(values[name]) if name in values else _PLAIN_VALUE

    return _TEMPLATE.sub(value, body)
