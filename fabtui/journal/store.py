"""The journal: every session's events, append-only, in SQLite (WAL), committed one by one.

An event is on disk before `append` returns, so whatever the operator has seen survives a killed
process (WAL with synchronous=NORMAL is safe against process death; only a power cut may lose the
last commits). Sessions are listed from their own table; their events are the record that
resume, the TUI and the case library read back. Uses the standard sqlite3 module: each append
is one short transaction, which is what crash-safety needs and all this store does.

The file carries its schema version (`PRAGMA user_version`): opening a journal written by an
older fabtui (version 0: no version at all) migrates it in place, one transaction per step; one
written by a newer fabtui is refused with a message saying so, never half-read. Reads use one
connection per thread (sqlite3 connections are not shared between threads: a TUI worker reads
while the screen reads). Writes, already one at a time under the journal's lock, all go through
one writer connection, whichever thread makes them: SQLite's `PRAGMA data_version` on that
connection then changes exactly when another connection (another process, another `Journal` on
the file) committed, which is what `changes()` reports without reading a table.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from fabtui.errors import InputError
from fabtui.model.events import Event
from fabtui.model.runbook import SessionInfo

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    runbook TEXT NOT NULL,
    title TEXT NOT NULL,
    path TEXT NOT NULL,
    digest TEXT NOT NULL,
    started_at REAL NOT NULL,
    status TEXT NOT NULL,
    operator TEXT NOT NULL DEFAULT '',
    inputs TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS events (
    session TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    step TEXT,
    block TEXT,
    data TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
"""
"""Version 1: the tables as the first journals wrote them (without a version number)."""

MIGRATIONS: tuple[str, ...] = (
    SCHEMA,
    "CREATE INDEX IF NOT EXISTS sessions_by_start ON sessions(started_at);",
    "SELECT 1;",
)
"""`MIGRATIONS[n]` takes a journal from version n to n + 1 (idempotent SQL, so a version-0 file
that already has the tables passes through unchanged). Version 3 changes no table: its
journals may hold event kinds an older fabtui does not know (`handed_over_from`,
`handed_over_to`), so an older fabtui refuses the file with its message instead of failing
on the first such event."""
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(db: sqlite3.Connection, path: Path) -> int:
    """Bring the journal on `db` to `SCHEMA_VERSION`; returns the version it had.

    Raises `InputError` for a journal newer than this fabtui. Each step commits with its new
    version number, so a process killed mid-way leaves a journal at a version it can resume from.
    """
    found = _version(db)
    _refuse_newer(found, path)
    while (current := _version(db)) < SCHEMA_VERSION:
        db.execute("BEGIN IMMEDIATE")  # another process may be migrating the same file
        try:
            current = _version(db)
            _refuse_newer(current, path)
            if current < SCHEMA_VERSION:
                for statement in _statements(MIGRATIONS[current]):
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {current + 1}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # a failed COMMIT (a full disk) has rolled back already
                db.execute("ROLLBACK")
            raise
    return found


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _refuse_newer(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise InputError.single(str(path), None, f"this journal has schema version {version}, "
                                f"newer than this fabtui reads ({SCHEMA_VERSION}): upgrade "
                                "fabtui, or set data_dir to another folder")


def _statements(script: str) -> list[str]:
    """The statements of a migration (none of ours has a `;` inside a literal)."""
    return [part.strip() for part in script.split(";") if part.strip()]


def new_session_id() -> str:
    """A sortable, unique session id: `20261130-031502-7f3a9c`."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


class Changes(NamedTuple):
    """A "did the journal change" stamp (`Journal.changes()`): compare two stamps of the same
    `Journal` object; equal stamps mean nothing was committed in between (a checkpoint by
    another connection may change `others` with no new row: a needless re-read, never a missed
    one)."""

    others: tuple[int, int]
    """Commits by other connections: (writer connection opened, its `PRAGMA data_version`).
    SQLite changes data_version only for other connections' commits, never for the
    connection's own; the first number keeps stamps apart across a `close()` and reopen."""
    own: int
    """Commits made through this `Journal` object (which data_version does not count)."""


class Journal:
    """One journal database file (created on first use)."""

    def __init__(self, path: Path) -> None:
        """Open (creating, or migrating, as needed). Raises `InputError` for a newer journal."""
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists() or path.stat().st_size == 0
        self._local = threading.local()
        self._connections: dict[int, sqlite3.Connection] = {}
        self._registry = threading.Lock()
        """Guards `_connections` (apart from `_lock`, which `append` holds while it connects)."""
        self._lock = threading.Lock()
        """Held for every write and for the writer connection."""
        self._next: dict[str, int] = {}
        self._writer_db: sqlite3.Connection | None = None
        self._writers_opened = 0
        self._own_commits = 0
        try:
            if fresh:
                # WAL before the first tables: each migration step then commits without
                # syncing a rollback journal (~45 ms a new journal). Only for a new file:
                # a journal this fabtui refuses must be left exactly as it was.
                self._conn().execute("PRAGMA journal_mode=WAL")
            self.migrated_from = migrate(self._conn(), path)
            """The schema version the file had when opened (0: written before versions)."""
        except BaseException:
            self.close()  # a refused journal is left exactly as it was
            raise
        self._conn().execute("PRAGMA journal_mode=WAL")  # stored in the file: every connection

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (opened on its first use; sqlite3 enforces the owner)."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
            with self._registry:
                self._connections[threading.get_ident()] = db
        return db

    def _writer(self) -> sqlite3.Connection:
        """The one connection every write goes through (call with `_lock` held): shared by
        the threads, one at a time, so that its data_version counts only other writers."""
        if self._writer_db is None:
            db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None,
                                 check_same_thread=False)
            db.execute("PRAGMA synchronous=NORMAL")
            self._writer_db = db
            self._writers_opened += 1
        return self._writer_db

    def changes(self) -> Changes:
        """A stamp that differs once anything was committed to the journal since the last
        stamp (see `Changes`): one `PRAGMA data_version`, no table read, so cheap enough for
        every notification and several times a second."""
        with self._lock:
            row = self._writer().execute("PRAGMA data_version").fetchone()
            return Changes((self._writers_opened, int(row[0])), self._own_commits)

    def close(self) -> None:
        """Close the database (other threads' connections close when those threads end)."""
        with self._lock:
            if self._writer_db is not None:
                self._writer_db.close()
                self._writer_db = None
        with self._registry:
            connections, self._connections = self._connections, {}
        me = threading.get_ident()
        for owner, db in connections.items():
            if owner == me:
                db.close()
        self._local = threading.local()

    def start(self, runbook: str, title: str, path: str, digest: str,
              inputs: dict[str, Any], operator: str | None = None) -> str:
        """Record a new session; returns its id."""
        session = new_session_id()
        with self._lock:
            self._writer().execute(
                "INSERT INTO sessions (id, runbook, title, path, digest, started_at, status, "
                "operator, inputs) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                (session, runbook, title, path, digest, time.time(),
                 operator if operator is not None else os.environ.get("USER", ""),
                 json.dumps(inputs, default=str)))
            self._own_commits += 1
        return session

    def append(self, session: str, kind: str, step: str | None = None, block: str | None = None,
               data: dict[str, Any] | None = None) -> Event:
        """Append one event and commit it before returning."""
        with self._lock:
            # No check for cycles (~30 % of the encoding's time, with probe results of
            # thousands of metrics): the engine's events are the redactor's fresh copies, plain
            # trees; one that were not would fail with RecursionError, before the insert.
            text = json.dumps(data or {}, default=str, check_circular=False)
            for attempt in range(2):
                seq = self._next.get(session)
                if seq is None:
                    row = self._writer().execute("SELECT COALESCE(MAX(seq), 0) FROM events "
                                                 "WHERE session = ?", (session,)).fetchone()
                    seq = int(row[0])
                seq += 1
                event = Event(session=session, seq=seq, at=time.time(), kind=kind, step=step,
                              block=block, data=data or {})
                try:
                    self._writer().execute("INSERT INTO events (session, seq, at, kind, "
                                           "step, block, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                           (session, seq, event.at, kind, step, block, text))
                except sqlite3.IntegrityError:
                    # Another process appended to this session since `seq` was cached (an
                    # incident closed by `fabtui alerts close` while the receiver runs):
                    # read the last one again, once.
                    self._next.pop(session, None)
                    if attempt:
                        raise
                    continue
                self._next[session] = seq
                self._own_commits += 1
                break
        return event

    def forget_sequences(self) -> None:
        """Forget the cached next event numbers (another process wrote to the journal)."""
        with self._lock:
            self._next.clear()

    def set_status(self, session: str, status: str) -> None:
        """Record how the session stands (running, ok, fail, aborted ...)."""
        with self._lock:
            self._writer().execute("UPDATE sessions SET status = ? WHERE id = ?",
                                   (status, session))
            self._own_commits += 1

    def events(self, session: str) -> list[Event]:
        """Every event of `session`, in order."""
        return list(self.iter_events(session))

    def iter_events(self, session: str) -> Iterator[Event]:
        """The events of `session`, in order, read lazily."""
        cursor = self._conn().execute("SELECT session, seq, at, kind, step, block, data "
                                      "FROM events WHERE session = ? ORDER BY seq", (session,))
        for row in cursor:
            yield Event(session=row[0], seq=row[1], at=row[2], kind=row[3], step=row[4],
                        block=row[5], data=json.loads(row[6]))

    def session(self, session: str) -> tuple[SessionInfo, dict[str, Any]] | None:
        """A session's summary and its recorded inputs, or None."""
        row = self._conn().execute("SELECT id, runbook, title, started_at, status, operator, "
                                   "path, inputs FROM sessions WHERE id = ?",
                                   (session,)).fetchone()
        if row is None:
            return None
        return (SessionInfo(id=row[0], runbook=row[1], title=row[2], started_at=row[3],
                            status=row[4], operator=row[5], path=row[6]), json.loads(row[7]))

    def sessions(self, limit: int = 50) -> list[SessionInfo]:
        """The most recent sessions first."""
        rows = self._conn().execute("SELECT id, runbook, title, started_at, status, operator, "
                                    "path FROM sessions ORDER BY started_at DESC LIMIT ?",
                                    (limit,))
        return [SessionInfo(id=r[0], runbook=r[1], title=r[2], started_at=r[3], status=r[4],
                            operator=r[5], path=r[6]) for r in rows]


def journal_path(data_dir: Path) -> Path:
    """Where the journal lives in a data folder."""
    return data_dir / "journal.sqlite"
