"""Search-as-you-type on the Cases screen over 10,000 cases: each keystroke answered, in the app.

The corpus is the one of benchmarks/cases_search.py (realistic fabric incidents in English and
Chinese over a 1,024-GPU cluster), written as case files into a case folder and imported by the
library as a site's own cases would be. The screen opens (its worker lists the library, then
warms the index); then queries are typed into the app by pilot, one character at a time; a
keystroke is answered when the results of the text typed so far are on screen and the frame is
drawn. Figures, each beside a reference measured in the same run:
  - keystroke answered in the app (search worker, the list replaced, the frame drawn), p50 /
    p99 / max; reference: SQLite FTS5 answering the same prefixes over the same cases (search
    and snippets, no screen); goal <= 100 ms;
  - the same search through the library without the app (what the worker runs), to show what
    the screen adds; it runs after the app, on caches the app warmed (the snippets' analyzed
    text, whoosh's postings), so it is a lower bound;
  - the library listing (every case) shown when the screen opens; reference: reading the same
    rows with one SELECT on the FTS5 database.
Prints figures; never fails on time.

    python benchmarks/tui_cases.py            # 10,000 cases, eight queries
    python benchmarks/tui_cases.py --smoke    # 10,000 cases, three queries (CI)
    python benchmarks/tui_cases.py --verbose  # also each keystroke: the text typed, ms
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.cases_search import corpus, fts_build, fts_search  # noqa: E402
from fabtui.cases.document import IndexDoc  # noqa: E402
from fabtui.cases.markdown import case_file_name, write_case  # noqa: E402
from fabtui.cases.present import as_you_type  # noqa: E402
from fabtui.config import load_settings  # noqa: E402
from fabtui.model.case import Case  # noqa: E402
from fabtui.tui.screens.cases import LIMIT  # noqa: E402
from fabtui.workspace import Workspace  # noqa: E402

CASES = 10_000
KEY_GOAL_MS = 100
SIZE = (160, 50)
QUERIES = ["pfc storm pause", "transceiver rx power", "光模块 误码", "nccl timeout",
           "fell off the bus", "链路抖动", "busbw drop rail 3", "mtu mismatch"]


def as_case(doc: IndexDoc) -> Case:
    return Case(id=doc.id, title=doc.title, symptom=doc.symptom, root_cause=doc.root_cause,
                resolution=doc.resolution, localization=doc.body, components=doc.components,
                tags=doc.tags, error_codes=doc.error_codes, symptom_class=doc.symptom_class,
                severity=doc.severity, status=doc.status, lang=doc.lang, opened=doc.opened)


def write_cases(folder: Path, docs: list[IndexDoc]) -> None:
    folder.mkdir(parents=True)
    for doc in docs:
        case = as_case(doc)
        (folder / case_file_name(case)).write_text(write_case(case), encoding="utf-8")


def prefixes(queries: list[str]) -> list[str]:
    """What the screen has searched after each keystroke of each query."""
    return [q[:end] for q in queries for end in range(1, len(q) + 1)]


async def type_queries(ws: Workspace, queries: list[str]) -> tuple[list[float], float]:
    """Per keystroke: seconds from the key to its results drawn; and the listing's seconds."""
    from textual import events

    from fabtui.tui.app import FabtuiApp
    from fabtui.tui.screens.cases import CasesScreen
    from fabtui.tui.widgets.case_list import CaseList

    app = FabtuiApp(ws, live=False)
    keys: list[float] = []
    pauses.clear()
    async with app.run_test(size=SIZE) as pilot:
        start = time.perf_counter()
        await pilot.press("3")
        screen = app.screen
        assert isinstance(screen, CasesScreen)
        while screen.shown_query != "":
            await asyncio.sleep(0.001)
        await pilot.pause()
        listing = time.perf_counter() - start
        assert len(screen.query_one(CaseList).entries) == CASES
        # Before the first key, as a person reading the listing would: the screen's worker
        # warms the index meanwhile (a key typed at once would cancel that and pay for it).
        while any(w.group == "case-search" and not w.is_finished for w in app.workers):
            await asyncio.sleep(0.01)
        listing_widget = screen.query_one(CaseList)
        for query in queries:
            typed = ""
            for char in query:
                typed += char
                # The key goes in as the terminal's would (pilot.press would also wait for the
                # whole process to idle, the search thread included, and count that wait).
                start = time.perf_counter()
                app.post_message(events.Key(char, char))
                while screen.shown_query != typed or \
                        listing_widget.drawn_at < listing_widget.set_at:
                    await asyncio.sleep(0.0005)
                keys.append(listing_widget.drawn_at - start)
                await pilot.pause()
            await pilot.press("end", "ctrl+u")
            while screen.shown_query != "":
                await asyncio.sleep(0.001)
            await pilot.pause()
    return keys, listing


pauses: list[float] = []
"""Full (generation 2) collections while the app ran, seconds each."""
_began: list[float] = []


def _gc_watch(phase: str, info: dict[str, int]) -> None:
    if info["generation"] == 2:
        if phase == "start":
            _began[:] = [time.perf_counter()]
        elif _began:
            pauses.append(time.perf_counter() - _began[0])


def timed_each(fn: object, items: list[str]) -> list[float]:
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)  # type: ignore[operator]
        out.append(time.perf_counter() - start)
    return out


def figures(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000, ordered[-1] * 1000


def row(label: str, ours: float, ref: float, goal: float | None) -> None:
    verdict = "" if goal is None else ("ok" if ours <= goal else "OVER GOAL")
    goal_text = f"(goal <= {goal:g} ms)" if goal is not None else ""
    print(f"  {label:<34} {ours:8.1f} ms  FTS5 {ref:8.1f} ms  ratio {ours / max(ref, 1e-9):6.1f}x"
          f"  {goal_text:<18} {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="three queries (CI)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the cases and the "
                        "index in DIR and reuse them on the next run (no rebuild)")
    parser.add_argument("--verbose", action="store_true", help="print every keystroke: "
                        "the text typed so far, ms in the app and through the library alone")
    args = parser.parse_args()
    queries = QUERIES[:3] if args.smoke else QUERIES
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; {CASES:,} cases, "
          f"{len(prefixes(queries))} keystrokes at {SIZE[0]}x{SIZE[1]}")
    with tempfile.TemporaryDirectory(prefix="fabtui-tui-cases-") as tmp:
        folder = args.keep or Path(tmp)
        os.environ.update(HOME=tmp, XDG_DATA_HOME=str(folder / "data"),
                          XDG_CONFIG_HOME=str(folder / "config"))
        os.environ.pop("FABTUI_CONFIG", None)
        docs = list(corpus(CASES))
        if not (folder / "cases").is_dir():
            write_cases(folder / "cases", docs)
        settings = dataclasses.replace(load_settings(), data_dir=folder / "data",
                                       case_dirs=(folder / "cases",))
        ws = Workspace(settings)
        start = time.perf_counter()
        library = ws.cases  # imports the case folder
        imported = time.perf_counter() - start
        start = time.perf_counter()
        library.search("warm up")  # builds the index
        indexed = time.perf_counter() - start
        print(f"  import {imported:.1f} s, index build {indexed:.1f} s (once, before typing)")
        (folder / "fts.db").unlink(missing_ok=True)
        db = fts_build(folder / "fts.db", docs)
        fts_search(db, "warm up")

        gc.callbacks.append(_gc_watch)
        keys, listing = asyncio.run(type_queries(ws, queries))
        gc.callbacks.remove(_gc_watch)
        typed = prefixes(queries)
        # FTS5 asked what the screen asks: the last word as a prefix while it is typed.
        ref = timed_each(lambda q: fts_search(db, as_you_type(q)), typed)
        bare = timed_each(lambda q: library.search(as_you_type(q), limit=LIMIT), typed)
        start = time.perf_counter()
        db.execute("SELECT id, title FROM cases").fetchall()
        listing_ref = time.perf_counter() - start
        for label, index in (("p50", 0), ("p99", 1), ("max", 2)):
            row(f"keystroke answered in the app {label}", figures(keys)[index],
                figures(ref)[index], KEY_GOAL_MS)
        for label, index in (("p50", 0), ("p99", 1)):
            row(f"library search, no app {label}", figures(bare)[index], figures(ref)[index],
                None)
        row("library listing shown", listing * 1000, listing_ref * 1000, None)
        if args.verbose:
            for key, text, alone in zip(keys, typed, bare, strict=True):
                print(f"    {text!r:<24} app {key * 1000:6.1f} ms  library {alone * 1000:6.1f} ms")
        slowest = sorted(zip(keys, typed, bare, strict=True), reverse=True)[:4]
        print("  slowest keystrokes (app, library alone): " + ", ".join(
            f"{text!r} {key * 1000:.0f} / {alone * 1000:.0f} ms" for key, text, alone in slowest))
        print(f"  full garbage collections in the app: {len(pauses)}"
              + (" (ms: " + " ".join(f"{p * 1000:.0f}" for p in pauses) + ")" if pauses else ""))
        db.close()
        ws.close()


if __name__ == "__main__":
    main()
