"""`{{ ... }}` templates: text, shell scripts and switch CLI lines with values put in them.

`render` substitutes each `{{ expr }}` (an expression of `fabtui.runbooks.expr`) with its value
as text. In a shell block every substitution is quoted for where it stands (outside quotes:
`shlex.quote`; inside double quotes: backslash-escaped), so a value such as `; rm -rf /` or
`$(reboot)` reaches the command only as data. A substitution inside single quotes cannot be made
safe and is refused.

A script for an interactive switch CLI (`render_cli_lines`) is sent one line at a time, and the
terminal acts on a newline or any other control character before a shell sees quotes: there a
value must also stay on the one line it stands in, and every line must fit a CLI line
(`fabtui.transports.cli_line`), or the whole script is refused before any line is sent.

In a dry run a value not known yet (`Unknown`) is shown as `‹name›` and collected (`Unknowns`),
so the operator is told once what it waits for (`describe_unknown`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from typing import Any

from fabtui.runbooks.expr import Evaluator, ExprError, Unknown, UnknownValue
from fabtui.transports import cli_line

_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)


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
        said = expression.strip()
        shown = f"‹{said if _PLAIN.fullmatch(said) else exc.unknown.name}›"
        if all(shown != seen for seen, _ in unknown):
            unknown.append((shown, exc.unknown))
        return shown, False


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
"""An expression shown by itself when it is unknown (`serial`, `dom_before.verdict`); any
other is shown by the value it needs."""


def describe_unknown(unknown: Unknowns) -> str:
    """`not rendered, known when it runs: ‹serial› captured from the output of step 1 block
    'dom'; ...`, each value named once, for a dry run's message."""
    seen: dict[str, str] = {}
    for _, value in unknown:
        seen.setdefault(value.name, value.why.removesuffix(", known when it runs"))
    return "not rendered, known when it runs: " + "; ".join(
        f"‹{name}› {why}" for name, why in seen.items())


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
