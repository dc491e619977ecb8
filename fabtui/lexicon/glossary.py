"""The on-call glossary (`glossary.toml` beside this module): one concept, its spellings in
English, Simplified and Traditional Chinese.

Reviewed data, not code: the analyzer (`fabtui.lexicon.analysis`) adds the concept's term
wherever a spelling occurs, so case search, `fabtui runbook find` and the app's palette find a
case or a runbook written in the other language. Reading the file checks the rules its header
states and reports each broken one as `glossary.toml:LINE: what is wrong` (an `InputError`).
Reads the file; nothing else.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from fabtui.errors import InputError, Problem
from fabtui.lexicon.fold import fold

SHIPPED = Path(__file__).with_name("glossary.toml")
LANGUAGES = ("en", "zh-Hans", "zh-Hant")
_ID = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ONLY_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_KEYS = {"id", "note", *LANGUAGES}


@dataclass(frozen=True)
class Concept:
    """One thing on-call engineers name, with every spelling the glossary knows."""

    id: str
    en: tuple[str, ...]
    zh_hans: tuple[str, ...]
    zh_hant: tuple[str, ...]
    note: str = ""
    line: int = 0
    """Where its `[[concept]]` starts in the file."""

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every spelling, English first, without repeats."""
        return tuple(dict.fromkeys((*self.en, *self.zh_hans, *self.zh_hant)))


@dataclass(frozen=True)
class Glossary:
    """The concepts of one glossary file, in file order."""

    concepts: tuple[Concept, ...]
    source: str = ""

    def synonyms(self) -> dict[str, tuple[str, ...]]:
        """Concept id -> every spelling (what the analyzer compiles)."""
        return {c.id: c.spellings for c in self.concepts}

    def get(self, concept: str) -> Concept | None:
        """A concept by id (with or without the index's `~`)."""
        concept = concept.removeprefix("~")
        return next((c for c in self.concepts if c.id == concept), None)

    def digest(self) -> str:
        """A short hash of every concept and spelling: what an index built with it depends on."""
        import hashlib

        text = "\n".join(f"{c.id}:{'|'.join(c.spellings)}" for c in self.concepts)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    def english(self) -> list[str]:
        """Every single-word English spelling (what a misspelled word is compared with)."""
        return sorted({s for c in self.concepts for s in c.en if s.isalpha()})


def _lines(text: str) -> list[int]:
    """The line of each `[[concept]]` header, in order."""
    return [i for i, line in enumerate(text.splitlines(), start=1)
            if line.strip().startswith("[[concept]]")]


def _spellings(entry: dict[str, object], key: str, where: Problem,
               problems: list[Problem]) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        problems.append(Problem(where.source, where.line,
                                f"{key} must be a list of non-empty strings"))
        return ()
    out = []
    for spelling in value:
        spelling = spelling.strip()
        if key == "en" and (spelling != spelling.lower() or _CJK.search(spelling)):
            problems.append(Problem(where.source, where.line, f"en spelling {spelling!r} must "
                                    "be lower-case English (Chinese goes under zh-Hans or "
                                    "zh-Hant)"))
            continue
        if key != "en" and not _ONLY_CJK.fullmatch(spelling):
            problems.append(Problem(where.source, where.line, f"{key} spelling {spelling!r} "
                                    "must be Chinese characters only (a spelling is matched "
                                    "inside a run of Chinese characters)"))
            continue
        out.append(spelling)
    return tuple(out)


def parse_glossary(text: str, source: str) -> Glossary:
    """The glossary in `text` (the contents of file `source`). Raises `InputError` listing
    every rule it breaks."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise InputError.single(source, int(found.group(1)) if found else None,
                                f"invalid TOML: {exc}") from None
    entries = data.get("concept")
    if not isinstance(entries, list) or not entries:
        raise InputError.single(source, None, "no [[concept]] entries")
    lines = _lines(text)
    problems: list[Problem] = []
    concepts: list[Concept] = []
    owner: dict[str, tuple[str, int]] = {}
    for index, entry in enumerate(entries):
        line = lines[index] if index < len(lines) else None
        where = Problem(source, line, "")
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            problems.append(Problem(source, line, f"unknown key {unknown[0]!r} (a concept has "
                                    f"{', '.join(sorted(_KEYS))})"))
        concept_id = entry.get("id")
        if not isinstance(concept_id, str) or not _ID.fullmatch(concept_id):
            problems.append(Problem(source, line, f"id {concept_id!r} must be lower-case "
                                    "words joined by '-'"))
            continue
        en = _spellings(entry, "en", where, problems)
        hans = _spellings(entry, "zh-Hans", where, problems)
        hant = _spellings(entry, "zh-Hant", where, problems)
        if not en or not (hans or hant):
            problems.append(Problem(source, line, f"concept {concept_id!r} needs an English "
                                    "and a Chinese spelling: it is there to meet the other "
                                    "language"))
        if any(c.id == concept_id for c in concepts):
            problems.append(Problem(source, line, f"concept {concept_id!r} is defined twice"))
        for spelling in dict.fromkeys((*en, *hans, *hant)):
            key = fold(spelling.lower())
            first = owner.setdefault(key, (concept_id, line or 0))
            if first[0] != concept_id:
                problems.append(Problem(source, line, f"{spelling!r} is already a spelling of "
                                        f"{first[0]!r} (line {first[1]}): one spelling, one "
                                        "concept"))
        note = entry.get("note", "")
        concepts.append(Concept(concept_id, en, hans, hant,
                                note if isinstance(note, str) else "", line or 0))
    if problems:
        raise InputError(problems)
    return Glossary(tuple(concepts), source)


def load_glossary(path: Path = SHIPPED) -> Glossary:
    """The glossary file at `path` (default: the shipped one). Raises `InputError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(str(path), None, f"cannot read the glossary: {exc}") from None
    return parse_glossary(text, path.name if path == SHIPPED else str(path))


GLOSSARY = load_glossary()
"""The shipped glossary, read once when the lexicon is first imported."""
