"""`show_counters DEV` on a simulated node: the RDMA hardware counters as a hw_counters dump."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_by
from fabtui.sim.programs._nic_counters import rdma_counters


def show_counters(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    nic = nic_by(node, args[0]) if args else None
    if nic is None:
        return "", "usage: show_counters <device>\n", 1
    lines = [f"# show_counters {nic.name}", "Port 1 hw counters:"]
    lines += [f"{name}: {value}" for name, value in
              sorted(rdma_counters(sim, node.hostname, nic, t).items())]
    return "\n".join(lines) + "\n", "", 0
