"""A configuration scenario: `configs/scenarios/NAME.toml`, the fleet intent files it names
(`runbooks/templates/NAME.toml`) and its own values, each with the reason it has that value.

A scenario file has `description`, `fabric` (roce or infiniband), `[intent]` (alias = intent
file name), `[templates]` (device kind = template file names: `host`, or a switch flavor) and
`[values.NAME]` tables of `value` and `why`. Reading it checks all of that and raises one
`InputError` naming the file and line of every problem. Reads files; writes nothing.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabtui.errors import InputError, Problem
from fabtui.paths import display_path, shipped_dir

NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
FABRICS = ("roce", "infiniband")
DEVICE_KINDS = ("host", "sonic", "nvue", "eos", "nxos", "onyx")


@dataclass(frozen=True)
class Value:
    """One scenario value and why it is that value (a source, or `[fleet choice]`)."""

    value: Any
    why: str


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario (see the module docstring)."""

    name: str
    path: Path
    description: str
    fabric: str
    intent: dict[str, dict[str, Any]]
    """alias -> the intent file's data (`qos` -> roce-qos.toml)."""
    intent_files: dict[str, Path]
    templates: dict[str, tuple[str, ...]]
    values: dict[str, Value] = field(default_factory=dict)

    def plain_values(self) -> dict[str, Any]:
        """name -> value, for the templates (`v.NAME`)."""
        return {name: item.value for name, item in self.values.items()}


def configs_dir() -> Path:
    """The shipped `configs/` folder."""
    return shipped_dir("configs")


def scenario_names(folder: Path | None = None) -> list[str]:
    """The scenarios shipped (or in `folder`), by name."""
    where = (folder or configs_dir()) / "scenarios"
    return sorted(p.stem for p in where.glob("*.toml"))


def load_scenario(name: str, folder: Path | None = None) -> Scenario:
    """Scenario `name` from `folder` (default: the shipped configs). Raises `InputError`."""
    root = folder or configs_dir()
    if not NAME.fullmatch(name):
        raise InputError.single("scenario", None, f"{name!r}: lower-case letters, digits and "
                                "'-' only")
    path = root / "scenarios" / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(scenario_names(root)) or "none"
        raise InputError.single("scenario", None, f"no scenario {name!r} (known: {known})")
    label = display_path(path)
    text = path.read_text(encoding="utf-8")
    data = _toml(text, label)
    problems: list[Problem] = []

    def at(needle: str) -> int | None:
        return _line_of(text, needle)

    for key in data:
        if key not in ("description", "fabric", "intent", "templates", "values"):
            problems.append(Problem(label, at(key), f"unknown key {key!r} (description, "
                                    "fabric, intent, templates, values)"))
    fabric = data.get("fabric")
    if fabric not in FABRICS:
        problems.append(Problem(label, at("fabric"), f"fabric {fabric!r}: one of "
                                f"{', '.join(FABRICS)}"))
    intent: dict[str, dict[str, Any]] = {}
    intent_files: dict[str, Path] = {}
    for alias, file_name in dict(data.get("intent", {})).items():
        target = shipped_dir("runbooks") / "templates" / f"{file_name}.toml"
        if not isinstance(file_name, str) or not NAME.fullmatch(file_name) or \
                not target.is_file():
            problems.append(Problem(label, at(alias), f"intent {alias} = {file_name!r}: no "
                                    f"such file {display_path(target)}"))
            continue
        intent[alias] = _toml(target.read_text(encoding="utf-8"), display_path(target))
        intent_files[alias] = target
    templates: dict[str, tuple[str, ...]] = {}
    for kind, names in dict(data.get("templates", {})).items():
        if kind not in DEVICE_KINDS:
            problems.append(Problem(label, at(kind), f"templates for {kind!r}: one of "
                                    f"{', '.join(DEVICE_KINDS)}"))
            continue
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            problems.append(Problem(label, at(kind), f"templates.{kind}: a list of file names"))
            continue
        for file_name in names:
            if not (root / "templates" / file_name).is_file():
                problems.append(Problem(label, at(file_name), f"template {file_name!r} is not "
                                        f"in {display_path(root / 'templates')}"))
        templates[kind] = tuple(names)
    values: dict[str, Value] = {}
    for value_name, table in dict(data.get("values", {})).items():
        if not isinstance(table, dict) or "value" not in table or \
                not str(table.get("why", "")).strip():
            problems.append(Problem(label, at(f"[values.{value_name}]"),
                                    f"values.{value_name}: needs `value` and a `why` (its "
                                    "source, or [fleet choice])"))
            continue
        values[value_name] = Value(table["value"], str(table["why"]))
    if problems:
        raise InputError(problems)
    return Scenario(name=name, path=path, description=str(data.get("description", "")),
                    fabric=str(fabric), intent=intent, intent_files=intent_files,
                    templates=templates, values=values)


def _toml(text: str, label: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise InputError.single(label, int(match.group(1)) if match else None,
                                str(exc)) from None


def _line_of(text: str, needle: str) -> int | None:
    """The first line of `text` that mentions `needle`, for a problem's location."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None
