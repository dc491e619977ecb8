"""Similar past cases for a session's draft or a case: "have we seen this before?".

Structured fingerprints count first (the same symptom class, the same exact error codes, the
same kinds of component, the same rail), then text similarity (the search index, asked with a
query built from the evidence), then topology proximity (the same component, node or leaf) and
recency. Candidates under `MIN_SCORE` are dropped; resolved cases with a root cause come before
open ones (an open case tells the operator less); every result says which fields it matched on.
How common the symptom is (first seen / rare / frequent) is counted over the whole library.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from fabtui.cases.components import Fingerprint, Locate, component_kind, fingerprint
from fabtui.cases.store import CaseStore, case_keys
from fabtui.model.case import Case, CaseStatus, SymptomClass

MIN_SCORE = 2.5
"""A case scoring less is not shown: a shared tag or node alone is not similarity."""
RARE_UP_TO = 3
"""A symptom class with at most this many past cases is rare; more is frequent."""
W_CLASS, W_CODE, W_KIND, W_RAIL, W_TAG, W_TEXT = 3.0, 2.0, 0.5, 1.0, 0.5, 2.5
W_COMPONENT, W_NEAR, W_RECENT = 1.5, 0.75, 0.5
MAX_CANDIDATES = 300

TextSearch = Callable[[str, int], list[tuple[str, float, dict[str, list[str]]]]]
"""`search(query, limit)` -> (case id, score, field -> matched terms), best first."""


@dataclass(frozen=True)
class SimilarCase:
    """One similar past case, its score and the fields (with values) it matched on."""

    id: str
    title: str
    status: str
    score: float
    has_root_cause: bool
    matched: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Similar:
    """The similar cases, and how common the symptom is."""

    cases: list[SimilarCase]
    symptom_class: str
    seen: int
    """Other cases of the same symptom class in the library."""

    @property
    def commonness(self) -> str:
        """`first seen`, `rare` or `frequent`."""
        if self.seen == 0:
            return "first seen"
        return "rare" if self.seen <= RARE_UP_TO else "frequent"


def evidence_queries(case: Case) -> list[str]:
    """Short queries from what the case says (searching one long query would match nothing
    under AND and everything under OR)."""
    queries = []
    kinds = sorted({component_kind(c) for c in case.components} - {"node", "rank"})
    head = " ".join(case.symptom_class.value.split("-")) \
        if case.symptom_class is not SymptomClass.OTHER else ""
    queries.append(" ".join(filter(None, [head, *case.error_codes[:3]])))
    metrics = list(dict.fromkeys(r.metric.split(".")[-1].replace("_", " ")
                                 for r in case.evidence))[:3]
    queries.append(" ".join(filter(None, [head, *kinds[:2], *metrics[:2]])))
    first = case.symptom.replace("Symptoms this runbook is for:", "").split("\n")[0]
    for phrase in first.split(";")[:3]:
        queries.append(" ".join(phrase.split()[:6]).strip(" ."))
    return [q for q in dict.fromkeys(q.strip() for q in queries) if q]


def _age_weight(opened: str | None, now: float) -> float:
    if not opened:
        return 0.0
    try:
        when = datetime.fromisoformat(opened)
    except ValueError:
        return 0.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    days = max(0.0, (now - when.timestamp()) / 86400)
    return math.exp(-days / 365)


def _structured(probe: Fingerprint, other: Fingerprint) -> tuple[float, dict[str, list[str]]]:
    score = 0.0
    matched: dict[str, list[str]] = {}
    if probe.symptom_class != SymptomClass.OTHER.value and \
            probe.symptom_class == other.symptom_class:
        score += W_CLASS
        matched["symptom_class"] = [probe.symptom_class]
    pairs: tuple[tuple[str, frozenset[str], frozenset[str], float, float], ...] = (
        ("error_codes", probe.error_codes, other.error_codes, W_CODE, 2 * W_CODE),
        ("component_kinds", probe.kinds - {"node", "rank"}, other.kinds, W_KIND, 3 * W_KIND),
        ("rails", frozenset(map(str, probe.rails)), frozenset(map(str, other.rails)), W_RAIL,
         W_RAIL),
        ("tags", probe.tags - {probe.symptom_class}, other.tags, W_TAG, 3 * W_TAG),
        ("components", probe.components, other.components, W_COMPONENT, 2 * W_COMPONENT),
        ("nodes", probe.nodes, other.nodes, W_NEAR, W_NEAR),
        ("leaves", probe.leaves, other.leaves, W_NEAR, W_NEAR),
    )
    for name, mine, theirs, weight, cap in pairs:
        common = sorted(mine & theirs)
        if common:
            score += min(cap, weight * len(common))
            matched[name] = common
    return score, matched


def similar_cases(probe: Case, store: CaseStore, *, search: TextSearch | None = None,
                  locate: Locate | None = None, limit: int = 5, min_score: float = MIN_SCORE,
                  now: float | None = None) -> Similar:
    """The past cases most like `probe` (a draft from a session, or a stored case)."""
    now = time.time() if now is None else now
    mine = fingerprint(probe.symptom_class.value, probe.error_codes, probe.components,
                       probe.tags, locate)
    keys = [k for k in case_keys(probe, locate) if k[0] != "symptom_class" or
            k[1] != SymptomClass.OTHER.value]
    structured = store.matching_keys(keys)
    text: dict[str, tuple[float, dict[str, list[str]]]] = {}
    if search is not None:
        for query in evidence_queries(probe):
            hits = search(query, 20)
            top = max((score for _, score, _ in hits), default=0.0)
            for case_id, score, fields in hits:
                share = score / top if top > 0 else 0.0
                best = text.get(case_id)
                if best is None or share > best[0]:
                    merged = dict(best[1]) if best else {}
                    for name, terms in fields.items():
                        merged[name] = sorted(set(merged.get(name, [])) | set(terms))
                    text[case_id] = (share, merged)
    exclude = {probe.id}
    candidates = sorted(set(structured) | set(text),
                        key=lambda i: (-len(structured.get(i, ())), -text.get(i, (0, {}))[0],
                                       i))[:MAX_CANDIDATES]
    results: list[SimilarCase] = []
    for case_id in candidates:
        if case_id in exclude:
            continue
        other = store.get(case_id)
        if other is None or set(other.sessions) & set(probe.sessions):
            continue
        theirs = fingerprint(other.symptom_class.value, other.error_codes, other.components,
                             other.tags, locate)
        score, matched = _structured(mine, theirs)
        share, fields = text.get(case_id, (0.0, {}))
        if share > 0:
            score += W_TEXT * share
            matched["text"] = sorted({t for ts in fields.values() for t in ts}) or ["(text)"]
        score += W_RECENT * _age_weight(other.opened, now)
        if score < min_score:
            continue
        results.append(SimilarCase(id=other.id, title=other.title, status=other.status.value,
                                   score=score, matched=matched,
                                   has_root_cause=other.has_root_cause))
    results.sort(key=lambda r: (not (r.has_root_cause and r.status ==
                                     CaseStatus.RESOLVED.value), -r.score, r.id))
    seen = store.count(symptom_class=probe.symptom_class.value)
    if store.get(probe.id) is not None and seen:
        seen -= 1
    return Similar(cases=results[:limit], symptom_class=probe.symptom_class.value, seen=seen)
