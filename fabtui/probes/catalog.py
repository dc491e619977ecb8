"""Reading the probe catalog: `probes/*.toml`, each holding `[[probe]]` tables.

Folders are read in order (the user's first, the shipped one last); a probe name defined twice is
taken from the first folder, so a team can override a shipped probe. Problems are reported as
`file:line: message` for every probe at once.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from fabtui.errors import InputError, Problem
from fabtui.model.probe import ProbeDef
from fabtui.parsers.registry import parsers
from fabtui.textmemo import TextMemo


def load_catalog(folders: Iterable[Path]) -> dict[str, ProbeDef]:
    """Every probe in `folders`, by name. Raises `InputError` listing every bad entry."""
    catalog: dict[str, ProbeDef] = {}
    problems: list[Problem] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            for probe in _load_file(path, problems):
                catalog.setdefault(probe.name, probe)
    if problems:
        raise InputError(problems)
    return catalog


_READ: TextMemo[tuple[tuple[ProbeDef, ...], tuple[Problem, ...]]] = TextMemo()
"""Catalog files read before, by (path, text): the catalog is read again for every workspace,
and an unchanged file is not validated again (a probe definition is frozen)."""


def _load_file(path: Path, problems: list[Problem]) -> list[ProbeDef]:
    text = path.read_text(encoding="utf-8")
    probes, found = _READ.get((str(path), text), lambda: _read_file(path, text))
    problems.extend(found)
    return list(probes)


def _read_file(path: Path, text: str) -> tuple[tuple[ProbeDef, ...], tuple[Problem, ...]]:
    """A catalog file's probes and problems, from its text."""
    problems: list[Problem] = []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+)", str(exc))
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        problems.append(Problem(str(path), int(match.group(1)) if match else None,
                                f"invalid TOML: {reason}"))
        return (), tuple(problems)
    unknown = set(data) - {"probe"}
    for key in sorted(unknown):
        problems.append(Problem(str(path), _line_of_key(text, key, 0, len(text)),
                                f"unknown top-level key {key!r}; probes are `[[probe]]` tables"))
    starts = [m.start() for m in re.finditer(r"(?m)^\s*\[\[probe\]\]", text)] + [len(text)]
    probes = []
    known_kinds = parsers()
    for index, entry in enumerate(data.get("probe", [])):
        begin, end = starts[index], starts[index + 1] if index + 1 < len(starts) else len(text)
        header = text.count("\n", 0, begin) + 1
        try:
            probe = ProbeDef.model_validate({**entry, "source_file": f"{path}:{header}"})
        except ValidationError as exc:
            for error in exc.errors():
                key = str(error["loc"][0]) if error["loc"] else ""
                line = _line_of_key(text, key, begin, end) if key else header
                where = ".".join(str(p) for p in error["loc"])
                message = str(error["msg"]).removeprefix("Value error, ")
                if error["type"] == "extra_forbidden":
                    message = f"unknown key {where!r}"
                problems.append(Problem(str(path), line, f"probe #{index + 1}: {where}: "
                                                         f"{message}"))
            continue
        if probe.parser is not None and probe.parser not in known_kinds:
            problems.append(Problem(str(path), _line_of_key(text, "parser", begin, end),
                                    f"probe {probe.name}: unknown parser {probe.parser!r}"))
            continue
        problems.extend(_check_command(probe, path, text, begin, end))
        probes.append(probe)
    return tuple(probes), tuple(problems)


def _check_command(probe: ProbeDef, path: Path, text: str, begin: int,
                   end: int) -> list[Problem]:
    line = _line_of_key(text, "command", begin, end)
    if probe.transport == "cli" and not probe.command.cli:
        return [Problem(str(path), line, f"probe {probe.name}: a cli probe needs "
                                         "`command.cli` (flavor -> command)")]
    if probe.transport in ("local", "ssh") and not probe.command.argv:
        return [Problem(str(path), line, f"probe {probe.name}: a {probe.transport} probe needs "
                                         "`command.argv`")]
    return []


def _line_of_key(text: str, key: str, begin: int, end: int) -> int:
    match = re.compile(rf"(?m)^\s*(?:\[[^\]]*\.)?{re.escape(key)}\b").search(text, begin, end)
    position = match.start() if match else begin
    return text.count("\n", 0, position) + 1
