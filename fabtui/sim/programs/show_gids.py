"""`show_gids [DEV]` on a simulated node: the RoCE GID table, the IPv4 pair at the index
misconfig gives."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_guid


def show_gids(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    nics = [n for n in node.nics if not args or args[0] == n.name]
    lines = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
             "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    count = 0
    for nic in nics:
        mac = nic_guid(sim, node.hostname, nic.name)[-12:]
        link_local = f"fe80:0000:0000:0000:{mac[0:4]}:{mac[4:8]}:{mac[8:12]}:0000"
        entries = [(0, link_local, "", "v1"), (1, link_local, "", "v2")]
        if nic.ip:
            octets = [int(o) for o in nic.ip.split(".")]
            mapped = f"0000:0000:0000:0000:0000:ffff:{octets[0]:02x}{octets[1]:02x}:" \
                     f"{octets[2]:02x}{octets[3]:02x}"
            v2 = misconfig.gid_index(sim, node, nic, t)
            # extra IPv6 GIDs before the IPv4 pair shift it (a second address on the netdev)
            extra = [(i, link_local.replace("fe80", "fd00"), "", "v1" if i % 2 == 0 else "v2")
                     for i in range(2, max(2, v2 - 1))]
            entries += [*extra, (v2 - 1, mapped, nic.ip, "v1"), (v2, mapped, nic.ip, "v2")]
        for index, gid, ip, version in entries:
            lines.append(f"{nic.name}\t1\t{index}\t{gid}\t{ip}  \t{version}\t{nic.netdev}")
            count += 1
    lines.append(f"n_gids_found={count}")
    return "\n".join(lines) + "\n", "", 0
