"""Memory of the Prometheus source over many refreshes on a 1,024-node fabric: flat is the goal.

`benchmarks/prom_refresh.py` measures the same refreshes against a real Prometheus scraping the
simulator; on a loaded machine its 1,024-node scrapes time out and the series it reads come and
go. Memory does not depend on Prometheus, only on what fabtui is sent and decodes, so this one
serves it from a synthetic Prometheus (its own process, the `--serve` mode of this file) that
answers the queries `mode = "recorded"` asks with the label sets a real one returns for the
generated fabric: the recorded clocks (`fabtui:clock:*`, one series per GPU, NIC, IB port and
switch port: ~41,000) with any `label=~"..."` matchers applied, their per-device maxima (the
recorded device clocks `fabtui:device_clock:*`, and the aggregation of an older rule file), a
recorded sieve naming the storming NIC, and nothing for the rest (its full read, `up == 0`,
the sparklines' range queries). The refreshes are back to back (`--rate 1` for 1 Hz).
`--delay S` makes every answer wait S seconds first, as a Prometheus busy evaluating its rules
does: then the refresh's wall time is its round trips (how many queries wait on which).

Printed after refresh 1, 10, 30, 60, 61, 120, 121 and every 120 after: RSS, glibc's heap (in use,
and free but kept: fragmentation) and pymalloc's arenas (current and high-water), then the
median CPU seconds and wall time of a refresh and the growth from refresh 60 on.

    python benchmarks/prom_memory.py                    # 480 refreshes
    python benchmarks/prom_memory.py --rounds 130 --presence-every 5
    python benchmarks/prom_memory.py --smoke            # 16 nodes, 5 refreshes (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from prom_refresh import build, rss_mb  # noqa: E402

from fabtui.config import load_settings  # noqa: E402
from fabtui.prom.catalog import LANE, MAPPED  # noqa: E402
from fabtui.prom.rules import CLOCK, DEVICE_CLOCK, every_sieve, sieve_name  # noqa: E402
from fabtui.views.fabricmap import FabricMap  # noqa: E402
from fabtui.views.status import FabricStatus, PollState  # noqa: E402
from fabtui.workspace import Workspace  # noqa: E402
from tests.support.prom_server import free_port  # noqa: E402

MAPPED_BY_NAME = {m.metric: m for m in MAPPED}
TERM = re.compile(r"fabtui:clock:(\w+)(?:\{([^}]*)\})?")
MATCHER = re.compile(r'(\w+)=~"((?:[^"\\]|\\.)*)"')
RAW = re.compile(r"^(?:sum|max) by \(([^)]*)\) \((.*)\)$")
SELECTED = re.compile(r"(?:rate\(|timestamp\()?(\w+)\{([^}]*)\}")
LANES = 8
"""DOM lanes per switch port (a 400G optic)."""
OK_VALUES = {"sonic.oper_status": 1.0, "infiniband.state_id": 4.0, "sonic.rx_power": -2.0,
             "sonic.tx_power": -1.0, "sonic.tx_bias": 7.0, "sonic.temperature": 45.0,
             "dcgm.temperature": 50.0}
"""Gauges read as a healthy fabric's (the rest: small rates, a new value each answer)."""


def series_of(config: Path) -> dict[str, list[dict[str, str]]]:
    """Per element kind, the labels of its recorded clock's series (as the simulator's
    exporters and the rules of `fabtui prom rules` give them)."""
    graph = Workspace(load_settings(config)).graph()
    kinds: dict[str, list[dict[str, str]]] = {"gpu": [], "nic": [], "ibport": [], "port": []}
    for host, node in graph.nodes.items():
        kinds["gpu"] += [{"Hostname": host, "gpu": str(g.index), "instance": f"{host}:9400"}
                         for g in node.gpus]
        for nic in node.nics:
            kinds["nic"].append({"device": nic.netdev or nic.name, "instance": f"{host}:9100"})
            kinds["ibport"].append({"device": nic.name, "instance": f"{host}:9100"})
    for port in graph.port_links:
        switch, _, name = port.partition(":")
        if switch in graph.switches:
            kinds["port"].append({"device": name, "instance": switch})
    return kinds


def serve(port: int, config: Path, storm: str, delay: float, full: bool) -> None:
    """The synthetic Prometheus (see the module docstring) on 127.0.0.1:`port`, forever;
    `full`: it answers `mode = "full"`'s reads of raw series too."""
    kinds = series_of(config)
    host, _, nic_name = storm.partition(":")
    stormy = next(s for s in kinds["ibport"] if s["instance"].startswith(f"{host}:")
                  and s["device"] == nic_name)
    sieve = [{"__name__": sieve_name("ethtool.tx_prio3_pause_duration"), **stormy}]

    def devices(kind: str) -> list[dict[str, str]]:
        by = ("Hostname", "instance") if kind == "gpu" else ("instance",)
        return [dict(d) for d in sorted({tuple((k, s[k]) for k in by) for s in kinds[kind]})]

    def answer(query: str) -> list[dict[str, str]]:
        if query.startswith(DEVICE_CLOCK):
            kind = query.removeprefix(DEVICE_CLOCK)
            return [{"__name__": query, **d} for d in devices(kind)]
        if query.startswith("max by (") and CLOCK in query:
            found = TERM.search(query)
            assert found is not None
            return devices(found.group(1))
        if query.startswith(CLOCK):
            chosen = []
            for term in query.split(" or "):
                found = TERM.match(term.strip())
                assert found is not None
                tests = [(label, re.compile(value.replace("\\\\", "\\"))) for label, value
                         in MATCHER.findall(found.group(2) or "")]
                chosen += [{"__name__": CLOCK + found.group(1), **s} for s in
                           kinds[found.group(1)]
                           if all(rx.fullmatch(s.get(label, "")) for label, rx in tests)]
            return chosen
        if query == every_sieve():
            return sieve
        return raw(query) if full else []

    def selected(kind: str, text: str) -> list[dict[str, str]]:
        """The series of `kind` the `label=~"..."` matchers of `text`'s terms select."""
        chosen = []
        for term in text.split(" or "):
            found = SELECTED.search(term)
            assert found is not None, term
            tests = [(label, re.compile(value.replace("\\\\", "\\"))) for label, value
                     in MATCHER.findall(found.group(2))]
            chosen += [s for s in kinds[kind]
                       if all(rx.fullmatch(s.get(label, "")) for label, rx in tests)]
        return chosen

    def raw(query: str) -> list[dict[str, str]]:
        """`mode = "full"`: a mapped metric's read, a device clock or a presence query over
        the raw series, answered per element (and lane) of its kind."""
        found = RAW.match(query)
        if found is None:
            return []
        by, inner = found.group(1).split(", "), found.group(2)
        metric = SELECTED.search(inner)
        assert metric is not None, query
        mapped = MAPPED_BY_NAME[metric.group(1)]
        if inner.startswith("timestamp(") and "device" not in by and "gpu" not in by:
            return devices(mapped.element)
        series = selected(mapped.element, inner)
        if LANE in by:
            return [{**s, LANE: str(lane)} for s in series for lane in range(1, LANES + 1)]
        return series

    def value(query: str, now: float) -> float:
        metric = SELECTED.search(query)
        mapped = MAPPED_BY_NAME.get(metric.group(1)) if metric else None
        if mapped is None or (query.startswith("max by (") and "timestamp(" in query):
            return now - 1
        return OK_VALUES.get(mapped.key, round(random.random(), 6))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlparse(self.path)
            query = urllib.parse.parse_qs(url.query).get("query", [""])[0]
            time.sleep(delay)
            now = time.time()
            ranged = url.path.endswith("query_range")
            result = [] if ranged else [{"metric": m, "value": [now, str(
                value(query, now) if full else now - 1)]} for m in answer(query)]
            body = json.dumps({"status": "success", "data": {
                "resultType": "matrix" if ranged else "vector", "result": result}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 128

    print("serving", flush=True)
    Server(("127.0.0.1", port), Handler).serve_forever()


def heap() -> str:
    """glibc's heap (all arenas: in use / free but kept) and pymalloc's arenas."""
    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                     "uordblks", "fordblks", "keepcost")]

    glibc = ""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        info = libc.mallinfo2()
        glibc = f"glibc {info.uordblks / 2**20:.0f} used / {info.fordblks / 2**20:.0f} free MB; "
    with tempfile.TemporaryFile() as out:  # _debugmallocstats writes to the C stderr
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode()
    now = re.search(r"arenas allocated current\s+=\s+([\d,]+)", text)
    high = re.search(r"arenas highwater mark\s+=\s+([\d,]+)", text)
    return (f"{glibc}pymalloc {now.group(1) if now else '?'} arenas "
            f"(high-water {high.group(1) if high else '?'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="16 nodes, 5 refreshes (CI)")
    parser.add_argument("--nodes", type=int, default=None, help="default 1,024")
    parser.add_argument("--rounds", type=int, default=None, help="refreshes (default 480)")
    parser.add_argument("--presence-every", type=int, default=None,
                        help="the source's presence_every (default its PRESENCE_EVERY)")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="refreshes a second (default 0: back to back)")
    parser.add_argument("--delay", type=float, default=0.0,
                        help="seconds every answer waits first (default 0)")
    parser.add_argument("--mode", choices=("recorded", "full"), default="recorded",
                        help="how the source reads (default recorded; full: every raw series "
                             "each refresh, values changing)")
    parser.add_argument("--tracemalloc", default=None, metavar="A,B",
                        help="print what was allocated between refresh A and B and is held")
    parser.add_argument("--serve", nargs=3, metavar=("PORT", "CONFIG", "STORM"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), Path(args.serve[1]), args.serve[2], args.delay,
              args.mode == "full")
        return
    nodes, rounds = (16, 5) if args.smoke else (1024, 480)
    nodes, rounds = args.nodes or nodes, args.rounds or rounds
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        topology, storm = build(folder, nodes)
        config = folder / "config.toml"
        port = free_port()
        config.write_text(f'topology = "{topology}"\ndata_dir = "{folder / "data"}"\n'
                          f'source = "prometheus"\n[prometheus]\nurl = "http://127.0.0.1:{port}"'
                          f'\nwindow = "3m"\nstale_after = "10m"\ntimeout = "30s"\n'
                          f'mode = "{args.mode}"\n')
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), str(config),
                                   storm, "--delay", str(args.delay), "--mode", args.mode],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None and "serving" in server.stdout.readline()
            measure(config, rounds, args.presence_every, args.rate,
                    tuple(int(n) for n in args.tracemalloc.split(",")) if args.tracemalloc
                    else ())
        finally:
            server.terminate()
            server.wait(10)


def kept(status: FabricStatus) -> str:
    """What the status keeps for sparklines: series, and the values in them."""
    history = status._history
    series = sum(len(per) for per in history.values())
    points = sum(len(values) for per in history.values() for values in per.values())
    return f"sparklines: {series:,} series, {points:,} values"


def measure(config: Path, rounds: int, presence_every: int | None, rate: float,
            traced: tuple[int, ...] = ()) -> None:
    import tracemalloc

    from fabtui.workspace.promsource import live_source

    if traced:
        tracemalloc.start(4)
    taken: list[tracemalloc.Snapshot] = []

    ws = Workspace(load_settings(config))
    source = live_source(ws)
    assert source is not None
    if presence_every:
        source.presence_every = presence_every
    status = FabricStatus(FabricMap.build(ws.graph()))

    async def refresh(round_no: int) -> None:
        async with contextlib.aclosing(source.poll()) as stream:
            async for update in stream:
                status.take(update)
        status.snapshot(round_no, PollState.WAITING)

    marks = {1, 10, 30, 60, 61, 120, 121, *range(240, rounds + 1, 120), rounds}
    print(f"{len(ws.graph().nodes)} nodes, presence re-read every {source.presence_every} "
          f"refreshes (a slice each refresh); load average {os.getloadavg()[0]:.1f}")
    cpu: list[float] = []
    wall: list[float] = []
    at: dict[int, float] = {}
    for round_no in range(1, rounds + 1):
        began, used = time.monotonic(), time.process_time()
        asyncio.run(refresh(round_no))  # as prom_refresh.py: a loop per refresh
        cpu.append(time.process_time() - used)
        wall.append(time.monotonic() - began)
        if round_no in marks:
            at[round_no] = rss_mb()
            print(f"after refresh {round_no:4d}: RSS {at[round_no]:6.1f} MB; {heap()}; "
                  f"{kept(status)}", flush=True)
        if round_no in traced:
            taken.append(tracemalloc.take_snapshot())
        if rate:
            time.sleep(max(0.0, 1 / rate - (time.monotonic() - began)))
    if len(taken) == 2:
        diff = taken[1].compare_to(taken[0], "traceback")
        print(f"held, allocated between refresh {traced}: "
              f"{sum(d.size_diff for d in diff) / 2**20:+.2f} MB")
        for stat in diff[:8]:
            print(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks")
            for line in stat.traceback.format()[-4:]:
                print("     ", line)
    later, waited = sorted(cpu[1:]) or cpu, sorted(wall[1:]) or wall
    print(f"a refresh: first {cpu[0]:.2f} s CPU, {wall[0]:.2f} s wall; after it median "
          f"{later[len(later) // 2]:.2f} s CPU, {waited[len(waited) // 2]:.2f} s wall "
          f"(slowest {waited[-1]:.2f} s); load average {os.getloadavg()[0]:.1f}")
    if 60 in at:
        print(f"RSS from refresh 60 to {rounds}: {at[rounds] - at[60]:+.1f} MB")
    if rounds > 1:  # the smoke's figure: growth a refresh once the first has filled the maps
        print(f"RSS growth a refresh after the first: "
              f"{(at[rounds] - at[1]) / (rounds - 1):+.2f} MB ({at[1]:.0f} -> {at[rounds]:.0f} MB)")


if __name__ == "__main__":
    main()
