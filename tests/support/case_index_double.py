"""A small stand-in for fabtui.cases.index with the same API (and the real documents), so the
case library's own rules (when it builds, updates and rebuilds its index) are tested apart from
whoosh.

It keeps its documents and generation in one JSON file, so it is missing / stale / corrupt the
way a real index on disk can be, and scores word overlap per field (no stemming, no analyzer).
`engine()` returns the real index: the double serves tests that count builds.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path

from fabtui.cases.document import Hit, IndexDoc, SearchFilters, SearchResult
from fabtui.cases.library import IndexEngine, default_engine

_WEIGHTS = {"title": 3.0, "symptom": 2.0, "root_cause": 2.0, "components": 2.0, "tags": 2.0,
            "error_codes": 3.0, "resolution": 1.0, "body": 0.5}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w.:-]+", text.lower()))


class CaseIndex:
    """Documents and generation in `directory/index.json`."""

    builds = 0
    """How many full rebuilds happened (a test reads it)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.file = directory / "index.json"

    def _load(self) -> tuple[dict[str, dict[str, object]], str] | None:
        try:
            data = json.loads(self.file.read_text())
            return data["docs"], data["generation"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save(self, docs: dict[str, dict[str, object]], generation: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"docs": docs, "generation": generation}))
        tmp.replace(self.file)

    def ensure(self, docs: Callable[[], Iterable[IndexDoc]], generation: str) -> bool:
        loaded = self._load()
        if loaded is not None and loaded[1] == generation:
            return False
        type(self).builds += 1
        self._save({d.id: asdict(d) for d in docs()}, generation)
        return True

    def state(self, generation: str) -> str:
        loaded = self._load()
        if loaded is None:
            return "missing"
        return "current" if loaded[1] == generation else "stale"

    def building(self) -> bool:
        return False

    def upsert(self, docs: Iterable[IndexDoc], generation: str) -> None:
        loaded = self._load()
        current = loaded[0] if loaded else {}
        current.update({d.id: asdict(d) for d in docs})
        self._save(current, generation)

    def delete(self, ids: Iterable[str], generation: str) -> None:
        loaded = self._load()
        current = loaded[0] if loaded else {}
        for i in ids:
            current.pop(i, None)
        self._save(current, generation)

    def search(self, query: str, filters: SearchFilters | None = None,
               limit: int = 10) -> SearchResult:
        loaded = self._load()
        docs = loaded[0] if loaded else {}
        terms = _words(query)
        hits = []
        for doc in docs.values():
            if filters is not None and not _passes(doc, filters):
                continue
            matched: dict[str, list[str]] = {}
            score = 0.0
            for name, weight in _WEIGHTS.items():
                value = doc[name]
                text = " ".join(value) if isinstance(value, list) else str(value)
                common = sorted(terms & _words(text))
                if common:
                    matched[name] = common
                    score += weight * len(common)
            if score > 0:
                hits.append(Hit(id=str(doc["id"]), title=str(doc["title"]), score=score,
                                snippet=str(doc["symptom"])[:120], matched=matched))
        hits.sort(key=lambda h: (-h.score, h.id))
        return SearchResult(hits=hits[:limit], total=len(hits))

    def close(self) -> None:
        pass


def _passes(doc: dict[str, object], filters: SearchFilters) -> bool:
    components = doc["components"]
    assert isinstance(components, list)
    rails = doc["rails"]
    assert isinstance(rails, list)
    tags = doc["tags"] or []
    assert isinstance(tags, list)
    return all((
        filters.component is None or filters.component in components,
        filters.rail is None or filters.rail in rails,
        filters.status is None or filters.status == doc["status"],
        filters.severity is None or filters.severity == doc["severity"],
        filters.tag is None or filters.tag in tags,
    ))


def engine() -> IndexEngine:
    """The real index when this tree has it, else this double."""
    if importlib.util.find_spec("fabtui.cases.index") is not None:
        real = default_engine()
        assert real is not None
        return real
    return IndexEngine(index=CaseIndex, doc=IndexDoc, filters=SearchFilters)
