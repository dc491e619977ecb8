"""Fan-out: one probe on every NIC of the demo fabric, one after another vs concurrently.

Target (issue "One core for every face"): with every target answering after an added 0.5 s (a
slow management network, `FABTUI_SIM_LATENCY=0.5`), 64 NICs probed with `nic.ibstat` finish in
<= 3 s at the default concurrency (32), against ~32 s one after another.

Measured two ways, printed separately, each sequential (limit 1) vs concurrent (limit 32):
  1. through the simulated fabric's transports as `fabtui probe run` uses them: every command is
     a new process, the thin sim client (~20 ms of start-up), answered by the long-lived sim
     server (before it, a `python -m fabtui.sim node` process per command: 0.3-0.8 s of CPU
     each, 15.6 s for 64 concurrent commands on 2 cores);
  2. the same runner, probe, parser and simulated devices, with the node answering in this
     process after the same 0.5 s (`InProcessSimSshTransport`, as `fabtui runbook test` uses:
     no process per command, what the fan-out itself achieves).
Prints figures and ratios; never fails on timing.

    python benchmarks/probe_fanout.py            # 64 NICs
    python benchmarks/probe_fanout.py --smoke    # 8 NICs (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from fabtui.model.probe import ProbeDef, Verdict
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.probes.catalog import load_catalog
from fabtui.probes.runner import DEFAULT_FANOUT, ProbeRunner, Transports
from fabtui.probes.targets import ProbeTarget, resolve_set
from fabtui.sim import latency
from fabtui.sim.inprocess import InProcessSimSshTransport
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state, write_state
from fabtui.sim.transports import SimSshTransport

LATENCY_S = 0.5


async def sweep(runner: ProbeRunner, probe: ProbeDef, targets: list[ProbeTarget],
                limit: int) -> tuple[float, int]:
    """Seconds for the whole sweep, and how many targets came back ok."""
    start = time.perf_counter()
    ok = 0
    async for result in runner.sweep(probe, targets, limit=limit):
        ok += result.verdict is Verdict.OK
    return time.perf_counter() - start, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="8 NICs instead of 64 (CI)")
    args = parser.parse_args()
    pattern = "node00[1-2]:mlx5_[0-3]" if args.smoke else "node*:mlx5_*"
    os.environ[latency.LATENCY_VAR] = str(LATENCY_S)  # read by the device programs
    probe = load_catalog([shipped_dir("probes")])["nic.ibstat"]
    with tempfile.TemporaryDirectory() as folder:
        state_file = Path(folder) / "state.json"
        state = fresh_state(demo_topology(), find_scenario("healthy"), [shipped_templates()])
        write_state(state_file, state)
        sim = build_sim(state)
        targets = resolve_set(sim.graph, pattern, probe.target)
        print(f"nic.ibstat on {len(targets)} NICs ({pattern}), every device answering after "
              f"+{LATENCY_S:g} s; {os.cpu_count()} CPUs; concurrency {DEFAULT_FANOUT}")
        ways = {"sim transports (client per command)": SimSshTransport(state_file),
                "in-process devices (same latency)": InProcessSimSshTransport(state_file)}
        for label, transport in ways.items():
            runner = ProbeRunner(sim.graph, Transports(ssh=transport))
            one_by_one, ok_seq = asyncio.run(sweep(runner, probe, targets, 1))
            fanned, ok_fan = asyncio.run(sweep(runner, probe, targets, DEFAULT_FANOUT))
            goal = "" if args.smoke else \
                f"   target 3 s: {'ok' if fanned <= 3.0 else 'OVER TARGET'}"
            print(f"{label:<38} sequential {one_by_one:6.2f} s ({ok_seq} ok)   concurrent "
                  f"{fanned:6.2f} s ({ok_fan} ok)   ratio {one_by_one / fanned:5.1f}x{goal}")


if __name__ == "__main__":
    main()
