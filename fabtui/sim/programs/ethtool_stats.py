"""`ethtool -S NETDEV` on a simulated node: the mlx5 counters of `ethtool_counters`;
`ethtool --get-tunable NETDEV pfc-prevention-tout`, mlx5's PFC stall prevention timeout; and
`ethtool -i NETDEV` (`programs.ethtool_info`)."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.pfc import STALL_PREVENTION_S
from fabtui.sim.programs._common import Result, nic_by
from fabtui.sim.programs._nic_counters import ethtool_counters
from fabtui.sim.programs.ethtool_info import ethtool_info
from fabtui.sim.scenario import FaultKind


def ethtool(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if len(args) == 3 and args[0] == "--get-tunable":
        return _tunable(sim, node, args[1], args[2])
    if len(args) == 2 and args[0] in ("-i", "--driver"):
        return ethtool_info(sim, node, args[1], t)
    if len(args) != 2 or args[0] not in ("-S", "--statistics"):
        return "", "ethtool: bad command line argument(s)\n", 1
    nic = nic_by(node, args[1])
    if nic is None:
        return "", "Cannot get stats strings information: No such device\n", 71
    lines = ["NIC statistics:"]
    lines += [f"     {name}: {value}" for name, value in
              ethtool_counters(sim, node.hostname, nic, t).items()]
    return "\n".join(lines) + "\n", "", 0


def _tunable(sim: Sim, node: Node, netdev: str, name: str) -> Result:
    """ethtool prints a u16 tunable as `NAME: VALUE` (ethtool.c print_tunable); mlx5 reports the
    PFC stall prevention's critical timeout in ms, 0 when it is off (en_ethtool.c
    mlx5e_get_pfc_prevention_tout)."""
    nic = nic_by(node, netdev)
    if nic is None:
        return "", "Cannot get device settings: No such device\n", 71
    if name != "pfc-prevention-tout":
        return "", "ethtool: bad command line argument(s)\n", 1
    timeout = next((sim.stall_timeout(fault) for fault in sim.faults
                    if fault.kind is FaultKind.PFC_STORM and fault.host == node.hostname
                    and fault.nic == nic.name), STALL_PREVENTION_S)
    return f"{name}: {round(timeout * 1000)}\n", "", 0
