"""The captured tool outputs under tests/fixtures, told apart from their expectations and notes.

Shared by the fixture, fuzz, streaming and signature tests and by benchmarks/reliability.py, so
that what counts as an input is decided once.
"""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NOT_INPUT = (".expected.json", ".error", ".md", ".options.json")
"""Suffixes of the files beside a capture: its expected parse or error, notes, parse options."""


def samples(kind: str) -> list[str]:
    """The texts of every capture of parser `kind` (one empty text when it has none)."""
    folder = FIXTURES / kind
    if not folder.is_dir():
        return [""]
    return [p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.endswith(NOT_INPUT)] or [""]
