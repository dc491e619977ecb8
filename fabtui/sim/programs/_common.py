"""What the node programs share: the result a command returns, a NIC found by name, a port's
link state and GUID, and a command line's options (and, from the core, what nvidia-smi calls a
GPU: `gpu_product`)."""

from __future__ import annotations

from fabtui.model.topology import Nic, Node
from fabtui.sim.core import GpuProduct, Sim, gpu_product

__all__ = ["GpuProduct", "Result", "gpu_product", "nic_by", "nic_guid", "parse_options",
           "port_up"]

Result = tuple[str, str, int]
"""(stdout, stderr, exit status), as a process would end."""


def nic_by(node: Node, name: str) -> Nic | None:
    return next((n for n in node.nics if name in (n.name, n.netdev)), None)


def port_up(sim: Sim, node: Node, nic: Nic, t: float) -> bool:
    attachment = sim.graph.attachments.get((node.hostname, nic.name))
    return attachment is not None and sim.link_up(attachment.link_index, t)


def nic_guid(sim: Sim, *key: object) -> str:
    value = int(sim.noise("guid", *key) * 2**48)
    return f"0x{0x946dae << 40 | value & 0xFFFFFFFFFF:016x}"


def parse_options(args: list[str], flags: frozenset[str] = frozenset()) -> dict[str, str]:
    options, i = {}, 0
    while i < len(args):
        if args[i] in flags or "=" in args[i]:
            name, _, value = args[i].partition("=")
            options[name] = value
            i += 1
        elif args[i].startswith("-") and i + 1 < len(args):
            options[args[i]] = args[i + 1]
            i += 2
        else:
            i += 1
    return options
