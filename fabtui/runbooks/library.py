"""The runbook library: every runbook in the configured folders, by id (earlier folders win).

A runbook that cannot be read stays in the library as its problems, under the id it claims (or
its file name): asking for it reports why it cannot run, with `file:line`, instead of "no runbook",
and it still hides a later folder's runbook of the same id, as a readable one would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from fabtui.errors import InputError, Problem
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


_WORD = re.compile(r"[a-z0-9_]+|[\u3400-\u9fff]+")


def _terms(text: str) -> set[str]:
    """Words (Latin) and character pairs (Chinese, which has no spaces) of `text`."""
    terms: set[str] = set()
    for token in _WORD.findall(text.lower()):
        if re.match(r"[\u3400-\u9fff]", token):
            terms |= {token[i:i + 2] for i in range(max(1, len(token) - 1))}
        elif len(token) > 1:
            terms.add(token)
    return terms


def match(library: Library, text: str, limit: int = 5) -> list[tuple[float, Runbook]]:
    """Runbooks whose symptoms, title and summary share the most terms with `text`."""
    wanted = _terms(text)
    if not wanted:
        return []
    scored = []
    for runbook in library.runbooks.values():
        symptoms = [_terms(s) for s in runbook.meta.symptoms]
        best = max((len(wanted & s) / len(s | wanted) for s in symptoms if s), default=0.0)
        rest = _terms(" ".join([runbook.title, runbook.meta.summary, *runbook.meta.tags]))
        score = 2 * best + len(wanted & rest) / len(wanted)
        if score > 0:
            scored.append((round(score, 3), runbook))
    scored.sort(key=lambda pair: (-pair[0], pair[1].meta.id))
    return scored[:limit]
