"""What one command on the simulated fabric costs, through the transports `fabtui probe run` uses.

Target (issue "Speed"): a simulated node command, and a command in a simulated switch session,
cost milliseconds (they used to cost a Python process importing the whole simulator: 0.3-0.8 s
per node command, ~0.6 s per switch login). Printed beside references measured in this run:
  - `python -I -S -c pass`: the floor for any command that is a process (as over ssh);
  - `python -m fabtui.sim node ...`: the device program in its own process (the old way);
and, for the switch, one `show interfaces counters` per kept session against its login.
Medians; never fails on timing.

    python benchmarks/sim_commands.py            # 20 repetitions
    python benchmarks/sim_commands.py --smoke    # 3 repetitions (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import fresh_state, write_state
from fabtui.sim.transports import SimCliTransport, SimSshTransport
from fabtui.transports.cli_session import CliTarget
from fabtui.transports.ssh import SshTarget

NODE = SshTarget(name="node001", host="node001")
COMMAND = ["ethtool", "-S", "enp23s0f0np0"]
LEAF = CliTarget(ssh=SshTarget(name="leaf-g00-r0", host="leaf-g00-r0"), flavor="sonic")


def _median_s(runs: int, work) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _row(label: str, seconds: float, reference: float, ref_label: str) -> None:
    print(f"{label:<44} {seconds * 1000:8.1f} ms   {ref_label} {reference * 1000:8.1f} ms   "
          f"ratio {seconds / reference:6.2f}x")


async def _node_commands(state: Path, runs: int) -> float:
    transport = SimSshTransport(state)
    await transport.run(NODE, COMMAND, timeout=60)  # starts the sim server if none runs
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = await transport.run(NODE, COMMAND, timeout=60)
        times.append(time.perf_counter() - started)
        assert result.ok, result.error_message
    return statistics.median(times)


async def _switch(state: Path, runs: int) -> tuple[float, float]:
    transport = SimCliTransport(state)
    try:
        started = time.perf_counter()
        first = await transport.run(LEAF, "show interfaces counters", timeout=60)
        login = time.perf_counter() - started
        assert first.ok, first.error_message
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            result = await transport.run(LEAF, "show interfaces counters", timeout=60)
            times.append(time.perf_counter() - started)
            assert result.ok, result.error_message
        return login, statistics.median(times)
    finally:
        await transport.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="3 repetitions (CI)")
    args = parser.parse_args()
    runs = 3 if args.smoke else 20
    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder) / "state.json"
        write_state(state, fresh_state(demo_topology(), find_scenario("healthy"),
                                       [shipped_templates()]))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        floor = _median_s(runs, lambda: subprocess.run([sys.executable, "-I", "-S", "-c",
                                                        "pass"], check=True))
        old = _median_s(min(runs, 5), lambda: subprocess.run(
            [sys.executable, "-m", "fabtui.sim", "--state", str(state), "node", "--name",
             NODE.name, "--", *COMMAND], env=env, stdout=subprocess.DEVNULL, check=True))
        node = asyncio.run(_node_commands(state, runs))
        login, command = asyncio.run(_switch(state, runs))
    print(f"demo fabric, {os.cpu_count()} CPUs, median of {runs}")
    _row("node command (sim transport)", node, floor, "python -c pass")
    _row("node command (sim transport)", node, old, "own process   ")
    _row("switch command in a kept session", command, floor, "python -c pass")
    _row("switch login + first command", login, old, "own process   ")
    print(f"target: a command costs milliseconds: node "
          f"{'ok' if node < 0.1 else 'OVER'}, switch {'ok' if command < 0.1 else 'OVER'}")


if __name__ == "__main__":
    main()
