"""Runbook inputs: typed values checked against the fabric before anything runs."""

from __future__ import annotations

import re
from typing import Any

from fabtui.errors import InputError, Problem
from fabtui.model.element import split_key
from fabtui.model.runbook import InputSpec, InputType, Runbook
from fabtui.runbooks.redact import Redactor
from fabtui.topology.graph import FabricGraph


def convert(spec: InputSpec, raw: Any, graph: FabricGraph | None) -> Any:
    """`raw` as the type `spec` declares. Raises ValueError with a readable reason."""
    kind = spec.type
    if kind is InputType.INT or kind is InputType.RANK:
        value: Any = int(str(raw).strip())
        if kind is InputType.RANK and graph is not None and \
                not any(s.rank == value for s in graph.ranks):
            raise ValueError(f"rank {value} is not in the job (ranks 0-{len(graph.ranks) - 1})")
        return value
    if kind is InputType.FLOAT:
        return float(str(raw).strip())
    if kind is InputType.BOOL:
        text = str(raw).strip().lower()
        if text not in ("true", "false", "yes", "no", "1", "0", "y", "n"):
            raise ValueError(f"{raw!r} is not yes/no")
        return text in ("true", "yes", "1", "y")
    text = str(raw).strip()
    if spec.pattern is not None:
        try:
            matched = re.fullmatch(spec.pattern, str(raw))
        except re.error as exc:
            raise ValueError(f"pattern {spec.pattern!r} is not a valid regex: {exc}") from None
        if matched is None:
            shown = "the value" if spec.secret else repr(raw)
            raise ValueError(f"{shown} does not match {spec.pattern}")
    if kind is InputType.CHOICE or spec.choices:
        if spec.choices and text not in spec.choices:
            raise ValueError(f"{text!r} is not one of {', '.join(spec.choices)}")
        return text
    if graph is None or kind in (InputType.STRING, InputType.PATH):
        return str(raw)
    if kind is InputType.NODE and text not in graph.nodes:
        raise ValueError(f"{text!r} is not a node of the fabric")
    if kind is InputType.SWITCH and text not in graph.switches:
        raise ValueError(f"{text!r} is not a switch of the fabric")
    if kind is InputType.NIC:
        device, port = split_key(text)
        nic = graph.find_nic(device, port) if port else None
        if nic is None:
            raise ValueError(f"{text!r} is not a NIC of the fabric (node:mlx5_N)")
        return f"{device}:{nic.name}"
    if kind is InputType.PORT and text not in graph.port_links:
        raise ValueError(f"{text!r} is not a cabled switch port (switch:port)")
    return text


def resolve_inputs(runbook: Runbook, given: dict[str, Any], graph: FabricGraph | None,
                   source: str = "--input") -> dict[str, Any]:
    """Every declared input: given, else default; all problems at once (`InputError`)."""
    problems: list[Problem] = []
    values: dict[str, Any] = {}
    declared = {spec.name: spec for spec in runbook.meta.inputs}
    for name in given:
        if name not in declared:
            known = ", ".join(declared) or "none"
            problems.append(Problem(source, None, f"{name}: {runbook.meta.id} has no input "
                                    f"{name!r} (inputs: {known})"))
    for name, spec in declared.items():
        raw = given.get(name, spec.default)
        if raw is None:
            if spec.required:
                problems.append(Problem(source, None, f"{name}: required ({spec.type.value}"
                                        f"{': ' + spec.description if spec.description else ''})"))
            values[name] = None
            continue
        try:
            values[name] = convert(spec, raw, graph)
        except ValueError as exc:
            reason = Redactor(str(raw)).text(str(exc)) if spec.secret else str(exc)
            problems.append(Problem(source, None, f"{name}: {reason}"))
    if problems:
        raise InputError(problems)
    return values


def check_value(spec: InputSpec, raw: str, graph: FabricGraph | None, *,
                empty: str | None = None) -> str | None:
    """Why `raw` is not a valid value of `spec`, or None when it is (for a form that checks
    as the operator types). An empty `raw` falls back to the default; with none, it is wrong
    when `empty` says why (e.g. "required"), else accepted (the caller leaves it unset). A
    secret's reason never quotes it."""
    if not raw:
        if spec.default is None:
            return empty
        raw = spec.default
    try:
        convert(spec, raw, graph)
    except ValueError as exc:
        return Redactor(str(raw)).text(str(exc)) if spec.secret else str(exc)
    return None
