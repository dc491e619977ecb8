"""Finding parsers by kind, and guessing the kind of an unlabelled capture.

Parser modules are discovered (every module of `fabtui.parsers` that defines `KIND`), so adding a
parser is adding a file.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from pydantic import BaseModel

import fabtui.parsers as package
from fabtui.model.table import Table
from fabtui.parsers.errors import ParseError

DETECT_THRESHOLD = 0.3
"""Below this confidence `fabtui parse` refuses to guess and asks for `--as KIND`."""


@dataclass(frozen=True)
class Parser:
    """One registered parser."""

    kind: str
    description: str
    module: ModuleType

    @property
    def model(self) -> type[BaseModel]:
        """The result model."""
        model: type[BaseModel] = self.module.MODEL
        return model

    def detect(self, text: str) -> float:
        """Confidence that `text` is this kind; a failing detector counts as 0."""
        try:
            return float(self.module.detect(text))
        except Exception:
            return 0.0

    def parse(self, text: str) -> BaseModel:
        """Parse `text`; raises `ParseError` only."""
        try:
            result: BaseModel = self.module.parse(text)
        except ParseError:
            raise
        except Exception as exc:
            raise ParseError(self.kind, None, f"parser failed: {type(exc).__name__}: {exc}") \
                from exc
        return result

    def tables(self, result: BaseModel) -> list[Table] | None:
        """The result as tables (data for any face to draw), if the parser describes them."""
        describe = getattr(self.module, "tables", None)
        return list(describe(result)) if describe is not None else None


@cache
def parsers() -> dict[str, Parser]:
    """Every parser, by kind."""
    found: dict[str, Parser] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name in ("errors", "registry", "text"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is None:
            continue
        if kind in found:
            raise RuntimeError(f"two parsers claim kind {kind!r}: {found[kind].module.__name__} "
                               f"and {module.__name__}")
        found[kind] = Parser(kind, getattr(module, "DESCRIPTION", ""), module)
    return found


def get(kind: str) -> Parser:
    """The parser for `kind`; KeyError lists the known kinds."""
    try:
        return parsers()[kind]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r}; known: {', '.join(sorted(parsers()))}") from None


def detect(text: str) -> list[tuple[str, float]]:
    """Kinds that `text` may be, most likely first (only those above zero)."""
    scores = [(kind, parser.detect(text)) for kind, parser in parsers().items()]
    return sorted([s for s in scores if s[1] > 0], key=lambda s: -s[1])


def parse(text: str, kind: str | None = None) -> BaseModel:
    """Parse `text` as `kind`, or as the most likely kind. Raises `ParseError`."""
    if kind is not None:
        return get(kind).parse(text)
    if not text.strip():
        raise ParseError(None, None, "the input is empty")
    guesses = detect(text)
    if not guesses or guesses[0][1] < DETECT_THRESHOLD:
        best = f" (closest: {guesses[0][0]})" if guesses else ""
        raise ParseError(None, None, "cannot tell which tool printed this; name it with --as "
                                     f"KIND (see `fabtui parse --list`){best}")
    return get(guesses[0][0]).parse(text)
