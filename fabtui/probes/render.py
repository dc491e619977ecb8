"""Filling a probe's parameters and rendering its command, safely by construction.

Values reach commands in only two ways:
- as argv elements (local and ssh probes): a placeholder `{netdev}` is replaced inside one argv
  element, so `x; rm -rf /` stays one argument (the ssh transport quotes each element for the
  remote shell with shlex);
- in switch CLI commands, which have no quoting at all: there every value must match a strict
  pattern (names, numbers, interface names), and the command must fit one CLI line
  (`fabtui.transports.cli_line`), or the probe refuses to run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fabtui.model.probe import ParamDef, ProbeDef
from fabtui.probes.targets import ProbeTarget
from fabtui.transports import cli_line

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
CLI_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:@+-]*")
"""What a value substituted into a switch CLI command may look like."""
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B?)$", re.IGNORECASE)


class RenderError(ValueError):
    """A parameter that is missing, of the wrong type, or unsafe where it would go."""


def fill_params(probe: ProbeDef, target: ProbeTarget,
                given: Mapping[str, str]) -> dict[str, Any]:
    """Every parameter's value: given on the command line, else from the target, else default."""
    unknown = sorted(set(given) - set(probe.params))
    if unknown:
        known = ", ".join(sorted(probe.params)) or "none"
        raise RenderError(f"probe {probe.name} has no parameter {unknown[0]!r} (parameters: "
                          f"{known})")
    values: dict[str, Any] = {}
    for name, spec in probe.params.items():
        raw: Any = given.get(name)
        if raw is None and spec.source:
            raw = target.attribute(spec.source)
        if raw is None:
            raw = spec.default
        if raw is None:
            if spec.required:
                raise RenderError(f"probe {probe.name} needs --param {name}=... "
                                  f"({spec.description or spec.type})")
            continue
        values[name] = _convert(probe.name, name, spec, raw)
    return values


def _convert(probe: str, name: str, spec: ParamDef, raw: Any) -> Any:
    text = str(raw)
    try:
        if spec.type == "int":
            value: Any = int(text)
        elif spec.type == "float":
            value = float(text)
        elif spec.type == "bool":
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            value = text.lower() in ("true", "1", "yes")
        elif spec.type == "size":
            value = parse_size(text)
        else:
            value = text
    except ValueError:
        raise RenderError(f"probe {probe}: {name}={text!r} is not a valid {spec.type}") from None
    if spec.choices is not None and str(value) not in spec.choices:
        raise RenderError(f"probe {probe}: {name} must be one of {', '.join(spec.choices)} "
                          f"(got {text!r})")
    if spec.pattern is not None and not re.fullmatch(spec.pattern, str(value)):
        raise RenderError(f"probe {probe}: {name}={text!r} does not match {spec.pattern}")
    return value


def parse_size(text: str) -> int:
    """`8M` -> 8388608, `4096` -> 4096 (sizes of messages, as perftest and nccl-tests take)."""
    match = _SIZE.match(text.strip())
    if match is None:
        raise ValueError(text)
    factor = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}[match.group(2).upper()]
    return int(float(match.group(1)) * factor)


def render_argv(template: list[str], values: Mapping[str, Any]) -> list[str]:
    """Fill placeholders element by element.

    Optional parameters: an element whose placeholder has no value is left out, together with
    the flag just before it (`["-d", "{device}"]`), and `--gid={gid}` is left out whole.
    """
    argv: list[str] = []
    literal_flag = False
    for element in template:
        names = _PLACEHOLDER.findall(element)
        if any(n not in values for n in names):
            if literal_flag and element.startswith("{"):
                argv.pop()
            literal_flag = False
            continue
        argv.append(_PLACEHOLDER.sub(lambda m: _text(values[m.group(1)]), element))
        literal_flag = not names and element.startswith("-")
    return argv


def render_cli(template: str, values: Mapping[str, Any]) -> str:
    """A switch CLI command with values that cannot change its meaning."""
    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise RenderError(f"no value for {{{name}}} in {template!r}")
        text = _text(values[name])
        if not CLI_SAFE.fullmatch(text):
            raise RenderError(f"{name}={text!r} is not safe in a switch CLI command (letters, "
                              "digits and _./:@+- only)")
        return text

    command = _PLACEHOLDER.sub(substitute, template)
    problem = cli_line.line_problem(command)
    if problem:
        shown = command if len(command) <= 60 else f"{command[:60]}..."
        raise RenderError(f"the switch CLI command {shown!r} {problem}")
    return command


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
