"""The journal: every session's events, append-only, in SQLite (WAL), committed one by one.

An event is on disk before `append` returns, so whatever the operator has seen survives a killed
process (WAL with synchronous=NORMAL is safe against process death; only a power cut may lose the
last commits). Sessions are listed from their own table; their events are the record that
resume, the TUI and the case library read back. Uses the standard sqlite3 module: each append
is one short transaction, which is what crash-safety needs and all this store does.
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
from typing import Any

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


def new_session_id() -> str:
    """A sortable, unique session id: `20261130-031502-7f3a9c`."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


class Journal:
    """One journal database file (created on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), timeout=30, isolation_level=None,
                                   check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._next: dict[str, int] = {}

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def start(self, runbook: str, title: str, path: str, digest: str,
              inputs: dict[str, Any], operator: str | None = None) -> str:
        """Record a new session; returns its id."""
        session = new_session_id()
        with self._lock:
            self._db.execute(
                "INSERT INTO sessions (id, runbook, title, path, digest, started_at, status, "
                "operator, inputs) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                (session, runbook, title, path, digest, time.time(),
                 operator if operator is not None else os.environ.get("USER", ""),
                 json.dumps(inputs, default=str)))
        return session

    def append(self, session: str, kind: str, step: str | None = None, block: str | None = None,
               data: dict[str, Any] | None = None) -> Event:
        """Append one event and commit it before returning."""
        with self._lock:
            seq = self._next.get(session)
            if seq is None:
                row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE "
                                       "session = ?", (session,)).fetchone()
                seq = int(row[0])
            seq += 1
            self._next[session] = seq
            event = Event(session=session, seq=seq, at=time.time(), kind=kind, step=step,
                          block=block, data=data or {})
            self._db.execute("INSERT INTO events (session, seq, at, kind, step, block, data) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (session, seq, event.at, kind, step, block,
                              json.dumps(data or {}, default=str)))
        return event

    def set_status(self, session: str, status: str) -> None:
        """Record how the session stands (running, ok, fail, aborted ...)."""
        with self._lock:
            self._db.execute("UPDATE sessions SET status = ? WHERE id = ?", (status, session))

    def events(self, session: str) -> list[Event]:
        """Every event of `session`, in order."""
        return list(self.iter_events(session))

    def iter_events(self, session: str) -> Iterator[Event]:
        """The events of `session`, in order, read lazily."""
        cursor = self._db.execute("SELECT session, seq, at, kind, step, block, data FROM events "
                                  "WHERE session = ? ORDER BY seq", (session,))
        for row in cursor:
            yield Event(session=row[0], seq=row[1], at=row[2], kind=row[3], step=row[4],
                        block=row[5], data=json.loads(row[6]))

    def session(self, session: str) -> tuple[SessionInfo, dict[str, Any]] | None:
        """A session's summary and its recorded inputs, or None."""
        row = self._db.execute("SELECT id, runbook, title, started_at, status, operator, path, "
                               "inputs FROM sessions WHERE id = ?", (session,)).fetchone()
        if row is None:
            return None
        return (SessionInfo(id=row[0], runbook=row[1], title=row[2], started_at=row[3],
                            status=row[4], operator=row[5], path=row[6]), json.loads(row[7]))

    def sessions(self, limit: int = 50) -> list[SessionInfo]:
        """The most recent sessions first."""
        rows = self._db.execute("SELECT id, runbook, title, started_at, status, operator, path "
                                "FROM sessions ORDER BY started_at DESC LIMIT ?", (limit,))
        return [SessionInfo(id=r[0], runbook=r[1], title=r[2], started_at=r[3], status=r[4],
                            operator=r[5], path=r[6]) for r in rows]


def journal_path(data_dir: Path) -> Path:
    """Where the journal lives in a data folder."""
    return data_dir / "journal.sqlite"
