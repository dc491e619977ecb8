"""`mlnx_qos -i NETDEV` on a simulated node: the NIC's QoS state (misconfig's settings)."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result


def mlnx_qos(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`mlnx_qos -i NETDEV`: the NIC's trust state, dscp2prio map, PFC row and TC groups,
    in the layout of the real tool (tests/fixtures/mlnx-qos), from its misconfig settings."""
    if "-i" not in args or args.index("-i") + 1 >= len(args):
        return "", "Usage: mlnx_qos -i <interface>\n", 2
    nic = misconfig.nic_named(node, args[args.index("-i") + 1])
    if nic is None:
        return "", "Netlink error: No such device\n", 1
    host = node.hostname
    trust = misconfig.setting(sim, host, "trust", t, nic=nic.name)
    enabled = {int(p) for p in misconfig.setting(sim, host, "pfc", t, nic=nic.name) or []}
    lines = ["DCBX mode: OS controlled", f"Priority trust state: {trust}"]
    if trust == "dscp":
        lines.append("dscp2prio mapping:")
        for prio in range(8):
            dscps = ",".join(str(d) for d in range(prio * 8, prio * 8 + 8))
            lines.append(f"\tprio:{prio} dscp:{dscps},")
    lines += ["default priority:", "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,",
              "Cable len: 7", "PFC configuration:",
              "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     " + "   ".join("1" if p in enabled else "0" for p in range(8)),
              "\tbuffer      0   0   0   1   0   0   0   0"]
    for tc in range(8):
        lines += [f"tc: {tc} ratelimit: unlimited, tsa: vendor", f"\t priority:  {tc}"]
    return "\n".join(lines) + "\n", "", 0
