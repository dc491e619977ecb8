"""The runbook library: every runbook in the configured folders, by id (earlier folders win).

A runbook that cannot be read stays in the library as its problems, under the id it claims (or
its file name): asking for it reports why it cannot run, with `file:line`, instead of "no runbook",
and it still hides a later folder's runbook of the same id, as a readable one would.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from math import log
from pathlib import Path

from fabtui.errors import InputError, Problem
from fabtui.lexicon.analysis import Token, analyze
from fabtui.lexicon.glossary import GLOSSARY
from fabtui.lexicon.spelling import no_match
from fabtui.lexicon.units import units
from fabtui.model.runbook import Runbook
from fabtui.paths import display_path
from fabtui.runbooks.lint import LintIssue, lint_parse_error
from fabtui.runbooks.reader import read_runbook


@dataclass
class Library:
    """Runbooks by id, and the files that could not be read."""

    runbooks: dict[str, Runbook] = field(default_factory=dict)
    broken: list[LintIssue] = field(default_factory=list)
    unreadable: dict[str, tuple[Problem, ...]] = field(default_factory=dict)
    """Claimed id -> why that file could not be read (only where it would have won the id)."""

    def get(self, name: str) -> Runbook | None:
        """A runbook by id."""
        return self.runbooks.get(name)


def runbook_files(folder: Path) -> list[Path]:
    """The runbook files of a folder (`*.md` but its README), sorted."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.md") if p.name.lower() != "readme.md")


def load_library(folders: tuple[Path, ...] | list[Path]) -> Library:
    """Read every runbook; a team folder's runbook hides a shipped one with the same id."""
    library = Library()
    for folder in folders:
        for path in runbook_files(folder):
            try:
                runbook = read_runbook(path, display_path(path))
            except InputError as exc:
                library.broken += lint_parse_error(exc)
                claimed = claimed_id(path)
                if claimed not in library.runbooks:
                    library.unreadable.setdefault(claimed, exc.problems)
                continue
            if runbook.meta.id not in library.unreadable:
                library.runbooks.setdefault(runbook.meta.id, runbook)
    return library


_ID_LINE = re.compile(r"""^id:[ \t]*["']?([A-Za-z0-9][\w.-]*)""", re.MULTILINE)


def claimed_id(path: Path) -> str:
    """The id a runbook file's front matter gives, found without parsing it; else its file name.

    Note: reads the file (only ever called for a runbook that failed to read properly).
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return path.stem
    head, marker, _ = text.partition("\n---")
    found = _ID_LINE.search(head) if marker and text.startswith("---") else None
    return found.group(1) if found else path.stem


def load_one(name: str, library: Library) -> Runbook:
    """A runbook by id, or read from a path. Raises `InputError`."""
    candidate = Path(name)
    if candidate.suffix == ".md" and candidate.is_file():
        return read_runbook(candidate, display_path(candidate))
    found = library.get(name)
    if found is None and name in library.unreadable:
        first, *rest = library.unreadable[name]
        raise InputError([Problem(first.source, first.line, f"runbook {name!r} cannot be read: "
                                  f"{first.message}"), *rest])
    if found is None:
        import difflib

        close = difflib.get_close_matches(name, list(library.runbooks), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else \
            f"; known: {', '.join(sorted(library.runbooks))}"
        raise InputError.single(name, None, f"no runbook {name!r}{hint}")
    return found


SYMPTOM_WEIGHT = 2.0
"""A word among a runbook's `symptoms:` counts twice a word of its title, summary or tags."""


@dataclass(frozen=True)
class _Terms:
    """A runbook's index terms (the lexicon's analyzer: words, character pairs, concepts)."""

    symptoms: frozenset[str]
    rest: frozenset[str]
    each: tuple[frozenset[str], ...]
    """The terms of each symptom on its own."""


_TERMS: dict[tuple[str, str], _Terms] = {}


def _terms_of(runbook: Runbook) -> _Terms:
    key = (runbook.meta.id, runbook.digest)
    found = _TERMS.get(key)
    if found is None:
        each = tuple(frozenset(t.text for t in analyze(s)) for s in runbook.meta.symptoms)
        rest = frozenset(t.text for t in analyze(
            "\n".join([runbook.title, runbook.meta.summary, *runbook.meta.tags])))
        found = _TERMS[key] = _Terms(frozenset().union(*each), rest, each)
    return found


@dataclass(frozen=True)
class Found:
    """What `find` answers: the runbooks, best first, with their scores, and the words of the
    query that no runbook holds, each with the closest word that one does (or None)."""

    hits: list[tuple[float, Runbook]]
    spell: Callable[[], list[tuple[str, str | None]]] = field(default=list, repr=False,
                                                              compare=False)
    """Works out `unknown` (only when it is asked for)."""

    @cached_property
    def unknown(self) -> list[tuple[str, str | None]]:
        """The query's words no runbook holds, each with the closest one that does: worked
        out on first use (a spelling search over the library's words, difflib), so a caller
        that shows only the hits (`match`: an alert's runbook, the guided search) never pays
        for it."""
        return self.spell()

    def unknown_line(self) -> str | None:
        """`no match for 'optik'; did you mean optic?`, or None when every word matched."""
        return no_match(self.unknown)


def find(library: Library, text: str, limit: int = 5) -> Found:
    """Runbooks for the symptom `text`, in English or Chinese, best first.

    Each unit of the query (a word, a character pair, a glossary phrase as one unit: see
    `fabtui.lexicon.units`) scores its rarity across the library (BM25's idf; a glossary phrase
    the concept's) when a runbook holds it: twice among its symptoms, once in its title, summary
    or tags; the score is the share of the query's weight a runbook holds (0-2), plus how
    closely one of its symptoms says what the query says (0-1: the terms they share among
    all the terms of both)."""
    tokens = analyze(text)
    wanted = units(tokens)
    books = sorted(library.runbooks.values(), key=lambda r: r.meta.id)
    if not wanted or not books:
        return Found([])
    terms = [_terms_of(book) for book in books]
    n = len(books)

    def idf(term: str) -> float:
        df = sum(1 for t in terms if term in t.symptoms or term in t.rest)
        return log(1 + (n - df + 0.5) / (df + 0.5))

    weights: list[tuple[float, list[tuple[str, float]]]] = []
    for unit in wanted:
        concept = next((term for term, _ in unit if term.startswith("~")), None)
        weights.append((idf(concept or unit[0][0]), unit))
    total = sum(w for w, _ in weights) or 1.0
    typed = {t.text for t in tokens}
    scored = []
    for book, held in zip(books, terms, strict=True):
        score = 0.0
        for rarity, unit in weights:
            best = max((weight * (SYMPTOM_WEIGHT if term in held.symptoms else 1.0)
                        for term, weight in unit if term in held.symptoms or term in held.rest),
                       default=0.0)
            score += rarity * best
        if score > 0:
            closest = max((len(typed & one) / len(typed | one) for one in held.each if one),
                          default=0.0)
            scored.append((round(score / total + closest, 3), book))
    scored.sort(key=lambda pair: (-pair[0], pair[1].meta.id))
    return Found(scored[:limit], lambda: _unknown(text, tokens, terms))


def _unknown(text: str, tokens: list[Token], terms: list[_Terms]) -> list[tuple[str, str | None]]:
    """The Latin words of `text` (four letters or more) no runbook holds, nor the glossary
    knows, with the closest word a runbook or the glossary does."""
    import difflib

    held = set().union(*(t.symptoms | t.rest for t in terms))
    vocabulary = sorted({w for w in held if w.isascii() and w.isalpha()} |
                        set(GLOSSARY.english()))
    concepts = {t.pos for t in tokens if t.text.startswith("~")}
    out: list[tuple[str, str | None]] = []
    for tok in tokens:
        surface = text[tok.start:tok.end]
        if (tok.text.startswith("~") or tok.pos in concepts or tok.text in held
                or not surface.isascii() or not surface.isalpha() or len(surface) < 4):
            continue
        close = difflib.get_close_matches(surface.lower(), vocabulary, n=1, cutoff=0.75)
        if all(word != surface for word, _ in out):
            out.append((surface, close[0] if close else None))
    return out


def match(library: Library, text: str, limit: int = 5) -> list[tuple[float, Runbook]]:
    """Runbooks for the symptom `text`, best first, with their scores (`find`'s hits)."""
    return find(library, text, limit).hits
