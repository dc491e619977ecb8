"""The case library as the workspace uses it: import, read, search, file, complete, match,
export and reindex, over the SQLite store and the search index derived from it.

Everything stored goes through `mask` first (the site's redaction: secrets never reach a case,
whether imported or filed). The search index (fabtui/cases/index/, the only package that knows
whoosh) is always rebuilt from the store when missing, corrupt or stale (its generation differs
from the store's), so it is never the only copy of anything; a write updates it in place when it
was current just before that write, and leaves it for the next search to rebuild otherwise.

A `CaseLibrary` may be used from several threads (the app searches in workers while the screen
opens a case): its index is one object that two threads must not use at once, so every public
call holds the library's own lock (`warm` holds it one step at a time).
"""

from __future__ import annotations

import builtins
import contextlib
import difflib
import functools
import importlib
import importlib.util
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from pydantic import ValidationError

from fabtui.cases.components import Locate
from fabtui.cases.filing import SessionRecord, case_id_for, draft_incident
from fabtui.cases.markdown import case_file_name, parse_case, write_case
from fabtui.cases.similar import Similar, similar_cases
from fabtui.cases.store import CaseRow, CaseStore, ImportReport, is_damage, store_path
from fabtui.cases.to_index import index_fields
from fabtui.errors import InputError, RequestError
from fabtui.model.case import Case, CaseStatus, Severity
from fabtui.paths import make_output_folder, write_output

Mask = Callable[[str], str]
_DONE = object()
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _exclusive(method: Callable[Concatenate[CaseLibrary, _P], _R]
               ) -> Callable[Concatenate[CaseLibrary, _P], _R]:
    """`method` run holding the library's lock (see the module docstring); a damaged store
    found on the way is an `InputError` saying so (`CaseStore.damaged`)."""
    @functools.wraps(method)
    def locked(self: CaseLibrary, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.DatabaseError as exc:
                if not is_damage(exc):
                    raise
                raise self.store.damaged(exc) from None

    return locked


class Hit(Protocol):
    """What the index returns for one case (see fabtui/cases/index/)."""

    id: str
    title: str
    score: float
    snippet: str
    highlights: list[tuple[int, int]]
    matched: dict[str, list[str]]


class SearchResult(Protocol):
    """What a search returns (read only: an index's own result class, with a list of its own
    hits, fits)."""

    @property
    def hits(self) -> Sequence[Hit]: ...
    @property
    def total(self) -> int: ...
    @property
    def suggestion(self) -> str | None: ...
    note: str | None
    """Set by the library when the hits are not the index's full answer (see `search`)."""
    @property
    def unknown(self) -> Sequence[tuple[str, str | None]]: ...


class Index(Protocol):
    """The index API the library calls (built in fabtui/cases/index/)."""

    def ensure(self, docs: Callable[[], Iterable[Any]], generation: str) -> bool: ...
    def state(self, generation: str) -> str: ...
    def building(self) -> bool: ...
    def upsert(self, docs: Iterable[Any], generation: str) -> None: ...
    def delete(self, ids: Iterable[str], generation: str) -> None: ...
    def search(self, query: str, filters: Any = None, limit: int = 10) -> SearchResult: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class IndexEngine:
    """The index's classes: `CaseIndex`, `IndexDoc` and `SearchFilters`."""

    index: Callable[[Path], Index]
    doc: Callable[..., Any]
    filters: Callable[..., Any]


def default_engine() -> IndexEngine | None:
    """The shipped index (fabtui.cases.index), or None when this build has none."""
    if importlib.util.find_spec("fabtui.cases.index") is None:
        return None
    module = importlib.import_module("fabtui.cases.index")
    document = module
    if not hasattr(module, "IndexDoc"):
        document = importlib.import_module("fabtui.cases.document")
    filters = getattr(module, "SearchFilters", None) or document.SearchFilters
    return IndexEngine(index=module.CaseIndex, doc=document.IndexDoc, filters=filters)


def case_files(paths: Iterable[Path], *, missing_ok: bool = False) -> list[Path]:
    """The case files named: files as given, folders' `*.md` (not README.md), sorted."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.glob("*.md") if p.name.lower() != "readme.md")
        elif path.is_file():
            files.append(path)
        elif not missing_ok:
            raise RequestError(f"{path}: no such file or folder")
    return files


BACKGROUND_FROM = 2000
"""From this many cases a missing or stale index is rebuilt in the background (~1.5 ms a case)
while searches answer from the previous one: a search never waits minutes after an import."""


def _quietly(build: Callable[[], None]) -> Callable[[], None]:
    """`build`, its failure dropped: a later search finds the index still stale and asks
    again (an unreadable store is reported by that search, in its own words)."""
    def run() -> None:
        with contextlib.suppress(Exception):
            build()

    return run


def _detach_stdio() -> None:
    """Standard streams to /dev/null: the background builder writes nothing to a terminal the
    user has moved on in, and holds no pipe of the command that started it open."""
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)


class CaseLibrary:
    """The case library of one data folder (see the module docstring)."""

    def __init__(self, data_dir: Path, case_dirs: Sequence[Path] = (), *,
                 mask: Mask | None = None, locate: Locate | None = None,
                 engine: IndexEngine | bool | None = True,
                 label: Callable[[Path], str] = str) -> None:
        """Open (creating) the store in `data_dir`. `engine`: True for the shipped index,
        None/False for none (search then refuses; similar uses structured matching only)."""
        self.data_dir = data_dir
        self.case_dirs = tuple(case_dirs)
        self.mask = mask
        self.locate = locate
        self.label = label
        self.store = CaseStore(store_path(data_dir), locate)
        self.index_dir = data_dir / "case-index"
        self._engine = default_engine() if engine is True else engine or None
        self._index: Index | None = None
        self._lock = threading.RLock()
        self.indexing_in_background = False
        """Whether a write of this library started a background rebuild of the index."""

    @_exclusive
    def close(self) -> None:
        """Close the store and the index (both reopen if used again)."""
        if self._index is not None:
            self._index.close()
            self._index = None
        self.store.close()

    # writing ----------------------------------------------------------------------------------
    def masked(self, case: Case) -> Case:
        """`case` with every secret masked (its id and source file aside)."""
        if self.mask is None:
            return case
        mask = self.mask

        def scrub(value: Any) -> Any:
            if isinstance(value, str):
                return mask(value)
            if isinstance(value, dict):
                return {k: scrub(v) for k, v in value.items()}
            if isinstance(value, list):
                return [scrub(v) for v in value]
            return value

        data = case.model_dump(mode="json")
        cleaned = {k: v if k in ("id", "source") else scrub(v) for k, v in data.items()}
        return Case.model_validate(cleaned) if cleaned != data else case

    @_exclusive
    def put(self, case: Case) -> Case:
        """Store `case` (masked) and update the index; returns the case as stored."""
        case = self.masked(case)
        if self.store.put(case):
            self._after_write([case])
        return case

    @_exclusive
    def sync(self) -> ImportReport:
        """Import the configured case folders (the shipped `cases/` among them): new and
        edited files only, so a library already in step costs a hash per file. A case whose
        file was removed from one of those folders is removed too (the file was its truth);
        cases imported from elsewhere or filed here are never touched.

        What looks like a removal is not always one, so a sync removes nothing from a folder
        that is missing, unreadable or holds no case file at all (a share not mounted, a
        checkout half switched: its cases are kept, and said to be), and never a case changed
        here since its file was imported (`cases complete`): its file no longer holds all of
        it. Such a case is not overwritten by an edited file either (`keep_edited`)."""
        files = case_files(self.case_dirs, missing_ok=True)
        report = self._import(files, keep_edited=True)
        folders = {d.resolve(): d for d in self.case_dirs}
        present = {str(f.resolve()) for f in files}
        live = {Path(path).parent for path in present}
        gone: dict[str, str] = {}
        held: dict[Path, list[str]] = {}
        for path, case_id in self.store.sources().items():
            folder = Path(path).parent
            if path in present or folder not in folders or Path(path).exists():
                continue
            if folder in live:
                gone[case_id] = path
            else:
                held.setdefault(folder, []).append(case_id)
        for folder, ids in held.items():
            report.notes.append(f"case folder {self.label(folders[folder])} is missing or "
                                f"holds no case file: its {len(ids)} case"
                                f"{'s are' if len(ids) != 1 else ' is'} kept until it does")
        edited = self.store.edited(gone)
        for case_id in sorted(edited):
            report.notes.append(f"case {case_id!r} was completed or changed here, and its file "
                                f"{self.label(Path(gone[case_id]))} is gone: kept (fabtui cases "
                                f"export --id {case_id} writes it back to a file)")
        stored = {case_id: self.store.get(case_id) for case_id in gone if case_id not in edited}
        report.removed = self.delete([case_id for case_id, case in stored.items()
                                      if case is not None and case.source is not None
                                      and case.source not in present
                                      and Path(case.source).parent in live])
        if report.removed:
            shown = ", ".join(report.removed[:5]) + (" ..." if len(report.removed) > 5 else "")
            report.notes.append(f"removed {len(report.removed)} case"
                                f"{'s' if len(report.removed) != 1 else ''} whose file left "
                                f"its case folder: {shown}")
        return report

    @_exclusive
    def import_paths(self, paths: Sequence[Path]) -> ImportReport:
        """Import case files and folders. Raises `RequestError` for a path that does not
        exist; a file that fails is in the report's `problems`, the others are imported."""
        return self._import(case_files(paths))

    def _import(self, files: list[Path], *, keep_edited: bool = False) -> ImportReport:
        labelled = [(path, self.label(path)) for path in files]
        by_label = {label: path for path, label in labelled}

        def parse(text: str, label: str) -> Case:
            case = parse_case(text, label)
            # Stored by the file's absolute path, so the working folder does not change it.
            return case.model_copy(update={"source": str(by_label[label].resolve())})

        report = self.store.import_files(labelled, parse, self.masked,
                                         keep_edited=keep_edited)
        if report.changed:
            self._after_write(report.changed)
        return report

    def _after_write(self, changed: list[Case]) -> None:
        """Bring the index up to the store, if it is in use (else the next search builds it).
        After a write of `BACKGROUND_FROM` cases or more (an import) it is rebuilt in the
        background instead (`indexing_in_background` set), whether in use or not."""
        if self._engine is None:
            return
        if len(changed) >= BACKGROUND_FROM:
            if not self._open_index().building():
                self._rebuild_in_background()
            self.indexing_in_background = True
            return
        if self._index is None and not self.index_dir.exists():
            return
        before, after = self.store.last_write or ("", self.store.generation())
        index = self._open_index()
        index.ensure(self._all_docs, before)
        index.upsert([self._doc(c) for c in changed], after)

    def file_session(self, record: SessionRecord) -> Case:
        """A draft case from one session, stored (`file_incident` of it alone)."""
        return self.file_incident([record])

    @_exclusive
    def file_incident(self, records: Sequence[SessionRecord]) -> Case:
        """A draft case from the sessions of one incident (first to last), stored under the
        first session's case id. Filing again replaces the draft (a repair filed after its
        triage replaces the triage's draft, now spanning both); a case already completed
        from it is refused (`RequestError`)."""
        first = records[0]
        existing = self.store.get(case_id_for(first.id))
        if existing is not None and existing.status is not CaseStatus.DRAFT:
            raise RequestError(f"session {first.id} was filed as {existing.id}, which is "
                               f"{existing.status.value} now; edit it with `fabtui cases "
                               "export`, then `fabtui cases import`")
        return self.put(draft_incident(records))

    @_exclusive
    def complete(self, case_id: str, *, root_cause: str | None = None,
                 resolution: str | None = None, status: CaseStatus | None = None,
                 severity: Severity | None = None, title: str | None = None) -> Case:
        """Write what the operator found into a case (a draft becomes resolved once it has a
        root cause). Raises `RequestError` for an unknown case, `InputError` for a resolved
        case without a root cause."""
        case = self.get(case_id)
        update: dict[str, Any] = {k: v for k, v in (("root_cause", root_cause),
                                                    ("resolution", resolution),
                                                    ("severity", severity),
                                                    ("title", title)) if v is not None}
        cause = root_cause if root_cause is not None else case.root_cause
        update["status"] = status or (CaseStatus.RESOLVED if cause.strip() else case.status)
        try:
            completed = Case.model_validate({**case.model_dump(), **update})
        except ValidationError as exc:
            message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise InputError.single(case_id, None, message) from None
        return self.put(completed)

    @_exclusive
    def delete(self, case_ids: Iterable[str]) -> list[str]:
        """Remove cases from the store and the index; returns those removed."""
        removed = self.store.delete(case_ids)
        if removed and self._engine is not None and \
                (self._index is not None or self.index_dir.exists()):
            before, after = self.store.last_write or ("", self.store.generation())
            index = self._open_index()
            index.ensure(self._all_docs, before)
            index.delete(removed, after)
        return removed

    # reading ----------------------------------------------------------------------------------
    @_exclusive
    def has(self, case_id: str) -> bool:
        """True when `case_id` is stored (a session's draft is not, until filed)."""
        return self.store.exists(case_id)

    @_exclusive
    def get(self, case_id: str) -> Case:
        """The case `case_id`. Raises `RequestError` (with close ids) when there is none."""
        case = self.store.get(case_id)
        if case is None:
            close = difflib.get_close_matches(case_id, self.store.ids(), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else \
                "; `fabtui cases search` finds cases"
            raise RequestError(f"no case {case_id!r}{hint}")
        return case

    @_exclusive
    def list(self, *, status: str | None = None, limit: int | None = None) -> list[CaseRow]:
        """Cases for listings, most recently changed first."""
        return self.store.rows(status=status, limit=limit)

    def cases(self) -> Iterator[Case]:
        """Every stored case, in id order."""
        return self.store.all()

    # the index --------------------------------------------------------------------------------
    def _doc(self, case: Case) -> Any:
        assert self._engine is not None
        return self._engine.doc(**index_fields(case, self.locate))

    def _all_docs(self) -> Iterator[Any]:
        return (self._doc(case) for case in self.store.all())

    def _open_index(self) -> Index:
        if self._engine is None:
            raise RequestError("this fabtui has no case index (fabtui.cases.index): search "
                               "is not available")
        if self._index is None:
            self._index = self._engine.index(self.index_dir)
        return self._index

    def _fresh_index(self) -> Index:
        index = self._open_index()
        index.ensure(self._all_docs, self.store.generation())
        return index

    @_exclusive
    def search(self, /, query: str, *, limit: int = 10, **filters: Any) -> SearchResult:
        """Cases matching `query`, best first (filters: component, rail, node, tag, severity,
        status, since, until). A missing or stale index is rebuilt first, unless the library
        holds `BACKGROUND_FROM` cases or more: then it is rebuilt in the background (a minute
        or more at 100,000 cases) and this search answers from the previous index, or by a
        plain word match where there is none, its `note` saying so."""
        index = self._open_index()
        assert self._engine is not None
        generation = self.store.generation()
        note = None
        state = index.state(generation)
        if state != "current":
            count = self.store.count()
            if count < BACKGROUND_FROM and not index.building():
                index.ensure(self._all_docs, generation)
            else:
                if not index.building():
                    self._rebuild_in_background()
                if state == "missing":
                    return self._plain_search(query, limit, count, filtered=any(
                        v is not None for v in filters.values()))
                note = (f"the case index is being rebuilt from {count:,} cases in the "
                        "background: these results come from the previous index and may "
                        "miss the latest changes")
        given = {k: v for k, v in filters.items() if v is not None}
        chosen = self._engine.filters(**given) if given else None
        if note is None:
            return index.search(query, chosen, limit)
        try:
            result = index.search(query, chosen, limit)
        except Exception:  # the previous index is unreadable too: the plain match answers
            return self._plain_search(query, limit, self.store.count(), filtered=bool(given))
        result.note = note
        return result

    def _plain_search(self, query: str, limit: int, count: int, *, filtered: bool) \
            -> SearchResult:
        """While the first index is built: cases whose stored text holds the most of the
        query's words (case-insensitive), most recently changed first; no ranking, stemming
        or English-Chinese folding, and filters are not applied, which the note says."""
        from fabtui.cases.document import Hit
        from fabtui.cases.document import SearchResult as Result

        words = [w for w in query.replace('"', " ").split() if w not in ("AND", "OR", "NOT")]
        rows = self.store.containing(words, limit)
        hits = [Hit(case_id, title, float(matched), "") for case_id, title, matched in rows]
        note = (f"the case index is being built from {count:,} cases in the background; "
                "until it is ready, a plain word match answers (no ranking"
                + (", filters not applied" if filtered else "") + ")")
        return Result(hits, len(hits), None, note=note)

    def _rebuild_in_background(self) -> None:
        """Build the index from the store without making this caller wait: in a process of its
        own (detached, so it finishes after a CLI command has exited) where this process runs
        no other thread, else (the app) in a thread. Each uses its own store connection and
        index; the index's write lock keeps a second builder from starting meanwhile."""
        def build() -> None:
            library = CaseLibrary(self.data_dir, self.case_dirs, mask=self.mask,
                                  locate=self.locate, engine=self._engine)
            try:
                library._fresh_index()
            finally:
                library.close()

        if threading.active_count() > 1:
            threading.Thread(target=_quietly(build), name="case-index", daemon=True).start()
            return
        child = os.fork()
        if child:
            os.waitpid(child, 0)  # the first child exits at once (no zombie left)
            return
        try:  # the first child: a new session, then the builder in a grandchild
            os.setsid()
            if os.fork() == 0:
                _detach_stdio()
                _quietly(build)()
        finally:
            os._exit(0)

    def warm(self) -> Iterator[None]:
        """Step by step, what the first searches would pay: bring the index up to the store,
        open it, and whatever else the index warms (`CaseIndex.warm`), so that a search typed
        next answers in a search's time. The caller may stop between steps; nothing without
        an index."""
        if self._engine is None:
            return
        with self._lock:
            index = self._fresh_index()
        yield
        steps = getattr(index, "warm", None)
        if steps is None:
            return
        remaining = steps()
        while True:
            with self._lock:
                if self._index is not index:  # closed or rebuilt meanwhile: nothing to warm
                    return
                if next(remaining, _DONE) is _DONE:
                    return
            yield

    @_exclusive
    def reindex(self) -> int:
        """Rebuild the index from the store, whatever state it is in; returns the cases."""
        if self._index is not None:
            self._index.close()
            self._index = None
        if self.index_dir.exists():
            import shutil

            shutil.rmtree(self.index_dir)
        self._fresh_index()
        return self.store.count()

    @_exclusive
    def similar(self, case: Case, limit: int = 5) -> Similar:
        """Past cases like `case` (a stored one, or a session's draft not stored)."""
        search = None
        if self._engine is not None:
            index = self._fresh_index()

            def search(query: str, n: int) -> list[tuple[str, float, dict[str, list[str]]]]:
                result = index.search(query, None, n)
                return [(h.id, h.score, dict(h.matched)) for h in result.hits]

        return similar_cases(self.masked(case), self.store, search=search,
                             locate=self.locate, limit=limit)

    # export and figures -----------------------------------------------------------------------
    @_exclusive
    def export(self, out_dir: Path,
               ids: Sequence[str] = ()) -> tuple[builtins.list[Path], int]:
        """Write one markdown file per case (or per case of `ids`) into `out_dir`: the files
        and how many were written (a file already holding the same text is left alone).

        From a damaged store, every case that still reads is written, then an `InputError`
        names those that did not."""
        make_output_folder(out_dir)  # a folder that cannot be made: a RequestError, said
        paths: builtins.list[Path] = []
        written = 0
        unreadable: builtins.list[tuple[str, sqlite3.DatabaseError]] = []
        for case_id in ids or self.store.ids():
            try:
                found = self.store.get(case_id)
            except sqlite3.DatabaseError as exc:
                if not is_damage(exc):
                    raise
                unreadable.append((case_id, exc))
                continue
            case = found if found is not None else self.get(case_id)  # no such case: says so
            path = out_dir / case_file_name(case)
            text = write_case(case)
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                write_output(path, text)  # atomic; a planted symlink is never followed
                written += 1
            paths.append(path)
        if unreadable:
            names = ", ".join(i for i, _ in unreadable[:5]) + (" ..." if len(unreadable) > 5
                                                               else "")
            raise InputError.single(str(self.store.path), None, f"the case store is damaged "
                                    f"({unreadable[0][1]}): {len(unreadable)} case"
                                    f"{'s' if len(unreadable) != 1 else ''} did not read "
                                    f"({names}); the {len(paths)} others are in {out_dir}. "
                                    "Move the store away, then `fabtui cases import "
                                    f"{out_dir}` rebuilds the library")
        return paths, written

    @_exclusive
    def stats(self) -> dict[str, Any]:
        """How many cases, by status, severity, symptom class and language; where they are."""
        return {"cases": self.store.count(), "status": self.store.counts("status"),
                "severity": self.store.counts("severity"),
                "symptom_class": self.store.counts("symptom_class"),
                "lang": self.store.counts("lang"), "generation": self.store.generation(),
                "store": str(self.store.path), "index": str(self.index_dir),
                "index_available": self._engine is not None}
