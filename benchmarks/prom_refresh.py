"""Reading a 1,024-node x 8-NIC fabric with 160 switches from a real Prometheus, at 1 Hz.

The fabric is generated (rail-optimized, 64 nodes per leaf: 128 leaves and 32 spines), plays a
PFC storm on node0517:mlx5_3, and is served by `fabtui sim exporter` (its own process) as
dcgm-exporter, node_exporter and SONiC-exporter series; a real Prometheus (Debian's
`/usr/bin/prometheus`, on loopback) scrapes it and evaluates the recording rules of
`fabtui prom rules` every scrape interval once loaded. The default is the shipped setting,
`mode = "auto"`: measured first as a site starts (no rules loaded: from 512 NICs up it sieves raw
series), then with the rules loaded by the one command the live view offers, which `auto` detects
by itself (the tuned figure beside the shipped one); `--mode recorded`, `sieve` or `full` measure
one mode. Measured, each printed:
  - one full refresh of the Fabric screen's data: every PromQL query of `PrometheusSource.poll`,
    the probe results built and judged, applied to `FabricStatus` and frozen into a snapshot
    (what the screen draws from); goal <= 2 s;
  - the same repeated at 1 Hz (`--rounds`, 60): the median and slowest refresh, and the memory
    (RSS) at the start and end; sieving raw series, the first sieve is spread over the first
    refreshes (the devices not sieved yet shown as not judged): how many devices the first
    refresh judged, the refresh by which every device was judged, and the slowest of all
    refreshes, the first included;
  - beside it, the direct-probe fan-out for the same fabric: `nic.ethtool` (the live view's
    NIC probe) swept over a sample of NICs through the probe runner at the default concurrency,
    every device answering after +0.5 s (as benchmarks/probe_fanout.py), and what that rate
    means for all 8,192 NICs.
Also checks the storming port reads as failing. Prints figures; never fails on timing. The two
`closing:` lines are the figures to quote: the slowest refresh of all (the first included, the
goal being every refresh within 2 s, not the median), the median and the first, the slowest's
ratio to the goal; and the CPU seconds of a refresh, fabtui's and Prometheus's (median, and
Prometheus's most), with the machine's load average as the refreshes began and ended (on a
shared machine the wall times follow the load; the CPU seconds much less). The slowest
refreshes are listed by number with what each sieved per element kind (`whole`, or how many
devices) and the CPU the exporters used meanwhile (a scrape being served and ingested).

The RSS is printed after refresh 1, 10, 30, 60, 120, 240, ... and the last, to show whether it
levels off. `--profile FILE` runs the 1 Hz refreshes under cProfile (stats to FILE, the top
functions printed); `--tracemalloc A,B` prints what was allocated between refresh A and B and
is still held (both to find a refresh's cost and what grows; they slow the refreshes down).

    python benchmarks/prom_refresh.py            # 1,024 nodes, 60 refreshes
    python benchmarks/prom_refresh.py --smoke    # 16 nodes, 3 refreshes (CI)
    python benchmarks/prom_refresh.py --nodes 256 --interval 15s --rounds 120
    python benchmarks/prom_refresh.py --rounds 100 --unpaced   # the budget not paced
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fabtui.config import load_settings  # noqa: E402
from fabtui.model.element import device_of  # noqa: E402
from fabtui.probes.runner import DEFAULT_FANOUT, ProbeRunner, Transports  # noqa: E402
from fabtui.probes.targets import resolve_set  # noqa: E402
from fabtui.prom.pace import Pace  # noqa: E402
from fabtui.sim import latency  # noqa: E402
from fabtui.sim.exporter import FAMILIES, scrape_config  # noqa: E402
from fabtui.sim.inprocess import InProcessSimSshTransport  # noqa: E402
from fabtui.sim.state import build_sim, read_state, state_file  # noqa: E402
from fabtui.topology.export import dump_yaml  # noqa: E402
from fabtui.topology.generate import RailOptimizedParams, rail_optimized  # noqa: E402
from fabtui.views.fabricmap import FabricMap  # noqa: E402
from fabtui.views.status import FabricStatus, Health, PollState  # noqa: E402
from fabtui.workspace import Workspace  # noqa: E402
from fabtui.workspace.promsource import PrometheusSource, live_source  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
from probe_fanout import LATENCY_S, sweep  # noqa: E402

from tests.support.prom_server import PROMETHEUS, PrometheusServer, free_port  # noqa: E402

GOAL_S = 2.0
STORM = "node0517:mlx5_3"
SCENARIO = """name: bench-storm
description: node0517 mlx5_3 sends PFC pause without end
duration: 1h
start: 1m
timeline:
  - at: 0s
    fault: pfc-storm
    component: {nic}
    params: {{stall_prevention_s: 0}}
"""


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def build(folder: Path, nodes: int) -> tuple[Path, str]:
    """The topology and scenario files, and the config that reads them from Prometheus."""
    params = RailOptimizedParams(name=f"prom-{nodes}", nodes=nodes, gpus_per_node=8, rails=8,
                                 nodes_per_leaf=min(64, nodes), spines=min(32, nodes),
                                 uplinks_per_leaf=min(32, nodes))
    topology = folder / "fabric.yaml"
    topology.write_text(dump_yaml(rail_optimized(params)))
    width = max(3, len(str(nodes)))
    storm = STORM if nodes >= 517 else f"node{6:0{width}d}:mlx5_3"
    scenario = folder / "storm.yaml"
    scenario.write_text(SCENARIO.format(nic=storm))
    return topology, storm


def refresh(source: PrometheusSource, status: FabricStatus, round_no: int) -> float:
    """One full refresh: poll, apply, snapshot; seconds taken (CPU seconds of this process
    are added to `CPU`: on a shared machine the wall time includes others' work)."""
    async def run() -> None:
        async with contextlib.aclosing(source.poll()) as stream:
            async for update in stream:
                status.take(update)

    started, cpu = time.perf_counter(), time.process_time()
    asyncio.run(run())
    status.snapshot(round_no, PollState.WAITING)
    CPU.append(time.process_time() - cpu)
    return time.perf_counter() - started


CPU: list[float] = []
LOAD: list[float] = [0.0, 0.0, 0.0]
"""The machine's load average as the 1 Hz refreshes begin (the shared machine's other work)."""


def wrap_queries(source: PrometheusSource,
                 wrapper: Callable[[Callable[..., Any], tuple[Any, ...]], Any]) -> None:
    """Route the source's client calls (`query`, `query_range`) through `wrapper(method, args)`."""
    client = source.client
    for name in ("query", "query_range"):
        method = getattr(client, name)
        setattr(client, name, lambda *args, _method=method: wrapper(_method, args))


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Breakdown:
    """Where each 1 Hz refresh's wall time went: its slowest query, and the CPU Prometheus and
    the exporters (the simulated nodes' and switches' own processes) used meanwhile, which on
    this one machine compete with the refresh for its cores."""

    def __init__(self, source: PrometheusSource, others: dict[str, list[int]]) -> None:
        self.others = others
        self.queries: list[tuple[float, str]] = []
        self.source = source
        self.rows: list[tuple[float, float, float, str, dict[str, float]]] = []
        self.numbers: list[tuple[int, str]] = []
        """Per row: (refresh number, what it sieved: per kind, `whole` or how many devices)."""
        self.asked: list[tuple[int, int]] = []
        """Per refresh: (queries, series answered): what does not depend on the load."""
        self.every: dict[str, list[tuple[float, int]]] = {}
        """Per query text: (seconds, series answered) of each time it was asked."""
        self.answered = 0
        self.began = 0.0
        self.timeline: list[tuple[float, float, int, str]] = []
        """The last refresh's queries: (start after the refresh began, seconds, series, text)."""
        wrap_queries(source, self._timed)

    def _timed(self, method: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        began = time.perf_counter()
        count = 0
        try:
            found = method(*args)
            count = len(found)
            return found
        finally:
            took = time.perf_counter() - began
            self.timeline.append((began - self.began, took, count, str(args[0])))
            self.queries.append((took, str(args[0])))
            self.every.setdefault(str(args[0]), []).append((took, count))
            self.answered += count

    def _cpu(self) -> dict[str, float]:
        return {name: sum(process_cpu(pid) for pid in pids) for name, pids in self.others.items()}

    def around(self, wall_of: Callable[[], float], round_no: int = 1) -> float:
        self.queries.clear()
        self.timeline.clear()
        self.answered = 0
        self.began = time.perf_counter()
        before = self._cpu()
        wall = wall_of()
        after = self._cpu()
        self.asked.append((len(self.queries), self.answered))
        slowest = max(self.queries, default=(0.0, ""))
        self.rows.append((wall, CPU[-1], slowest[0], slowest[1][:70],
                          {k: after[k] - before[k] for k in after}))
        sieved = ", ".join(f"{kind} {'whole' if n is None else n}"
                           for kind, n in sorted(self.source.last_sieve.items()) if n != 0)
        budget = getattr(self.source, "sieve_budget", None)
        paced = "" if budget is None else f" (budget {budget:,})"
        self.numbers.append((round_no, (sieved or "nothing") + paced))
        return wall

    def first(self) -> None:
        """The first refresh (already timed by `around`): its cost by process, then its
        queries in the order they were asked, grouped into the rounds a refresh makes (a
        round: the queries asked together, one wave of answers to wait for)."""
        _, cpu, _, _, others = self.rows[-1]
        queries, series = self.asked[-1]
        print(f"{'  first refresh: queries, series; CPU s fabtui / prometheus':<58}"
              f"{queries:7d}, {series:,}; {cpu:.2f} / {others.get('prometheus', 0.0):.2f}")
        rounds: list[list[tuple[float, float, int, str]]] = []
        for item in sorted(self.timeline):
            if rounds and item[0] < rounds[-1][0][0] + 0.05:
                rounds[-1].append(item)
            else:
                rounds.append([item])
        for items in rounds:
            start = items[0][0]
            end = max(at + took for at, took, _, _ in items)
            slowest = max(items, key=lambda item: item[1])
            print(f"    at {start:5.2f} s: {len(items):3d} queries, {sum(i[2] for i in items):>7,} "
                  f"series, done at {end:5.2f} s; slowest {slowest[1]:.2f} s "
                  f"{slowest[3][:60]!r}")
        self.rows.clear()
        self.asked.clear()
        self.numbers.clear()

    def report(self, count: int = 5) -> None:
        print("slowest refreshes: number, wall, CPU here, others' CPU meanwhile, devices sieved "
              "per kind; slowest query (s, text)")
        ranked = sorted(zip(self.rows, self.numbers, strict=True), reverse=True)
        for (wall, cpu, query_s, text, others), (number, sieved) in ranked[:count]:
            spent = ", ".join(f"{k} {v:.2f}" for k, v in others.items())
            print(f"  #{number:<4d} {wall:5.2f} s  CPU {cpu:4.2f}  {spent}  sieved: {sieved}\n"
                  f"        query {query_s:4.2f} {text!r}")

    def summary(self) -> str:
        """Median per refresh: queries, series answered, and the CPU seconds each process
        used (fabtui's own, Prometheus's): on a shared machine these, not the wall time,
        say what a refresh costs."""
        def median(values: list[float]) -> float:
            return sorted(values)[len(values) // 2] if values else 0.0
        queries = median([float(q) for q, _ in self.asked])
        series = median([float(n) for _, n in self.asked])
        prom = median([others.get("prometheus", 0.0) for *_, others in self.rows])
        here = median([cpu for _, cpu, *_ in self.rows])
        return (f"{queries:.0f} queries, {series:,.0f} series answered; CPU s: fabtui "
                f"{here:.2f}, prometheus {prom:.2f}")

    def costliest(self, server: PrometheusServer, count: int = 8) -> None:
        """The queries Prometheus spends most on: each distinct text asked again with
        `stats=all` (its own evaluation time and the samples it touched, which do not
        depend on the load), the largest first."""
        import json
        import urllib.parse
        import urllib.request

        rows = []
        for text, seen in self.every.items():
            query = urllib.parse.urlencode({"query": text, "stats": "all"})
            try:
                with urllib.request.urlopen(f"{server.url}/api/v1/query?{query}",
                                            timeout=60) as answer:
                    stats = json.load(answer)["data"].get("stats", {})
            except OSError:
                continue
            samples = stats.get("samples", {}).get("totalQueryableSamples", 0)
            evaluated = stats.get("timings", {}).get("evalTotalTime", 0.0)
            rows.append((samples, evaluated, len(seen), seen[-1][1], text))
        rows.sort(reverse=True)
        print(f"queries by samples Prometheus reads (stats=all): {len(rows)} distinct; "
              f"{sum(r[0] for r in rows):,} samples, {sum(r[1] for r in rows):.2f} s "
              "evaluating them once each")
        for samples, evaluated, asked, answered, text in rows[:count]:
            print(f"  {samples:>10,} samples {evaluated:6.2f} s  x{asked:<3} -> {answered:>6,} "
                  f"series  {text[:90]!r}")


def fanout(ws: Workspace, sample: str) -> tuple[int, float]:
    """(NICs, seconds) for a `nic.ethtool` sweep of `sample` at the default concurrency."""
    os.environ[latency.LATENCY_VAR] = str(LATENCY_S)
    path = state_file(ws.settings.data_dir)
    state = read_state(path)
    assert state is not None
    sim = build_sim(state)
    probe = ws.catalog["nic.ethtool"]
    targets = resolve_set(sim.graph, sample, probe.target)
    runner = ProbeRunner(sim.graph, Transports(ssh=InProcessSimSshTransport(path)))
    seconds, _ok = asyncio.run(sweep(runner, probe, targets, DEFAULT_FANOUT))
    return len(targets), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="16 nodes, 3 refreshes (CI)")
    parser.add_argument("--nodes", type=int, default=None,
                        help="nodes of the generated fabric (default 1,024; smoke 16)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="refreshes at 1 Hz after the first (default 60; smoke 3)")
    parser.add_argument("--mode", choices=("auto", "recorded", "sieve", "full"), default="auto",
                        help="how the source reads (default auto, the shipped setting: first "
                             "without the rules, then with them loaded and detected)")
    parser.add_argument("--interval", default=None,
                        help="Prometheus's scrape and rule interval (default 1s up to 64 "
                             "nodes, else 60s: the big fabric's switch scrape takes ~15 s)")
    parser.add_argument("--first-sieve", default=None, metavar="N|whole",
                        help="elements a refresh sieves of devices never sieved (default the "
                             "shipped FIRST_SIEVE_ELEMENTS; `whole`: the first refresh sieves "
                             "everything, as before issue 42's spread first sieve)")
    parser.add_argument("--unpaced", action="store_true",
                        help="the sieve's budget fixed at the most (FIRST_SIEVE_ELEMENTS or "
                             "--first-sieve), as before fabtui.prom.pace: the two side by side")
    parser.add_argument("--profile", type=Path, default=None,
                        help="cProfile the 1 Hz refreshes into this file; print the top")
    parser.add_argument("--tracemalloc", default=None, metavar="A,B",
                        help="print the allocations made between refresh A and B still held")
    args = parser.parse_args()
    if not Path(PROMETHEUS).exists():
        print(f"{PROMETHEUS} not installed (apt-get install prometheus): nothing measured")
        return
    nodes, rounds = (16, 3) if args.smoke else (1024, 60)
    nodes, rounds = args.nodes or nodes, args.rounds or rounds
    # A scrape of the big fabric's switches takes the simulator ~15 s (it computes every
    # counter at the scrape's moment): Prometheus scrapes every `interval`.
    interval, window = ("1s", "4s") if nodes <= 64 else ("60s", "3m")
    if args.interval:
        interval = args.interval
        window = f"{max(4, 3 * int(_seconds(interval)))}s"
    probes = Probes(args.profile, tuple(int(n) for n in args.tracemalloc.split(","))
                    if args.tracemalloc else None)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        topology, storm = build(folder, nodes)
        config = folder / "config.toml"
        config.write_text(f'topology = "{topology}"\nsimulate = true\nscenario = '
                          f'"{folder / "storm.yaml"}"\ndata_dir = "{folder / "data"}"\n')
        env = {**os.environ, "PYTHONPATH": str(REPO), "FABTUI_CONFIG": str(config)}
        env.pop(latency.LATENCY_VAR, None)
        exporters: list[subprocess.Popen[str]] = []
        prometheus: PrometheusServer | None = None
        try:
            prometheus = start(exporters, env, interval, folder)
            others = {"prometheus": [prometheus.process.pid],
                      "exporters": [e.pid for e in exporters]}
            first_sieve = None if args.first_sieve is None else \
                0 if args.first_sieve == "whole" else int(args.first_sieve)
            measure(prometheus, config, window, interval, storm, rounds, args.mode, probes,
                    others, first_sieve, args.unpaced)
        finally:
            if prometheus is not None:
                prometheus.stop()
            for exporter in exporters:
                exporter.terminate()
                exporter.wait(30)
        ws = Workspace(load_settings(config))
        nics = sum(len(n.nics) for n in ws.graph().nodes.values())
        sample = "node000?:mlx5_*" if nodes >= 1000 else "node00[1-2]:mlx5_[0-3]"
        count, seconds = fanout(ws, sample)
        per_wave = seconds / max(1, -(-count // DEFAULT_FANOUT))
        waves = -(-nics // DEFAULT_FANOUT)
        print(f"{'direct probes: nic.ethtool on ' + str(count) + ' NICs (+0.5 s each)':<58}"
              f"{seconds:7.2f} s at concurrency {DEFAULT_FANOUT}")
        print(f"{f'direct probes: all {nics:,} NICs at that rate (estimate)':<58}"
              f"{per_wave * waves:7.0f} s ({waves} waves of {DEFAULT_FANOUT})")


def _seconds(duration: str) -> float:
    return float(duration[:-1]) * {"s": 1, "m": 60}[duration[-1]]


class Probes:
    """The optional profiler and tracemalloc snapshots around the 1 Hz refreshes."""

    def __init__(self, profile: Path | None, snapshots: tuple[int, ...] | None) -> None:
        import cProfile

        self.profile = profile
        self.profiler = cProfile.Profile() if profile else None
        self.snapshots = snapshots
        self.taken: list[object] = []
        self.threads: list[object] = []

    def begin(self, source: PrometheusSource) -> None:
        if self.snapshots:
            import tracemalloc

            tracemalloc.start(3)
        if self.profiler:
            self.profiler.enable()
            self._in_threads(source)

    def _in_threads(self, source: PrometheusSource) -> None:
        """Profile the client's calls too: they run on the source's own threads,
        which the main thread's profiler does not see."""
        wrap_queries(source, self._profiled)

    def _profiled(self, method: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        import cProfile

        profiler = cProfile.Profile()
        try:
            return profiler.runcall(method, *args)
        finally:
            self.threads.append(profiler)

    def after(self, round_no: int) -> None:
        if self.snapshots and round_no in self.snapshots:
            import tracemalloc

            self.taken.append(tracemalloc.take_snapshot())

    def report(self) -> None:
        if self.profiler and self.profile:
            import pstats

            self.profiler.disable()
            self.profiler.dump_stats(self.profile)
            stats = pstats.Stats(str(self.profile))
            stats.sort_stats("tottime").print_stats(20)
            stats.sort_stats("cumulative").print_stats(30)
            if self.threads:
                print("the client's calls (worker threads):")
                threads = pstats.Stats(*self.threads)  # type: ignore[arg-type]
                threads.sort_stats("tottime").print_stats(15)
        if len(self.taken) == 2:
            import tracemalloc

            first, last = self.taken
            assert isinstance(first, tracemalloc.Snapshot)
            assert isinstance(last, tracemalloc.Snapshot)
            diff = last.compare_to(first, "traceback")
            print(f"still held, allocated between refresh {self.snapshots}: "
                  f"{sum(d.size_diff for d in diff) / 2**20:+.2f} MB")
            for stat in diff[:12]:
                print(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks")
                for line in stat.traceback.format()[-6:]:
                    print("     ", line)


def start(exporters: list[subprocess.Popen[str]], env: dict[str, str], interval: str,
          folder: Path) -> PrometheusServer:
    """One exporter process per family (each exporter is its own process on a real node),
    and a Prometheus scraping them."""
    scrape = ""
    for family in FAMILIES:
        port = free_port()
        exporter = subprocess.Popen([sys.executable, "-m", "fabtui", "sim", "exporter",
                                     "--port", str(port)], cwd=REPO, env=env,
                                    stderr=subprocess.PIPE, text=True)
        exporters.append(exporter)
        assert exporter.stderr is not None
        line = ""
        while "serving" not in line:  # after the demo's notice of what it plays
            line = exporter.stderr.readline()
            assert line, "the exporter exited"
        scrape += scrape_config("bench", f"127.0.0.1:{port}", interval, (family,))
    return PrometheusServer(folder, scrape)


def measure(prometheus: PrometheusServer, config: Path, window: str, interval: str,
            storm: str, rounds: int, mode_setting: str, probes: Probes,
            others: dict[str, list[int]], first_sieve: int | None = None,
            unpaced: bool = False) -> None:
    """Wait for the first rates (and, recorded, the rules' first evaluation), then time the
    refreshes and print the figures."""
    prometheus.wait_ready()
    started = time.monotonic()
    prometheus.wait_for(f"rate(sonic_interface_receive_pfc_packets[{window}]) > 0", 900)
    waited = time.monotonic() - started
    series = prometheus_series(prometheus)
    config.write_text(config.read_text() + f'source = "prometheus"\n[prometheus]\n'
                      f'url = "{prometheus.url}"\nwindow = "{window}"\n'
                      f'stale_after = "10m"\ntimeout = "30s"\nmode = "{mode_setting}"\n')
    ws = Workspace(load_settings(config))
    source = live_source(ws)
    assert source is not None
    if first_sieve is not None:  # 0: whole
        source.first_sieve_elements = first_sieve or None
    if unpaced:  # never slow (an endless target), always the most
        source._pace = Pace(share=1.0, target_s=float("inf"))
    ruled = ""
    if source.recorded:
        began = time.monotonic()
        rules = source.rules(interval)
        prometheus.load_rules(rules, 600)
        ruled = (f"; {rules.count('- record:')} recording rules, first evaluated after "
                 f"{time.monotonic() - began:.0f} s")
    graph = ws.graph()
    fabric = FabricMap.build(graph)
    status = FabricStatus(fabric)
    nics = sum(len(n.nics) for n in graph.nodes.values())
    print(f"fabric: {len(graph.nodes)} nodes x 8 GPUs, {nics} NICs, {len(graph.switches)} "
          f"switches; {series:,} series in Prometheus (scrape every {interval}, first rates "
          f"after {waited:.0f} s{ruled}); {os.cpu_count()} CPUs")
    breakdown = Breakdown(source, others)
    first = breakdown.around(functools.partial(refresh, source, status, 1))
    port_of = fabric.cells[(storm.partition(":")[0], 3)][0].port
    assert port_of is not None
    storming = status.snapshot(1, PollState.WAITING).of(port_of)
    mode = ("recorded sieve" if source.recorded else "sieve") if source.sieving else "full read"
    mode = f"{mode_setting}: {mode}" if mode_setting != mode.split()[0] else mode
    print(f"{f'first refresh, {mode} (poll + judge + apply + snapshot)':<58}{first:7.2f} s   "
          f"goal {GOAL_S:g} s: {'ok' if first <= GOAL_S else 'OVER GOAL'}   "
          f"({CPU[-1]:.2f} s CPU here)")
    breakdown.first()
    judged_by = None if source.unjudged else 1
    devices = len(graph.nodes) + len(graph.switches)
    waiting = len({device_of(key) for key in source.unjudged})
    print(f"{'  first refresh: devices judged (the others: not judged yet)':<58}"
          f"{devices - waiting:7,} of {devices:,}")
    start_rss = rss_mb()
    times = []
    marks = {1, 10, 30, *(60 * 2**k for k in range(12)), rounds + 1}
    rss = [f"1: {start_rss:.0f}"]
    probes.begin(source)
    LOAD[:] = os.getloadavg()
    for round_no in range(2, rounds + 2):
        began = time.monotonic()
        times.append(breakdown.around(functools.partial(refresh, source, status, round_no),
                                      round_no))
        if judged_by is None and not source.unjudged:
            judged_by = round_no
            storming = status.snapshot(round_no, PollState.WAITING).of(port_of)
        probes.after(round_no)
        if round_no in marks:
            rss.append(f"{round_no}: {rss_mb():.0f}")
        time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))
    probes.report()
    print(f"{'every device judged by refresh (1 Hz)':<58}"
          f"{judged_by if judged_by is not None else 'NOT within ' + str(rounds + 1):>7}")
    print(f"{'storming port ' + port_of + ', all judged':<58}"
          f"{storming.value:>7}{'' if storming is Health.FAIL else '   (expected fail)'}")
    times.sort()
    cpu = sorted(CPU[1:])
    print(f"{f'{rounds} refreshes at 1 Hz: median / slowest':<58}"
          f"{times[len(times) // 2]:7.2f} s / {times[-1]:.2f} s   (CPU here: median "
          f"{cpu[len(cpu) // 2]:.2f} s)")
    print(f"{'slowest refresh of all, the first included':<58}{max(first, times[-1]):7.2f} s   "
          f"goal {GOAL_S:g} s: {'ok' if max(first, times[-1]) <= GOAL_S else 'OVER GOAL'}")
    slowest = max(first, times[-1])
    prom_cpu = sorted(others.get("prometheus", 0.0) for *_, others in breakdown.rows)
    print(f"{'closing: slowest / median / first refresh, wall':<58}{slowest:7.2f} s / "
          f"{times[len(times) // 2]:.2f} s / {first:.2f} s   slowest = {slowest / GOAL_S:.2f}x "
          f"the {GOAL_S:g} s goal")
    print(f"{'closing: CPU s a refresh, fabtui median / prometheus median, most':<58}"
          f"{cpu[len(cpu) // 2]:7.2f} / {prom_cpu[len(prom_cpu) // 2]:.2f}, "
          f"{prom_cpu[-1]:.2f}   (load average {LOAD[0]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after; {os.cpu_count()} CPUs)")
    # Means as well as medians: the sieve's turns make refreshes of a few kinds (one sieving
    # every kind, the next nothing), and a median of few picks one kind or the other.
    rows = breakdown.rows[1:]
    print(f"{f'closing: CPU s a refresh, fabtui mean / prometheus mean of {len(rows)}':<58}"
          f"{sum(CPU[1:]) / len(rows):7.3f} / "
          f"{sum(others.get('prometheus', 0.0) for *_, others in rows) / len(rows):.3f}")
    print(f"{'memory (RSS) before / after them':<58}{start_rss:7.0f} MB / {rss_mb():.0f} MB")
    print(f"{'memory (RSS) after refresh N, MB':<58}{', '.join(rss)}")
    breakdown.report(8)
    print(f"{'per 1 Hz refresh (median)':<58}{breakdown.summary()}")
    breakdown.costliest(prometheus)
    if mode_setting == "auto" and source.sieving and not source.recorded:
        tuned(prometheus, ws, source, status, interval, min(rounds, 10))


def tuned(prometheus: PrometheusServer, ws: Workspace, source: Any, status: FabricStatus,
          interval: str, rounds: int) -> None:
    """`mode = "auto"` once the rules it offers are loaded: a new source (as the app restarted,
    or 30 refreshes later) detects them and reads them; its refreshes timed beside the rest."""
    print(f"{'  offered: ' + (source.notes[-1][:70] if source.notes else '(no note)'):<58}")
    began = time.monotonic()
    prometheus.load_rules(source.rules(interval), 600)
    loaded = time.monotonic() - began
    again = live_source(ws)
    assert again is not None
    first = refresh(again, status, 1)
    times = sorted(refresh(again, status, n) for n in range(2, rounds + 2))
    print(f"{'auto, rules loaded (' + str(round(loaded)) + ' s to evaluate): read recorded':<58}"
          f"{'yes' if again.recorded else 'NO':>7}")
    print(f"{f'auto with the rules: first / median of {rounds}':<58}{first:7.2f} s / "
          f"{times[len(times) // 2]:.2f} s   goal {GOAL_S:g} s: "
          f"{'ok' if times[len(times) // 2] <= GOAL_S else 'OVER GOAL'}")


def prometheus_series(server: PrometheusServer) -> int:
    import json
    import urllib.parse
    import urllib.request

    query = urllib.parse.urlencode({"query": "sum(scrape_samples_scraped)"})
    with urllib.request.urlopen(f"{server.url}/api/v1/query?{query}", timeout=30) as answer:
        result = json.load(answer)["data"]["result"]
    return int(float(result[0]["value"][1])) if result else 0


if __name__ == "__main__":
    main()
