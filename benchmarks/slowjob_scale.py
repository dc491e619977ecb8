"""`fabtui triage slow` at scale: 1,024 GPUs x 1 h at 15 s (240 samples per series), analysed.

Target (issue 39, 2-core machine): the analysis in <= 10 s. The input is the demo's generator
(fabtui/sim/slowjob.py) playing the `h100-1024gpu-rail` fabric for an hour with an optic ageing
on one leaf port from minute 10: 1,024 step-time series, Inspector busbw of 9 communicators for
every rank, and every NIC, leaf port, uplink, spine port and GPU with its metrics. The analysis
must end at that optic, else the row says WRONG ANSWER.

Printed beside it, measured in the same run on the same arrays, the reference: numpy's rolling
median (9 samples) and median/MAD of every series, the least any tool does to look at each
series once. Each side runs in a child process of its own, so each peak RSS is its own (the
input arrays included, built the same way in both); wall and CPU seconds count the analysis (or
the reference) only. The analysis is one thread, so on an idle machine its wall time is its CPU
time; on a shared one (the load average is printed) the CPU seconds are the steadier figure,
and the verdict is read from them. Never fails on timing or memory.

    python benchmarks/slowjob_scale.py            # 256, 512, 1,024 GPUs
    python benchmarks/slowjob_scale.py --smoke    # 64 GPUs (CI)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TARGET_S = 10.0


def _frame(gpus: int) -> tuple[Any, Any, float, str]:
    """(frame, graph, seconds to build, the planted optic) for a fabric of `gpus` GPUs."""
    import yaml

    from fabtui.paths import shipped_templates
    from fabtui.sim.scenario import load_scenario
    from fabtui.sim.state import sim_for
    from fabtui.topology.loader import load_topology
    from fabtui.workspace.triaging import demo_slow_frame

    started = time.perf_counter()
    nodes = gpus // 8
    with tempfile.TemporaryDirectory() as folder:
        topo_file = Path(folder) / "fabric.yaml"
        topo_file.write_text(yaml.safe_dump({
            "template": "h100-1024gpu-rail",
            "params": {"nodes": nodes, "nodes_per_leaf": min(32, nodes)}}))
        from fabtui.config import load_settings

        finder = load_settings(None, environ={}).find_template
        topology = load_topology(topo_file, find_template=finder).topology
        from fabtui.topology.graph import FabricGraph

        graph = FabricGraph(topology)
        attachment = next(a for (host, nic), a in sorted(graph.attachments.items())
                          if nic.endswith("_3") and host == f"node{nodes // 2:03d}")
        port = f"{attachment.switch}:{attachment.port}"
        optic = topology.links[attachment.link_index].optic or f"link:{attachment.link_index}"
        scenario = Path(folder) / "slow.yaml"
        ends = (link.a, link.b) if (link := topology.links[attachment.link_index]) else ()
        for tenths in range(90, 100):  # the light where this optic loses frames but stays up
            scenario.write_text(yaml.safe_dump({
                "name": "slow-bench", "duration": 3600, "timeline": [
                    {"at": 600, "fault": "optic-degrading", "component": port,
                     "params": {"ramp_s": 1500, "end_dbm": -tenths / 10,
                                "flap_after_s": 7200}}]}))
            sim = sim_for(topology, load_scenario(scenario), seed=7)
            index = attachment.link_index
            loss = max(sim.frame_loss(index, *end.split(":", 1), 3000.0) for end in ends)
            if not sim.link_up(index, 3000.0) or loss > 3e-3:
                break
        frame = demo_slow_frame(sim, start=0.0, end=3600.0)
    del shipped_templates
    return frame, sim.graph, time.perf_counter() - started, optic


def child(kind: str, gpus: int) -> None:
    """One side, measured in this process; prints one JSON line."""
    import numpy as np

    frame, graph, built, optic = _frame(gpus)
    series = sum(len(m) for m in frame.fabric.values()) + frame.steps.shape[0] + \
        sum(c.busbw.shape[0] for c in frame.comms)
    wall, cpu = time.perf_counter(), time.process_time()
    answer = ""
    if kind == "engine":
        from fabtui.triage.slowjob import analyze

        report = analyze(frame, graph)
        answer = ",".join(str(c.verdict.element) for c in report.chains)
        right = answer == optic
    else:
        rows = [x for metrics in frame.fabric.values() for x in metrics.values()]
        rows += list(frame.steps) + [r for c in frame.comms for r in c.busbw]
        matrix = np.vstack(rows)
        windows = np.lib.stride_tricks.sliding_window_view(
            np.pad(matrix, ((0, 0), (4, 4)), mode="edge"), 9, axis=1)
        rolling = np.median(windows, axis=2)
        centre = np.median(matrix, axis=1)
        spread = np.median(np.abs(matrix - centre[:, None]), axis=1)
        right = bool(rolling.shape == matrix.shape and spread.size == len(rows))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": wall, "cpu": cpu, "rss": rss, "built": built, "series": series,
                      "right": right, "answer": answer, "optic": optic}))


def measure(kind: str, gpus: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", kind, "--gpus", str(gpus)],
                         capture_output=True, text=True, check=False, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(f"{kind} at {gpus} GPUs failed:\n{out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="64 GPUs only (CI)")
    parser.add_argument("--child", choices=["engine", "reference"], help=argparse.SUPPRESS)
    parser.add_argument("--gpus", type=int, default=1024, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.gpus)
        return 0
    sizes = [64] if args.smoke else [256, 512, 1024]
    import os

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'GPUs':>6} {'series':>8}  {'analysis':>9} {'CPU':>7} {'RSS':>8}   "
          f"{'reference':>9} {'CPU':>7} {'RSS':>8}   verdict")
    for gpus in sizes:
        engine, reference = measure("engine", gpus), measure("reference", gpus)
        verdict = "WRONG ANSWER" if not engine["right"] else \
            "ok" if engine["cpu"] <= TARGET_S else "OVER TARGET"
        print(f"{gpus:>6} {engine['series']:>8}  {engine['wall']:>7.2f} s {engine['cpu']:>5.2f} s "
              f"{engine['rss']:>5.0f} MB   {reference['wall']:>7.2f} s {reference['cpu']:>5.2f} s "
              f"{reference['rss']:>5.0f} MB   {verdict} (target {TARGET_S:g} s CPU; input built "
              f"in {engine['built']:.1f} s; found {engine['answer'] or 'nothing'}, planted "
              f"{engine['optic']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
