"""The case library's full-text index: whoosh behind one small class, derived from SQLite.

This is the only module that imports whoosh (an import-linter contract holds it to that), so
a maintained fork or another engine can replace it by reimplementing `CaseIndex`.

Layout on disk, all under `directory`:

    CURRENT        the name of the live index folder (replaced atomically after a rebuild)
    ix-<...>/      one whoosh index, plus GENERATION: the schema version and the store
                   generation it was built from
    .write.lock    an flock held by whoever writes (a rebuild, an upsert, a delete)

A rebuild writes a new folder and only then swaps CURRENT, so a rebuild killed half-way leaves
the previous index (stale) or none, and `ensure` rebuilds either. Readers never lock: they read
CURRENT, keep one searcher open, and refresh it only when the index changed. Nothing here is the
only copy of anything; every error reading the index means "rebuild it".
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from math import log
from pathlib import Path
from typing import Any

import numpy as np
from whoosh import fields as wf
from whoosh import index as windex
from whoosh import query as wq
from whoosh.analysis import Token as WToken
from whoosh.analysis import Tokenizer

from fabtui.cases.analysis import analyze, fold, stem
from fabtui.cases.document import Hit, IndexDoc, SearchFilters, SearchResult
from fabtui.cases.query import Plan, Unit, plan
from fabtui.cases.snippets import TEXT_FIELDS, explain, needles_of

# Bump when the schema or the analyzer changes: every stored index then reads as stale.
# The boosts are part of it because they are applied when a case is indexed.
SCHEMA_VERSION = "5"

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
K1, B = 1.2, 0.75  # BM25's usual saturation and length normalization
COORDINATION = 0.3  # a ranked query favours cases that match more of its words
PREFIX_TERMS = 48  # the most frequent completions a prefix expands to
PREFIX_WEIGHT = 0.8
POSTINGS_CACHE = 4_000_000  # decoded postings kept between searches (about 48 MB)
WARM_TERMS = 100  # the most frequent terms `warm` decodes (~2 ms each at 10,000 cases)


class CaseIndexError(Exception):
    """The index is missing or unreadable: call `ensure` (it rebuilds from the store)."""


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
    """whoosh's view of `fabtui.cases.analysis.analyze`."""

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
            for tok in analyze(text):
                token.text = tok.text
                token.boost = boost
                token.stopped = False
                if keeporiginal:
                    token.original = tok.text
                if positions:
                    token.pos = last = base + tok.pos
                if chars:
                    token.startchar = start_char + tok.start
                    token.endchar = start_char + tok.end
                yield token
            base = last + SECTION_GAP  # no phrase runs from one section into the next


def _schema() -> Any:
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


def _facet(kind: str, value: str) -> str:
    return f"{kind}:{value.strip().lower().replace(',', ' ')}"


def _facets(doc: IndexDoc) -> list[str]:
    facets = [_facet("component", c) for c in _component_keys(doc.components)]
    facets += [_facet("rail", str(r)) for r in doc.rails]
    facets += [_facet("node", n) for n in doc.nodes]
    facets += [_facet("tag", t) for t in doc.tags]
    facets.append(_facet("status", doc.status))
    if doc.severity:
        facets.append(_facet("severity", doc.severity))
    if doc.opened:
        facets.append(_facet("opened", doc.opened[:10]))
    return facets


def _fields(doc: IndexDoc) -> dict[str, Any]:
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


# --- scoring ------------------------------------------------------------------------------
#
# whoosh stores the index; scoring is done here, a term at a time over whole posting lists
# decoded into numpy arrays. whoosh's own matchers walk postings one by one in Python, which
# measured 50-150 ms per query at 10,000 cases; decoding a block is one unpickle and a cumsum.
# Segments never change once written, so decoded postings are cached by segment id and stay
# valid across refreshes; only deletions (a mask) are re-read.

_CACHE: OrderedDict[tuple[str, str, str], tuple[Any, Any]] = OrderedDict()
_CACHE_SIZE = [0]
_CACHE_LOCK = threading.Lock()  # the caches are shared by every CaseIndex of the process
_LENGTHS: dict[str, Any] = {}


def _leaf_postings(reader: Any, field: str, term: str) -> tuple[Any, Any]:
    """(doc numbers, weights) of `term` in one segment, deleted documents included."""
    segid = reader.segment().segment_id()
    key = (segid, field, term)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
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
    result = (np.concatenate(id_parts), np.concatenate(weight_parts)) if id_parts else empty
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = result
            _CACHE_SIZE[0] += len(result[0])
        while _CACHE_SIZE[0] > POSTINGS_CACHE and len(_CACHE) > 1:
            _, (ids_old, _) = _CACHE.popitem(last=False)
            _CACHE_SIZE[0] -= len(ids_old)
    return result


def _leaf_lengths(reader: Any) -> Any:
    segid = reader.segment().segment_id()
    lengths = _LENGTHS.get(segid)
    if lengths is None:
        lengths = np.fromiter((reader.doc_field_length(i, "text", 0)
                               for i in range(reader.doc_count_all())),
                              dtype=np.float32, count=reader.doc_count_all())
        _LENGTHS[segid] = lengths
    return lengths


class _Scorer:
    """BM25 over the one weighted `text` field (so BM25F), for one open searcher."""

    def __init__(self, searcher: Any) -> None:
        self.searcher = searcher
        self.leaves = [(r, base) for r, base in searcher.reader().leaf_readers()]
        self.n = sum(r.doc_count_all() for r, _ in self.leaves)
        self.lengths = (np.concatenate([_leaf_lengths(r) for r, _ in self.leaves])
                        if self.leaves else np.zeros(0, np.float32))
        current = {r.segment().segment_id() for r, _ in self.leaves}
        for segid in [s for s in _LENGTHS if s not in current]:
            del _LENGTHS[segid]  # merged away (another open index only pays a re-read)
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
            return _leaf_postings(self.leaves[0][0], field, term)
        ids, weights = [], []
        for reader, base in self.leaves:
            i, w = _leaf_postings(reader, field, term)
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
            conditions.append([_facet("component", filters.component)])
        if filters.rail is not None:
            conditions.append([_facet("rail", str(int(filters.rail)))])
        if filters.node:
            conditions.append([_facet("node", filters.node)])
        if filters.tag:
            conditions.append([_facet("tag", filters.tag)])
        if filters.severity:
            conditions.append([_facet("severity", filters.severity)])
        if filters.status:
            conditions.append([_facet("status", filters.status)])
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




class CaseIndex:
    """The search index in `directory` (created on demand). One instance per thread; any
    number of processes may read while one writes."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._ix: Any = None
        self._name: str | None = None
        self._searcher: Any = None
        self._scorer: _Scorer | None = None

    # -- state on disk

    def _current(self) -> str | None:
        try:
            name = (self.directory / "CURRENT").read_text().strip()
        except OSError:
            return None
        return name if re.fullmatch(r"ix-[A-Za-z0-9_-]+", name) else None

    def _stored_generation(self, name: str) -> str | None:
        try:
            text = (self.directory / name / "GENERATION").read_text()
        except OSError:
            return None
        version, _, generation = text.partition("\n")
        return generation if version == SCHEMA_VERSION else None

    @contextlib.contextmanager
    def _write_lock(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".write.lock", "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # released by the kernel on kill -9
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _healthy(self, generation: str) -> bool:
        name = self._current()
        if name is None or self._stored_generation(name) != generation:
            return False
        if self._ix is not None and name == self._name:
            # This instance already opened and read that folder: checking it again would cost
            # a whoosh open per search (15-30 ms, most of an as-you-type keystroke). A failure
            # to read it later still condemns it (`search`).
            return True
        try:
            ix = windex.open_dir(str(self.directory / name))
            with ix.searcher() as searcher:
                count = searcher.doc_count()
                searcher.doc_frequency("text", "x")
                if count:
                    searcher.stored_fields(0)
            ix.close()
        except Exception:  # any failure to read a derived index means: rebuild it
            return False
        return True

    def _condemn(self) -> None:
        """Mark the live index stale after it failed to read, so the next `ensure` rebuilds it
        even where the damage is deeper than `_healthy` looks."""
        name = self._current()
        if name is not None:
            with contextlib.suppress(OSError):
                (self.directory / name / "GENERATION").unlink()

    def _write_generation(self, name: str, generation: str) -> None:
        target = self.directory / name / "GENERATION"
        tmp = target.with_suffix(".tmp")
        with open(tmp, "w") as out:
            out.write(f"{SCHEMA_VERSION}\n{generation}")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)

    # -- writing

    def ensure(self, docs: Callable[[], Iterable[IndexDoc]], generation: str) -> bool:
        """Rebuild from `docs()` when the index is missing, unreadable or not built from
        `generation`; True when it rebuilt. Safe to call from several processes at once: one
        rebuilds, the others wait for it and then find the index current."""
        if self._healthy(generation):
            return False
        with self._write_lock():
            if self._healthy(generation):
                return False
            self._rebuild(docs(), generation)
        return True

    def rebuild(self, docs: Iterable[IndexDoc], generation: str) -> None:
        """A full reindex, whatever state the index is in."""
        with self._write_lock():
            self._rebuild(docs, generation)

    def _rebuild(self, docs: Iterable[IndexDoc], generation: str) -> None:
        name = f"ix-{int(time.time() * 1000)}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        path = self.directory / name
        path.mkdir(parents=True)
        try:
            ix = windex.create_in(str(path), _schema())
            writer = ix.writer(limitmb=256)
            try:
                for doc in docs:
                    writer.add_document(**_fields(doc))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            ix.close()
            self._write_generation(name, generation)
            tmp = self.directory / "CURRENT.tmp"
            tmp.write_text(name)
            os.replace(tmp, self.directory / "CURRENT")
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
        for old in self.directory.glob("ix-*"):
            if old.name != name:  # readers holding it open keep their files (POSIX unlink)
                shutil.rmtree(old, ignore_errors=True)

    def _writable(self) -> tuple[Any, str] | None:
        name = self._current()
        if name is None or self._stored_generation(name) is None:
            return None
        try:
            return windex.open_dir(str(self.directory / name)), name
        except Exception:
            return None

    def upsert(self, docs: Iterable[IndexDoc], generation: str) -> None:
        """Add or replace cases in a new small segment and record `generation`. On a missing
        or unreadable index it does nothing: the next `ensure` rebuilds from the store."""
        self._change(lambda writer: [writer.update_document(**_fields(doc)) for doc in docs],
                     generation)

    def delete(self, ids: Iterable[str], generation: str) -> None:
        """Remove cases by id and record `generation` (no-op on a missing index)."""
        self._change(lambda writer: [writer.delete_by_term("id", case_id) for case_id in ids],
                     generation)

    def _change(self, apply: Callable[[Any], object], generation: str) -> None:
        """Apply one change to the current index in a new segment, commit it and record
        `generation`; nothing (and no error) on a missing or unreadable index."""
        with self._write_lock():
            opened = self._writable()
            if opened is None:
                return
            ix, name = opened
            writer = ix.writer()
            try:
                apply(writer)
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            ix.close()
            self._write_generation(name, generation)

    # -- reading

    def _open_scorer(self) -> _Scorer:
        name = self._current()
        if name is None:
            raise CaseIndexError(f"{self.directory}: no case index (run `fabtui cases reindex`)")
        if self._searcher is not None and self._scorer is not None and name == self._name:
            if not self._searcher.up_to_date():
                # A fresh searcher, not refresh(): whoosh's refresh reuses the reader of a
                # segment whose deletions changed, and would keep a replaced case visible.
                # Unchanged segments cost little to reopen; their decoded postings are cached.
                self._searcher.close()
                self._searcher = self._ix.searcher()
                self._scorer = _Scorer(self._searcher)
            return self._scorer
        self.close()
        self._ix = windex.open_dir(str(self.directory / name))
        self._name = name
        self._searcher = self._ix.searcher()
        self._scorer = _Scorer(self._searcher)
        return self._scorer

    def warm(self) -> Iterator[None]:
        """Pay, step by step, what the first searches would: open the searcher (its lengths
        and deletions), run the analyzer once, then decode the posting lists of the most
        frequent terms (a first `pfc` or `ncc` decoded thousands of postings). A screen runs
        this before the first keystroke; the caller may stop between steps (each takes some
        tens of ms at 10,000 cases). Raises CaseIndexError when there is no index."""
        scorer = self._open_scorer()
        analyze("warm up 预热")
        yield
        frequent = scorer.searcher.reader().most_frequent_terms("text", number=WARM_TERMS)
        for i, (_, term) in enumerate(frequent):
            if i % 8 == 0:
                yield
            scorer.postings("text", term.decode("utf-8") if isinstance(term, bytes) else term)

    def search(self, query: str, filters: SearchFilters | None = None,
               limit: int = 10) -> SearchResult:
        """The best `limit` cases for `query` (the syntax of `fabtui.cases.query`) that pass
        `filters`; with no searchable word, every case that passes the filters. Raises
        CaseIndexError when the index is missing or unreadable."""
        wanted = plan(query)
        if wanted.empty and filters is None:
            return SearchResult([], 0, None)
        for attempt in (1, 2):
            try:
                return self._run(wanted, filters, query, max(1, limit))
            except CaseIndexError:
                raise
            except Exception as exc:  # a rebuild swapped the folder under us: reopen once
                self.close()
                if attempt == 2:
                    self._condemn()
                    raise CaseIndexError(f"{self.directory}: unreadable case index ({exc})") \
                        from exc
        raise AssertionError("unreachable")

    def _run(self, wanted: Plan, filters: SearchFilters | None, text: str,
             limit: int) -> SearchResult:
        scorer = self._open_scorer()
        if wanted.empty and filters is not None and not wanted.excluded:
            allowed = scorer.filter_mask(filters)
            wanted = Plan([], False)
        else:
            allowed = scorer.filter_mask(filters)
        top, total = scorer.run(wanted, allowed, limit)
        hits: list[Hit] = []
        needles = needles_of(wanted)
        for docnum, score in top:
            stored = scorer.searcher.stored_fields(docnum)
            snippet, spans, matched = explain(stored, wanted, needles)
            hits.append(Hit(stored["id"], stored.get("title", ""), score, snippet, spans,
                            matched))
        return SearchResult(hits, total, self._suggest(scorer, text) if text.strip() else None)

    def _suggest(self, scorer: _Scorer, text: str) -> str | None:
        """The query with each word that matches nothing replaced by the closest, most
        frequent word of the library; None when no word needed it."""
        tokens = analyze(text)
        synonym_pos = {t.pos for t in tokens if t.text.startswith("~")}
        replacements: list[tuple[int, int, str]] = []
        searcher = scorer.searcher
        reader = searcher.reader()
        for tok in tokens:
            surface = text[tok.start:tok.end]
            low = surface.lower()
            if (len(low) < 4 or not low.isascii() or not low.isalpha()
                    or tok.pos in synonym_pos or tok.text.startswith("~")
                    or text[tok.end:tok.end + 1] == "*"):
                continue
            if scorer.frequency(tok.text):
                continue
            maxdist = 1 if len(low) <= 4 else 2
            candidates = [c for c in reader.terms_within("text", tok.text, maxdist, prefix=1)
                          if c != tok.text and c.isalpha()]
            if candidates:
                best = max(candidates, key=lambda c: (searcher.doc_frequency("text", c), c))
                replacements.append((tok.start, tok.end, self._surface(searcher, best)))
        if not replacements:
            return None
        out = text
        for start, end, word in sorted(replacements, reverse=True):
            out = out[:start] + word + out[end:]
        return out

    @staticmethod
    def _surface(searcher: Any, term: str) -> str:
        """A word as a case writes it for the stemmed `term` (`temperatur` -> `temperature`)."""
        for hit in searcher.search(wq.Term("text", term), limit=1):
            stored = hit.fields()
            text = fold(" ".join(str(stored.get(f) or "") for f in TEXT_FIELDS)).lower()
            for m in re.finditer(rf"\b{re.escape(term)}[a-z]*", text):
                if stem(m.group(0)) == term:
                    return m.group(0)
        return term

    def close(self) -> None:
        """Close the open searcher and index (a later search reopens them)."""
        if self._searcher is not None:
            with contextlib.suppress(Exception):
                self._searcher.close()
        if self._ix is not None:
            with contextlib.suppress(Exception):
                self._ix.close()
        self._searcher = self._ix = self._name = self._scorer = None
