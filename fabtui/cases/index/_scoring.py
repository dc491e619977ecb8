"""BM25F ranking for the case index, over whoosh posting lists decoded into numpy arrays.

whoosh stores the index; scoring is done here, a term at a time over whole posting lists
decoded into numpy arrays. whoosh's own matchers walk postings one by one in Python, which
measured 50-150 ms per query at 10,000 cases; decoding a block is one unpickle and a cumsum.
Segments never change once written, so decoded postings are cached by segment id and stay
valid across refreshes; only deletions (a mask) are re-read. `Scorer` ranks a query plan
(`fabtui.cases.query`) and turns search filters into a mask, for one open searcher.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from math import log
from typing import Any

import numpy as np
from whoosh import query as wq
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
from whoosh.util.numeric import byte_to_length

from fabtui.cases.document import SearchFilters
from fabtui.cases.index._decoded import DecodedStore
from fabtui.cases.index._schema import facet
from fabtui.cases.query import Plan, Unit

K1, B = 1.2, 0.75  # BM25's usual saturation and length normalization
COORDINATION = 0.3  # a ranked query favours cases that match more of its words
PREFIX_TERMS = 48  # the most frequent completions a prefix expands to
PREFIX_WEIGHT = 0.8
DRAFT_WEIGHT = 0.8
"""A draft (filed from a session, not yet reviewed) scores this share of what a reviewed case
with the same words would: of two cases that match as well, the reviewed one comes first, and a
draft needs clearly more in common with the query to rank above one."""
POSTINGS_CACHE = 4_000_000  # decoded postings kept between searches (about 48 MB)

_CACHE: OrderedDict[tuple[str, str, str], tuple[Any, Any]] = OrderedDict()
_CACHE_SIZE = [0]
_CACHE_LOCK = threading.Lock()  # the caches are shared by every CaseIndex of the process
_LENGTHS: dict[str, Any] = {}


def _leaf_postings(reader: Any, field: str, term: str,
                   store: DecodedStore | None = None) -> tuple[Any, Any]:
    """(doc numbers, weights) of `term` in one segment, deleted documents included: from the
    process's cache, else from `store` (lists decoded by an earlier process), else decoded
    from whoosh's blocks (and a long list given to `store`)."""
    segid = reader.segment().segment_id()
    key = (segid, field, term)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
    stored = store.load(segid, field, term) if store is not None else None
    result = stored if stored is not None else _decode(reader, field, term)
    if store is not None and stored is None:
        store.save(segid, field, term, *result)
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = result
            _CACHE_SIZE[0] += len(result[0])
        while _CACHE_SIZE[0] > POSTINGS_CACHE and len(_CACHE) > 1:
            _, (ids_old, _) = _CACHE.popitem(last=False)
            _CACHE_SIZE[0] -= len(ids_old)
    return result


def _decode(reader: Any, field: str, term: str) -> tuple[Any, Any]:
    """(doc numbers, weights) of `term` in one segment, decoded from whoosh's posting blocks."""
    empty = (np.zeros(0, np.int64), np.zeros(0, np.float32))
    try:
        matcher = reader._terms.matcher(field, term.encode("utf-8"),
                                        reader.schema[field].format)
    except (KeyError, LookupError):
        return empty
    except Exception as exc:  # whoosh raises TermNotFound, a plain Exception subclass
        if type(exc).__name__ == "TermNotFound":
            return empty
        raise
    id_parts, weight_parts = [], []
    if hasattr(matcher, "_blocklength") and hasattr(matcher, "_data"):
        while not matcher._atend:
            if matcher._data is None:
                matcher._read_data()
            deltas, weights = matcher._data[0], matcher._data[1]
            count = matcher._blocklength
            id_parts.append(np.cumsum(np.asarray(deltas, dtype=np.int64)))
            if weights is None:
                weight_parts.append(np.ones(count, np.float32))
            elif isinstance(weights, float):
                weight_parts.append(np.full(count, weights, np.float32))
            else:
                weight_parts.append(np.asarray(weights, dtype=np.float32))
            if matcher._lastblock:
                break
            matcher._goto(matcher._nextoffset)
    else:  # postings inlined in the term info (a term of one document)
        ids, weights = [], []
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
        id_parts.append(np.asarray(ids, dtype=np.int64))
        weight_parts.append(np.asarray(weights, dtype=np.float32))
    return (np.concatenate(id_parts), np.concatenate(weight_parts)) if id_parts else empty


_BYTE_LENGTHS = np.array([byte_to_length(b) for b in range(256)], dtype=np.float32)
_BYTE_LENGTHS[0] = 0.0  # a zero byte is no length stored (`doc_field_length` says None)
"""whoosh stores each document's field length as one byte (a rough log scale): its length."""


def _leaf_lengths(reader: Any) -> Any:
    """Every document's `text` length in one leaf, cached by segment (segments never change).
    Read as the column's bytes at once: one `doc_field_length` call per document was ~3 us,
    29 ms of a cold search at 10,000 cases and ~290 ms of 341 ms at 100,000 (the CLI searches
    from a new process each time: `benchmarks/cases_search.py`'s cold row)."""
    segid = reader.segment().segment_id()
    lengths = _LENGTHS.get(segid)
    if lengths is None:
        count = reader.doc_count_all()
        column = _length_bytes(reader, count)
        lengths = _BYTE_LENGTHS[column] if column is not None else \
            np.fromiter((reader.doc_field_length(i, "text", 0) or 0 for i in range(count)),
                        dtype=np.float32, count=count)
        _LENGTHS[segid] = lengths
    return lengths


def _length_bytes(reader: Any, count: int) -> Any:
    """The leaf's `text` length bytes, one per document (uint8, `count` of them), read from
    whoosh 3's length column in one read; None where the reader is not that codec's (the
    caller then asks `doc_field_length` per document). Reaches into whoosh's per-document
    reader: whoosh is unmaintained and pinned, and this module is the one that knows it."""
    per_doc = getattr(reader, "_perdoc", None)
    cached = getattr(per_doc, "_cached_reader", None)
    if cached is None:
        return None
    column = cached(_lenfield("text"), LENGTHS_COLUMN)
    if column is None:  # no length stored: every document's is 0
        return np.zeros(count, dtype=np.uint8)
    try:
        fixed, base, stored = column._fixedlen, column._basepos, column._count
        data = column._dbfile.get(base, stored) if stored else b""
    except AttributeError:
        return None
    if fixed != 1 or len(data) != stored:
        return None
    values = np.zeros(count, dtype=np.uint8)  # documents past the column's end: the default
    values[:min(stored, count)] = np.frombuffer(data, dtype=np.uint8)[:count]
    return values


class Scorer:
    """BM25 over the one weighted `text` field (so BM25F), for one open searcher."""

    def __init__(self, searcher: Any, store: DecodedStore | None = None) -> None:
        self.searcher = searcher
        self.store = store
        """Long posting lists decoded by earlier processes (see `_decoded`), or None."""
        self.leaves = [(r, base) for r, base in searcher.reader().leaf_readers()]
        self.n = sum(r.doc_count_all() for r, _ in self.leaves)
        self.lengths = (np.concatenate([_leaf_lengths(r) for r, _ in self.leaves])
                        if self.leaves else np.zeros(0, np.float32))
        current = {r.segment().segment_id() for r, _ in self.leaves}
        for segid in [s for s in _LENGTHS if s not in current]:
            del _LENGTHS[segid]  # merged away (another open index only pays a re-read)
        if store is not None:
            store.forget_others(current)
        self.alive = np.ones(self.n, dtype=bool)
        for reader, base in self.leaves:
            if reader.has_deletions():
                dead = np.fromiter(reader.deleted_docs_set, dtype=np.int64)
                self.alive[dead + base] = False
        live = int(self.alive.sum())
        self.avg_length = float(self.lengths[self.alive].mean()) if live else 1.0
        self.live = live
        self._norm = K1 * (1 - B + B * self.lengths / max(self.avg_length, 1e-9))

    def postings(self, field: str, term: str) -> tuple[Any, Any]:
        if len(self.leaves) == 1:
            return _leaf_postings(self.leaves[0][0], field, term, self.store)
        ids, weights = [], []
        for reader, base in self.leaves:
            i, w = _leaf_postings(reader, field, term, self.store)
            if len(i):
                ids.append(i + base)
                weights.append(w)
        if not ids:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        return np.concatenate(ids), np.concatenate(weights)

    def docs(self, field: str, values: Iterable[str]) -> Any:
        mask = np.zeros(self.n, dtype=bool)
        for value in values:
            mask[self.postings(field, value)[0]] = True
        return mask

    def frequency(self, term: str) -> int:
        return len(self.postings("text", term)[0])

    def add_term(self, scores: Any, mask: Any, term: str, weight: float) -> None:
        ids, tf = self.postings("text", term)
        if not len(ids):
            return
        df = len(ids)
        idf = log(1 + (self.n - df + 0.5) / (df + 0.5))
        scores[ids] += (idf * weight * (K1 + 1)) * tf / (tf + self._norm[ids])
        mask[ids] = True

    def expand(self, prefix: str) -> list[str]:
        reader = self.searcher.reader()
        found = []
        for i, text in enumerate(reader.expand_prefix("text", prefix)):
            if i >= PREFIX_TERMS * 8:
                break
            found.append(text.decode("utf-8") if isinstance(text, bytes) else text)
        found = [t for t in found if not t.startswith("~")]
        if len(found) > PREFIX_TERMS:
            # the term dictionary's counts, not the postings' lengths (the same numbers):
            # decoding up to 384 posting lists to rank them cost a first `tra` 10-20 ms
            found.sort(key=lambda t: -reader.doc_frequency("text", t))
            found = found[:PREFIX_TERMS]
        return found

    def unit(self, unit: Unit) -> tuple[Any, Any]:
        scores = np.zeros(self.n, dtype=np.float32)
        mask = np.zeros(self.n, dtype=bool)
        for term, weight in unit.alternatives:
            self.add_term(scores, mask, term, weight)
        if unit.prefix:
            for term in self.expand(unit.prefix):
                if all(term != t for t, _ in unit.alternatives):
                    self.add_term(scores, mask, term, PREFIX_WEIGHT)
        if unit.phrase:
            phrase = np.zeros(self.n, dtype=bool)
            found = self.searcher.docs_for_query(wq.Phrase("text", unit.phrase))
            phrase[np.fromiter(found, dtype=np.int64)] = True
            mask &= phrase
            scores *= phrase
        return scores, mask

    def run(self, query: Plan, allowed: Any, limit: int) -> tuple[list[tuple[int, float]], int]:
        """The best `limit` (docnum, score) and the number of matching documents."""
        total = np.zeros(self.n, dtype=np.float32)
        matched = np.zeros(self.n, dtype=bool)
        seen: dict[tuple[object, ...], tuple[Any, Any]] = {}
        ranked = not query.conjunctive
        count = np.zeros(self.n, dtype=np.float32) if ranked else None
        for group in query.groups:
            group_mask = np.zeros(self.n, dtype=bool) if ranked else np.ones(self.n, dtype=bool)
            for unit in group:
                key = unit.key()
                if key not in seen:
                    seen[key] = self.unit(unit)
                    total += seen[key][0]
                    if count is not None:
                        count += seen[key][1]
                if ranked:
                    group_mask |= seen[key][1]
                else:
                    group_mask &= seen[key][1]
            matched |= group_mask
        if count is not None and len(seen) > 1:
            total *= (1 - COORDINATION) + COORDINATION * count / len(seen)
        if seen:
            total *= np.where(self.docs("facets", [facet("status", "draft")]),
                             np.float32(DRAFT_WEIGHT), np.float32(1.0))
        for unit in query.excluded:
            matched &= ~self.unit(unit)[1]
        matched &= self.alive
        if allowed is not None:
            matched &= allowed
        if query.empty:  # filters alone: every case that passes them, newest first
            matched = self.alive.copy() if allowed is None else self.alive & allowed
        candidates = np.flatnonzero(matched)
        hits = len(candidates)
        if hits > limit:
            best = np.argpartition(-total[candidates], limit - 1)[:limit]
            candidates = candidates[best]
        order = sorted(candidates.tolist(), key=lambda d: (-float(total[d]), d))
        return [(d, float(total[d])) for d in order[:limit]], hits

    def filter_mask(self, filters: SearchFilters | None) -> Any:
        if filters is None:
            return None
        conditions: list[list[str]] = []  # each: the facets of which a case needs one
        if filters.component:
            conditions.append([facet("component", filters.component)])
        if filters.rail is not None:
            conditions.append([facet("rail", str(int(filters.rail)))])
        if filters.node:
            conditions.append([facet("node", filters.node)])
        if filters.tag:
            conditions.append([facet("tag", filters.tag)])
        if filters.severity:
            conditions.append([facet("severity", filters.severity)])
        if filters.status:
            conditions.append([facet("status", filters.status)])
        if filters.since or filters.until:
            since = "opened:" + (filters.since or "0000")[:10]
            until = "opened:" + (filters.until or "9999")[:10]
            reader = self.searcher.reader()
            conditions.append([d for d in reader.field_terms("facets")
                               if d.startswith("opened:") and since <= d <= until])
        if not conditions:
            return None
        mask = np.ones(self.n, dtype=bool)
        for values in conditions:
            mask &= self.docs("facets", values)
        return mask
