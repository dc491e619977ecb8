"""`rdma statistic show [link DEV/1]` (iproute2) on a simulated node: the RDMA hardware
counters per link."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result
from fabtui.sim.programs._nic_counters import rdma_counters


def rdma(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    words = [a for a in args if a not in ("-p", "-pretty")]
    if len(words) < 2 or words[0] not in ("statistic", "stat") or words[1] != "show":
        return "", "Object \"{}\" is unknown, try \"rdma help\".\n".format(
            words[0] if words else ""), 1
    wanted = None
    if len(words) >= 4 and words[2] == "link":
        wanted = words[3].split("/")[0]
    out = []
    for nic in node.nics:
        if wanted is not None and nic.name != wanted:
            continue
        counters = rdma_counters(sim, node.hostname, nic, t)
        pairs = " ".join(f"{name} {value}" for name, value in counters.items())
        out.append(f"link {nic.name}/1 {pairs}")
    if not out:
        return "", "Wrong device name\n", 1
    return "\n".join(out) + "\n", "", 0
