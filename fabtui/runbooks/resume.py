"""What a resumed session must ask again: the one secret rule.

A secret is never stored: the journal holds `***` where a secret input (front matter `inputs:`
marked `secret`) or a secret `input` block's answer was. So a resume cannot replay it: each such
value is asked again, and a resume without it is refused (a command would otherwise run with the
literal `***`). Every face (the command line, the app) renders this one list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fabtui.model.events import BlockFinished, Event
from fabtui.model.runbook import Block, BlockKind, InputSpec, InputType, Runbook
from fabtui.model.verdict import Verdict
from fabtui.runbooks.blocks import block_attrs
from fabtui.runbooks.redact import MASK


@dataclass(frozen=True)
class AskAgain:
    """One secret a resume needs again."""

    spec: InputSpec
    """How to ask and check it (its name is what `--input NAME=…` gives)."""
    block: str | None = None
    """The `input` block that asked it during the run; None: a runbook input."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def needed(self) -> bool:
        """Without it the resume is refused (an optional runbook input falls back to its
        default instead)."""
        return self.block is not None or self.spec.required


def input_block_spec(block: Block) -> InputSpec:
    """The input an `input` block asks for, as its attributes declare it."""
    attrs = block_attrs(block)
    return InputSpec(name=attrs.name or block.id.replace("-", "_"),
                     type=InputType(attrs.type or "string"),
                     choices=list(attrs.choices) if attrs.choices is not None else None,
                     default=attrs.default, pattern=attrs.pattern, secret=attrs.secret)


def secret_blocks(book: Runbook) -> dict[str, InputSpec]:
    """The runbook's secret `input` blocks: block id -> what it asks."""
    found: dict[str, InputSpec] = {}
    for block in book.blocks():
        if block.kind is BlockKind.INPUT:
            spec = input_block_spec(block)
            if spec.secret:
                found[block.id] = spec
    return found


def ask_again(book: Runbook, recorded: Mapping[str, Any],
              events: Iterable[Event]) -> list[AskAgain]:
    """The secrets a resume of a session of `book` needs again: its secret runbook inputs the
    journal holds masked (`recorded`), then the secret `input` blocks that finished (in the
    order they ran)."""
    asks = [AskAgain(spec) for spec in book.meta.inputs
            if spec.secret and recorded.get(spec.name) == MASK]
    blocks = secret_blocks(book)
    seen: set[str] = set()
    for event in events:
        data = event.data
        if isinstance(data, BlockFinished) and event.block in blocks and \
                data.verdict is Verdict.OK and event.block not in seen:
            seen.add(event.block)
            asks.append(AskAgain(blocks[event.block], event.block))
    return asks


def refusal(session: str, missing: list[AskAgain]) -> str:
    """Why a resume of `session` cannot go on without `missing`, and how to give them."""
    names = ", ".join(a.name for a in missing)
    plural = len(missing) > 1
    return (f"session {session}: secret{'s' if plural else ''} {names} "
            f"{'were' if plural else 'was'} never stored: give "
            + " ".join(f"--input {a.name}=..." for a in missing))
