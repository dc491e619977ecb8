"""Start-up time of the commands an on-call engineer types first, beside Python's own.

Rows (issue "Speed", start-up), each the median of N runs, interleaved so that load on the
machine weighs on every command alike:
  - `fabtui --help`                      against `python -c "import click"`   goal <= 3x
  - bare `fabtui` (the overview)          against `python -c pass`
  - `fabtui topo show`                    against `python -c pass`
  - `fabtui parse FILE` (a real capture)  against `python -c pass`
The last three have no ratio goal; what matters is that they never import what they do not use
(the graph library, every subcommand, every parser), which tests/test_import_hygiene.py and
tests/test_parser_signatures.py assert. Prints figures; never fails on timing.

    python benchmarks/startup.py                     # 15 runs each
    python benchmarks/startup.py --smoke             # 3 runs each (CI)
    python benchmarks/startup.py --repo /other/tree  # the same, for another checkout
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CAPTURE = Path("tests/fixtures/nccl-tests/awsome-allreduce-2node-p4de-srun-prefix.txt")
"""A real nccl-tests capture (see the fixture folder's SOURCES.md)."""
HELP_GOAL = 3.0


def _commands(repo: Path) -> list[tuple[str, list[str], str]]:
    """(label, argv, reference label) for every row, references first."""
    fabtui = [sys.executable, "-m", "fabtui"]
    return [
        ("python -c pass", [sys.executable, "-c", "pass"], ""),
        ('python -c "import click"', [sys.executable, "-c", "import click"], ""),
        ("fabtui --help", [*fabtui, "--help"], 'python -c "import click"'),
        ("fabtui (overview)", fabtui, "python -c pass"),
        ("fabtui topo show", [*fabtui, "topo", "show"], "python -c pass"),
        (f"fabtui parse {CAPTURE.name}", [*fabtui, "parse", str(repo / CAPTURE)],
         "python -c pass"),
    ]


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="3 runs each (CI)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure")
    args = parser.parse_args()
    runs = 3 if args.smoke else args.runs
    repo = args.repo.resolve()
    commands = _commands(repo)
    with tempfile.TemporaryDirectory(prefix="fabtui-startup-") as tmp:
        work = Path(tmp)
        # A user with no config and an empty data folder: the demo fabric, as on first use.
        env = {k: v for k, v in os.environ.items() if not k.startswith("FABTUI_")}
        env.update(HOME=str(work), XDG_CONFIG_HOME=str(work / "config"),
                   XDG_DATA_HOME=str(work / "data"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(repo), env.get("PYTHONPATH")])))
        for _, argv, _ in commands:  # warm-up: bytecode caches, the demo fabric's state file
            _time(argv, env, work)
        seconds: dict[str, list[float]] = {label: [] for label, _, _ in commands}
        for _ in range(runs):
            for label, argv, _ in commands:
                seconds[label].append(_time(argv, env, work))
    median = {label: statistics.median(values) for label, values in seconds.items()}
    print(f"{os.cpu_count()} CPUs; median of {runs} runs; {repo}")
    print(f"{'command':<56}{'seconds':>9}  {'reference':<26}{'ref s':>7}{'ratio':>8}")
    for label, _, reference in commands:
        if not reference:
            continue
        ratio = median[label] / median[reference]
        verdict = ""
        if label == "fabtui --help":
            verdict = f"  goal <= {HELP_GOAL:.0f}x: " + \
                ("ok" if ratio <= HELP_GOAL else "OVER TARGET")
        print(f"{label:<56}{median[label]:>9.3f}  {reference:<26}{median[reference]:>7.3f}"
              f"{ratio:>7.1f}x{verdict}")


if __name__ == "__main__":
    main()
