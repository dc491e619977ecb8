"""`ethtool -S NETDEV` on a simulated node: the mlx5 counters of `ethtool_counters`."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_by
from fabtui.sim.programs._nic_counters import ethtool_counters


def ethtool(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if len(args) != 2 or args[0] not in ("-S", "--statistics"):
        return "", "ethtool: bad command line argument(s)\n", 1
    nic = nic_by(node, args[1])
    if nic is None:
        return "", "Cannot get stats strings information: No such device\n", 71
    lines = ["NIC statistics:"]
    lines += [f"     {name}: {value}" for name, value in
              ethtool_counters(sim, node.hostname, nic, t).items()]
    return "\n".join(lines) + "\n", "", 0
