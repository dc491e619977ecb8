"""Several processes filing cases and writing sessions into one data folder lose nothing and
never see "database is locked"; a process killed (-9) in the middle of an import or a filing
leaves a consistent store that a second run completes."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from fabtui.cases.library import CaseLibrary
from fabtui.cases.store import store_path

REPO = Path(__file__).resolve().parent.parent
PROCESSES = 4
CASES_EACH = 12

_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from fabtui.cases.library import CaseLibrary
    from fabtui.journal.store import Journal, journal_path
    from fabtui.model.case import Case

    data, n, count, folder = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    library = CaseLibrary(data, engine=None)
    journal = Journal(journal_path(data))
    session = journal.start("concurrent", "Concurrent", "x.md", "0", {})
    if folder != "-":
        library.import_paths([Path(folder)])
    for i in range(count):
        journal.append(session, "note", data={"text": f"note {i}"})
        library.put(Case(id=f"p{n}-{i}", title=f"case {i} of {n}", symptom="seen",
                         tags=[f"p{n}"], components=[f"node00{n}:mlx5_{i % 8}"]))
    journal.set_status(session, "ok")
    print(session)
""")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABTUI_")}
    env.update(HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), env.get("PYTHONPATH")])))
    return env


def _case_file(folder: Path, case_id: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{case_id}.md").write_text(
        f"---\nid: {case_id}\ntitle: Imported {case_id}\ntags: [bulk]\n---\n\n## Symptom\n"
        "hung\n\n## Root cause\noptic\n\n## Resolution\nreplaced\n")


def test_processes_filing_at_once_keep_every_case_and_event(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder = tmp_path / "shared-cases"
    for i in range(30):
        _case_file(folder, f"bulk-{i}")
    # Every process imports the same folder while the others file: one of them adds each
    # file, the rest find it already there.
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(data), str(n),
                               str(CASES_EACH), str(folder)], env=_env(tmp_path), cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(PROCESSES)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_, stderr) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, stderr
        assert "locked" not in stderr
    library = CaseLibrary(data, engine=None)
    ids = set(library.store.ids())
    assert ids == {f"p{n}-{i}" for n in range(PROCESSES) for i in range(CASES_EACH)} | \
        {f"bulk-{i}" for i in range(30)}
    # Each filing bumped the generation once; the import, once per process that wrote.
    _store_id, generation = library.store.generation().rsplit("-", 1)
    assert int(generation) >= PROCESSES * CASES_EACH + 1
    with contextlib.closing(sqlite3.connect(data / "journal.sqlite")) as db:
        for (session,) in db.execute("SELECT id FROM sessions"):
            seqs = [s for (s,) in db.execute("SELECT seq FROM events WHERE session = ? "
                                             "ORDER BY seq", (session,))]
            assert seqs == list(range(1, CASES_EACH + 1))
    keys = library.store.matching_keys([("node", f"node00{n}") for n in range(PROCESSES)])
    assert len(keys) == PROCESSES * CASES_EACH  # the lookup rows came with every case


_KILLED = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from fabtui.cases import store as store_module
    from fabtui.cases.library import CaseLibrary
    from fabtui.model.case import Case

    data, what, marker = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    library = CaseLibrary(data, engine=None)
    original = store_module.CaseStore._flush
    done = []

    def flush(self, db, batch):
        original(self, db, batch)
        done.extend(batch.cases)
        if len(done) >= 5:  # mid-transaction: rows written, nothing committed
            marker.write_text("in the middle")
            time.sleep(60)

    store_module.CaseStore._flush = flush
    if what == "import":
        library.import_paths([Path(sys.argv[4])])
    else:
        library.put(Case(id="filed", title="half filed", symptom="seen"))
        for i in range(10):
            library.put(Case(id=f"filed-{i}", title="filed", symptom="seen"))
""")


def _kill_midway(tmp_path: Path, what: str, *extra: str) -> None:
    marker = tmp_path / f"{what}.marker"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(tmp_path / "data"), what,
                             str(marker), *extra], env=_env(tmp_path), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the writer never got half way"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def _consistent(data: Path) -> None:
    with contextlib.closing(sqlite3.connect(store_path(data))) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        orphans = db.execute("SELECT count(*) FROM case_keys WHERE case_id NOT IN "
                             "(SELECT id FROM cases)").fetchone()[0]
        keyless = db.execute("SELECT count(*) FROM cases WHERE id NOT IN "
                             "(SELECT case_id FROM case_keys)").fetchone()[0]
        sourceless = db.execute("SELECT count(*) FROM sources WHERE case_id NOT IN "
                                "(SELECT id FROM cases)").fetchone()[0]
    assert (orphans, keyless, sourceless) == (0, 0, 0)


def test_a_killed_import_leaves_a_consistent_store_that_a_rerun_completes(
        tmp_path: Path) -> None:
    folder = tmp_path / "bulk"
    for i in range(20):
        _case_file(folder, f"bulk-{i:02d}")
    _kill_midway(tmp_path, "import", str(folder))
    _consistent(tmp_path / "data")
    library = CaseLibrary(tmp_path / "data", engine=None)
    assert library.store.count() == 0  # the batch was one transaction: none of it landed
    report = library.import_paths([folder])
    assert len(report.added) == 20 and not report.problems
    _consistent(tmp_path / "data")


def test_a_killed_filing_leaves_whole_cases_only(tmp_path: Path) -> None:
    _kill_midway(tmp_path, "file")
    _consistent(tmp_path / "data")
    library = CaseLibrary(tmp_path / "data", engine=None)
    # Four filings committed; the fifth was written but never committed.
    assert library.store.ids() == ["filed", "filed-0", "filed-1", "filed-2"]
    assert library.get("filed").title == "half filed"
