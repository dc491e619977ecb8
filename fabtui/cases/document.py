"""What the case store hands the search index, and what a search hands back: plain data.

Nothing here knows the search engine, so the store, the CLI and a replacement engine share these
types and no one else imports whoosh.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class IndexDoc:
    """One case as the index sees it. `body` is every other section joined; `opened` an ISO
    date or timestamp; `rails` and `nodes` are what the rail and node filters match."""

    id: str
    title: str
    symptom: str = ""
    root_cause: str = ""
    resolution: str = ""
    body: str = ""
    components: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    error_codes: list[str] = field(default_factory=list)
    symptom_class: str = "other"
    severity: str | None = None
    status: str = "draft"
    lang: str = "en"
    opened: str | None = None
    rails: list[int] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)


@dataclass
class SearchFilters:
    """Every set filter must hold. `component` matches a component id or one it contains
    (`node042` matches `node042:gpu3`); `since`/`until` are inclusive ISO dates on `opened`
    (a case with no `opened` date fails a date filter)."""

    component: str | None = None
    rail: int | None = None
    node: str | None = None
    tag: str | None = None
    severity: str | None = None
    status: str | None = None
    since: str | None = None
    until: str | None = None


@dataclass
class Hit:
    """One matching case. `highlights` are (start, end) character spans into `snippet`;
    `matched` names, per field, the words of the case that matched the query."""

    id: str
    title: str
    score: float
    snippet: str
    highlights: list[tuple[int, int]] = field(default_factory=list)
    matched: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class SearchResult:
    """The best hits first; `total` counts every matching case; `suggestion` is the query
    with misspelled words corrected, when some word matched nothing and a close one exists."""

    hits: list[Hit]
    total: int
    suggestion: str | None = None
    note: str | None = None
    """Said beside the hits when they are not the index's full answer (it is being built)."""
    unknown: list[tuple[str, str | None]] = field(default_factory=list)
    """The words typed that no case holds, each with the closest word one does (or None)."""
