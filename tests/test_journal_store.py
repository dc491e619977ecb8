"""The journal on real SQLite files: schema versions and migrations, one connection per thread."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.errors import InputError
from fabtui.journal.store import MIGRATIONS, SCHEMA_VERSION, Journal

OLD_SCHEMA = MIGRATIONS[0]
"""What journals written before schema versions hold (the same tables, user_version 0)."""


def _version(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def _indexes(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}


def test_a_new_journal_is_at_the_current_version(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal = Journal(path)
    assert journal.migrated_from == 0
    journal.close()
    assert _version(path) == SCHEMA_VERSION and "sessions_by_start" in _indexes(path)
    again = Journal(path)
    assert again.migrated_from == SCHEMA_VERSION
    again.close()


def test_an_old_unversioned_journal_is_migrated_and_keeps_its_sessions(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO sessions VALUES ('20261101-010101-abcdef', 'pfc-storm', 'PFC', "
                   "'runbooks/pfc-storm.md', 'd1', 1.0, 'running', 'ana', '{\"port\": 3}')")
        db.execute("INSERT INTO events VALUES ('20261101-010101-abcdef', 1, 1.0, "
                   "'session_started', NULL, NULL, '{\"runbook\": \"pfc-storm\"}')")
    assert _version(path) == 0
    journal = Journal(path)
    assert journal.migrated_from == 0
    info = journal.session("20261101-010101-abcdef")
    assert info is not None and info[0].operator == "ana" and info[1] == {"port": 3}
    event = journal.append("20261101-010101-abcdef", "note", data={"text": "after upgrade"})
    assert event.seq == 2
    assert [e.kind for e in journal.events("20261101-010101-abcdef")] == ["session_started",
                                                                        "note"]
    journal.close()
    assert _version(path) == SCHEMA_VERSION and "sessions_by_start" in _indexes(path)


def test_a_journal_from_a_newer_fabtui_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = path.read_bytes()
    with pytest.raises(InputError, match=f"schema version {SCHEMA_VERSION + 1}, newer than "
                                         f"this fabtui reads \\({SCHEMA_VERSION}\\): upgrade"):
        Journal(path)
    assert path.read_bytes() == before and _version(path) == SCHEMA_VERSION + 1


def test_the_cli_says_so_for_a_newer_journal(run: Callable[..., Result],
                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             write: Callable[[str, str], Path]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "journal.sqlite") as db:
        db.execute("PRAGMA user_version = 99")
    config = write("fabtui.toml", f'data_dir = "{data}"\n')
    result = run("--config", str(config), "runbook", "sessions")
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"{data / 'journal.sqlite'}: this journal has schema "
                                     f"version 99, newer than this fabtui reads "
                                     f"({SCHEMA_VERSION}): upgrade fabtui, or set data_dir to "
                                     "another folder")


def test_each_thread_has_its_own_connection(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite")
    sessions = [journal.start(f"book{i}", "t", "p", "d", {}) for i in range(4)]
    together = threading.Barrier(len(sessions))
    used: dict[str, int] = {}
    counts: dict[str, int] = {}

    def work(session: str) -> None:
        together.wait()  # all four write at once
        for n in range(25):
            journal.append(session, "note", data={"text": str(n)})
        used[session] = id(journal._conn())
        counts[session] = len(journal.events(session))

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counts == dict.fromkeys(sessions, 25)
    assert len(set(used.values())) == 4 and id(journal._conn()) not in used.values()
    assert [e.data.record()["text"] for e in journal.events(sessions[2])] == \
        [str(n) for n in range(25)]
    journal.close()
