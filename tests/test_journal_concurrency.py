"""Several `fabtui runbook run` processes writing one data dir at once lose nothing."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BLOCKS = 8


def _book(n: int, counter: Path) -> str:
    blocks = "".join(f"\n```sh {{id=b{i}}}\necho b{i} >> {counter}\n```\n" for i in range(BLOCKS))
    return f"---\nid: concurrent-{n}\ntitle: Concurrent {n}\n---\n\n# Concurrent\n\n## Go\n{blocks}"


def test_processes_running_at_once_keep_every_session_and_event(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABTUI_")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])))
    books = []
    for n in range(4):
        book = tmp_path / f"concurrent-{n}.md"
        book.write_text(_book(n, tmp_path / f"count-{n}"))
        books.append(book)
    procs = [subprocess.Popen([sys.executable, "-m", "fabtui", "runbook", "run", str(book),
                               "--json"], env=env, cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for book in books]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    journal = tmp_path / "data" / "fabtui" / "journal.sqlite"
    sessions = []
    for proc, (stdout, stderr) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, stderr
        sessions.append(json.loads(stdout)["session"])
    with contextlib.closing(sqlite3.connect(journal)) as db:
        for session in sessions:
            kinds = [k for (k,) in db.execute(
                "SELECT kind FROM events WHERE session = ? ORDER BY seq", (session,))]
            assert kinds.count("block_finished") == BLOCKS and kinds[-1] == "session_finished"
            seqs = [s for (s,) in db.execute(
                "SELECT seq FROM events WHERE session = ? ORDER BY seq", (session,))]
            assert seqs == list(range(1, len(seqs) + 1))  # no event lost or written twice
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == len(sessions)
    for n in range(4):
        assert (tmp_path / f"count-{n}").read_text().split() == [f"b{i}" for i in range(BLOCKS)]
