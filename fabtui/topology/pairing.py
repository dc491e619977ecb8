"""Which GPU talks through which NIC.

In a rail-optimized node GPU i sends its scale-out traffic through the NIC of rail i, which sits
under the same PCIe switch. When a node has fewer NICs than GPUs (e.g. 4 NICs for 8 GPUs)
consecutive GPUs share a rail; when it has more (several planes), a GPU uses every NIC of its rail.
A NIC may name its GPUs explicitly (`gpus: [0, 1]`) where the cabling does not follow this order.
"""

from __future__ import annotations

from fabtui.model.topology import Nic, Node


def rail_of_gpu(gpu_index: int, gpu_count: int, rails: list[int]) -> int | None:
    """The rail GPU `gpu_index` uses when GPUs are spread over `rails` (sorted) in order."""
    if not rails or gpu_count <= 0:
        return None
    position = min(gpu_index * len(rails) // gpu_count, len(rails) - 1)
    return rails[position]


def gpu_map(node: Node) -> dict[str, tuple[int, ...]]:
    """NIC name -> the GPU indexes that send through it, for every NIC of `node`."""
    rails = sorted({n.rail for n in node.nics if n.gpus is None})
    ordered = sorted(g.index for g in node.gpus)
    gpu_count = len(ordered)
    by_rail: dict[int, list[int]] = {}
    if len(rails) > gpu_count > 0:
        # More rails than GPUs: GPU i covers a run of rails.
        for position, each in enumerate(rails):
            by_rail[each] = [ordered[min(position * gpu_count // len(rails), gpu_count - 1)]]
    else:
        for position, index in enumerate(ordered):
            rail = rail_of_gpu(position, gpu_count, rails)
            if rail is not None:
                by_rail.setdefault(rail, []).append(index)
    return {nic.name: nic.gpus if nic.gpus is not None else tuple(by_rail.get(nic.rail, ()))
            for nic in node.nics}


def nics_of_gpu(node: Node, gpu_index: int) -> tuple[Nic, ...]:
    """The NIC ports GPU `gpu_index` of `node` sends through, in the node's NIC order."""
    mapping = gpu_map(node)
    return tuple(nic for nic in node.nics if gpu_index in mapping[nic.name])
