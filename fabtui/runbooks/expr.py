"""A small, safe expression language for runbooks: parsing, evaluation, values not known yet.

Expressions use Python's syntax for what a runbook needs and nothing more: literals, names,
`a.b` / `a["b"]` / `a[0]` lookups, arithmetic, comparisons, `and`/`or`/`not`, `x if c else y`,
list comprehensions, and calls of the functions the engine provides (plus a few harmless string
and dict methods). The text is parsed with `ast` and compiled by this module, once per text,
into closures that do what each node of the tree says; it is never given to `eval` or `compile`,
attributes never reach Python objects (`a.b` is a key lookup), and the work an expression may do
is bounded.

A value not known yet (a dry run measures nothing) is an `Unknown`; reading one raises
`UnknownValue`. The `{{ expr }}` templates that put values into text, shell scripts and switch
CLI lines are `fabtui.runbooks.templates`.
"""

from __future__ import annotations

import ast
import functools
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_LENGTH = 4000
MAX_STEPS = 200_000
_METHODS: dict[type, set[str]] = {
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
    """Evaluates parsed expressions over a scope of plain values and provided functions.

    Each expression is compiled once (by its text) into nested Python closures, one per node of
    its tree, so evaluating it costs no walk of the tree or dispatch on node types. The work is
    bounded by `MAX_STEPS`: each item a comprehension takes costs the nodes evaluated for it.
    """

    def __init__(self, scope: Mapping[str, Any],
                 functions: Mapping[str, Callable[..., Any]] | None = None) -> None:
        self.scope = dict(scope)
        self.functions = {**BUILTINS, **(functions or {})}
        self.steps = 0

    def evaluate(self, text: str) -> Any:
        """The value of expression `text`. Raises `ExprError`."""
        parse(text)
        self.steps = 0
        try:
            return _compiled(text)(self, self.scope)
        except ExprError:
            raise
        except (TypeError, ValueError, ZeroDivisionError, KeyError, IndexError,
                AttributeError, RecursionError) as exc:
            raise ExprError(f"{text.strip()!r}: {type(exc).__name__}: {exc}") from None

    def tick(self, steps: int) -> None:
        """Count `steps` of work; raises `ExprError` past `MAX_STEPS`."""
        self.steps += steps
        if self.steps > MAX_STEPS:
            raise ExprError("expression does too much work")


Compiled = Callable[[Evaluator, Mapping[str, Any]], Any]
"""A compiled expression node: its value for (the evaluator, the scope)."""
_MISSING = object()


@functools.lru_cache(maxsize=8192)
def _compiled(text: str) -> Compiled:
    """`text`'s checked tree (`parse` raised for a bad one) compiled into closures."""
    return _compile(_parsed(text)[0].body)


def _size(node: ast.AST) -> int:
    """How many nodes evaluating `node` once evaluates (at most): its expressions but a called
    function's name or method and a slice, which are not values."""
    nodes = _walk(node)
    return sum(isinstance(n, ast.expr) and not isinstance(n, ast.Slice) for n in nodes) - \
        sum(isinstance(n, ast.Call) for n in nodes)


def _compile(node: ast.AST) -> Compiled:
    """The closure computing `node`. Never raises: what the language refuses at run time
    (an unknown name, a node it cannot evaluate) is refused when that node is evaluated."""
    if isinstance(node, ast.Constant):
        constant = node.value
        return lambda ev, scope: constant
    if isinstance(node, ast.Name):
        return _compile_name(node.id)
    if isinstance(node, ast.BoolOp):
        return _compile_boolean(node)
    if isinstance(node, ast.UnaryOp):
        operand = _compile(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda ev, scope: not operand(ev, scope)
        if isinstance(node.op, ast.USub):
            return lambda ev, scope: -operand(ev, scope)
        return lambda ev, scope: +operand(ev, scope)
    if isinstance(node, ast.BinOp):
        return _compile_binary(node)
    if isinstance(node, ast.Compare):
        return _compile_compare(node)
    if isinstance(node, ast.IfExp):
        test, body, orelse = _compile(node.test), _compile(node.body), _compile(node.orelse)
        return lambda ev, scope: body(ev, scope) if test(ev, scope) else orelse(ev, scope)
    if isinstance(node, ast.List | ast.Tuple):
        items = [_compile(item) for item in node.elts]
        return lambda ev, scope: [item(ev, scope) for item in items]
    if isinstance(node, ast.Dict):
        pairs = [(_compile(k) if k is not None else None, _compile(v))
                 for k, v in zip(node.keys, node.values, strict=True)]
        return lambda ev, scope: {k(ev, scope) if k is not None else None: v(ev, scope)
                                  for k, v in pairs}
    if isinstance(node, ast.Subscript):
        return _compile_subscript(node)
    if isinstance(node, ast.Attribute):
        return _compile_attribute(node)
    if isinstance(node, ast.Call):
        return _compile_call(node)
    if isinstance(node, ast.ListComp | ast.GeneratorExp):
        return _compile_comprehension(node)
    if isinstance(node, ast.JoinedStr):
        parts = [_compile(v) for v in node.values]
        return lambda ev, scope: "".join(str(part(ev, scope)) for part in parts)
    if isinstance(node, ast.FormattedValue):
        return _compile(node.value)
    refused = f"{type(node).__name__} is not allowed"

    def refuse(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
        raise ExprError(refused)

    return refuse


def _compile_name(ident: str) -> Compiled:
    lowered = ident.lower()
    known = lowered in ("true", "false", "null", "none")
    fallback = lowered == "true" if lowered in ("true", "false") else None

    def name(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
        value = scope.get(ident, _MISSING)
        if value is _MISSING:
            if known:
                return fallback
            raise ExprError(f"{ident!r} is not defined")
        if isinstance(value, Unknown):
            raise UnknownValue(value)
        return value

    return name


def _compile_boolean(node: ast.BoolOp) -> Compiled:
    values = [_compile(item) for item in node.values]
    if isinstance(node.op, ast.And):
        def conjunction(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
            value: Any = None
            for item in values:
                value = item(ev, scope)
                if not value:
                    return value
            return value

        return conjunction

    def disjunction(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
        value: Any = None
        for item in values:
            value = item(ev, scope)
            if value:
                return value
        return value

    return disjunction


_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Mod: operator.mod, ast.FloorDiv: operator.floordiv}


def _compile_binary(node: ast.BinOp) -> Compiled:
    left, right = _compile(node.left), _compile(node.right)
    operation = _ARITHMETIC[type(node.op)]
    if not isinstance(node.op, ast.Mult):
        return lambda ev, scope: operation(left(ev, scope), right(ev, scope))

    def multiply(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
        a, b = left(ev, scope), right(ev, scope)
        if isinstance(a, str | list) or isinstance(b, str | list):
            count = b if isinstance(a, str | list) else a
            if not isinstance(count, int) or count > 10_000:
                raise ExprError("repetition too large")
        return a * b

    return multiply


def _compile_compare(node: ast.Compare) -> Compiled:
    left = _compile(node.left)
    steps = [(_COMPARISONS[type(op)], _compile(right))
             for op, right in zip(node.ops, node.comparators, strict=True)]
    if len(steps) == 1:
        compare, right = steps[0]
        return lambda ev, scope: compare(left(ev, scope), right(ev, scope))

    def chain(ev: Evaluator, scope: Mapping[str, Any]) -> bool:
        a = left(ev, scope)
        for compare, right_node in steps:
            b = right_node(ev, scope)
            if not compare(a, b):
                return False
            a = b
        return True

    return chain


def _ordered(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """`compare`, false when either side is absent: neither above nor below a limit."""
    return lambda a, b: False if a is None or b is None else compare(a, b)


_COMPARISONS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: bool(a == b), ast.NotEq: lambda a, b: bool(a != b),
    ast.In: lambda a, b: a in (b or ()), ast.NotIn: lambda a, b: a not in (b or ()),
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.Lt: _ordered(operator.lt), ast.LtE: _ordered(operator.le),
    ast.Gt: _ordered(operator.gt), ast.GtE: _ordered(operator.ge)}


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _compile_subscript(node: ast.Subscript) -> Compiled:
    container = _compile(node.value)
    if isinstance(node.slice, ast.Slice):
        parts = [_compile(p) if p is not None else None
                 for p in (node.slice.lower, node.slice.upper, node.slice.step)]

        def sliced(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
            value = container(ev, scope)
            return value[slice(*[p(ev, scope) if p is not None else None for p in parts])]

        return sliced
    key = _compile(node.slice)

    def item(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
        value = container(ev, scope)
        index = key(ev, scope)
        if _is_mapping(value):
            return value.get(index)
        return value[index]

    return item


def _compile_attribute(node: ast.Attribute) -> Compiled:
    container, field = _compile(node.value), node.attr

    def attribute(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
        value = container(ev, scope)
        if _is_mapping(value):
            return value.get(field)
        if value is None:
            return None
        raise ExprError(f"no field {field!r} on a {type(value).__name__}")

    return attribute


_VIEWS: tuple[type[Iterable[Any]], ...] = (type({}.keys()), type({}.values()), type({}.items()))


def _compile_call(node: ast.Call) -> Compiled:
    args = [_compile(a) for a in node.args]
    kwargs = [(k.arg, _compile(k.value)) for k in node.keywords if k.arg]
    if isinstance(node.func, ast.Name):
        called = node.func.id
        if len(args) == 1 and not kwargs:
            only = args[0]

            def call_one(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
                value = only(ev, scope)
                function = ev.functions.get(called)
                if function is None:
                    raise ExprError(f"no function {called!r}")
                return function(value)

            return call_one

        def call(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
            values = [a(ev, scope) for a in args]
            named = {k: v(ev, scope) for k, v in kwargs}
            function = ev.functions.get(called)
            if function is None:
                raise ExprError(f"no function {called!r}")
            return function(*values, **named)

        return call
    if isinstance(node.func, ast.Attribute):
        target_of, method = _compile(node.func.value), node.func.attr

        def call_method(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
            values = [a(ev, scope) for a in args]
            named = {k: v(ev, scope) for k, v in kwargs}
            target = target_of(ev, scope)
            allowed = _METHODS.get(type(target))
            if allowed is None:  # a subclass (of str, of dict)
                allowed = next((m for t, m in _METHODS.items() if isinstance(target, t)), set())
            if method not in allowed:
                raise ExprError(f"no method {method!r} on a {type(target).__name__}")
            result: Any = getattr(target, method)(*values, **named)
            return list(result) if isinstance(result, _VIEWS) else result

        return call_method

    def refuse(ev: Evaluator, scope: Mapping[str, Any]) -> Any:
        [a(ev, scope) for a in args]
        {k: v(ev, scope) for k, v in kwargs}
        raise ExprError("only named functions can be called")

    return refuse


def _compile_comprehension(node: ast.ListComp | ast.GeneratorExp) -> Compiled:
    """A comprehension's closure. Each item of a generator costs the nodes its conditions may
    evaluate, and one that passes them the nodes of the next generator's iterable (or of the
    element).

    The names bound are kept in one new scope per evaluation, rebound item by item, unless a
    generator's iterable or conditions read a name bound at its own level or deeper: then,
    as Python does, each item gets a fresh copy (an earlier item's bindings stay unseen).
    """
    element = _compile(node.elt)
    generators = list(node.generators)
    levels = []
    for index, generator in enumerate(generators):
        following = generators[index + 1].iter if index + 1 < len(generators) else node.elt
        conditions = [_compile(c) for c in generator.ifs]
        weight = 1 + sum(_size(c) for c in generator.ifs)
        levels.append((_compile(generator.iter), _binder(generator.target), conditions,
                       weight, _size(following)))
    copying = any(_reads(generator.iter, _bound(generators[index:])) or
                  any(_reads(c, _bound(generators[index + 1:])) for c in generator.ifs)
                  for index, generator in enumerate(generators))
    depth = len(levels)

    def comprehension(ev: Evaluator, scope: Mapping[str, Any]) -> list[Any]:
        out: list[Any] = []

        def walk(level: int, inner: dict[str, Any]) -> None:
            if level == depth:
                out.append(element(ev, inner))
                return
            iterable, bind, conditions, weight, then = levels[level]
            if not conditions:
                weight += then
            only = conditions[0] if len(conditions) == 1 else None
            for item in iterable(ev, inner) or []:
                ev.tick(weight)
                bound = dict(inner) if copying else inner
                bind(item, bound)
                if conditions:
                    if only is not None:
                        if not only(ev, bound):
                            continue
                    elif not all(condition(ev, bound) for condition in conditions):
                        continue
                    ev.tick(then)
                walk(level + 1, bound)

        walk(0, dict(scope))
        return out

    return comprehension


def _bound(generators: list[ast.comprehension]) -> set[str]:
    return {n.id for g in generators for n in _walk(g.target) if isinstance(n, ast.Name)}


def _reads(node: ast.AST, bound: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in bound for n in _walk(node))


def _binder(target: ast.AST) -> Callable[[Any, dict[str, Any]], None]:
    """What binds one item to `target` in a scope (names, or tuples and lists of them)."""
    if isinstance(target, ast.Name):
        ident = target.id

        def bind_name(value: Any, scope: dict[str, Any]) -> None:
            scope[ident] = value

        return bind_name
    if isinstance(target, ast.Tuple | ast.List):
        parts = [_binder(part) for part in target.elts]

        def bind_parts(value: Any, scope: dict[str, Any]) -> None:
            for part, item in zip(parts, value, strict=True):
                part(item, scope)

        return bind_parts

    def refuse(value: Any, scope: dict[str, Any]) -> None:
        raise ExprError("a comprehension binds names only")

    return refuse
