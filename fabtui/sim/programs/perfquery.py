"""`perfquery` on a simulated node: it reads InfiniBand PMA counters, so on a RoCE port it
fails as the real one does."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result


def perfquery(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """perfquery reads InfiniBand PMA counters: on a RoCE port there is no subnet manager."""
    device = args[args.index("-C") + 1] if "-C" in args and args.index("-C") + 1 < len(args) \
        else node.nics[0].name
    return "", (f"ibwarn: [{41000 + len(device)}] mad_rpc_open_port: client_register for mgmt 1 "
                f"failed\nperfquery: iberror: failed: Failed to open '{device}' port '1'\n"), 255
