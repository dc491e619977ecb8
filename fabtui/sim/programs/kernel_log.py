"""`dmesg [-T]` on a simulated node: the kernel log `fabtui.sim.logs` writes."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result


def dmesg(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    from fabtui.sim.logs import kernel_log

    human = any(a in ("-T", "--ctime") for a in args)
    return kernel_log(sim, node.hostname, t, human=human), "", 0
