"""A small, safe expression language for runbooks, and `{{ ... }}` templates.

Expressions use Python's syntax for what a runbook needs and nothing more: literals, names,
`a.b` / `a["b"]` / `a[0]` lookups, arithmetic, comparisons, `and`/`or`/`not`, `x if c else y`,
list comprehensions, and calls of the functions the engine provides (plus a few harmless string
and dict methods). The text is parsed with `ast` and walked by this module; it is never given to
`eval`, attributes never reach Python objects (`a.b` is a key lookup), and the work an expression
may do is bounded.

Templates substitute `{{ expr }}`. In a shell block every substitution is quoted for where it
stands (outside quotes: `shlex.quote`; inside double quotes: backslash-escaped), so a value such
as `; rm -rf /` or `$(reboot)` reaches the command only as data. A substitution inside single
quotes cannot be made safe and is refused.

A script for an interactive switch CLI (`render_cli_lines`) is sent one line at a time, and the
terminal acts on a newline or any other control character before a shell sees quotes: there a
value must also stay on the one line it stands in, and every line must fit a CLI line
(`fabtui.transports.cli_line`), or the whole script is refused before any line is sent.
"""

from __future__ import annotations

import ast
import functools
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fabtui.transports import cli_line

MAX_LENGTH = 4000
MAX_STEPS = 200_000
_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)
_METHODS = {
    str: {"lower", "upper", "strip", "startswith", "endswith", "split", "replace", "join",
          "count", "removeprefix", "removesuffix", "partition", "rpartition", "isdigit"},
    dict: {"get", "keys", "values", "items"},
    list: {"count", "index"},
}
BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len, "min": min, "max": max, "sum": sum, "any": any, "all": all, "abs": abs,
    "round": round, "int": int, "float": float, "str": str, "bool": bool, "sorted": sorted,
    "list": list, "set": lambda items=(): sorted(set(items), key=str),
}


class ExprError(ValueError):
    """An expression that cannot be read or evaluated (the message says why)."""


@dataclass(frozen=True)
class Unknown:
    """A value not known yet (a dry run measures nothing): its name, and why it is unknown,
    e.g. `captured from the output of step 2 block 'dom', known when it runs`."""

    name: str
    why: str

    def derived(self, name: str) -> Unknown:
        """The unknown `name` computed from this one."""
        why = self.why if self.why.startswith("set from ") else f"set from {self.why}" \
            if self.why.startswith("the ") else f"set from {self.name}, {self.why}"
        return Unknown(name, why)


class UnknownValue(ExprError):
    """An expression read a value that is not known yet (`Unknown`)."""

    def __init__(self, unknown: Unknown) -> None:
        super().__init__(f"{unknown.name} is {unknown.why}")
        self.unknown = unknown



def parse(text: str) -> ast.Expression:
    """Parse `text` as an expression of this language (cached: the tree is never changed).
    Raises `ExprError`."""
    return _parsed(text)[0]


@functools.lru_cache(maxsize=8192)
def _parsed(text: str) -> tuple[ast.Expression, tuple[ast.AST, ...]]:
    """The checked tree of `text` and its nodes in walk order (kept for `names`)."""
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"cannot read expression {text.strip()!r}: {exc.msg}") from None
    nodes = _walk(tree)
    for node in nodes:
        if not isinstance(node, _ALLOWED):
            raise ExprError(f"{type(node).__name__} is not allowed in an expression "
                            f"({text.strip()!r})")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ExprError(f"no such field {node.attr!r}")
    return tree, tuple(nodes)


_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.Add, ast.Sub, ast.Mult,
            ast.Div, ast.Mod, ast.FloorDiv, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
            ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn,
            ast.Is, ast.IsNot, ast.IfExp, ast.Name, ast.Load, ast.Store, ast.Constant, ast.List,
            ast.Tuple, ast.Dict, ast.Subscript, ast.Slice, ast.Attribute, ast.Call, ast.ListComp,
            ast.GeneratorExp, ast.comprehension, ast.keyword, ast.JoinedStr, ast.FormattedValue)


def names(text: str) -> set[str]:
    """The free variable names `text` reads (not functions, not comprehension variables)."""
    return set(_names_and_functions(text)[0])


def functions(text: str) -> set[str]:
    """The function names `text` calls."""
    return set(_names_and_functions(text)[1])


def _walk(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree` in `ast.walk`'s order (breadth first), several times faster: the
    linter walks thousands of expressions, and `ast.walk`'s generators were most of its time."""
    nodes = [tree]
    for node in nodes:  # grows while it is read: a breadth-first queue
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                nodes.append(value)
            elif isinstance(value, list):
                nodes.extend(item for item in value if isinstance(item, ast.AST))
    return nodes


@functools.lru_cache(maxsize=8192)
def _names_and_functions(text: str) -> tuple[frozenset[str], frozenset[str]]:
    bound: set[str] = set()
    called: set[str] = set()
    used: set[str] = set()
    for node in _parsed(text)[1]:
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                used.add(node.id)
        elif isinstance(node, ast.comprehension):
            bound |= {n.id for n in _walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func.id)
    return frozenset(used - bound - called - {"true", "false", "null", "none"}), \
        frozenset(called)


class Evaluator:
    """Evaluates parsed expressions over a scope of plain values and provided functions."""

    def __init__(self, scope: Mapping[str, Any],
                 functions: Mapping[str, Callable[..., Any]] | None = None) -> None:
        self.scope = dict(scope)
        self.functions = {**BUILTINS, **(functions or {})}
        self.steps = 0

    def evaluate(self, text: str) -> Any:
        """The value of expression `text`. Raises `ExprError`."""
        tree = parse(text)
        self.steps = 0
        try:
            return self._eval(tree.body, self.scope)
        except ExprError:
            raise
        except (TypeError, ValueError, ZeroDivisionError, KeyError, IndexError,
                AttributeError, RecursionError) as exc:
            raise ExprError(f"{text.strip()!r}: {type(exc).__name__}: {exc}") from None

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ExprError("expression does too much work")

    def _eval(self, node: ast.AST, scope: Mapping[str, Any]) -> Any:
        self._tick()
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in scope:
                if isinstance(scope[node.id], Unknown):
                    raise UnknownValue(scope[node.id])
                return scope[node.id]
            lowered = node.id.lower()
            if lowered in ("true", "false"):
                return lowered == "true"
            if lowered in ("null", "none"):
                return None
            raise ExprError(f"{node.id!r} is not defined")
        if isinstance(node, ast.BoolOp):
            value: Any = None
            for item in node.values:
                value = self._eval(item, scope)
                if isinstance(node.op, ast.And) and not value:
                    return value
                if isinstance(node.op, ast.Or) and value:
                    return value
            return value
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand, scope)
            if isinstance(node.op, ast.Not):
                return not operand
            return -operand if isinstance(node.op, ast.USub) else +operand
        if isinstance(node, ast.BinOp):
            return self._binary(node, scope)
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, scope)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._eval(right_node, scope)
                if not _compare(op, left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            chosen = node.body if self._eval(node.test, scope) else node.orelse
            return self._eval(chosen, scope)
        if isinstance(node, ast.List | ast.Tuple):
            return [self._eval(item, scope) for item in node.elts]
        if isinstance(node, ast.Dict):
            return {self._eval(k, scope) if k is not None else None: self._eval(v, scope)
                    for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, ast.Subscript):
            container = self._eval(node.value, scope)
            if isinstance(node.slice, ast.Slice):
                parts = [self._eval(p, scope) if p is not None else None
                         for p in (node.slice.lower, node.slice.upper, node.slice.step)]
                return container[slice(*parts)]
            key = self._eval(node.slice, scope)
            if isinstance(container, Mapping):
                return container.get(key)
            return container[key]
        if isinstance(node, ast.Attribute):
            container = self._eval(node.value, scope)
            if isinstance(container, Mapping):
                return container.get(node.attr)
            if container is None:
                return None
            raise ExprError(f"no field {node.attr!r} on a {type(container).__name__}")
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return list(self._comprehension(node, scope))
        if isinstance(node, ast.JoinedStr):
            return "".join(str(self._eval(v, scope)) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            return self._eval(node.value, scope)
        raise ExprError(f"{type(node).__name__} is not allowed")

    def _binary(self, node: ast.BinOp, scope: Mapping[str, Any]) -> Any:
        left, right = self._eval(node.left, scope), self._eval(node.right, scope)
        if isinstance(node.op, ast.Mult) and (isinstance(left, str | list) or
                                              isinstance(right, str | list)):
            count = right if isinstance(left, str | list) else left
            if not isinstance(count, int) or count > 10_000:
                raise ExprError("repetition too large")
        operations: dict[type, Callable[[Any, Any], Any]] = {
            ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
            ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
            ast.Mod: lambda a, b: a % b, ast.FloorDiv: lambda a, b: a // b}
        return operations[type(node.op)](left, right)

    def _call(self, node: ast.Call, scope: Mapping[str, Any]) -> Any:
        args = [self._eval(a, scope) for a in node.args]
        kwargs = {k.arg: self._eval(k.value, scope) for k in node.keywords if k.arg}
        if isinstance(node.func, ast.Name):
            function = self.functions.get(node.func.id)
            if function is None:
                raise ExprError(f"no function {node.func.id!r}")
            return function(*args, **kwargs)
        if isinstance(node.func, ast.Attribute):
            target = self._eval(node.func.value, scope)
            allowed = next((m for t, m in _METHODS.items() if isinstance(target, t)), set())
            if node.func.attr not in allowed:
                raise ExprError(f"no method {node.func.attr!r} on a {type(target).__name__}")
            result = getattr(target, node.func.attr)(*args, **kwargs)
            return list(result) if isinstance(result, type({}.keys()) | type({}.values()) |
                                              type({}.items())) else result
        raise ExprError("only named functions can be called")

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp,
                       scope: Mapping[str, Any]) -> Iterator[Any]:
        def walk(generators: list[ast.comprehension], inner: dict[str, Any]) -> Iterator[Any]:
            if not generators:
                yield self._eval(node.elt, inner)
                return
            first, rest = generators[0], generators[1:]
            for item in self._eval(first.iter, inner) or []:
                self._tick()
                bound = dict(inner)
                _bind(first.target, item, bound)
                if all(self._eval(condition, bound) for condition in first.ifs):
                    yield from walk(rest, bound)

        yield from walk(list(node.generators), dict(scope))


def _bind(target: ast.AST, value: Any, scope: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        scope[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List):
        for part, item in zip(target.elts, value, strict=True):
            _bind(part, item, scope)
    else:
        raise ExprError("a comprehension binds names only")


def _compare(op: ast.cmpop, left: Any, right: Any) -> bool:
    if isinstance(op, ast.Eq):
        return bool(left == right)
    if isinstance(op, ast.NotEq):
        return bool(left != right)
    if isinstance(op, ast.In):
        return left in (right or ())
    if isinstance(op, ast.NotIn):
        return left not in (right or ())
    if isinstance(op, ast.Is):
        return left is right
    if isinstance(op, ast.IsNot):
        return left is not right
    if left is None or right is None:
        return False  # an absent value is neither above nor below a limit
    comparisons: dict[type, Callable[[Any, Any], bool]] = {
        ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
        ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}
    return comparisons[type(op)](left, right)


# templates ----------------------------------------------------------------------------------

def template_names(template: str) -> set[str]:
    """Free names used by the `{{ }}` substitutions of `template`."""
    found: set[str] = set()
    for match in _TEMPLATE.finditer(template):
        found |= names(match.group(1))
    return found


def template_expressions(template: str) -> list[str]:
    """The expressions inside `{{ }}` of `template`, in order."""
    return [m.group(1).strip() for m in _TEMPLATE.finditer(template)]


Unknowns = list[tuple[str, Unknown]]
"""(expression, the unknown value it needs), collected by a tolerant render."""


def render(template: str, evaluator: Evaluator, unknown: Unknowns | None = None) -> str:
    """`template` with each `{{ expr }}` replaced by its value as text (None: empty).

    With `unknown` (a dry run), an expression that needs a value not known yet stays as
    `{{ expr }}` and is appended to `unknown`; without it, that raises `UnknownValue`."""
    return _TEMPLATE.sub(lambda m: _value(m.group(1), evaluator, unknown)[0], template)


def _value(expression: str, evaluator: Evaluator,
           unknown: Unknowns | None) -> tuple[str, bool]:
    """(the value as text, known?): an unknown one is `{{ expr }}`, recorded in `unknown`."""
    try:
        return _text(evaluator.evaluate(expression)), True
    except UnknownValue as exc:
        if unknown is None:
            raise
        shown = f"{{{{ {expression.strip()} }}}}"
        if all(shown != seen for seen, _ in unknown):
            unknown.append((shown, exc.unknown))
        return shown, False


def describe_unknown(unknown: Unknowns) -> str:
    """`{{ serial }}: captured from ..., known when it runs; ...` for a dry run's message."""
    return "; ".join(f"{shown}: {u.why}" if shown == f"{{{{ {u.name} }}}}" else
                     f"{shown}: needs {u.name}, {u.why}" for shown, u in unknown)


def render_shell(script: str, evaluator: Evaluator, unknown: Unknowns | None = None) -> str:
    """A shell script with every substitution quoted for its place. Raises `ExprError`.

    `unknown` as for `render`: an unknown value is shown as its `{{ expr }}`, unquoted (a dry
    run sends nothing)."""
    return _render_shell(script, evaluator, unknown, None)


def render_cli_lines(script: str, evaluator: Evaluator,
                     unknown: Unknowns | None = None) -> list[str]:
    """The lines to type into a switch CLI session for `script`, blank lines left out.

    Substitutions are quoted as in `render_shell`; a value holding a control character (a
    newline, CR, NUL, ESC, tab, DEL, ...) or too long for a CLI line, and any line that would
    not fit, raise `ExprError` naming the expression. Everything is rendered and checked before
    the caller sends the first line, so a refused script sends nothing. `unknown` as for
    `render` (a dry run): an unknown value is shown as itself and checked when it is known.
    """

    def check(expression: str, value: str) -> None:
        problem = cli_line.control_problem(value)
        if problem:
            raise ExprError(f"{{{{ {expression.strip()} }}}} {problem}: a value typed into a "
                            "switch CLI must stay on its one line; refused before sending "
                            "anything")
        problem = cli_line.length_problem(value)
        if problem:
            raise ExprError(f"{{{{ {expression.strip()} }}}} {problem}; refused before "
                            "sending anything")

    lines = [line for line in _render_shell(script, evaluator, unknown, check).split("\n")
             if line.strip()]
    for number, line in enumerate(lines, start=1):
        problem = cli_line.line_problem(line)
        if problem:
            raise ExprError(f"line {number} of the command {problem}; refused before sending "
                            "anything")
    return lines


def _render_shell(script: str, evaluator: Evaluator, unknown: Unknowns | None,
                  check: Callable[[str, str], None] | None) -> str:
    """`render_shell`, with `check(expression, value)` called on every known value."""
    out: list[str] = []
    position = 0
    for start, end, expression, context in _shell_substitutions(script):
        out.append(script[position:start])
        if context == "single":
            raise ExprError(f"{{{{ {expression.strip()} }}}} inside single quotes cannot be "
                            "quoted safely: move it outside the quotes or into double quotes")
        value, known = _value(expression, evaluator, unknown)
        if known and check is not None:
            check(expression, value)
        if not known:
            out.append(value)  # an unknown, shown as itself
        elif context == "double":
            out.append(re.sub(r'([\\"$`])', r"\\\1", value))
        else:
            out.append(shlex.quote(value))
        position = end
    out.append(script[position:])
    return "".join(out)


def shell_problems(script: str) -> list[str]:
    """Substitutions a shell block cannot quote (inside single quotes), for lint."""
    return [f"{{{{ {expression.strip()} }}}} inside single quotes cannot be quoted safely"
            for _, _, expression, context in _shell_substitutions(script) if context == "single"]


def _shell_substitutions(script: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, expression, quote context) of each `{{ }}` in a shell script."""
    state = "none"
    index = 0
    while index < len(script):
        if script.startswith("{{", index):
            close = script.find("}}", index + 2)
            if close < 0:
                return
            yield index, close + 2, script[index + 2:close], state
            index = close + 2
            continue
        char = script[index]
        if state == "none":
            if char == "\\":
                index += 2
                continue
            if char == "'":
                state = "single"
            elif char == '"':
                state = "double"
            elif char == "#" and (index == 0 or script[index - 1] in " \t\n;"):
                newline = script.find("\n", index)
                index = len(script) if newline < 0 else newline
                continue
        elif state == "single":
            if char == "'":
                state = "none"
        elif state == "double":
            if char == "\\":
                index += 2
                continue
            if char == '"':
                state = "none"
        index += 1


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else str(value)
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    return str(value)
