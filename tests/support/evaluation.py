"""A probe's evaluation run on given parsed readings, against the demo fabric's topology: what
the tests of thresholds and verdicts call instead of running the probe."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.paths import demo_topology, shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.probes.evaluate import EvalContext, evaluate, hardware_classes
from fabtui.probes.targets import ProbeTarget, resolve
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology

CATALOG = load_catalog([shipped_dir("probes")])
TOPOLOGY = load_topology(demo_topology()).topology
GRAPH = FabricGraph(TOPOLOGY)


def evaluated(probe: str, target: ProbeTarget | str, kind: str, after: Any,
              before: Any = None, interval: float = 5.0) -> list[Metric]:
    """The metrics `probe` gives on `target` (a name resolved in the demo fabric, or a target
    as it is, then without the fabric) for the readings `before` and `after` of `kind`,
    `interval` seconds apart."""
    definition = CATALOG[probe]
    resolved = target if isinstance(target, ProbeTarget) else \
        resolve(GRAPH, target, definition.target)
    ctx = EvalContext(probe=definition, target=resolved, interval=interval,
                      hardware=hardware_classes(resolved),
                      graph=None if isinstance(target, ProbeTarget) else GRAPH)
    return evaluate(kind, before, after, ctx)
