"""`ibstat [DEV]` on a simulated node: each HCA's port state, rate, firmware and GUIDs."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import ib, misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_guid, port_up


def ibstat(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    nics = [n for n in node.nics if not args or args[0] in (n.name, n.netdev)]
    if not nics:
        return "", f"ibpanic: [{args[0]}] main: '{args[0]}' IB device can't be found: " \
                   "No such file or directory\n", 1
    lines = []
    infiniband = ib.is_ib(sim)
    sm_lid = ib.sm_state(sim, t).master_lid if infiniband else 0
    for nic in nics:
        up = port_up(sim, node, nic, t)
        guid = nic_guid(sim, node.hostname, nic.name)
        attachment = sim.graph.attachments.get((node.hostname, nic.name))
        rate = sim.link_speed(attachment.link_index) if attachment else nic.speed
        lines += [f"CA '{nic.name}'", "\tCA type: MT4129", "\tNumber of ports: 1",
                  f"\tFirmware version: {misconfig.firmware(sim, node, nic, t)}",
                  "\tHardware version: 0",
                  f"\tNode GUID: {guid}", f"\tSystem image GUID: {guid}", "\tPort 1:",
                  f"\t\tState: {'Active' if up else 'Down'}",
                  f"\t\tPhysical state: {'LinkUp' if up else 'Polling'}",
                  f"\t\tRate: {rate if up else 10}"]
        if infiniband:  # the SM gave the port its LID; a port that is down has none
            lid = ib.hca_lid(sim, node.hostname, nic.name)
            lines += [f"\t\tBase lid: {lid if up else 65535}", "\t\tLMC: 0",
                      f"\t\tSM lid: {sm_lid if up else 0}", "\t\tCapability mask: 0xa751e848",
                      f"\t\tPort GUID: {guid}", "\t\tLink layer: InfiniBand"]
            continue
        lines += ["\t\tBase lid: 0", "\t\tLMC: 0",
                  "\t\tSM lid: 0", "\t\tCapability mask: 0x00010000",
                  f"\t\tPort GUID: {guid}", "\t\tLink layer: Ethernet"]
    return "\n".join(lines) + "\n", "", 0
