"""The simulated fabric at scale: a full switch counter poll of a 1,024-node x 8-GPU fabric.

Target (issue "The demo fabric", on the 2-core CI machine):
  - every switch answers `show interfaces counters` (SONiC leaves) / `show interfaces` (EOS
    spines), and the real parser reads every reply                      <= 5 s wall

Measured two ways, printed separately:
  1. the simulation's answers rendered and parsed in one process, for all switches (what the sim
     itself costs; the state of 24,576 ports at one moment, a PFC storm playing);
  2. the same poll through the real pexpect CLI-session transport for a sample of switches, each
     a sim client session answered by the long-lived sim server holding the whole fabric, kept
     open as fabtui keeps them (login, where the server builds the 1,024-node fabric once,
     reported apart).
Prints figures; never fails on timing.

    python benchmarks/sim_scale.py            # full size, 16 switch sessions
    python benchmarks/sim_scale.py --smoke    # one repetition, 4 sessions (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fabtui.parsers import registry
from fabtui.sim.core import Sim
from fabtui.sim.scenario import FaultKind, FaultSpec, Scenario
from fabtui.sim.state import SimState, write_state
from fabtui.sim.switch_cli import reply
from fabtui.sim.transports import SimCliTransport
from fabtui.topology.export import dump_yaml
from fabtui.topology.generate import RailOptimizedParams, rail_optimized
from fabtui.transports.cli_session import CliTarget
from fabtui.transports.ssh import SshTarget

PARAMS = RailOptimizedParams(name="sim-1024", nodes=1024, gpus_per_node=8, rails=8,
                             nodes_per_leaf=32, spines=32, uplinks_per_leaf=32)
STORM = FaultSpec(fault=FaultKind.PFC_STORM, component="node0517:mlx5_3", at=0)


def _command(flavor: str) -> str:
    return "show interfaces counters" if flavor == "sonic" else "show interfaces"


def poll_in_process(sim: Sim, t: float) -> int:
    """Render and parse every switch's counters; returns the number of ports read."""
    ports = 0
    for switch in sim.graph.switches.values():
        text, rejected = reply(sim, switch, _command(switch.flavor.value), t)
        assert not rejected, text
        ports += len(registry.get("switch-counters").parse(text).interfaces)  # type: ignore
    return ports


async def poll_sessions(transport: SimCliTransport, targets: list[CliTarget]) -> list[int]:
    """One counter poll of every target over its (kept) session; bytes read per switch."""
    results = await asyncio.gather(*(transport.run(t, _command(t.flavor), timeout=120)
                                     for t in targets))
    for result in results:
        assert result.ok, result.error_message
    return [len(r.output) for r in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one repetition, 4 sessions (CI)")
    args = parser.parse_args()
    repeat, sessions = (1, 4) if args.smoke else (3, 16)
    topology = rail_optimized(PARAMS)
    scenario = Scenario(name="bench", timeline=(STORM,))
    sim = Sim(topology, scenario)
    print(f"fabric: {len(topology.nodes)} nodes x {PARAMS.gpus_per_node} GPUs, "
          f"{len(topology.switches)} switches, {len(topology.links)} links; a PFC storm "
          f"playing; {os.cpu_count()} CPUs; median of {repeat}")
    times, ports = [], 0
    for i in range(repeat):
        start = time.perf_counter()
        ports = poll_in_process(sim, 600.0 + i)
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    verdict = "ok" if seconds <= 5.0 else "OVER TARGET"
    print(f"{'full poll, all switches (render + parse)':<46} {seconds:7.2f} s   target 5 s   "
          f"{verdict}   ({ports} ports)")

    with tempfile.TemporaryDirectory() as folder:
        topo_file = Path(folder) / "sim-1024.yaml"
        topo_file.write_text(dump_yaml(topology, "benchmark"))
        scenario_file = Path(folder) / "bench.yaml"
        scenario_file.write_text("name: bench\ntimeline:\n  - {fault: pfc-storm, component: "
                                 f"{STORM.component}, at: 0}}\n")
        state_file = Path(folder) / "state.json"
        write_state(state_file, SimState(topology=topo_file, scenario=scenario_file,
                                         epoch=time.time() - 600))
        transport = SimCliTransport(state_file, login_timeout=300)
        every = [s.name for s in topology.switches]
        names = every[:: max(1, len(every) // sessions)][:sessions]
        targets = [CliTarget(ssh=SshTarget(name=n, host=n), flavor=sim.graph.switches[n]
                             .flavor.value) for n in names]

        async def run() -> tuple[float, list[float]]:
            start = time.perf_counter()
            await poll_sessions(transport, targets)  # logs in: each switch loads the fabric
            login = time.perf_counter() - start
            polls = []
            for _ in range(repeat):
                begin = time.perf_counter()
                await poll_sessions(transport, targets)
                polls.append(time.perf_counter() - begin)
            await transport.close()
            return login, polls

        login, polls = asyncio.run(run())
        print(f"{f'poll over {len(targets)} kept CLI sessions (pexpect)':<46} "
              f"{statistics.median(polls):7.2f} s   (login with fabric load {login:.1f} s)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
