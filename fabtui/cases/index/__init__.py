"""The case library's full-text index: whoosh behind one small class, derived from SQLite.

This package is the only code that imports whoosh (an import-linter contract holds it to that),
so a maintained fork or another engine can replace it by reimplementing `CaseIndex`. This module
is the index's lifecycle: storage on disk, the write lock, rebuild and swap, upserts, opening
and refreshing the searcher, and `search`; `_schema` is a case as whoosh stores it, `_scoring`
the BM25F ranking over decoded postings.

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
import itertools
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from whoosh import index as windex
from whoosh import query as wq
from whoosh.filedb.filestore import FileStorage

from fabtui.cases.document import Hit, IndexDoc, SearchFilters, SearchResult
from fabtui.cases.index._decoded import DecodedStore
from fabtui.cases.index._schema import SCHEMA_VERSION, fields, schema
from fabtui.cases.index._scoring import Scorer
from fabtui.cases.query import Plan, plan
from fabtui.cases.snippets import TEXT_FIELDS, explain, needles_of
from fabtui.lexicon.analysis import analyze, stem
from fabtui.lexicon.fold import fold
from fabtui.paths import write_file

WARM_TERMS = 100  # the most frequent terms `warm` decodes (~2 ms each at 10,000 cases)
PARALLEL_FROM = 2000
"""Cases from which a rebuild tokenizes in one worker process per CPU (when this process runs
no other thread: forking beside threads can inherit a lock another thread held)."""


def _workers() -> int:
    if threading.active_count() > 1:
        return 1
    return max(1, min(os.cpu_count() or 1, 4))


def _peek(docs: Iterable[IndexDoc], count: int) -> tuple[list[IndexDoc], Iterator[IndexDoc]]:
    """The first `count` docs as a list, and an iterator over the rest."""
    rest = iter(docs)
    return list(itertools.islice(rest, count)), rest


class CaseIndexError(Exception):
    """The index is missing or unreadable: call `ensure` (it rebuilds from the store)."""

class CaseIndex:
    """The search index in `directory` (created on demand). One instance per thread; any
    number of processes may read while one writes."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._ix: Any = None
        self._name: str | None = None
        self._searcher: Any = None
        self._scorer: Scorer | None = None
        self._decoded: DecodedStore | None = None

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

    def _open_whoosh(self, name: str) -> Any:
        """The whoosh index in folder `name`, opened for reading with its files read as they
        are needed, not mapped: whoosh copies each mapped part of a segment whole into a
        BytesIO when it opens it (`BufferFile`), a cost that grows with the index and that
        every CLI search pays twice (the health check's open and the search's), from a new
        process (10,000 cases: a cold search 48 -> 33 ms; warm searches alike)."""
        return FileStorage(str(self.directory / name), supports_mmap=False).open_index()

    def _healthy(self, generation: str) -> bool:
        name = self._current()
        if name is None or self._stored_generation(name) != generation:
            return False
        if self._ix is not None and name == self._name:
            # This instance already opened and read that folder: checking it again would cost
            # a whoosh open per search (15-30 ms, most of an as-you-type keystroke). A failure
            # to read it later still condemns it (`search`).
            return True
        ix = searcher = None
        try:
            ix = self._open_whoosh(name)
            searcher = ix.searcher()
            count = searcher.doc_count()
            searcher.doc_frequency("text", "x")
            if count:
                searcher.stored_fields(0)
        except Exception:  # any failure to read a derived index means: rebuild it
            for opened in (searcher, ix):
                if opened is not None:
                    with contextlib.suppress(Exception):
                        opened.close()
            return False
        # Kept open for the search that usually follows (a CLI search is a new process: a
        # second open of the same folder cost ~3 ms of its ~25 at 10,000 cases).
        self.close()
        self._ix, self._name, self._searcher = ix, name, searcher
        self._decoded = DecodedStore(self.directory / name / "decoded")
        return True

    def _condemn(self) -> None:
        """Mark the live index stale after it failed to read, so the next `ensure` rebuilds it
        even where the damage is deeper than `_healthy` looks."""
        name = self._current()
        if name is not None:
            with contextlib.suppress(OSError):
                (self.directory / name / "GENERATION").unlink()

    def _write_generation(self, name: str, generation: str) -> None:
        write_file(self.directory / name / "GENERATION", f"{SCHEMA_VERSION}\n{generation}",
                   durable=True)

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

    def state(self, generation: str) -> str:
        """Without waiting: `current` (built from `generation`), `stale` (an older index is
        there to answer from) or `missing`."""
        if self._healthy(generation):
            return "current"
        name = self._current()
        return "stale" if name is not None and (self.directory / name).is_dir() else "missing"

    def building(self) -> bool:
        """Whether a writer (a rebuild under way) holds the write lock now; never waits."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".write.lock", "a+") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False

    def rebuild(self, docs: Iterable[IndexDoc], generation: str) -> None:
        """A full reindex, whatever state the index is in."""
        with self._write_lock():
            self._rebuild(docs, generation)

    def _rebuild(self, docs: Iterable[IndexDoc], generation: str) -> None:
        name = f"ix-{int(time.time() * 1000)}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        path = self.directory / name
        path.mkdir(parents=True)
        try:
            ix = windex.create_in(str(path), schema())
            head, rest = _peek(docs, PARALLEL_FROM)
            procs = _workers() if len(head) >= PARALLEL_FROM else 1
            # Tokenizing is most of a rebuild's time (~60 %): whoosh's writer spreads it over
            # one process per CPU, each writing its own segment (searched as one index).
            writer = ix.writer(limitmb=256) if procs == 1 else \
                ix.writer(limitmb=max(64, 256 // procs), procs=procs, multisegment=True)
            try:
                for doc in itertools.chain(head, rest):
                    writer.add_document(**fields(doc))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            ix.close()
            self._write_generation(name, generation)
            write_file(self.directory / "CURRENT", name)
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
        except Exception:  # whoosh's own errors have no common base: unreadable means rebuild
            return None

    def upsert(self, docs: Iterable[IndexDoc], generation: str) -> None:
        """Add or replace cases in a new small segment and record `generation`. On a missing
        or unreadable index it does nothing: the next `ensure` rebuilds from the store."""
        self._change(lambda writer: [writer.update_document(**fields(doc)) for doc in docs],
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

    def _open_scorer(self) -> Scorer:
        name = self._current()
        if name is None:
            raise CaseIndexError(f"{self.directory}: no case index (run `fabtui cases reindex`)")
        if self._searcher is not None and name == self._name:
            if not self._searcher.up_to_date():
                # A fresh searcher, not refresh(): whoosh's refresh reuses the reader of a
                # segment whose deletions changed, and would keep a replaced case visible.
                # Unchanged segments cost little to reopen; their decoded postings are cached.
                self._searcher.close()
                self._searcher = self._ix.searcher()
                self._scorer = None
            if self._scorer is None:  # opened by the health check, not searched yet
                self._scorer = Scorer(self._searcher, self._decoded)
            return self._scorer
        self.close()
        self._ix = self._open_whoosh(name)
        self._name = name
        self._decoded = DecodedStore(self.directory / name / "decoded")
        self._searcher = self._ix.searcher()
        self._scorer = Scorer(self._searcher, self._decoded)
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
        unknown: list[tuple[str, str | None]] = []
        suggestion = self._suggest(scorer, text, unknown) if text.strip() else None
        return SearchResult(hits, total, suggestion, unknown=unknown)

    def _suggest(self, scorer: Scorer, text: str,
                 unknown: list[tuple[str, str | None]] | None = None) -> str | None:
        """The query with each word that matches nothing replaced by the closest, most
        frequent word of the library; None when no word needed it. Each such word, with its
        replacement (None: nothing close), is added to `unknown`."""
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
            word = None
            if candidates:
                best = max(candidates, key=lambda c: (searcher.doc_frequency("text", c), c))
                word = self._surface(searcher, best)
                replacements.append((tok.start, tok.end, word))
            if unknown is not None and all(surface != w for w, _ in unknown):
                unknown.append((surface, word))
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
