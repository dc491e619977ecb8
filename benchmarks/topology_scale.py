"""Topology at scale: generate, load + validate, and blast radius on a 16,384-GPU fabric.

Targets (issue "Foundation and topology", on the 2-core CI machine):
  - generate a 2,048-node x 8-GPU rail-optimized topology      <= 2.0 s
  - load + validate it from its explicit YAML file              <= 1.5 s (median)
  - blast radius of one leaf in it                              <= 100 ms

Prints figures; never fails on timing (speed goals are not unit tests). Run by hand:
    python benchmarks/topology_scale.py            # 5 repetitions
    python benchmarks/topology_scale.py --smoke    # 1 repetition, as CI does
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fabtui.topology.blast import blast_radius
from fabtui.topology.export import dump_yaml
from fabtui.topology.generate import RailOptimizedParams, rail_optimized
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.topology.validate import validate

PARAMS = RailOptimizedParams(name="bench-16k", nodes=2048, gpus_per_node=8, rails=8,
                             nodes_per_leaf=32, spines=32, uplinks_per_leaf=32)


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time of `repeat` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def report(label: str, seconds: float, target: float) -> None:
    verdict = "ok" if seconds <= target else "OVER TARGET"
    print(f"{label:<44} {seconds * 1000:9.1f} ms   target {target * 1000:7.0f} ms   {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one repetition (CI)")
    args = parser.parse_args()
    repeat = 1 if args.smoke else 5
    print(f"fabric: {PARAMS.nodes} nodes x {PARAMS.gpus_per_node} GPUs, {PARAMS.rails} rails, "
          f"{PARAMS.nodes_per_leaf} nodes per leaf, {PARAMS.spines} spines; "
          f"median of {repeat}; {os.cpu_count()} CPUs")

    generate_s, topology = timed(lambda: rail_optimized(PARAMS), repeat)
    write_s, text = timed(lambda: dump_yaml(topology, "benchmark"), repeat)
    print(f"  {len(topology.nodes)} nodes, {len(topology.switches)} switches, "
          f"{len(topology.links)} links; explicit YAML {len(text) / 1e6:.1f} MB")
    report("generate (model)", generate_s, 2.0)
    report("generate + write explicit YAML", generate_s + write_s, 2.0)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench-16k.yaml"
        path.write_text(text, encoding="utf-8")

        def load_and_validate() -> tuple[FabricGraph, list[Any]]:
            loaded = load_topology(path)
            graph = FabricGraph(loaded.topology)
            return graph, validate(loaded, graph)

        check_s, (graph, findings) = timed(load_and_validate, repeat)
        report("load + validate explicit file", check_s, 1.5)
        assert findings == [], findings[:3]

        leaf = "leaf-g17-r3"
        first = time.perf_counter()
        result = blast_radius(graph, leaf)
        first_s = time.perf_counter() - first
        warm_s, _ = timed(lambda: blast_radius(graph, leaf), repeat)
        report(f"blast radius of {leaf} (first query)", first_s, 0.1)
        report(f"blast radius of {leaf} (warm)", warm_s, 0.1)
        print(f"  -> {len(result.nodes)} nodes, {len(result.ranks)} ranks, rails "
              f"{[r.rail for r in result.rails]}")

        fabtui = Path(sys.executable).parent / "fabtui"
        command = [str(fabtui)] if fabtui.exists() else [sys.executable, "-m", "fabtui"]
        cli_s, proc = timed(lambda: subprocess.run([*command, "topo", "check", str(path)],
                                                   capture_output=True, text=True, check=False),
                            repeat)
        report("`fabtui topo check` end to end (process)", cli_s, 1.5 + 0.5)
        assert proc.returncode == 0, proc.stderr


if __name__ == "__main__":
    main()
