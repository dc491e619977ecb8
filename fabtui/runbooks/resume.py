"""What a resumed session must ask again: the one secret rule, and the dangerous command that
may already have run.

A secret is never stored: the journal holds `***` where a secret input (front matter `inputs:`
marked `secret`) or a secret `input` block's answer was. So a resume cannot replay it: each such
value is asked again, and a resume without it is refused (a command would otherwise run with the
literal `***`). Every face (the command line, the app) renders this one list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fabtui.model.events import BlockFinished, CommandSent, Decision, Event
from fabtui.model.runbook import Block, BlockKind, InputSpec, InputType, Runbook
from fabtui.model.verdict import Verdict
from fabtui.runbooks.blocks import block_attrs, is_dangerous
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


def unknown_answers(book: Runbook, names: Iterable[str]) -> str | None:
    """Why answers given beforehand (`--answer NAME=…`) name nothing in `book`, or None.

    An answer is looked up by the asking block's id (a gate, a dangerous command, an input
    block) or by the name an input block asks for; any other name would never be read, and the
    run would wait at the gate it was meant for while the typo rode along into the printed
    resume command."""
    import difflib

    known = {b.id for b in book.blocks()} | \
        {input_block_spec(b).name for b in book.blocks() if b.kind is BlockKind.INPUT}
    unknown = sorted(set(names) - known)
    if not unknown:
        return None
    askers = sorted(b.id for b in book.blocks()
                    if b.kind in (BlockKind.CONFIRM, BlockKind.INPUT) or is_dangerous(b))
    close = [m for name in unknown for m in difflib.get_close_matches(name, known, n=1)]
    hint = f" (did you mean {', '.join(close)}?)" if close else \
        f"; its gates and inputs: {', '.join(askers) or 'none'}"
    return f"no gate or input {', '.join(unknown)} in {book.meta.id}{hint}"


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


MAY_HAVE_RUN = "may_have_run"
"""Set in the result of a block a resume stopped at again: it was not confirmed a second time,
so it may still have run once (the next resume says so too)."""


@dataclass(frozen=True)
class MayHaveRun:
    """A dangerous block the interrupted run had confirmed, or sent, without it finishing:
    its command may have run. A resume says so and asks for `again` before sending it again."""

    block: str
    confirmed_at: float | None
    sent_at: float | None

    def note(self) -> str:
        """What the operator reads before deciding (a resume's note, the gate's prompt)."""
        said = []
        if self.confirmed_at is not None:
            said.append(f"was confirmed at {_clock(self.confirmed_at)}")
        if self.sent_at is not None:
            said.append(f"its command was sent at {_clock(self.sent_at)}")
        return (f"{self.block} {' and '.join(said)} before the run was interrupted: it may "
                "already have run. Check the device before confirming it again")


def may_have_run(book: Runbook, events: Iterable[Event]) -> list[MayHaveRun]:
    """The dangerous `sh` and `probe` blocks of a session of `book` that its `events` show
    confirmed (a typed, accepted decision) or sent, and not finished after that (see
    `MayHaveRun`)."""
    commands = {b.id for b in book.blocks() if b.kind in (BlockKind.SH, BlockKind.PROBE)}
    open_blocks: dict[str, list[float | None]] = {}
    for event in events:
        data, block = event.data, event.block
        if block is None or block not in commands:
            continue
        if isinstance(data, Decision) and data.typed and data.answer == "accepted":
            open_blocks.setdefault(block, [None, None])[0] = event.at
        elif isinstance(data, CommandSent):
            open_blocks.setdefault(block, [None, None])[1] = event.at
        elif isinstance(data, BlockFinished) and not data.result.get(MAY_HAVE_RUN):
            open_blocks.pop(block, None)
    return [MayHaveRun(block, at[0], at[1]) for block, at in open_blocks.items()]


def again_phrase(phrase: str) -> str:
    """What the operator types to send a command that may already have run once more."""
    return f"again {phrase}"


def _clock(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%H:%M:%S")
