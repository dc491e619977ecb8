"""The case store: import, filing and export speed, and what concurrency and SIGKILL leave.

Prints, for a synthetic library of `--cases` case files:
  - import:      first import (cases/s), the same folder again (nothing changed: hashes only);
  - filing:      one case stored, p50 / p99 (the index update included when this build has
                 the index, fabtui.cases.index; the issue's goal is <= 100 ms);
  - export:      every case written as markdown;
  - concurrency: P processes filing K cases each into one data folder while writing journal
                 events: cases and events lost, "database is locked" seen (must be 0);
  - sigkill:     R imports killed (SIGKILL) at a random moment: stores left inconsistent
                 (integrity check, orphan rows), and whether a rerun completed (must be 0).

    python benchmarks/case_store.py              # 2,000 cases, 4 x 25 filings, 8 kills
    python benchmarks/case_store.py --cases 10000 --kills 20

Any lost case or inconsistent store makes the script exit 1.

On the 2-core machine shared with other work (load ~12, 2026-12-01), defaults: import 2,000
cases in 2.6 s (770/s; again, unchanged, 0.34 s); filing p50 0.4 ms / p99 15 ms store only;
with the whoosh index of the cases-search branch merged in: p50 40 ms / p99 208 ms, of which the
store and the freshness check take ~3.5 ms and the index commit the rest; export 2,200 files in
6 s (file creation dominates); 4 x 25 concurrent filings: 0 lost, 0 "locked"; 8 imports killed
mid-way: 0 inconsistent, every rerun complete.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fabtui.cases.library import CaseLibrary, default_engine  # noqa: E402
from fabtui.cases.store import store_path  # noqa: E402
from fabtui.model.case import Case  # noqa: E402

CLASSES = ("nccl-hang", "busbw-low", "pfc-storm", "fec-errors", "optic-failure", "gpu-xid")


def write_corpus(folder: Path, count: int, rng: random.Random) -> None:
    """`count` case files that look like the shipped ones (tables, timeline, Chinese too)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        rail, node = rng.randrange(8), rng.randrange(1, 257)
        port = f"leaf-g00-r{rail}:Ethernet{rail * 4}"
        zh = i % 4 == 0
        symptom = "训练卡住，NCCL 超时，光模块误码" if zh else \
            f"all_reduce busbw dropped to {rng.randint(50, 300)} GB/s on rail {rail}"
        (folder / f"case-{i:06d}.md").write_text(textwrap.dedent(f"""\
            ---
            id: case-{i:06d}
            title: Case {i} on node{node:03d} rail {rail}
            tags: [synthetic, rail{rail}]
            symptom_class: {CLASSES[i % len(CLASSES)]}
            error_codes: [ib-status-12]
            components: [node{node:03d}:mlx5_{rail}, "{port}"]
            opened: 2026-0{1 + i % 9}-1{i % 10}
            ---

            ## {"现象" if zh else "Symptom"}
            {symptom}

            ## Evidence
            | component | metric | value | source |
            |---|---|---|---|
            | {port} | fec_uncorrectable | {rng.random():.3e}/s | switch.fec |

            ## Timeline
            - 2026-03-02T03:10Z alert
            - 2026-03-02T03:40Z optic swapped

            ## {"根因" if zh else "Root cause"}
            Optic MT24{i:06d} degraded.

            ## {"解决方案" if zh else "Resolution"}
            Replaced the optic and soaked 30 min.
            """), encoding="utf-8")


def bench_import(data: Path, folder: Path) -> tuple[float, float, int]:
    library = CaseLibrary(data)
    started = time.perf_counter()
    report = library.import_paths([folder])
    first = time.perf_counter() - started
    started = time.perf_counter()
    again = library.import_paths([folder])
    second = time.perf_counter() - started
    library.close()
    assert not report.problems and not again.added and not again.updated, report.problems[:3]
    return first, second, len(report.added)


def bench_filing(data: Path, count: int) -> list[float]:
    library = CaseLibrary(data)
    if library._engine is not None:
        library.search("warm the index")  # an index in use is what filing must keep current
    times = []
    for i in range(count):
        case = Case(id=f"filed-{i}", title=f"filed {i}", symptom="the job hung",
                    components=[f"node{i % 64:03d}:mlx5_{i % 8}"], tags=["filed"])
        started = time.perf_counter()
        library.put(case)
        times.append(time.perf_counter() - started)
    library.close()
    return times


_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from fabtui.cases.library import CaseLibrary
    from fabtui.journal.store import Journal, journal_path
    from fabtui.model.case import Case
    data, n, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    library = CaseLibrary(data, engine=None)
    journal = Journal(journal_path(data))
    session = journal.start("bench", "bench", "x.md", "0", {})
    for i in range(count):
        journal.append(session, "note", data={"text": f"{i}"})
        library.put(Case(id=f"w{n}-{i}", title="concurrent", symptom="s"))
""")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABTUI_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def bench_concurrency(data: Path, processes: int, each: int) -> tuple[int, int, float]:
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(data), str(n), str(each)],
                              env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for n in range(processes)]
    locked = 0
    for proc in procs:
        _, stderr = proc.communicate(timeout=600)
        locked += ("locked" in stderr) or proc.returncode != 0
    seconds = time.perf_counter() - started
    library = CaseLibrary(data, engine=None)
    ids = set(library.store.ids())
    lost = sum(f"w{n}-{i}" not in ids for n in range(processes) for i in range(each))
    with contextlib.closing(sqlite3.connect(data / "journal.sqlite")) as db:
        events = db.execute("SELECT count(*) FROM events").fetchone()[0]
    lost += processes * each - events
    return lost, locked, seconds


_IMPORTER = "import sys; from pathlib import Path; from fabtui.cases.library import " \
            "CaseLibrary; CaseLibrary(Path(sys.argv[1]), engine=None).import_paths(" \
            "[Path(sys.argv[2])])"


def consistent(data: Path) -> bool:
    with contextlib.closing(sqlite3.connect(store_path(data))) as db:
        ok = db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        orphans = db.execute("SELECT (SELECT count(*) FROM case_keys WHERE case_id NOT IN "
                             "(SELECT id FROM cases)) + (SELECT count(*) FROM sources WHERE "
                             "case_id NOT IN (SELECT id FROM cases))").fetchone()[0]
    return ok and orphans == 0


def bench_sigkill(root: Path, folder: Path, kills: int, total: int,
                  rng: random.Random) -> tuple[int, int]:
    """Imports killed at a random moment: (inconsistent stores, reruns that did not finish),
    and how many kills landed mid-import."""
    bad = cut = 0
    for trial in range(kills):
        data = root / f"kill-{trial}"
        proc = subprocess.Popen([sys.executable, "-c", _IMPORTER, str(data), str(folder)],
                                env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.8, 3.0))
        if proc.poll() is None:
            cut += 1
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=600)
        if not store_path(data).exists():
            continue  # killed before the store was created
        library = CaseLibrary(data, engine=None)
        report = library.import_paths([folder])
        good = consistent(data) and library.store.count() == total and not report.problems
        library.close()
        bad += not good
    return bad, cut


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--filings", type=int, default=200)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--each", type=int, default=25)
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / "corpus"
        write_corpus(folder, args.cases, rng)
        first, again, added = bench_import(root / "data", folder)
        print(f"import       {added} cases in {first:.2f} s ({added / first:,.0f} cases/s); "
              f"again, unchanged: {again:.2f} s")
        times = sorted(bench_filing(root / "data", args.filings))
        index = "with the index update" if default_engine() else "store only: no index in " \
            "this build"
        print(f"filing       one case p50 {statistics.median(times) * 1000:.1f} ms, p99 "
              f"{times[int(len(times) * 0.99) - 1] * 1000:.1f} ms ({index}, "
              f"{added + args.filings} cases stored)")
        library = CaseLibrary(root / "data", engine=None)
        started = time.perf_counter()
        paths, _ = library.export(root / "export")
        print(f"export       {len(paths)} files in {time.perf_counter() - started:.2f} s")
        library.close()
        lost, locked, seconds = bench_concurrency(root / "concurrent", args.processes,
                                                  args.each)
        print(f"concurrency  {args.processes} processes x {args.each} filings + journal "
              f"events in {seconds:.1f} s: lost {lost}, 'database is locked' {locked}")
        failed |= bool(lost or locked)
        bad, cut = bench_sigkill(root, folder, args.kills, args.cases, rng)
        print(f"sigkill      {args.kills} imports killed at random ({cut} mid-import): "
              f"inconsistent or not completed by a rerun {bad}")
        failed |= bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
