"""Runbook engine overhead and lint speed.

Targets (issue "Runbooks", on the 2-core CI machine):
  - engine overhead per block, beyond the command itself            <= 20 ms
  - lint of 200 runbooks                                            <= 2 s

The overhead is measured on a 300-block runbook of checks, notes and decides (no command at all:
everything is engine: rendering, expressions, journal commits), and on `sh` blocks running
`true`, minus what the same `sh -c true` costs through the local transport alone. The journal is
a real SQLite file (WAL, one commit per event). Prints figures; never fails on timing.

    python benchmarks/runbook_scale.py            # full size
    python benchmarks/runbook_scale.py --smoke    # one repetition (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from fabtui.journal.store import Journal
from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.probes.runner import ProbeRunner
from fabtui.runbooks import expr
from fabtui.runbooks.engine import Engine, ScriptedOperator
from fabtui.runbooks.lint import lint
from fabtui.runbooks.reader import parse_runbook, read_runbook
from fabtui.transports.local import LocalTransport

HEAD = """---
id: bench
title: Engine overhead
tests: [{name: t, expect: {outcome: ok}}]
---

# Engine overhead
"""


def engine_runbook(steps: int, kind: str) -> str:
    """A runbook of `steps` steps, each with three blocks of `kind` (`pure` or `sh`)."""
    parts = [HEAD]
    for i in range(steps):
        parts.append(f"\n## Step {i}\n")
        if kind == "sh":
            parts.append(f"\n```sh {{id=s{i}}}\ntrue {{{{ n }}}}\n```\n")
            continue
        parts.append(f"\n```check {{id=c{i} set=\"n=n + 1 if n else 1\"}}\n"
                     f"fail if {i} < 0: impossible\nok: step {i} fine ({{{{ n }}}})\n```\n")
        parts.append(f"\n```note\nat step {i}, n={{{{ n }}}}\n```\n")
        parts.append(f"\n```decide\nn < 0 -> step-{i}\ndefault -> "
                     f"{'step-' + str(i + 1) if i + 1 < steps else 'end'}\n```\n")
    return "".join(parts)


def run_engine(text: str, folder: Path) -> tuple[float, int]:
    """Seconds and blocks for one headless run of `text`."""
    book = parse_runbook(text, "bench.md")
    journal = Journal(folder / f"journal-{time.monotonic_ns()}.sqlite")
    engine = Engine(book, inputs={"n": 0}, runner=ProbeRunner(None), catalog={},
                    journal=journal, operator=ScriptedOperator())
    engine.values["n"] = 0
    start = time.perf_counter()
    summary = asyncio.run(engine.run())
    seconds = time.perf_counter() - start
    journal.close()
    assert summary.outcome.value == "ok", summary.text()
    return seconds, len(book.blocks())


def bare_sh(count: int) -> float:
    """Seconds for `count` runs of `sh -c true` through the local transport alone."""
    transport = LocalTransport()

    async def go() -> None:
        for _ in range(count):
            await transport.run(["sh", "-c", "true 0"], timeout=10)

    start = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - start


def lint_library(count: int, folder: Path) -> tuple[float, int, int]:
    """Seconds to lint `count` runbooks (copies of the shipped library with new ids)."""
    sources = sorted(p for p in shipped_dir("runbooks").glob("*.md")
                     if p.name.lower() != "readme.md")
    for i in range(count):
        source = sources[i % len(sources)]
        text = re.sub(r"(?m)^id: (\S+)", rf"id: \1-{i}", source.read_text(), count=1)
        (folder / f"rb-{i:03d}.md").write_text(text)
    probes = list(load_catalog([shipped_dir("probes")]))
    start = time.perf_counter()
    issues = 0
    for path in sorted(folder.glob("rb-*.md")):
        # The copies repeat expressions: forget them per file, as 200 distinct runbooks would.
        expr._parsed.cache_clear()
        expr._names_and_functions.cache_clear()
        issues += len(lint(read_runbook(path, lenient=True), probes=probes))
    return time.perf_counter() - start, count, issues


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one repetition (CI)")
    args = parser.parse_args()
    repeat = 1 if args.smoke else 3
    print(f"{os.cpu_count()} CPUs; median of {repeat}")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        pure = [run_engine(engine_runbook(100, "pure"), folder) for _ in range(repeat)]
        seconds = statistics.median(s for s, _ in pure)
        blocks = pure[0][1]
        per_block = seconds / blocks
        print(f"{'engine, checks/notes/decides (' + str(blocks) + ' blocks)':<48} "
              f"{per_block * 1000:6.2f} ms/block   target 20 ms   "
              f"{'ok' if per_block <= 0.020 else 'OVER TARGET'}")
        count = 40
        sh_runs = [run_engine(engine_runbook(count, "sh"), folder)[0] for _ in range(repeat)]
        bare = statistics.median(bare_sh(count) for _ in range(repeat))
        overhead = (statistics.median(sh_runs) - bare) / count
        verdict = "ok" if overhead <= 0.020 else "OVER TARGET"
        print(f"{'engine, sh blocks beyond `sh -c true` itself':<48} "
              f"{overhead * 1000:6.2f} ms/block   target 20 ms   {verdict}   "
              f"(bare sh {bare / count * 1000:.1f} ms)")
        lint_dir = folder / "lint"
        lint_dir.mkdir()
        lint_s, linted, issues = lint_library(200, lint_dir)
        print(f"{'lint of ' + str(linted) + ' runbooks':<48} {lint_s:6.2f} s          "
              f"target 2 s     {'ok' if lint_s <= 2.0 else 'OVER TARGET'}   ({issues} issues)")


if __name__ == "__main__":
    main()
