"""The case store: SQLite (through sqlite-utils), the source of truth of the case library.

One file in the data folder holds every case as its JSON (the `Case` model), the structured keys
similar-case matching looks up (tags, components, rails, error codes ...), the files cases were
imported from with their content hashes, and a `meta` table whose `generation` grows on every
write: the search index records the generation it was built at and is rebuilt when the two
differ, so the index can always be thrown away.

Several processes may file cases and import files into one data folder at once (the journal
shares the folder): WAL lets readers go on while one writes, every write is one short
`BEGIN IMMEDIATE` transaction (the lock is taken up front, so two writers queue instead of one
failing on upgrade), SQLite's busy timeout waits for the lock, and a retry loop outlasts a long
holder, so "database is locked" never reaches a user. A write is one transaction: a process
killed mid-import or mid-filing leaves the store as it was before that transaction.

Schema versions are `PRAGMA user_version`; `MIGRATIONS[n]` takes a store from n to n + 1, each
step committed with its number, and a store newer than this fabtui is refused, never half-read.

A damaged store is said to be one (`damaged`), never reported as an internal error: a new store
is built under a temporary name and linked into place complete, so an empty (0-byte) file where
the store should be is never one being created, and is refused instead of silently replaced
(whatever emptied it took its cases).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

from fabtui.cases.components import Locate, fingerprint
from fabtui.errors import InputError, Problem
from fabtui.model.case import Case

BUSY_TIMEOUT_S = 10.0
"""How long SQLite itself waits for another process's lock."""
RETRY_FOR_S = 120.0
"""How long a write keeps retrying a lock past the busy timeout before it gives up."""
BATCH = 500
"""Imported cases written per transaction."""


def _v1(db: sqlite_utils.Database) -> None:
    db.table("meta").create({"key": str, "value": str}, pk="key", if_not_exists=True)
    db.table("cases").create({"id": str, "title": str, "status": str, "severity": str,
                        "symptom_class": str, "lang": str, "opened": str, "closed": str,
                        "source": str, "digest": str, "data": str, "created_at": float,
                        "updated_at": float}, pk="id", not_null={"title", "status", "digest",
                                                                 "data"}, if_not_exists=True)
    db.table("case_keys").create({"case_id": str, "kind": str, "value": str},
                           pk=("case_id", "kind", "value"), if_not_exists=True)
    db.table("case_keys").create_index(["kind", "value"], index_name="case_keys_by_value",
                                 if_not_exists=True)
    db.table("sources").create({"path": str, "digest": str, "case_id": str, "imported_at": float},
                         pk="path", if_not_exists=True)
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', ?)",
               [secrets.token_hex(6)])
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('generation', '0')")


def _v2(db: sqlite_utils.Database) -> None:
    db.table("cases").create_index(["updated_at"], index_name="cases_by_update", if_not_exists=True)


MIGRATIONS: tuple[Callable[[sqlite_utils.Database], None], ...] = (_v1, _v2)
"""`MIGRATIONS[n]` takes a store from schema version n to n + 1 (each safe to run again)."""
SCHEMA_VERSION = len(MIGRATIONS)


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_damage(exc: BaseException) -> bool:
    """Whether `exc` says the database file is damaged or is no database (not a lock, a full
    disk or a permission)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name:
        return name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB"
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def _create(path: Path) -> None:
    """A new, empty store at `path`, complete (migrated) before it has that name:
    another process opening it never sees it half made. Nothing when `path` appears meanwhile
    (another process created it first)."""
    fd, temporary = tempfile.mkstemp(prefix=".cases-", suffix=".sqlite", dir=path.parent)
    os.close(fd)
    try:
        conn = sqlite3.connect(temporary, isolation_level=None)
        try:  # a rollback journal: the COMMIT fails, or the file is whole (WAL comes after)
            conn.execute("BEGIN IMMEDIATE")
            db = sqlite_utils.Database(conn, execute_plugins=False)
            for migration in MIGRATIONS:
                migration(db)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        finally:
            conn.close()
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(temporary, path)
    finally:
        for leftover in (temporary, f"{temporary}-wal", f"{temporary}-shm"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)


@dataclass
class ImportReport:
    """What an import did, file by file."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    """Files that could not be imported (the others were)."""
    changed: list[Case] = field(default_factory=list)
    """The cases added or updated, as stored."""
    removed: list[str] = field(default_factory=list)
    """Cases removed because their file left a case folder (`CaseLibrary.sync`)."""
    notes: list[str] = field(default_factory=list)
    """What a sync chose not to do, and why (a missing case folder, a completed case whose
    file is gone): said to the user, as the problems are."""

    @property
    def files(self) -> int:
        return len(self.added) + len(self.updated) + len(self.unchanged)


@dataclass
class _Batch:
    """Rows one write transaction adds, written together."""

    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    keys: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class CaseRow:
    """A case as listings show it, without reading its whole record."""

    id: str
    title: str
    status: str
    severity: str | None
    symptom_class: str
    opened: str | None
    source: str | None
    updated_at: float


def case_digest(case: Case) -> str:
    """A hash of everything a case holds (its source file's name aside)."""
    data = case.model_dump(mode="json", exclude={"source"})
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False)
                          .encode()).hexdigest()[:20]


def case_keys(case: Case, locate: Locate | None = None) -> list[tuple[str, str]]:
    """The (kind, value) keys structured matching looks a case up by."""
    print_ = fingerprint(case.symptom_class.value, case.error_codes, case.components,
                         case.tags, locate)
    keys = {("symptom_class", print_.symptom_class)}
    keys |= {("error_code", c) for c in print_.error_codes}
    keys |= {("kind", k) for k in print_.kinds}
    keys |= {("rail", str(r)) for r in print_.rails}
    keys |= {("node", n) for n in print_.nodes}
    keys |= {("leaf", n) for n in print_.leaves}
    keys |= {("component", c) for c in print_.components}
    keys |= {("tag", t) for t in print_.tags}
    return sorted(keys)


class CaseStore:
    """One case database file (created, or migrated, on first open)."""

    def __init__(self, path: Path, locate: Locate | None = None) -> None:
        """Open `path`. Raises `InputError` for a store written by a newer fabtui.

        `locate` adds the fabric's knowledge (a NIC's rail) to the keys stored with each case.
        """
        self.path = path
        self.locate = locate
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self.last_write: tuple[str, str] | None = None
        """The generations before and after this process's latest write: nothing else
        changed the store in between, so an index at the first only needs that write."""
        try:
            size: int | None = path.stat().st_size
        except FileNotFoundError:
            size = None
        if size == 0:
            raise InputError.single(str(path), None, "empty (0 bytes) where the case store "
                                    "was: whatever emptied it took its cases. Restore it from "
                                    "a backup, or move it away to start a new store (fabtui "
                                    "cases import rebuilds a library from case files)")
        if size is None:
            _create(path)
        try:
            self._retry(lambda: self._conn().execute("PRAGMA journal_mode=WAL"))
            self.migrated_from = self._migrate()
        except sqlite3.DatabaseError as exc:
            self.close()
            if isinstance(exc, sqlite3.OperationalError) and not is_damage(exc):
                raise  # a lock held too long, a full disk, a permission: not the file's fault
            raise InputError.single(str(path), None, f"not a readable case store ({exc}): "
                                    "move it away (fabtui cases import rebuilds a library "
                                    "from case files)") from None
        except BaseException:
            self.close()
            raise

    def damaged(self, exc: BaseException) -> InputError:
        """The one-line error for a store found damaged (`is_damage(exc)`), with what SQLite's
        own check says first."""
        found = ""
        with contextlib.suppress(sqlite3.Error):
            rows = self._conn().execute("PRAGMA quick_check(3)").fetchall()
            found = " ".join("; ".join(str(r[0]) for r in rows if r[0] != "ok").split())
            found = found.removeprefix("*** in database main *** ")[:200]
        return InputError.single(str(self.path), None, f"the case store is damaged ({exc}"
                                 f"{'; ' + found if found else ''}): `fabtui cases export` "
                                 "saves the cases that still read; then move the file away "
                                 "(fabtui cases import rebuilds a library from case files)")

    # connections and transactions -------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if db is None:
            db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            self._local.conn = db
            self._local.db = sqlite_utils.Database(db, execute_plugins=False)
        return db

    @property
    def db(self) -> sqlite_utils.Database:
        """This thread's sqlite-utils view of the store."""
        self._conn()
        database: sqlite_utils.Database = self._local.db
        return database

    def close(self) -> None:
        """Close this thread's connection (the store opens a new one if used again)."""
        db: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if db is not None:
            db.close()
        self._local = threading.local()

    def _retry(self, action: Callable[[], Any]) -> Any:
        """Run `action`, retrying while another process holds the lock (up to RETRY_FOR_S)."""
        deadline = time.monotonic() + RETRY_FOR_S
        pause = 0.01
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite_utils.Database]:
        """One write transaction (taken up front); the generation is bumped inside it when
        the transaction changed anything."""
        conn = self._conn()
        with self._lock:
            self._retry(lambda: conn.execute("BEGIN IMMEDIATE"))
            try:
                before = self.generation()
                changes = conn.total_changes
                yield self.db
                if conn.total_changes != changes:
                    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                                 "WHERE key = 'generation'")
                after = self.generation()
                self._retry(lambda: conn.execute("COMMIT"))
                self.last_write = (before, after)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _migrate(self) -> int:
        conn = self._conn()
        found = self._version()
        self._refuse_newer(found)
        while self._version() < SCHEMA_VERSION:
            self._retry(lambda: conn.execute("BEGIN IMMEDIATE"))
            try:
                current = self._version()
                self._refuse_newer(current)
                if current < SCHEMA_VERSION:
                    MIGRATIONS[current](self.db)
                    conn.execute(f"PRAGMA user_version = {current + 1}")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return found

    def _version(self) -> int:
        return int(self._conn().execute("PRAGMA user_version").fetchone()[0])

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise InputError.single(str(self.path), None, f"this case store has schema version "
                                    f"{version}, newer than this fabtui reads "
                                    f"({SCHEMA_VERSION}): upgrade fabtui, or set data_dir to "
                                    "another folder")

    # reading ----------------------------------------------------------------------------------
    def generation(self) -> str:
        """Changes whenever the store does (unique to this store file: a new file starts anew
        under another id, so an index built for a deleted store is never taken as fresh)."""
        rows = dict(self._conn().execute("SELECT key, value FROM meta WHERE key IN "
                                         "('store_id', 'generation')").fetchall())
        return f"{rows['store_id']}-{rows['generation']}"

    def get(self, case_id: str) -> Case | None:
        """The case `case_id`, or None."""
        row = self._conn().execute("SELECT data FROM cases WHERE id = ?", (case_id,)).fetchone()
        return Case.model_validate_json(row[0]) if row is not None else None

    def exists(self, case_id: str) -> bool:
        """True when the store holds `case_id`."""
        return self._conn().execute("SELECT 1 FROM cases WHERE id = ?",
                                    (case_id,)).fetchone() is not None

    def sources(self) -> dict[str, str]:
        """Imported file (absolute path) -> the case id it holds."""
        return dict(self._conn().execute("SELECT path, case_id FROM sources").fetchall())

    def ids(self) -> list[str]:
        """Every case id, sorted."""
        return [r[0] for r in self._conn().execute("SELECT id FROM cases ORDER BY id")]

    def rows(self, *, status: str | None = None, limit: int | None = None) -> list[CaseRow]:
        """Cases for listings, most recently changed first."""
        where, args = ("WHERE status = ?", [status]) if status else ("", [])
        sql = (f"SELECT id, title, status, severity, symptom_class, opened, source, updated_at "
               f"FROM cases {where} ORDER BY updated_at DESC, id")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [CaseRow(*r) for r in self._conn().execute(sql, args)]

    def all(self) -> Iterator[Case]:
        """Every case, in id order, read lazily."""
        for (data,) in self._conn().execute("SELECT data FROM cases ORDER BY id"):
            yield Case.model_validate_json(data)

    def containing(self, words: Sequence[str], limit: int) -> list[tuple[str, str, int]]:
        """(id, title, words matched) of the cases whose stored text holds the most of
        `words` (case-insensitive substrings), most recently changed first among equals: a
        plain match for while the search index is built."""
        words = [w for w in words if w][:8]
        if not words:
            return []
        # The case's words, not its JSON keys ("rails" must not match "rail").
        text = " || ' ' || ".join(f"coalesce(json_extract(data, '$.{name}'), '')" for name in (
            "title", "symptom", "root_cause", "resolution", "body", "components", "tags",
            "error_codes"))
        score = " + ".join("(instr(text, ?) > 0)" for _ in words)
        sql = (f"SELECT id, title, {score} AS matched FROM (SELECT id, title, updated_at, "
               f"lower({text}) AS text FROM cases) WHERE matched > 0 "
               "ORDER BY matched DESC, updated_at DESC, id LIMIT ?")
        args = [w.lower() for w in words]
        return [(str(i), str(t), int(m)) for i, t, m in
                self._conn().execute(sql, [*args, int(limit)])]

    def count(self, **where: str) -> int:
        """How many cases there are (with `symptom_class=...` or `status=...`: of those)."""
        clause = " AND ".join(f"{k} = ?" for k in where)
        sql = "SELECT count(*) FROM cases" + (f" WHERE {clause}" if clause else "")
        return int(self._conn().execute(sql, list(where.values())).fetchone()[0])

    def counts(self, column: str) -> dict[str, int]:
        """Cases per value of `column` (status, severity, symptom_class, lang)."""
        if column not in ("status", "severity", "symptom_class", "lang"):
            raise ValueError(column)
        return {str(k): int(n) for k, n in self._conn().execute(
            f"SELECT COALESCE({column}, '-'), count(*) FROM cases GROUP BY 1 ORDER BY 1")}

    def matching_keys(self, keys: Iterable[tuple[str, str]]) -> dict[str, set[tuple[str, str]]]:
        """Case id -> which of `keys` it has, for every case having at least one."""
        wanted = sorted(set(keys))
        found: dict[str, set[tuple[str, str]]] = {}
        for start in range(0, len(wanted), 200):
            chunk = wanted[start:start + 200]
            clause = " OR ".join("(kind = ? AND value = ?)" for _ in chunk)
            args = [part for key in chunk for part in key]
            for case_id, kind, value in self._conn().execute(
                    f"SELECT case_id, kind, value FROM case_keys WHERE {clause}", args):
                found.setdefault(case_id, set()).add((kind, value))
        return found

    def edited(self, case_ids: Iterable[str]) -> set[str]:
        """Those of `case_ids` changed in the store after their file was last imported (a
        completion, say): their file no longer holds all of them."""
        wanted = list(dict.fromkeys(case_ids))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ", ".join("?" for _ in chunk)
            found |= {row[0] for row in self._conn().execute(
                f"SELECT c.id FROM cases c JOIN sources s ON s.case_id = c.id "
                f"WHERE c.id IN ({marks}) GROUP BY c.id "
                f"HAVING c.updated_at > max(s.imported_at)", chunk)}
        return found

    def source_digest(self, path: str) -> tuple[str, str] | None:
        """(digest, case id) the file `path` was last imported with, or None."""
        row = self._conn().execute("SELECT digest, case_id FROM sources WHERE path = ?",
                                   (path,)).fetchone()
        return (row[0], row[1]) if row is not None else None

    # writing ----------------------------------------------------------------------------------
    def put(self, case: Case) -> bool:
        """Store `case` (new, or replacing the one with its id). False if nothing changed."""
        with self.write() as db:
            batch = _Batch()
            changed = self._put(db, case, time.time(), batch)
            self._flush(db, batch)
            return changed

    def _put(self, db: sqlite_utils.Database, case: Case, now: float, batch: _Batch) -> bool:
        """Add `case`'s rows to `batch` unless the store already holds it as it is."""
        digest = case_digest(case)
        old = db.execute("SELECT digest, created_at, source FROM cases WHERE id = ?",
                         [case.id]).fetchone()
        if old is not None and old[0] == digest and old[2] == case.source:
            return False
        batch.cases[case.id] = {
            "id": case.id, "title": case.title, "status": case.status.value,
            "severity": case.severity.value if case.severity else None,
            "symptom_class": case.symptom_class.value, "lang": case.lang,
            "opened": case.opened, "closed": case.closed, "source": case.source,
            "digest": digest, "data": case.model_dump_json(),
            "created_at": old[1] if old is not None else now, "updated_at": now}
        batch.keys[case.id] = [{"case_id": case.id, "kind": kind, "value": value}
                               for kind, value in case_keys(case, self.locate)]
        return True

    def _flush(self, db: sqlite_utils.Database, batch: _Batch) -> None:
        """Write a batch's rows (one statement per table: sqlite-utils costs per call)."""
        if batch.cases:
            db.table("cases").upsert_all(list(batch.cases.values()), pk="id")
            db.conn.executemany("DELETE FROM case_keys WHERE case_id = ?",
                                [(i,) for i in batch.keys])
            db.table("case_keys").insert_all([row for rows in batch.keys.values()
                                              for row in rows],
                                             pk=("case_id", "kind", "value"), ignore=True)
        if batch.sources:
            db.table("sources").upsert_all(batch.sources, pk="path")

    def delete(self, case_ids: Iterable[str]) -> list[str]:
        """Remove cases (and the records of the files they came from); returns those removed."""
        ids = [i for i in dict.fromkeys(case_ids) if self.exists(i)]
        if ids:
            with self.write() as db:
                for case_id in ids:
                    db.execute("DELETE FROM case_keys WHERE case_id = ?", [case_id])
                    db.execute("DELETE FROM sources WHERE case_id = ?", [case_id])
                    db.execute("DELETE FROM cases WHERE id = ?", [case_id])
        return ids

    def import_files(self, files: Sequence[tuple[Path, str]],
                     parse: Callable[[str, str], Case],
                     prepare: Callable[[Case], Case] = lambda case: case, *,
                     keep_edited: bool = False) -> ImportReport:
        """Import case files (path, label), each parsed by `parse(text, label)` and passed
        through `prepare` (masking) before it is stored.

        Idempotent: a file whose content hash is the one last imported is skipped unread
        beyond the hash; an edited file updates its case; a file that fails is reported as
        `file:line` and the others still import. Writes in transactions of `BATCH` files.
        `keep_edited`: an edited file whose case was changed in the store since its import
        (`edited`) is not imported but reported: importing it would undo that change.
        """
        report = ImportReport()
        pending: list[tuple[str, str, Case]] = []
        claimed: dict[str, str] = {}
        for path, label in files:
            try:
                raw = path.read_bytes()
            except OSError as exc:
                report.problems.append(Problem(label, None, f"cannot read: {exc.strerror}"))
                continue
            digest = hashlib.sha256(raw).hexdigest()[:20]
            key = str(path.resolve())
            known = self.source_digest(key)
            if known is not None and known[0] == digest and self.exists(known[1]):
                report.unchanged.append(known[1])
                claimed[known[1]] = label
                continue
            if keep_edited and known is not None and self.edited([known[1]]):
                report.problems.append(Problem(label, None, f"case {known[1]!r} was changed in "
                                               "the library (fabtui cases complete) since this "
                                               "file was imported, and the file changed too: "
                                               "kept the library's case; merge the two (fabtui "
                                               f"cases export --id {known[1]}), then fabtui "
                                               "cases import the file"))
                claimed[known[1]] = label
                continue
            try:
                text = raw.decode("utf-8")
                case = prepare(parse(text, label))
            except UnicodeDecodeError as exc:
                report.problems.append(Problem(label, None, f"not UTF-8 text ({exc.reason})"))
                continue
            except InputError as exc:
                report.problems.extend(exc.problems)
                continue
            if case.id in claimed:
                report.problems.append(Problem(label, 2, f"case id {case.id!r} is already "
                                               f"used by {claimed[case.id]}; give one "
                                               "another id"))
                continue
            claimed[case.id] = label
            pending.append((key, digest, case))
        for start in range(0, len(pending), BATCH):
            with self.write() as db:
                now = time.time()
                batch = _Batch()
                outcome: list[tuple[str, Case]] = []
                for key, digest, case in pending[start:start + BATCH]:
                    existed = self.exists(case.id)
                    changed = self._put(db, case, now, batch)
                    batch.sources.append({"path": key, "digest": digest, "case_id": case.id,
                                          "imported_at": now})
                    what = ("updated" if existed else "added") if changed else "unchanged"
                    outcome.append((what, case))
                self._flush(db, batch)
            for what, case in outcome:  # told only once committed
                getattr(report, what).append(case.id)
                if what != "unchanged":
                    report.changed.append(case)
        return report


def store_path(data_dir: Path) -> Path:
    """Where the case store lives in a data folder."""
    return data_dir / "cases.sqlite"
