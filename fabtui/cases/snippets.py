"""Why a case matched and the part of it to show: snippets with highlights, field by field.

Pure Python over the stored text of a hit (no search engine). A field of ordinary length is
analyzed whole and kept in a small cache (the same cases come back keystroke after keystroke);
in a long one it looks for cheap substrings ("needles") that any text producing a query term
must contain and analyzes only the windows around them.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from fabtui.cases.query import Plan
from fabtui.lexicon.analysis import IRREGULAR, SYNONYMS, Plain, Token, analyze_plain, stem
from fabtui.lexicon.fold import fold

TEXT_FIELDS = ("title", "symptom", "root_cause", "resolution", "body")
SNIPPET_FIELDS = ("symptom", "root_cause", "resolution", "body", "title")
LIST_FIELDS = ("components", "tags", "error_codes")
SNIPPET_CHARS = 200

_ID_DIGITS = re.compile(r"^(?:s?xid|rail|ib-status|cuda-error)-(\d+)$")
_REVERSE_IRREGULAR: dict[str, list[str]] = {}
for _surface, _root in IRREGULAR.items():
    _REVERSE_IRREGULAR.setdefault(_root, []).append(_surface)


def _needles(terms: set[str], prefixes: Sequence[str]) -> set[str]:
    """Lowercase substrings that any text producing one of `terms` must contain: finding them
    with str.find is far cheaper than analyzing a whole case for each hit."""
    out: set[str] = set(prefixes)
    for term in terms:
        if term.startswith("~"):
            for spelling in SYNONYMS.get(term[1:], ()):
                low = fold(spelling.lower())
                first = re.split(r"[\s\-_]+", low)[0]
                out.add(first if not first.isalpha() else stem(first)[:4] or first)
            continue
        m = _ID_DIGITS.match(term)
        if m:
            out.add(m.group(1))
        else:
            out.add(term[:4] if term.isalpha() and len(term) > 4 else term)
            out.update(_REVERSE_IRREGULAR.get(term, ()))
    return {n for n in out if n}


# The analyzed text of recently shown fields: the same cases come back keystroke after
# keystroke (search-as-you-type) and query after query. Bounded; keyed by the text itself.
# Kept as plain tuples (text, pos, start, end, span), which the collector stops tracking: as
# Token objects, every full collection walked hundreds of thousands of them.
_ANALYZED: OrderedDict[str, tuple[Plain, ...]] = OrderedDict()
_ANALYZED_SIZE = 4096
WHOLE_TEXT = 2500  # a field up to this long is analyzed whole (and cached), longer in windows
_LOCK = threading.Lock()


def _cached(text: str) -> tuple[Plain, ...] | None:
    with _LOCK:
        tokens = _ANALYZED.get(text)
        if tokens is not None:
            _ANALYZED.move_to_end(text)
        return tokens


def _analyzed(text: str) -> tuple[Plain, ...]:
    tokens = _cached(text)
    if tokens is not None:
        return tokens
    tokens = tuple(analyze_plain(text))
    with _LOCK:
        _ANALYZED[text] = tokens
        while len(_ANALYZED) > _ANALYZED_SIZE:
            _ANALYZED.popitem(last=False)
    return tokens


def _head(word: str) -> str:
    """What every spelling of the stemmed Latin `word` holds: a stem keeps all of its word
    but the last letter (`studies` -> `study`, `stopped` -> `stop`); irregular forms aside."""
    if word.isascii() and word.isalpha():
        return word[:max(1, min(len(word) - 1, 4))]
    return word


@functools.lru_cache(maxsize=256)
def _sure_needles(terms: frozenset[str], prefixes: tuple[str, ...]) -> frozenset[str] | None:
    """Substrings of which a field's folded lowercase text holds at least one whenever the
    analyzer makes a term or prefix of the query from it; None when no such set is known
    (a prefix of an identifier). A field holding none is not analyzed: most fields of a hit
    match nothing, and analyzing them cost most of a keystroke on cases not seen before."""
    out: set[str] = set()

    def spellings_of(stemmed: str) -> None:
        out.add(_head(stemmed))
        out.update(_REVERSE_IRREGULAR.get(stemmed, ()))

    for term in terms:
        if term.startswith("~"):
            for spelling in SYNONYMS.get(term[1:], ()):
                first = re.split(r"[\s\-_]+", fold(spelling.lower()))[0]
                if not first:
                    return None
                spellings_of(stem(first) if first.isalpha() else first)
            continue
        m = _ID_DIGITS.match(term)
        if m:
            out.add(m.group(1))
        else:
            spellings_of(term)
    for prefix in prefixes:
        if not (prefix.isascii() and prefix.isalpha()):
            return None
        out.add(_head(prefix))
        for root, surfaces in _REVERSE_IRREGULAR.items():
            if root.startswith(prefix):
                out.update(surfaces)
    return frozenset(n for n in out if n)


def _holds(text: str, needles: frozenset[str]) -> bool:
    """Whether the folded lowercase `text` holds one of `needles`."""
    low = text.lower() if text.isascii() else fold(text).lower()
    return any(needle in low for needle in needles)


def needles_of(plan: Plan) -> set[str]:
    """What `explain` looks for in a long field, for one query."""
    return _needles(plan.terms, plan.prefixes)


def _matching_tokens(text: str, terms: set[str], prefixes: Sequence[str],
                     needles: set[str], sure: frozenset[str] | None = None) -> list[Token]:
    """The tokens of `text` that the query matches, with their spans in `text`; `sure`: see
    `_sure_needles` (none of them in `text`: nothing matches, and a field not analyzed yet is
    not analyzed)."""
    if len(text) <= WHOLE_TEXT:
        tokens = _cached(text)
        if tokens is None:
            if sure is not None and not _holds(text, sure):
                return []
            tokens = _analyzed(text)
        return [Token(*t) for t in tokens if t[0] in terms
                or (prefixes and any(t[0].startswith(p) for p in prefixes))]
    if sure is not None and not _holds(text, sure):
        return []
    low = fold(text).lower()
    windows: list[tuple[int, int]] = []
    if len(low) != len(text):
        windows = [(0, len(text))]
    else:
        spots: list[tuple[int, int]] = []
        for needle in needles:
            at = low.find(needle)
            found = 0
            while at >= 0 and found < 40:
                spots.append((max(0, at - 24), min(len(text), at + len(needle) + 32)))
                found += 1
                at = low.find(needle, at + len(needle))
        spots.sort()
        for a, b in spots:
            if windows and a <= windows[-1][1]:
                windows[-1] = (windows[-1][0], max(b, windows[-1][1]))
            else:
                windows.append((a, b))
    found_tokens: list[Token] = []
    seen: set[tuple[int, int, str]] = set()
    for a, b in windows:
        while a > 0 and not low[a - 1].isspace():
            a -= 1
        while b < len(low) and not low[b].isspace():
            b += 1
        for word, pos, start, end, span in analyze_plain(text[a:b]):
            if word in terms or (prefixes and any(word.startswith(p) for p in prefixes)):
                key = (start + a, end + a, word)
                if key not in seen:
                    seen.add(key)
                    found_tokens.append(Token(word, pos, key[0], key[1], span))
    found_tokens.sort(key=lambda t: (t.start, t.end))
    return found_tokens


def _snippet(text: str, tokens: list[Token]) -> tuple[str, list[tuple[int, int]]]:
    """The window of `text` with the most distinct matching terms, and their spans in it."""
    flat = text.replace("\n", " ").replace("\t", " ").replace("\r", " ")
    if not tokens:
        cut = flat[:SNIPPET_CHARS]
        return (cut.rstrip() + ("…" if len(flat) > SNIPPET_CHARS else "")), []
    best, best_score = 0, -1
    for i, tok in enumerate(tokens):
        inside = {t.text for t in tokens[i:] if t.end - tok.start <= SNIPPET_CHARS - 40}
        if len(inside) > best_score:
            best, best_score = i, len(inside)
    start = max(0, tokens[best].start - 40)
    while start > 0 and not flat[start - 1].isspace() and tokens[best].start - start < 60:
        start -= 1
    end = min(len(flat), start + SNIPPET_CHARS)
    while end < len(flat) and not flat[end].isspace() and end - start < SNIPPET_CHARS + 30:
        end += 1
    prefix = "…" if start > 0 else ""
    body = flat[start:end].strip()
    lead = len(flat[start:end]) - len(flat[start:end].lstrip())
    shift = len(prefix) - start - lead
    spans: list[tuple[int, int]] = []
    for tok in tokens:
        if tok.start >= start + lead and tok.end <= start + lead + len(body):
            span = (tok.start + shift, tok.end + shift)
            if spans and span[0] < spans[-1][1]:
                spans[-1] = (spans[-1][0], max(spans[-1][1], span[1]))
            else:
                spans.append(span)
    suffix = "…" if end < len(flat) else ""
    return prefix + body + suffix, spans


def _merged(tokens: list[Token]) -> list[tuple[int, int]]:
    """The spans of `tokens` with overlapping ones joined (CJK bigrams, synonym phrases)."""
    spans: list[tuple[int, int]] = []
    for tok in sorted(tokens, key=lambda t: t.start):
        if spans and tok.start < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], tok.end))
        else:
            spans.append((tok.start, tok.end))
    return spans


def explain(fields: Mapping[str, Any], plan: Plan,
            needles: set[str] | None = None) -> tuple[str, list[tuple[int, int]],
                                                      dict[str, list[str]]]:
    """(snippet, highlight spans into it, field -> the case's words that matched) for the
    stored `fields` of one hit. `needles`: `needles_of(plan)`, computed once per query."""
    if needles is None:
        needles = needles_of(plan)
    matched: dict[str, list[str]] = {}
    per_field: dict[str, list[Token]] = {}
    sure = _sure_needles(frozenset(plan.terms), tuple(plan.prefixes))
    for name in TEXT_FIELDS:
        text = fields.get(name) or ""
        tokens = _matching_tokens(text, plan.terms, plan.prefixes, needles, sure) \
            if text else []
        per_field[name] = tokens
        words = list(dict.fromkeys(fold(text[a:b]).lower() for a, b in _merged(tokens)))
        if words:
            matched[name] = words
    for name in LIST_FIELDS:
        hits = [v for v in fields.get(name) or []
                if (sure is None or _holds(v, sure))
                and any(t[0] in plan.terms or any(t[0].startswith(p) for p in plan.prefixes)
                        for t in _analyzed(v))]
        if hits:
            matched[name] = hits
    source = max(SNIPPET_FIELDS, key=lambda n: (len({t.text for t in per_field[n]}),
                                                 -SNIPPET_FIELDS.index(n)))
    if not per_field[source]:
        source = "symptom" if fields.get("symptom") else "title"
    snippet, spans = _snippet(fields.get(source) or "", per_field[source])
    return snippet, spans, matched
