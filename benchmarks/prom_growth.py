"""How a live-view refresh from Prometheus grows with the fabric: three sizes, fitted exponents.

Runs `benchmarks/prom_refresh.py --mode sieve` (the path the shipped `auto` takes from 512 NICs
up without the recording rules; the same path at every size, so the sizes compare) at three
fabric sizes, each in its own process with its own Prometheus and exporters, and prints per
size the median refresh (wall), fabtui's CPU seconds a refresh (median, and mean of all the
refreshes) and Prometheus's, then each figure's exponent from the smallest size to the largest
and of what each step adds (fixed costs cancel out): 1 when a refresh grows as the fabric, 2
for a quadratic term. The sieve's budget bounds what a refresh asks Prometheus, so its figures
should grow less than the fabric; what must not grow faster is fabtui's own work (applying the
answers to the fabric's status, the snapshot the screen draws): the last line judges it, the
exponent of fabtui's mean CPU seconds a refresh from the smallest size to the largest (limit
1). The wall times follow the machine's load, and a median of a few refreshes picks one turn
of the sieve or another (their exponents swung 0.2-0.9 from run to run with 3 refreshes):
printed, not judged. Never fails on time.

    python benchmarks/prom_growth.py            # 256, 512, 1,024 nodes, 20 refreshes each
    python benchmarks/prom_growth.py --smoke    # 16, 32, 64 nodes, 10 refreshes each (CI)
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
from pathlib import Path

from growth import print_growth

HERE = Path(__file__).resolve().parent
PROMETHEUS = "/usr/bin/prometheus"

_WALL = re.compile(r"^closing: slowest / median / first refresh, wall\s+([\d.]+) s / "
                   r"([\d.]+) s / ([\d.]+) s", re.M)
_CPU = re.compile(r"^closing: CPU s a refresh, fabtui median / prometheus median, most\s+"
                  r"([\d.]+) / ([\d.]+), ([\d.]+)", re.M)
_MEAN = re.compile(r"^closing: CPU s a refresh, fabtui mean / prometheus mean of \d+\s+"
                   r"([\d.]+) / ([\d.]+)", re.M)


JUDGED = "fabtui CPU mean s"
"""The judged figure: fabtui's CPU seconds a refresh, the mean of all the 1 Hz refreshes (the
wall time follows the machine's load; a median of few refreshes picks one of the sieve's
turns or another, a mean weighs them all)."""


def measure(nodes: int, rounds: int) -> dict[str, float]:
    """One run of prom_refresh at `nodes`: its closing figures."""
    done = subprocess.run(
        [sys.executable, str(HERE / "prom_refresh.py"), "--mode", "sieve", "--nodes",
         str(nodes), "--rounds", str(rounds)],
        capture_output=True, text=True, timeout=1800, check=False)
    wall, cpu = _WALL.search(done.stdout), _CPU.search(done.stdout)
    mean = _MEAN.search(done.stdout)
    if done.returncode != 0 or wall is None or cpu is None or mean is None:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise SystemExit(f"prom_refresh.py at {nodes} nodes gave no closing figures "
                         f"(rc {done.returncode}):\n{tail}")
    return {"median refresh s": float(wall.group(2)), "slowest refresh s": float(wall.group(1)),
            "fabtui CPU s": float(cpu.group(1)), "prometheus CPU s": float(cpu.group(2)),
            JUDGED: float(mean.group(1)), "prometheus CPU mean s": float(mean.group(2))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="16, 32, 64 nodes (CI)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="refreshes at each size (default 20; smoke 10)")
    args = parser.parse_args()
    if not Path(PROMETHEUS).exists():
        print(f"{PROMETHEUS} not installed (apt-get install prometheus): nothing measured")
        return
    sizes = [16, 32, 64] if args.smoke else [256, 512, 1024]
    rounds = args.rounds or (10 if args.smoke else 20)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; `--mode sieve`, "
          f"{rounds} refreshes at 1 Hz a size")
    figures = {}
    for nodes in sizes:
        figures[nodes] = measure(nodes, rounds)
        print(f"  {nodes:>5,} nodes ({nodes * 8:,} NICs): "
              + ", ".join(f"{name} {value:.3f}" for name, value in figures[nodes].items()))
    print_growth(figures, "nodes", "as the fabric")
    judged = [figures[nodes][JUDGED] for nodes in sizes]
    exponent = math.log(max(judged[-1], 1e-9) / max(judged[0], 1e-9)) / \
        math.log(sizes[-1] / sizes[0])
    print(f"judged: fabtui's CPU s a refresh (mean of {rounds}), exponent {exponent:.2f} from "
          f"{sizes[0]:,} to {sizes[-1]:,} nodes (limit 1: no faster than the fabric)   "
          + ("ok" if exponent <= 1 else "GROWS FASTER THAN THE FABRIC"))
    print(f"(load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
