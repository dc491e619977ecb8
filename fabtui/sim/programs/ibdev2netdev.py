"""`ibdev2netdev [-v]` on a simulated node: RDMA device to netdev, with the link state."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, port_up


def ibdev2netdev(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    lines = []
    for nic in node.nics:
        up = port_up(sim, node, nic, t)
        state = "Up" if up else "Down"
        if "-v" in args:
            lines.append(f"{nic.pci} {nic.name} (MT4129 - MCX75310AAS-NEAT) "
                         f"NVIDIA ConnectX-7 HHHL Adapter Card, 400GbE / NDR IB (default mode), "
                         "Single-port OSFP, PCIe 5.0 x16 "
                         f"fw {misconfig.firmware(sim, node, nic, t)} port 1 "
                         f"({'ACTIVE' if up else 'DOWN  '}) ==> {nic.netdev} ({state})")
        else:
            lines.append(f"{nic.name} port 1 ==> {nic.netdev} ({state})")
    return "\n".join(lines) + "\n", "", 0
