"""The test suite's wall time as the README runs it (`python -m pytest`), beside its CPU time.

Row (issue "Speed"): the whole suite <= 150 s wall on a 2-core machine, no flaky test. `-n
auto` is two workers more than cores (tests/conftest.py). Printed beside it, as the reference,
the CPU seconds the run used (children included) over the cores: the wall time fully busy
cores would need, so the ratio tells how much of the run no core worked (1.0x: none). The
slowest tests of the run are listed after the row. Prints figures; never fails on timing (a
failing test does show as `(exit N)`).

    python benchmarks/suite.py              # the whole suite, -n auto
    python benchmarks/suite.py --workers 2  # two workers
    python benchmarks/suite.py --smoke      # only collects it (CI)
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from parse_scale import run  # the same measured child process as every parse figure

REPO = Path(__file__).resolve().parent.parent
GOAL_S = 150.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="collect only (CI)")
    parser.add_argument("--workers", default="auto", help="-n for pytest-xdist (default auto)")
    args = parser.parse_args()
    # pyproject's addopts already hold one -q: a second (-qq) drops the run's summary line,
    # which the count of tests is read from; quiet collection prints `file: N` lines instead.
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
              "--rootdir", str(REPO), str(REPO / "tests")]
    if args.smoke:
        argv = [*pytest, "-q", "-n", "0", "--collect-only"]
    else:
        argv = [*pytest, "-n", str(args.workers), "--durations=10"]
    os.chdir(REPO)
    seconds, _, status, output, cpu = run(argv)
    text = output.decode(errors="replace")
    # The summary line (`1 failed, 2519 passed in 210.9s`), the last of its kind: a failing
    # test's captured output may hold such words too. Quiet collection prints `file: N` per
    # file instead of a total.
    summaries = re.findall(r"^.*\d+ (?:passed|failed|tests? collected).*$", text, re.MULTILINE)
    counted = re.findall(r"(\d+) (?:passed|failed|skipped|errors?|tests? collected)",
                         summaries[-1]) if summaries else []
    tests = str(sum(map(int, counted))) if counted else \
        str(sum(int(n) for n in re.findall(r"^tests/\S+: (\d+)$", text, re.MULTILINE)))
    print(f"{os.cpu_count()} CPUs; {tests} tests; {'collect only' if args.smoke else argv[-2:]}")
    label = f"pytest {'--collect-only' if args.smoke else f'-n {args.workers}'}" + \
        ("" if status == 0 else f" (exit {status})")
    workers = 1 if args.smoke else (os.cpu_count() or 1)
    reference = cpu / workers
    verdict = "" if args.smoke else \
        f"   goal <= {GOAL_S:.0f} s: " + ("ok" if seconds <= GOAL_S else "OVER TARGET")
    print(f"{label:<28} {seconds:7.1f} s   CPU {cpu:7.1f} s   CPU/{workers} {reference:7.1f} s"
          f"   ratio {seconds / max(reference, 1e-9):4.2f}x{verdict}")
    if not args.smoke:
        durations = text.split("slowest 10 durations", 1)[-1].splitlines()[1:11]
        print("\n".join(line for line in durations if line.strip()))


if __name__ == "__main__":
    main()
