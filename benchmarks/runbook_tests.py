"""`fabtui runbook test`, every shipped case, on the simulated fabric: wall time.

Target (issue "Speed", 2-core CI machine): all cases <= 90 s wall (was 204-381 s: a process
per simulated command, a real 1 s sleep between a counter probe's readings, fixed waits).
Printed beside references measured in this run: the cases' own time as the command reports
it (the rest is start-up and loading), and `fabtui --help` (the command's start-up alone).
Never fails on timing.

    python benchmarks/runbook_tests.py            # every case
    python benchmarks/runbook_tests.py --smoke    # one runbook's cases (CI)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

TARGET_S = 90.0


def _timed(argv: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fabtui", *argv], capture_output=True,
                          text=True, check=False)
    return time.perf_counter() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one runbook's cases (CI)")
    args = parser.parse_args()
    names = ["busbw-low"] if args.smoke else []
    startup, _ = _timed(["--help"])
    wall, out = _timed(["runbook", "test", "--json", *names])
    rows = json.loads(out)
    own = sum(float(r["seconds"]) for r in rows)
    passed = sum(1 for r in rows if r["passed"])
    print(f"fabtui runbook test {' '.join(names) or '(all)'}: {len(rows)} cases, "
          f"{passed} passed")
    print(f"wall {wall:7.1f} s   cases' own time {own:7.1f} s   ratio "
          f"{wall / max(own, 1e-9):5.2f}x   `fabtui --help` {startup:5.2f} s   "
          f"target {TARGET_S:g} s: "
          f"{'ok' if wall <= TARGET_S else 'OVER TARGET'}")


if __name__ == "__main__":
    main()
