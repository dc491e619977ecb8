"""`fabtui runbook lint`: everything that would stop a runbook, found before 3 a.m.

Checks: the front-matter schema; block kinds and attributes; block bodies (probe calls, check
rules, decide lines); every expression and template parses; every variable is defined somewhere
(an input, a block's result, a `set` or `capture`d name, an `input` block); every function and
probe exists; every branch target exists; every step is reachable; destructive commands are
marked `danger` (typed confirmation), and so is every probe block whose probe the catalog marks
dangerous; a `together` group of probe blocks (started at once) holds no dangerous probe and
no member reading what another defines; no substitution sits where it cannot be quoted; declared
tests name scenarios, steps, inputs and gates that exist. The engine refuses a runbook with
errors.

Warned: a free-form string input (no pattern, no choices, no fabric type), directly or through
`set`, substituted into a line typed into a switch CLI (an `sh` block with `on=` that is not
known to be a node). The engine refuses a newline or control character there at run time; the
warning asks the author to restrict the input so such a value is refused when it is given.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fabtui.durations import parse_duration
from fabtui.errors import InputError
from fabtui.model.probe import ProbeDef
from fabtui.model.runbook import Block, BlockKind, InputType, Runbook
from fabtui.runbooks import blocks as block_text
from fabtui.runbooks.danger_lint import block_hazards, value_decides_program
from fabtui.runbooks.engine import set_assignments, var_name
from fabtui.runbooks.expr import BUILTINS, ExprError, functions, names
from fabtui.runbooks.functions import fabric_functions
from fabtui.runbooks.resume import input_block_spec
from fabtui.runbooks.templates import shell_problems, template_expressions

_COMMON = {"id", "if", "set", "on_fail", "on_error", "timeout"}
ATTRIBUTES: dict[BlockKind, set[str]] = {
    BlockKind.SH: _COMMON | {"on", "capture", "danger", "confirm", "ok_status", "on_no"},
    BlockKind.PROBE: _COMMON | {"interval", "samples", "danger", "confirm", "on_no",
                                "together"},
    BlockKind.CHECK: _COMMON,
    BlockKind.CONFIRM: _COMMON | {"type", "danger", "on_no"},
    BlockKind.INPUT: _COMMON | {"name", "type", "choices", "default", "secret", "pattern"},
    BlockKind.DECIDE: _COMMON,
    BlockKind.NOTE: _COMMON | {"case"},
}
_FUNCTIONS = set(fabric_functions(None)) | set(BUILTINS)
"""Every function an expression may call (the engine's own table, so the two cannot drift)."""
_SPECIAL_TARGETS = {"end", "stop", "continue", "abort"}
_FREE_FORM = {InputType.STRING, InputType.PATH, InputType.CHOICE}
"""Input types whose values nothing checks unless `choices` or `pattern` restrict them."""
_NODE_TYPES = {InputType.NODE}
_NODE_FUNCTIONS = {"node_of_rank"}
"""Functions whose result is a node: an `on=` made of these is no switch."""


CASE_SECTIONS = ("title", "symptom", "root-cause", "resolution")
"""What a note block's `case=` attribute may name: the case section it fills when the session
is filed (fabtui.cases.filing)."""


@dataclass(frozen=True)
class LintIssue:
    """One problem in a runbook file."""

    path: str
    line: int | None
    severity: str
    """error or warning."""
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: {self.message}"


def lint_parse_error(error: InputError) -> list[LintIssue]:
    """Reader problems as lint errors."""
    return [LintIssue(p.source, p.line, "error", p.message) for p in error.problems]


def lint(runbook: Runbook, *, probes: Iterable[str] | Mapping[str, ProbeDef],
         runbooks: Iterable[str] | Mapping[str, Runbook] = (),
         scenarios: Iterable[str] | None = None) -> list[LintIssue]:
    """Every problem of `runbook`, errors and warnings, in file order.

    `probes`: the catalog (names, or name -> definition; only the latter finds dangerous
    probes used without `danger=true`). `runbooks`: the library (ids, or id -> runbook; only
    the latter finds a hand-over that leaves out an input its target requires).
    """
    dangerous = {name for name, d in probes.items() if d.danger} \
        if isinstance(probes, Mapping) else set()
    checker = _Checker(runbook, set(probes), set(runbooks), set(scenarios)
                       if scenarios is not None else None, dangerous)
    if isinstance(runbooks, Mapping):
        checker.library = dict(runbooks)
    checker.run()
    return sorted(checker.issues, key=lambda i: (i.line or 0, i.message))


class _Checker:
    def __init__(self, runbook: Runbook, probes: set[str], runbooks: set[str],
                 scenarios: set[str] | None, dangerous: set[str]) -> None:
        self.runbook = runbook
        self.probes = probes
        self.runbooks = runbooks
        self.scenarios = scenarios
        self.dangerous = dangerous
        """Probes the catalog marks `danger`: their blocks must say danger=true."""
        self.issues: list[LintIssue] = []
        self.library: dict[str, Runbook] = {}
        """id -> runbook, when the caller gave them: hand-overs are checked against their
        required inputs."""
        self.steps = {s.id for s in runbook.steps}
        self._definers = self._count_definers()
        self.defined = set(self._definers)
        self.free_form = self._free_form_names()
        self._choices = self._listed_values()

    def _listed_values(self) -> dict[str, list[str]]:
        """Inputs (front matter and `input` blocks) with a fixed list of values: name -> the
        values, as text (a boolean's two)."""
        specs = [*self.runbook.meta.inputs,
                 *(input_block_spec(b) for b in self.runbook.blocks()
                   if b.kind is BlockKind.INPUT)]
        listed: dict[str, list[str]] = {}
        for spec in specs:
            if spec.choices:
                listed[spec.name] = [str(c) for c in spec.choices]
            elif spec.type is InputType.BOOL:
                listed[spec.name] = ["true", "false"]
        return listed

    def error(self, line: int | None, message: str) -> None:
        self.issues.append(LintIssue(self.runbook.path, line, "error", message))

    def warning(self, line: int | None, message: str) -> None:
        self.issues.append(LintIssue(self.runbook.path, line, "warning", message))

    def run(self) -> None:
        for line, message in self.runbook.problems:
            self.error(line, message)
        inputs = {spec.name for spec in self.runbook.meta.inputs}
        for block in self.runbook.blocks():
            if var_name(block.id) in inputs:
                self.error(block.line, f"block id {block.id!r} names its result "
                           f"{var_name(block.id)!r}, which hides the input of that name: "
                           "rename the block")
        for block in self.runbook.blocks():
            self._block(block)
        for step in self.runbook.steps:
            self._together(step.blocks)
        self._reachability()
        self._tests()
        for spec in self.runbook.meta.inputs:
            if spec.choices_from and self.probes and spec.choices_from not in self.probes:
                self.error(self.runbook.lines.get(f"inputs.{spec.name}"),
                           f"input {spec.name}: choices_from names no probe "
                           f"{spec.choices_from!r}")
        for required in self.runbook.meta.requires:
            if self.runbooks and required not in self.runbooks:
                self.warning(self.runbook.lines.get("requires"),
                             f"requires {required!r}, which is not in the runbook library")

    # expressions ------------------------------------------------------------------------------
    def expression(self, block: Block, text: str, line: int | None = None) -> None:
        try:
            used = names(text)
            called = functions(text)
        except ExprError as exc:
            self.error(line or block.line, f"{block.id}: {exc}")
            return
        for name in sorted(used - self.defined):
            self.error(line or block.line, f"{block.id}: {name!r} is not defined (not an input, "
                       "a block result, nor a set/captured variable)")
        for name in sorted(called - _FUNCTIONS):
            self.error(line or block.line, f"{block.id}: no function {name!r}")

    def template(self, block: Block, text: str, line: int | None = None) -> None:
        for expression in template_expressions(text):
            self.expression(block, expression, line)

    # blocks -----------------------------------------------------------------------------------
    def _own_set_names(self, block: Block) -> set[str]:
        """Names only this block's `set` defines (they exist only after the block ran)."""
        own = _set_names(block)
        return {name for name in own if self._definers.get(name, 0) <= 1}

    def _count_definers(self) -> dict[str, int]:
        """How many places define each name (inputs, results, sets, captures, input blocks)."""
        counts: dict[str, int] = {}

        def add(name: str) -> None:
            counts[name] = counts.get(name, 0) + 1

        for spec in self.runbook.meta.inputs:
            add(spec.name)
        for block in self.runbook.blocks():
            add(var_name(block.id))
            if block.kind is BlockKind.INPUT:
                add(block.attrs.get("name", var_name(block.id)))
            for name in _set_names(block):
                add(name)
            if "capture" in block.attrs:
                try:
                    for name in re.compile(block.attrs["capture"]).groupindex:
                        add(name)
                except re.error as exc:
                    self.error(block.line, f"{block.id}: capture is not a valid regex: {exc}")
        return counts

    def _free_form_names(self) -> set[str]:
        """Names holding an unrestricted string: such inputs and what `set` derives from them."""
        free = {spec.name for spec in self.runbook.meta.inputs
                if spec.type in _FREE_FORM and not spec.choices and spec.pattern is None}
        for block in self.runbook.blocks():
            if block.kind is BlockKind.INPUT and \
                    block.attrs.get("type", "string") in {t.value for t in _FREE_FORM} and \
                    "choices" not in block.attrs and "pattern" not in block.attrs:
                free.add(block.attrs.get("name", var_name(block.id)))
        derived = []
        for block in self.runbook.blocks():
            for assignment in re.split(r";", block.attrs.get("set", "")):
                key, sep, expression = assignment.partition("=")
                with contextlib.suppress(ExprError):
                    if sep:
                        derived.append((key.strip(), names(expression)))
        grew = True
        while grew:  # to a fixed point: `set` chains may run in any order
            grew = False
            for key, used in derived:
                if key not in free and used & free:
                    free.add(key)
                    grew = True
        return free

    def _may_be_switch(self, on: str) -> bool:
        """False only where `on=` is sure to name a node (a node input, `node_of_rank`)."""
        expressions = template_expressions(on)
        if not expressions:
            return True  # a literal name: lint does not know the fabric
        kinds = {spec.name: spec.type for spec in self.runbook.meta.inputs}
        for expression in expressions:
            try:
                called = functions(expression)
                used = names(expression)
            except ExprError:
                return True
            if called & _NODE_FUNCTIONS:
                continue
            if called or not used or any(kinds.get(name) not in _NODE_TYPES for name in used):
                return True
        return False

    def _switch_lines(self, block: Block) -> None:
        """Warn where a free-form string is typed into a switch CLI line."""
        on = block.attrs.get("on")
        if not on or not self._may_be_switch(on):
            return
        for number, line in enumerate(block.body.split("\n"), start=1):
            for expression in template_expressions(line):
                try:
                    used = names(expression)
                except ExprError:
                    continue
                for name in sorted(used & self.free_form):
                    self.warning(block.line + number, f"{block.id}: free-form input {name!r} (a "
                                 f"string with no pattern or choices) is typed into a switch "
                                 f"CLI line on {on}: a newline or control character in it "
                                 "stops the run there; give it a pattern, choices or a fabric "
                                 "type (port, switch, node)")

    def _used_by_body(self, block: Block) -> set[str]:
        """Names the block reads while it runs (not in its `set`)."""
        texts: list[str] = []
        if "if" in block.attrs:
            texts.append(block.attrs["if"])
        try:
            if block.kind is BlockKind.CHECK:
                for rule in block_text.check_rules(block):
                    texts += ([rule.condition] if rule.condition else []) + \
                        template_expressions(rule.message)
            elif block.kind is BlockKind.DECIDE:
                texts += [b.condition for b in block_text.branches(block) if b.condition]
            elif block.kind is BlockKind.PROBE:
                call = block_text.probe_call(block)
                texts += template_expressions(call.target or "")
                for value in call.params.values():
                    texts += template_expressions(value)
            else:
                texts += template_expressions(block.body)
            for attr in ("on", "confirm", "type"):
                texts += template_expressions(block.attrs.get(attr, ""))
        except block_text.BlockError:
            return set()
        used: set[str] = set()
        for text in texts:
            with contextlib.suppress(ExprError):
                used |= names(text)
        return used

    def _block(self, block: Block) -> None:
        for name in sorted(self._own_set_names(block) & self._used_by_body(block)):
            self.error(block.line, f"{block.id}: uses {name!r}, which only its own `set` "
                       "defines: `set` runs after the block, so the name does not exist yet")
        unknown = set(block.attrs) - ATTRIBUTES[block.kind]
        known = ", ".join(sorted(ATTRIBUTES[block.kind]))
        for name in sorted(unknown):
            self.error(block.line, f"{block.id}: unknown attribute {name!r} for a "
                       f"{block.kind.value} block (known: {known})")
        if "if" in block.attrs:
            self.expression(block, block.attrs["if"])
        for assignment in set_assignments(block.attrs.get("set", "")):
            if assignment:
                key, sep, expression = assignment.partition("=")
                if not sep or not re.fullmatch(r"[a-z_][a-z0-9_]*", key.strip()):
                    self.error(block.line, f"{block.id}: set takes `name=expression; ...`")
                else:
                    self.expression(block, expression)
        for target_attr in ("on_fail", "on_no"):
            if target_attr in block.attrs:
                self._target(block, block.attrs[target_attr], block.line)
        for attr in ("timeout",):
            if attr in block.attrs:
                try:
                    float(block.attrs[attr])
                except ValueError:
                    self.error(block.line, f"{block.id}: {attr} must be seconds, not "
                               f"{block.attrs[attr]!r}")
        if "samples" in block.attrs:
            try:
                block_text.parse_samples(block.attrs["samples"])
            except block_text.BlockError as exc:
                self.error(block.line, f"{block.id}: {exc}")
        handler = getattr(self, f"_{block.kind.value}")
        try:
            handler(block)
        except block_text.BlockError as exc:
            line = block.line + exc.line if exc.line is not None else block.line
            self.error(line, f"{block.id}: {exc}")

    def _together(self, blocks: list[Block]) -> None:
        """`together=NAME` groups (consecutive probe blocks of a step with the same name): the
        engine starts their probes at once, each rendered when the group starts. So no
        member may read what another member defines (its result or a `set`), and no member
        may be dangerous (its typed confirmation comes before it runs, alone)."""
        groups: list[list[Block]] = []
        previous: str | None = None
        for block in blocks:
            name = block.attrs.get("together") if block.kind is BlockKind.PROBE else None
            if name and name == previous:
                groups[-1].append(block)
            elif name:
                groups.append([block])
            previous = name
        for group in groups:
            name = group[0].attrs["together"]
            if len(group) == 1:
                self.warning(group[0].line, f"{group[0].id}: together={name!r} groups nothing: "
                             "no probe block of the same group follows it directly")
            for block in group:
                self._together_member(block, name, [b for b in group if b is not block])

    def _together_member(self, block: Block, name: str, others: list[Block]) -> None:
        probe = None
        with contextlib.suppress(block_text.BlockError):
            probe = block_text.probe_call(block).probe
        if block_text.is_dangerous(block) or probe in self.dangerous:
            self.error(block.line, f"{block.id}: a dangerous probe cannot run in a together "
                       f"group (together={name!r}): its typed confirmation comes first and it "
                       "runs alone; remove together from it")
        defined: set[str] = set()
        for other in others:
            defined |= _set_names(other) | {var_name(other.id)}
        used = self._used_by_body(block)
        for expression in template_expressions(block.attrs.get("interval", "")):
            with contextlib.suppress(ExprError):
                used |= names(expression)
        for found in sorted(used & defined):
            self.error(block.line, f"{block.id}: uses {found!r}, which another block of its "
                       f"together={name!r} group defines: the group's probes start at once, "
                       "before any of them has run")

    def _sh(self, block: Block) -> None:
        for problem in shell_problems(block.body):
            self.error(block.line, f"{block.id}: {problem}")
        self._switch_lines(block)
        self.template(block, block.body)
        for attr in ("on", "confirm"):
            if attr in block.attrs:
                self.template(block, block.attrs[attr])
        if block.attrs.get("danger", "").lower() not in ("true", "yes", "1"):
            for found in block_hazards(block.body, self._choices):
                self.error(block.line, f"{block.id}: {found.describe()}: mark the block "
                           "danger=true (the operator must type a confirmation) and say what "
                           "it does in the prose")
            for expression in value_decides_program(block.body):
                self.warning(block.line, f"{block.id}: {{{{ {expression} }}}} decides which "
                             "program runs: the engine asks for typed confirmation whenever "
                             "its value is destructive, and lint cannot check it; name the "
                             "program in the text")

    def _probe(self, block: Block) -> None:
        call = block_text.probe_call(block)
        if self.probes and call.probe not in self.probes:
            self.error(block.line + 1, f"{block.id}: no probe {call.probe!r} in the catalog")
        if call.probe in self.dangerous and \
                block.attrs.get("danger", "").lower() not in ("true", "yes", "1"):
            self.error(block.line, f"{block.id}: probe {call.probe} changes state on its target "
                       "(the catalog marks it danger): mark the block danger=true (the operator "
                       "must type a confirmation; confirm=\"...\" names what) and say what it "
                       "does in the prose")
        if "confirm" in block.attrs:
            self.template(block, block.attrs["confirm"])
        if call.target is not None:
            self.template(block, call.target)
        for value in call.params.values():
            self.template(block, value)

    def _check(self, block: Block) -> None:
        rules = block_text.check_rules(block)
        for rule in rules:
            if rule.condition is not None:
                self.expression(block, rule.condition, block.line + rule.line)
            self.template(block, rule.message, block.line + rule.line)
        if rules[-1].condition is not None:
            self.warning(block.line, f"{block.id}: no final `ok: message` rule: when nothing "
                         "matches the check passes silently")

    def _decide(self, block: Block) -> None:
        for branch in block_text.branches(block):
            if branch.condition is not None:
                self.expression(block, branch.condition, block.line + branch.line)
            self._target(block, branch.target, block.line + branch.line)

    def _confirm(self, block: Block) -> None:
        self.template(block, block.body)
        if "type" in block.attrs:
            self.template(block, block.attrs["type"])
        if not block.body.strip():
            self.error(block.line, f"{block.id}: a confirm block asks a question: write it")

    def _input(self, block: Block) -> None:
        kind = block.attrs.get("type", "string")
        if kind not in {t.value for t in InputType}:
            self.error(block.line, f"{block.id}: unknown input type {kind!r}")
        if "pattern" in block.attrs:
            try:
                re.compile(block.attrs["pattern"])
            except re.error as exc:
                self.error(block.line, f"{block.id}: pattern is not a valid regex: {exc}")

    def _note(self, block: Block) -> None:
        self.template(block, block.body)
        section = block.attrs.get("case")
        if section is not None and section not in CASE_SECTIONS:
            self.error(block.line, f"{block.id}: case={section!r} is not a case section a note "
                       f"fills ({', '.join(CASE_SECTIONS)})")

    def _target(self, block: Block, target: str, line: int) -> None:
        if "{{" in target:
            self.template(block, target, line)
            return
        if target.startswith("runbook:"):
            other = target.split(":", 1)[1]
            if self.runbooks and other not in self.runbooks:
                self.error(line, f"{block.id}: hands over to runbook {other!r}, which is not in "
                           "the library")
            elif other in self.library:
                self._hand_over_inputs(block, self.library[other], line)
            return
        if target not in self.steps and target not in _SPECIAL_TARGETS:
            self.error(line, f"{block.id}: no step {target!r} to go to (steps: "
                       f"{', '.join(s.id for s in self.runbook.steps)})")

    def _hand_over_inputs(self, block: Block, target: Runbook, line: int) -> None:
        """The hand-over command (`views.guided.handover_inputs`) carries each input of
        `target` that this session holds under the same name as a plain value: a required
        input with no default that this runbook never sets so (only a block of that id, whose
        result is a table, or nothing) leaves the printed command failing `--input NAME:
        required`."""
        plain = {spec.name for spec in self.runbook.meta.inputs}
        for each in self.runbook.blocks():
            plain |= _set_names(each)
            if each.kind is BlockKind.INPUT:
                plain.add(each.attrs.get("name", var_name(each.id)))
            with contextlib.suppress(re.error):
                plain |= set(re.compile(each.attrs.get("capture", "")).groupindex)
        for spec in target.meta.inputs:
            if spec.required and spec.default is None and not spec.secret \
                    and spec.name not in plain:
                self.warning(line, f"{block.id}: hands over to runbook {target.meta.id}, which "
                             f"requires input {spec.name!r}, and nothing here sets "
                             f"{spec.name!r} as a value: the hand-over command lacks --input "
                             f"{spec.name}=... (set it: set=\"{spec.name}=...\")")

    # flow -------------------------------------------------------------------------------------
    def _reachability(self) -> None:
        steps = self.runbook.steps
        edges: dict[int, set[int]] = {i: set() for i in range(len(steps))}
        index = {s.id: i for i, s in enumerate(steps)}
        for i, step in enumerate(steps):
            falls_through = True
            for block in step.blocks:
                targets = [block.attrs.get("on_fail"), block.attrs.get("on_no")]
                if block.kind is BlockKind.DECIDE:
                    try:
                        found = block_text.branches(block)
                    except block_text.BlockError:
                        found = []
                    targets += [b.target for b in found]
                    if any(b.condition is None for b in found) and "if" not in block.attrs:
                        falls_through = False
                edges[i] |= {index[t] for t in targets if t in index}
            if falls_through and i + 1 < len(steps):
                edges[i].add(i + 1)
        seen, todo = {0}, [0]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        for i, step in enumerate(steps):
            if i not in seen:
                self.error(step.line, f"step {step.id!r} cannot be reached: no step leads to it "
                           "(a decide before it always jumps elsewhere)")

    def _tests(self) -> None:
        meta = self.runbook.meta
        gates = {b.id for b in self.runbook.blocks()
                 if b.kind in (BlockKind.CONFIRM, BlockKind.INPUT) or block_text.is_dangerous(b)}
        inputs = {spec.name for spec in meta.inputs}
        if not meta.tests:
            self.warning(self.runbook.lines.get("id"), "no tests: declare at least one under "
                         "`tests:` (a scenario, inputs, answers and the expected path)")
        for test in meta.tests:
            line = self.runbook.lines.get(f"tests.{test.name}")
            if test.at is not None:
                try:
                    parse_duration(test.at)
                except ValueError as exc:
                    self.error(line, f"test {test.name!r}: at: {exc}")
            if self.scenarios is not None and test.scenario not in self.scenarios:
                self.error(line, f"test {test.name!r}: no scenario {test.scenario!r}")
            for name in test.inputs:
                if name not in inputs:
                    self.error(line, f"test {test.name!r}: no input {name!r}")
            for name in list(test.answers) + list(test.repairs):
                if name not in gates:
                    self.error(line, f"test {test.name!r}: no gate or input block {name!r} to "
                               "answer")
            for step in [*(test.expect.path or []), *test.expect.visits,
                         *([test.expect.ends_at] if test.expect.ends_at else [])]:
                if step not in self.steps:
                    self.error(line, f"test {test.name!r}: expects step {step!r}, which does "
                               "not exist")


def _set_names(block: Block) -> set[str]:
    """The names a block's `set` attribute assigns."""
    return {a.partition("=")[0].strip() for a in re.split(r";", block.attrs.get("set", ""))
            if a.strip()}
