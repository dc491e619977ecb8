"""Pydantic validation errors rewritten as `file:line: message` problems a person can act on."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from fabtui.errors import Problem
from fabtui.yamldoc import Loc, YamlDoc


def problems_from(exc: ValidationError, doc: YamlDoc, model: type[BaseModel],
                  base: Loc = ()) -> list[Problem]:
    """One problem per pydantic error, located in `doc` under `base`."""
    problems = []
    for error in exc.errors(include_url=False):
        loc = tuple(p for p in error["loc"] if isinstance(p, str | int))
        problems.append(doc.problem(base + loc, _message(error, loc, model)))
    return problems


def describe(loc: Loc) -> str:
    """`("nodes", 3, "nics", 1, "rail")` -> `nodes[3].nics[1].rail`."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _message(error: Any, loc: Loc, model: type[BaseModel]) -> str:
    kind = error["type"]
    where = describe(loc)
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        allowed = _fields_at(model, loc[:-1])
        hint = ""
        if allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else \
                f"; known keys: {', '.join(allowed)}"
        parent = describe(loc[:-1]) or "the top level"
        return f"unknown key {key!r} in {parent}{hint}"
    if kind == "missing":
        parent = describe(loc[:-1]) or "the top level"
        return f"missing required key {str(loc[-1])!r} in {parent}"
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    value = error.get("input")
    shown = ""
    if isinstance(value, str | int | float | bool) and kind not in ("value_error",):
        text = repr(value)
        shown = f" (got {text[:60]})"
    return f"{where}: {message}{shown}" if where else f"{message}{shown}"


def _fields_at(model: type[BaseModel], loc: Loc) -> list[str]:
    """Field names of the model found at `loc` inside `model`, if the path leads to one."""
    current: Any = model
    for part in loc:
        current = _step(current, part)
        if current is None:
            return []
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _step(annotation: Any, part: str | int) -> Any:
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if isinstance(part, str) and part in annotation.model_fields:
            return _unwrap(annotation.model_fields[part].annotation)
        return None
    origin = get_origin(annotation)
    args = [a for a in get_args(annotation) if a is not Ellipsis]
    if origin in (tuple, list) and args:
        return _unwrap(args[0])
    if origin is dict and len(args) == 2:
        return _unwrap(args[1])
    return None


def _unwrap(annotation: Any) -> Any:
    """Strip Optional / Annotated so the element model can be found."""
    while True:
        origin = get_origin(annotation)
        if origin is typing.Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            options = [a for a in get_args(annotation) if a is not type(None)]
            if len(options) != 1:
                return annotation
            annotation = options[0]
        else:
            return annotation
