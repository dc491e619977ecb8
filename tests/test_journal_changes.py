"""`Journal.changes()` on real SQLite files (issue 42): a "did anything change" stamp from
SQLite's `PRAGMA data_version`, no table read. data_version changes only for commits made by
*other* connections, so the stamp also counts the commits made through the `Journal` itself;
the incident book (`sync`) and the Incidents screen's list (`changed`, `refresh`) ask it
instead of counting or reading the journal's rows.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabtui.alerts.incidents import IncidentBook
from fabtui.alerts.locate import Locator
from fabtui.alerts.payload import parse_notification
from fabtui.journal.store import Journal
from fabtui.prom.labels import LabelMap
from fabtui.views.incidents import IncidentList
from tests.test_alerts_grouping import FLAP, GRAPH, UPLINK, payload


@contextlib.contextmanager
def statements(journal: Journal) -> Iterator[list[str]]:
    """Every SQL statement the journal runs meanwhile, on its writer connection and on this
    thread's reading connection."""
    seen: list[str] = []
    with journal._lock:
        writer = journal._writer()
    connections = [writer, journal._conn()]
    for db in connections:
        db.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        for db in connections:
            db.set_trace_callback(None)


def test_the_stamp_moves_for_every_commit_and_only_then(tmp_path: Path) -> None:
    path = tmp_path / "alerts.sqlite"
    journal = Journal(path)
    first = journal.changes()
    assert journal.changes() == first  # nothing committed: the same stamp
    session = journal.start("book", "t", "p", "d", {})
    # Our own commit: data_version does not move for it, the own count does.
    mine = journal.changes()
    assert mine.others == first.others and mine.own == first.own + 1
    journal.append(session, "note", data={"text": "ours"})
    journal.set_status(session, "ok")
    assert journal.changes().others == first.others and journal.changes().own == mine.own + 2

    # Another Journal on the file (another connection: another process does the same).
    other = Journal(path)
    other.append(session, "note", data={"text": "theirs"})
    theirs = journal.changes()
    assert theirs.others != first.others and theirs.own == mine.own + 2
    assert journal.changes() == theirs
    # A plain sqlite3 connection writing counts as well.
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as raw:
        raw.execute("UPDATE sessions SET status = 'aborted' WHERE id = ?", (session,))
    assert journal.changes().others != theirs.others
    # ... and the other Journal saw our commits as others' commits.
    before = other.changes()
    journal.append(session, "note", data={"text": "ours again"})
    assert other.changes().others != before.others and other.changes().own == before.own
    other.close()
    journal.close()


def test_writes_from_other_threads_count_as_our_own(tmp_path: Path) -> None:
    """Each thread reads on its own connection, but every write goes through the one writer
    connection: a worker thread's write counts as our own, a stamp taken on any thread
    compares with one taken on another."""
    journal = Journal(tmp_path / "alerts.sqlite")
    session = journal.start("book", "t", "p", "d", {})
    before = journal.changes()
    stamps = []

    def worker() -> None:
        journal.append(session, "note", data={"text": "from a worker"})
        stamps.append(journal.changes())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert stamps == [journal.changes()]
    assert stamps[0].others == before.others and stamps[0].own == before.own + 1
    assert [e.data.record()["text"] for e in journal.events(session)] == ["from a worker"]
    journal.close()


def test_a_reopened_journal_gives_a_new_stamp(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "alerts.sqlite")
    before = journal.changes()
    journal.close()  # a new connection's data_version starts again: the stamps stay apart
    assert journal.changes() != before
    journal.close()


@pytest.fixture
def book(tmp_path: Path) -> Iterator[IncidentBook]:
    book = IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))
    yield book
    book.journal.close()


def test_sync_asks_data_version_and_reads_only_what_others_wrote(book: IncidentBook,
                                                                 tmp_path: Path) -> None:
    (opened,) = book.receive(parse_notification(payload(*FLAP))).opened
    with statements(book.journal) as seen:
        assert book.sync() is False  # its own writes: nothing to read back
    assert seen == ["PRAGMA data_version"]

    # `fabtui alerts close` in another process: its own Journal on the file.
    beside = IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))
    beside.close(opened, "reseated", "oncall")
    beside.journal.close()
    with statements(book.journal) as seen:
        assert book.sync() is True
    assert any(s.startswith("SELECT") and "FROM sessions" in s for s in seen)
    assert book.incidents[opened].status == "closed"
    with statements(book.journal) as seen:
        assert book.sync() is False
    assert seen == ["PRAGMA data_version"]


def test_the_incident_list_sees_its_own_book_and_other_writers(book: IncidentBook,
                                                               tmp_path: Path) -> None:
    view = IncidentList(book)
    assert view.changed() and view.refresh() == []
    loads = 0
    load = book.load

    def counted(limit: int = 10_000) -> None:
        nonlocal loads
        loads += 1
        load(limit)

    book.load = counted  # type: ignore[method-assign]
    with statements(book.journal) as seen:
        assert not view.changed() and view.refresh() == []
    assert loads == 0 and set(seen) == {"PRAGMA data_version"}

    # Written through the same book (the receiver in this process: the same connection,
    # whose data_version does not move for its own commits): seen all the same.
    (flap,) = book.receive(parse_notification(payload(*FLAP))).opened
    assert view.changed()
    assert [r.id for r in view.refresh()] == [flap] and loads == 1
    assert not view.changed()

    # Written by another process (another connection).
    other = IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))
    (uplink,) = other.receive(parse_notification(payload(*UPLINK))).opened
    other.journal.close()
    assert view.changed()
    assert sorted(r.id for r in view.refresh()) == sorted([flap, uplink]) and loads == 2
    assert not view.changed() and loads == 2
