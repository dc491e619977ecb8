"""What each executable block's body says, read once for both the linter and the engine.

- `probe`: a YAML mapping `probe: NAME`, `target: ...`, `params: {k: v}` (values are templates);
- `check`: rules, first match wins: `fail if EXPR: message`, `warn if EXPR: message`,
  `ok if EXPR: message`, and a last `ok: message` (or `warn:` / `fail:`) for everything else;
- `decide`: `EXPR -> STEP` lines and a `default -> STEP`; a target is a step id, `end`, or
  `runbook:ID` (hand over to another runbook);
- `sh`: a script; destructive commands are recognised here (they force typed confirmation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fabtui.destructive import judge
from fabtui.errors import InputError
from fabtui.model.runbook import Block, Verdict
from fabtui.yamldoc import parse_yaml

_RULE_HEAD = re.compile(r"^(ok|warn|fail)(\s+if\s+)?")


def _top_level_colon(line: str, start: int) -> int:
    """The first `:` after `start` outside brackets and quotes (where a condition ends)."""
    depth, quote, escaped = 0, "", False
    for index in range(start, len(line)):
        char = line[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0:
            return index
    return -1
_DECIDE = re.compile(r"^(.+?)\s*->\s*(\S+)\s*$")


class BlockError(ValueError):
    """A block body that cannot be read; `line` is relative to the block body (1-based)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class ProbeCall:
    """A probe block: which probe, on what, with which parameters (all templates)."""

    probe: str
    target: str | None
    params: dict[str, str]


@dataclass(frozen=True)
class Rule:
    """One check rule."""

    verdict: Verdict
    condition: str | None
    message: str
    line: int


@dataclass(frozen=True)
class Branch:
    """One decide line."""

    condition: str | None
    """None for `default`."""
    target: str
    line: int


def probe_call(block: Block) -> ProbeCall:
    """Read a probe block. Raises `BlockError`."""
    try:
        doc = parse_yaml(block.body or "{}", "probe block")
    except InputError as exc:
        problem = exc.problems[0]
        raise BlockError(problem.message, problem.line) from None
    data: Any = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("probe"), str):
        raise BlockError("a probe block is a mapping with `probe: NAME` (and `target:`, "
                         "`params:`)", 1)
    unknown = set(data) - {"probe", "target", "params"}
    if unknown:
        raise BlockError(f"unknown key(s) {', '.join(sorted(map(str, unknown)))}: use probe, "
                         "target, params", doc.line_of((sorted(map(str, unknown))[0],)))
    params = data.get("params") or {}
    if not isinstance(params, dict):
        raise BlockError("params must be a mapping of name: value", doc.line_of(("params",)))
    target = data.get("target")
    return ProbeCall(probe=data["probe"], target=None if target is None else str(target),
                     params={str(k): "" if v is None else _scalar(v) for k, v in params.items()})


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_rules(block: Block) -> list[Rule]:
    """Read a check block. Raises `BlockError`."""
    rules = []
    for number, line in _lines(block.body):
        match = _RULE_HEAD.match(line)
        colon = _top_level_colon(line, match.end()) if match else -1
        if match is None or colon < 0:
            raise BlockError("a check rule is `fail if EXPR: message`, `warn if EXPR: message`, "
                             "`ok if EXPR: message` or a last `ok: message`", number)
        condition = line[match.end():colon].strip() if match.group(2) else None
        if match.group(2) and not condition:
            raise BlockError("a check rule's `if` needs an expression", number)
        if not match.group(2) and line[match.end():colon].strip():
            raise BlockError("a check rule is `VERDICT if EXPR: message` or `VERDICT: message`",
                             number)
        rules.append(Rule(Verdict(match.group(1)), condition, line[colon + 1:].strip(), number))
    if not rules:
        raise BlockError("a check block needs at least one rule", 1)
    return rules


def branches(block: Block) -> list[Branch]:
    """Read a decide block. Raises `BlockError`."""
    found = []
    for number, line in _lines(block.body):
        match = _DECIDE.match(line)
        if match is None:
            raise BlockError("a decide line is `EXPR -> step-id` (or `default -> step-id`); "
                             "a target may also be `end` or `runbook:ID`", number)
        condition = match.group(1).strip()
        found.append(Branch(None if condition == "default" else condition, match.group(2),
                            number))
    if not found:
        raise BlockError("a decide block needs at least one `EXPR -> step` line", 1)
    return found


def _lines(body: str) -> list[tuple[int, str]]:
    """Non-blank, non-comment lines with their 1-based numbers; `\\` continues a line."""
    out: list[tuple[int, str]] = []
    pending = ""
    start = 0
    for number, raw in enumerate(body.splitlines(), start=1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append((start, pending + line))
        pending = ""
    if pending:
        out.append((start, pending.strip()))
    return out


def is_dangerous(block: Block) -> bool:
    """True when a block must be confirmed by typing as written: its `danger` attribute, or a
    destructive command in its text (read as a node's shell and as a switch's CLI). The engine
    judges again on the rendered command, where a value can make it destructive."""
    if block.attrs.get("danger", "").lower() in _TRUE:
        return True
    return block.kind.value == "sh" and bool(judge(block.body, switch=True))


@dataclass(frozen=True)
class BlockAttrs:
    """A block's `{...}` attributes, typed: read once per block (`block_attrs`), so the engine
    never parses an attribute string itself. Templates (`on`, `type`, `confirm`) stay text: they
    are rendered when the block runs."""

    condition: str | None = None
    """`if=EXPR`: run only when true."""
    assignments: str | None = None
    """`set=a=expr; b=expr` (split by the engine, which evaluates them)."""
    on_fail: str | None = None
    on_error: str = "stop"
    on_no: str | None = None
    timeout: float | None = None
    interval: float | str | None = None
    """Seconds between a counter probe's two readings (a soak); a template (`{{ soak_s }}`)
    is rendered when the block runs."""
    samples: int | None = None
    """`probe`: readings taken (1 or 2) in place of the catalog's: `samples=2` reads a
    one-reading probe again `interval` later (counters cleared before a soak, read after it)."""
    together: str | None = None
    """`probe`: a group name: consecutive probe blocks of a step with the same name run at
    once, started when the first is reached (one soak for all their intervals)."""
    on: str | None = None
    """`sh`: the node or switch (a template); None: this machine."""
    capture: str | None = None
    ok_status: frozenset[int] = frozenset({0})
    danger: bool = False
    """Marked dangerous (`danger=true`); `is_dangerous` also recognises destructive commands."""
    confirm: str | None = None
    """`sh`: the phrase to type (a template; default: the block id)."""
    type: str | None = None
    """`confirm`: the phrase to type; `input`: the value's type."""
    name: str | None = None
    choices: tuple[str, ...] | None = None
    default: str | None = None
    pattern: str | None = None
    """`input`: a regex the whole answer must match."""
    secret: bool = False


_TRUE = ("true", "yes", "1")


def parse_samples(raw: str | None) -> int | None:
    """`samples=1|2`; a `BlockError` for anything else (a probe reads once or twice)."""
    if raw is None:
        return None
    if raw.strip() not in ("1", "2"):
        raise BlockError(f"samples={raw!r}: a probe reads once or twice (1 or 2)")
    return int(raw)


def block_attrs(block: Block) -> BlockAttrs:
    """The typed attributes of `block`. Raises `BlockError` for a number that is not one."""
    raw = block.attrs

    def number(key: str) -> float | None:
        if key not in raw:
            return None
        try:
            return float(raw[key])
        except ValueError:
            raise BlockError(f"{key}={raw[key]!r} is not a number") from None

    try:
        ok_status = frozenset(int(s) for s in raw.get("ok_status", "0").split(","))
    except ValueError:
        raise BlockError(f"ok_status={raw['ok_status']!r}: expected exit codes such as 0,1") \
            from None
    return BlockAttrs(
        condition=raw.get("if") or None, assignments=raw.get("set") or None,
        on_fail=raw.get("on_fail"), on_error=raw.get("on_error", "stop"),
        on_no=raw.get("on_no"), timeout=number("timeout"),
        interval=raw["interval"] if "{{" in raw.get("interval", "") else number("interval"),
        samples=parse_samples(raw.get("samples")), together=raw.get("together") or None,
        on=raw.get("on") or None, capture=raw.get("capture"), ok_status=ok_status,
        danger=raw.get("danger", "").lower() in _TRUE, confirm=raw.get("confirm"),
        type=raw.get("type"), name=raw.get("name"),
        choices=tuple(raw["choices"].split(",")) if "choices" in raw else None,
        default=raw.get("default"), pattern=raw.get("pattern"),
        secret=raw.get("secret") == "true")
