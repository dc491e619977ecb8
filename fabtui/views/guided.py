"""What a guided runbook session shows, computed without a screen: the library searched by
symptom, the recorded sessions with their state and outcome, a step's prose with the values
known so far, the fabric elements a session touches, and each "after" reading paired with its
"before".

Pure functions over the workspace's library, journal and an engine's values, so the Runbooks
screen stays drawing only and these are tested headless. Nothing here writes anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fabtui.model.events import (
    BlockCommand,
    BlockFinished,
    BlockOutput,
    Decision,
    Event,
    EventKind,
    Note,
    SessionCancelled,
    SessionFinished,
    SessionStarted,
    SessionWaiting,
)
from fabtui.model.runbook import Block, BlockKind, InputType, Runbook
from fabtui.runbooks import blocks as block_text
from fabtui.runbooks.engine import var_name
from fabtui.runbooks.expr import Evaluator, ExprError
from fabtui.runbooks.library import Library, match

if TYPE_CHECKING:
    from fabtui.model.runbook import SessionInfo
    from fabtui.runbooks.engine import Engine
    from fabtui.views.fabricmap import FabricMap

_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)
FINISHED = frozenset({"ok", "warn", "fail", "aborted", "skipped", "dry-run"})
"""Session statuses that are an outcome: the session ended and cannot be resumed (`dry-run`:
a dry run's, which measured nothing)."""


# the library ------------------------------------------------------------------------------------
def find_runbooks(library: Library, text: str) -> list[Runbook]:
    """Runbooks for the symptom `text`, best first, by the matching `fabtui runbook find` uses;
    every runbook by id when `text` is blank."""
    if not text.strip():
        return sorted(library.runbooks.values(), key=lambda r: r.meta.id)
    return [book for _, book in match(library, text, limit=len(library.runbooks))]


def input_summary(book: Runbook) -> list[str]:
    """One line per input: `port (port, required): the switch port ...`; secret defaults are
    never shown."""
    lines = []
    for spec in book.meta.inputs:
        need = "required" if spec.required else (
            "default ***" if spec.secret and spec.default is not None
            else f"default {spec.default!r}")
        about = f": {spec.description}" if spec.description else ""
        lines.append(f"{spec.name} ({spec.type.value}, {need}){about}")
    return lines


# sessions ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SessionRow:
    """A recorded session as the sessions list shows it."""

    id: str
    runbook: str
    title: str
    operator: str
    started_at: float
    state: str
    """`finished`, `waiting` (at a gate not passed: resumable), `interrupted` (cancelled or
    stopped: resumable) or `running` (by this face now, or a process that died without a word:
    resumable too)."""
    outcome: str
    """The verdict it ended on (`ok`, `fail`, `aborted`, ...); empty while not finished."""

    @property
    def resumable(self) -> bool:
        return self.state != "finished"


def session_row(info: SessionInfo) -> SessionRow:
    """`info` read as a row (the journal's status holds the outcome once it ended)."""
    status = info.status
    if status in FINISHED:
        state, outcome = "finished", status
    elif status in ("running", "waiting"):
        state, outcome = status, ""
    else:  # cancelled; error: the run stopped at a block that could not run (resume re-runs it)
        state, outcome = "interrupted", "" if status == "cancelled" else status
    return SessionRow(info.id, info.runbook, info.title, info.operator or "", info.started_at,
                      state, outcome)


def session_rows(sessions: Iterable[SessionInfo]) -> list[SessionRow]:
    """Rows for the sessions list, in the order given (the journal's: newest first)."""
    return [session_row(info) for info in sessions]


def interrupted(rows: Iterable[SessionRow], live: Iterable[str] = ()) -> list[SessionRow]:
    """The sessions a resume banner offers: not finished and not running here (`live`)."""
    running_here = set(live)
    return [row for row in rows if row.resumable and row.id not in running_here]


def find_session(rows: Iterable[SessionRow], name: str) -> SessionRow | None:
    """The row whose id is `name` or starts with it (a unique prefix), else None."""
    found = [row for row in rows if row.id == name]
    if found:
        return found[0]
    prefixed = [row for row in rows if row.id.startswith(name)]
    return prefixed[0] if len(prefixed) == 1 else None


# a session's blocks -----------------------------------------------------------------------------
def is_gate(block: Block) -> bool:
    """True when the block asks the operator (a confirm, an input, a dangerous command)."""
    return block.kind in (BlockKind.CONFIRM, BlockKind.INPUT) or \
        (block.kind in (BlockKind.SH, BlockKind.PROBE) and block_text.is_dangerous(block))


def render_prose(text: str, engine: Engine) -> str:
    """`text` with each `{{ expr }}` replaced by its value where the session knows it (else left
    as written), secrets masked."""
    evaluator = engine.evaluator()

    def value(found: re.Match[str]) -> str:
        try:
            result = _evaluate(evaluator, found.group(1))
        except (ExprError, KeyError, TypeError, AttributeError, IndexError):
            return found.group(0)
        if result is None or isinstance(result, dict):
            return found.group(0)
        if isinstance(result, list | tuple):
            return ", ".join(str(v) for v in result)
        return str(result)

    return engine.redactor.text(_TEMPLATE.sub(value, text))


def _evaluate(evaluator: Evaluator, expression: str) -> Any:
    from fabtui.runbooks.expr import Unknown

    result = evaluator.evaluate(expression)
    if isinstance(result, Unknown):
        raise ExprError(result.why)
    return result


def touched(fabric: FabricMap, book: Runbook, scope: Mapping[str, Any]) -> frozenset[str]:
    """Fabric-map keys of what a session works on, from its scope (`Engine.scope()` live,
    `SessionView.scope` recorded): its inputs and the variables it set (the port it found, its
    NIC, node and leaf, the node it drained) that name an element; a port or NIC brings its
    optic and cable along.

    Left out: the hosts it only ran on (`places`: the scheduler host, the node holding a job
    log), and probe targets, which name instruments as often as subjects (a bandwidth test's
    peer NIC, the leaves a PFC scan read and found clean)."""
    skip = places(book)
    found: set[str] = set()
    for name, value in scope.items():
        if not isinstance(value, str) or name in skip:
            continue
        key, _ = fabric.element_of(value.strip())
        if key in fabric.kinds:
            found.add(key)
            optic = fabric.optic_of(key)
            if optic is not None:
                found.add(optic)
            cell = fabric.cell_of(key)
            if cell is not None and cell.link and key in (cell.port, cell.nic):
                found.add(cell.link)
    return frozenset(found)


def places(book: Runbook) -> frozenset[str]:
    """The inputs `book` uses only as where its commands run: a `sh` block's `on=` host or a
    probe's whole `target:`, and nowhere else in its blocks (no condition, variable, command or
    confirmation uses it; a note's prose does not count). Such an input (a scheduler host, a
    log host) is not what the session works on."""
    hosted: set[str] = set()
    used: list[str] = []
    for block in book.blocks():
        for attr, value in block.attrs.items():
            name = _lone(value)
            if attr == "on" and name is not None:
                hosted.add(name)
            elif attr not in ("id", "on"):
                used.append(value)
        if block.kind is BlockKind.NOTE:
            continue
        for line in block.body.splitlines():
            label, _, rest = line.partition(":")
            name = _lone(rest.strip().strip('"'))
            if block.kind is BlockKind.PROBE and label.strip() == "target" and name is not None:
                hosted.add(name)
            else:
                used.append(line)
    inputs = {spec.name for spec in book.meta.inputs}
    return frozenset(name for name in hosted & inputs
                     if not any(re.search(rf"\b{re.escape(name)}\b", text) for text in used))


def _lone(text: str) -> str | None:
    """The name in `text` when it is exactly `{{ name }}`, else None."""
    found = re.fullmatch(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", text.strip())
    return found.group(1) if found else None


def handover_inputs(source: Runbook, target: Runbook,
                    scope: Mapping[str, Any]) -> dict[str, str]:
    """The inputs of `target` (the runbook `source`'s session hands over to) that the session
    already knows: each input of `target` the session's scope holds under the same name as a
    plain value (a port, an optic id, a node, a host), as text. A result table, a list, an empty
    value, a value `target`'s pattern refuses, and anything secret in either runbook are left
    out: the hand-over form asks those."""
    secret = {spec.name for spec in (*source.meta.inputs, *target.meta.inputs) if spec.secret}
    carried: dict[str, str] = {}
    for spec in target.meta.inputs:
        value = scope.get(spec.name)
        if spec.name in secret or isinstance(value, dict | list | tuple) or value is None:
            continue
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if text and text != "***" and \
                (spec.pattern is None or re.fullmatch(spec.pattern, text) is not None):
            carried[spec.name] = text
    return carried


def repair_component(book: Runbook, inputs: Mapping[str, Any]) -> str | None:
    """What the demo fabric repairs when the operator confirms a physical repair in this
    session: its first port (else NIC) input, as `repairs:` in a runbook test names it."""
    for kind in (InputType.PORT, InputType.NIC):
        for spec in book.meta.inputs:
            value = inputs.get(spec.name)
            if spec.type is kind and isinstance(value, str) and value:
                return value
    return None


@dataclass(frozen=True)
class Comparison:
    """An "after" probe block beside the first block that read the same probe on the same
    target: per metric, the value before, after, and the verdict after."""

    before: str
    after: str
    rows: list[tuple[str, str, Any, Any, str]]
    """(component, metric, before, after, verdict after)."""


def comparison(book: Runbook, values: Mapping[str, Any], block_id: str,
               about: Callable[[str], bool] | None = None) -> Comparison | None:
    """`block_id`'s result beside the first earlier probe block with the same probe and target
    (None: it is the first, or either has no metrics); `about(component)` keeps only the rows
    of the components the session is about (a leaf's FEC table has every port)."""
    after = values.get(var_name(block_id))
    if not isinstance(after, dict) or not after.get("metrics"):
        return None
    for block in book.blocks():
        if block.id == block_id:
            return None
        before = values.get(var_name(block.id))
        if block.kind is BlockKind.PROBE and isinstance(before, dict) and \
                before.get("probe") == after.get("probe") and \
                before.get("target") == after.get("target") and before.get("metrics"):
            old = {(m["component"], m["name"]): m["value"] for m in before["metrics"]}
            rows = [(m["component"], m["name"], old.get((m["component"], m["name"])),
                     m["value"], m["verdict"]) for m in after["metrics"]
                    if about is None or about(m["component"])]
            return Comparison(block.id, block_id, rows)
    return None


# what a session did, event by event -------------------------------------------------------------
@dataclass
class SessionView:
    """A session as the screen draws it, built from its journal events: live (each event as
    the engine journals it) or recorded (every event of a session replayed), alike."""

    book: Runbook
    states: dict[str, str]
    """Block id -> `pending`, `running`, or the verdict it ended on (`ok`, `skipped`, ...)."""
    messages: dict[str, str]
    commands: dict[str, str]
    outputs: dict[str, str]
    results: dict[str, dict[str, Any]]
    decisions: dict[str, str]
    """Block id -> the branch a `decide` took and why, or what the operator decided there."""
    log: list[str]
    """Operator decisions and notes, in order, as one line each."""
    step: str | None = None
    block: str | None = None
    """The block running or last run."""
    state: str = "new"
    """`new`, `running`, `waiting` (at a gate not passed), `interrupted` or `finished`."""
    waiting: SessionWaiting | None = None
    """The gate the session waits at, while it waits."""
    outcome: str = ""
    reason: str = ""
    path: tuple[str, ...] = ()
    handover: str | None = None
    """The runbook the session ended by handing over to (`next: runbook X`), once finished."""
    scope: dict[str, Any] = field(default_factory=dict)
    """What the session's expressions saw, as far as the journal tells: inputs (secrets as
    ***), block results by expression name, variables set."""

    @classmethod
    def of(cls, book: Runbook, events: Iterable[Event] = ()) -> SessionView:
        view = cls(book, {b.id: "pending" for b in book.blocks()}, {}, {}, {}, {}, {}, [])
        for event in events:
            view.apply(event)
        return view

    def apply(self, event: Event) -> None:
        """Take one journaled event into the view."""
        data, block, kind = event.data, event.block, event.kind
        if isinstance(data, SessionStarted):
            self.scope.update(data.inputs)
        if kind in (EventKind.SESSION_STARTED, EventKind.SESSION_RESUMED):
            self.state, self.reason = "running", ""  # why it stopped before no longer holds
            self.waiting = None
        elif kind is EventKind.STEP_STARTED:
            self.step = event.step
            self.path = (*self.path, event.step) if event.step else self.path
        elif kind is EventKind.BLOCK_STARTED and block:
            self.block, self.states[block] = block, "running"
            self.outputs.pop(block, None)
        elif isinstance(data, BlockCommand) and block:
            self.commands[block] = data.command + (f"  (on {data.on})" if data.on else "")
        elif isinstance(data, BlockOutput) and block:
            self.outputs[block] = data.output
        elif isinstance(data, BlockFinished) and block:
            self.states[block] = data.verdict.value
            self.messages[block] = data.message
            self.results[block] = data.result
            self.scope[var_name(block)] = data.result
            self.scope.update(data.vars)
        elif isinstance(data, Decision):
            self._decision(block, data)
        elif isinstance(data, Note) and data.by == "operator":
            self.log.append(f"note: {data.text}")
        elif isinstance(data, SessionFinished):
            self.state, self.outcome, self.reason = "finished", data.outcome.value, data.reason
            self.handover, self.waiting = data.handover, None
        elif isinstance(data, SessionWaiting):
            self.state, self.waiting = "waiting", data
            self.reason = f"waiting at gate {data.gate}: {data.reason}"
        elif isinstance(data, SessionCancelled):
            self.state, self.reason = "interrupted", data.reason
            # a gate left unanswered never finished: a resume asks it again
            self.states.update({b: "pending" for b, s in self.states.items() if s == "running"})

    def _decision(self, block: str | None, data: Decision) -> None:
        if data.by == "runbook" and block:
            why = "no other branch applied" if data.condition == "default" else data.condition
            self.decisions[block] = f"branch taken: {data.target} (because {why})"
            return
        if data.skip is not None:
            said = f"skipped {block}: {data.skip}"
        elif data.jump is not None:
            said = f"jumped to {data.jump}" + (f": {data.reason}" if data.reason else "")
        elif data.abort is not None:
            said = f"aborted: {data.abort}"
        elif data.rerun:
            said = f"re-ran {block}"
        elif data.input is not None:
            said = f"{data.input} = {data.value}"
        elif data.answer is not None:
            said = f"{block}: {data.answer}"
        else:
            return
        if block:
            self.decisions[block] = said
        self.log.append(said)

    def counts(self) -> dict[str, int]:
        """How many blocks are in each state."""
        found: dict[str, int] = {}
        for state in self.states.values():
            found[state] = found.get(state, 0) + 1
        return found
