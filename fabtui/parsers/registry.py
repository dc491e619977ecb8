"""Finding parsers by kind, and guessing the kind of an unlabelled capture.

Parser modules are listed in `fabtui.parsers.signatures` (kind, module, description and a cheap
signature) and imported only when used: `--as KIND` loads one, detection loads only those whose
signature the input carries. `discover()` finds every module of `fabtui.parsers` that defines
`KIND`; a test keeps the table equal to it, so adding a parser is adding a file and its row.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache, cached_property
from types import ModuleType
from typing import TYPE_CHECKING

import fabtui.parsers as package
from fabtui.parsers.errors import ParseError
from fabtui.parsers.signatures import SIGNATURES, Signature

if TYPE_CHECKING:
    from pydantic import BaseModel

    from fabtui.model.table import Table

DETECT_THRESHOLD = 0.3
"""Below this confidence `fabtui parse` refuses to guess and asks for `--as KIND`."""


@dataclass(frozen=True)
class Parser:
    """One registered parser."""

    kind: str
    description: str
    module_name: str
    """Module name inside `fabtui.parsers`."""
    signature: Signature | None = None
    """What its input must carry (None: nothing known, ask the module)."""

    @cached_property
    def module(self) -> ModuleType:
        """The parser module, imported on first use."""
        return importlib.import_module(f"{package.__name__}.{self.module_name}")

    @property
    def model(self) -> type[BaseModel]:
        """The result model."""
        model: type[BaseModel] = self.module.MODEL
        return model

    def detect(self, text: str,
               samples: dict[tuple[int, int], tuple[str, ...]] | None = None) -> float:
        """Confidence that `text` is this kind; a failing detector counts as 0. The module is
        imported only when the signature allows the kind (`samples` caches its windows)."""
        if self.signature is not None and \
                not self.signature.may_be(text, {} if samples is None else samples):
            return 0.0
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
    """Every parser, by kind (none imported yet). Raises `RuntimeError` when two rows of
    `SIGNATURES` claim one kind (the second would silently replace the first)."""
    found: dict[str, Parser] = {}
    for sig in SIGNATURES:
        if sig.kind in found:
            raise RuntimeError(f"two parsers claim kind {sig.kind!r}: "
                               f"{found[sig.kind].module_name} and {sig.module}")
        found[sig.kind] = Parser(sig.kind, sig.description, sig.module, sig)
    return found


def discover() -> dict[str, tuple[str, str]]:
    """Kind -> (module name, description) of every parser module, found by importing them all
    (what `SIGNATURES` must list; tests compare the two)."""
    found: dict[str, tuple[str, str]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name in ("errors", "registry", "signatures", "text"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is None:
            continue
        if kind in found:
            raise RuntimeError(f"two parsers claim kind {kind!r}: {found[kind][0]} "
                               f"and {info.name}")
        found[kind] = (info.name, getattr(module, "DESCRIPTION", ""))
    return found


def get(kind: str) -> Parser:
    """The parser for `kind`; KeyError lists the known kinds."""
    try:
        return parsers()[kind]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r}; known: {', '.join(sorted(parsers()))}") from None


def detect(text: str) -> list[tuple[str, float]]:
    """Kinds that `text` may be, most likely first (only those above zero)."""
    samples: dict[tuple[int, int], tuple[str, ...]] = {}
    scores = [(kind, parser.detect(text, samples)) for kind, parser in parsers().items()]
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
