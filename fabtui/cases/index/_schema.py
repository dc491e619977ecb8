"""A case as the whoosh index stores it: the schema, the boosted sections, the analyzer's bridge.

Every section of a case goes into one `text` field, each token weighted by its section's boost
(BM25F's weighted term frequency, one posting list per term); every filter value goes into one
`facets` field as `kind:value` (`facet`, which the filters of `_scoring` look up); the fields a
hit shows are stored as they are. `SCHEMA_VERSION` names all of it: an index built otherwise
reads as stale and is rebuilt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from whoosh import fields as wf
from whoosh.analysis import Token as WToken
from whoosh.analysis import Tokenizer

from fabtui.cases.document import IndexDoc
from fabtui.lexicon.analysis import analyze_plain
from fabtui.lexicon.glossary import GLOSSARY

# Bump when the schema or the analyzer changes: every stored index then reads as stale.
# The boosts are part of it because they are applied when a case is indexed, and so is the
# glossary (a concept term is indexed wherever a spelling occurs): editing it rebuilds the index.
SCHEMA_VERSION = f"6-{GLOSSARY.digest()}"

# BM25F field weights: the words of the title and of the symptom (what the reporter saw) say
# most about a case; the identifiers (components, tags, error codes) are rare and exact.
FIELD_BOOSTS: dict[str, float] = {
    "title": 3.0,
    "symptom": 2.0,
    "keys": 2.5,
    "root_cause": 1.5,
    "resolution": 0.8,
    "body": 0.5,
}
SECTION_GAP = 100


def _encode_sections(sections: Iterable[tuple[float, str]]) -> str:
    """Sections with their boosts as one string (whoosh hands a field's analyzer one string):
    RS boost US text, for each section. Control characters never occur in case text that
    matters (they are dropped)."""
    clean = re.compile(r"[\x1e\x1f]")
    return "".join(f"\x1e{boost:g}\x1f{clean.sub(' ', text)}" for boost, text in sections)


def _decode_sections(value: str) -> list[tuple[float, str]]:
    if not value.startswith("\x1e"):
        return [(1.0, value)]
    out = []
    for part in value[1:].split("\x1e"):
        boost, _, text = part.partition("\x1f")
        out.append((float(boost), text))
    return out


class FabricTokenizer(Tokenizer):  # type: ignore[misc]
    """whoosh's view of `fabtui.lexicon.analysis.analyze`."""

    def __call__(
        self, value: str, positions: bool = False, chars: bool = False,
        keeporiginal: bool = False, removestops: bool = True, start_pos: int = 0,
        start_char: int = 0, tokenize: bool = True, mode: str = "", **kwargs: Any,
    ) -> Iterator[Any]:
        token = WToken(positions, chars, removestops=removestops, mode=mode, **kwargs)
        sections = _decode_sections(value)
        base = start_pos
        for boost, text in sections:
            last = base
            for word, pos, start, end, _ in analyze_plain(text):
                token.text = word
                token.boost = boost
                token.stopped = False
                if keeporiginal:
                    token.original = word
                if positions:
                    token.pos = last = base + pos
                if chars:
                    token.startchar = start_char + start
                    token.endchar = start_char + end
                yield token
            base = last + SECTION_GAP  # no phrase runs from one section into the next


def schema() -> Any:
    return wf.Schema(
        id=wf.ID(stored=True, unique=True),
        # Every section in one field, each token weighted by its section's boost: BM25F's
        # weighted term frequency, at the cost of one posting list per term, not one per field.
        text=wf.TEXT(analyzer=FabricTokenizer(), phrase=True),
        # Every filter value in one field as `kind:value` (one field indexes faster than nine).
        facets=wf.KEYWORD(commas=True),
        title=wf.STORED, symptom=wf.STORED, root_cause=wf.STORED, resolution=wf.STORED,
        body=wf.STORED, components=wf.STORED, tags=wf.STORED, error_codes=wf.STORED,
        severity=wf.STORED, status=wf.STORED, opened=wf.STORED, symptom_class=wf.STORED,
        lang=wf.STORED,
    )


def _component_keys(components: Iterable[str]) -> list[str]:
    """Each component and the components it sits in: `leaf-1:Ethernet16` -> both."""
    keys: list[str] = []
    for comp in components:
        parts = comp.lower().split(":")
        keys.extend(":".join(parts[: i + 1]) for i in range(len(parts)))
    return keys


def facet(kind: str, value: str) -> str:
    return f"{kind}:{value.strip().lower().replace(',', ' ')}"


def _facets(doc: IndexDoc) -> list[str]:
    facets = [facet("component", c) for c in _component_keys(doc.components)]
    facets += [facet("rail", str(r)) for r in doc.rails]
    facets += [facet("node", n) for n in doc.nodes]
    facets += [facet("tag", t) for t in doc.tags]
    facets.append(facet("status", doc.status))
    if doc.severity:
        facets.append(facet("severity", doc.severity))
    if doc.opened:
        facets.append(facet("opened", doc.opened[:10]))
    return facets


def fields(doc: IndexDoc) -> dict[str, Any]:
    keys = "\n".join([*doc.components, *doc.tags, *doc.error_codes, doc.symptom_class])
    sections = [(FIELD_BOOSTS["title"], doc.title), (FIELD_BOOSTS["symptom"], doc.symptom),
                (FIELD_BOOSTS["keys"], keys), (FIELD_BOOSTS["root_cause"], doc.root_cause),
                (FIELD_BOOSTS["resolution"], doc.resolution), (FIELD_BOOSTS["body"], doc.body)]
    return {
        "id": doc.id,
        "text": _encode_sections((boost, text) for boost, text in sections if text),
        "facets": ",".join(_facets(doc)),
        "title": doc.title, "symptom": doc.symptom, "root_cause": doc.root_cause,
        "resolution": doc.resolution, "body": doc.body,
        "components": list(doc.components), "tags": list(doc.tags),
        "error_codes": list(doc.error_codes), "severity": doc.severity, "status": doc.status,
        "opened": doc.opened, "symptom_class": doc.symptom_class, "lang": doc.lang,
    }
