"""`nvidia-smi topo -m` on a simulated node: the GPU/NIC connection matrix. On x86 HGX a GPU
and the NIC the topology pairs it with share a PCIe switch (PIX); on a Grace tray (GB200,
GB300, GH200) the NIC hangs off the Grace CPU and the GPU reaches it over NVLink-C2C, so the
NICs of the GPU's own CPU are NODE and the other CPU's SYS, as real trays print
(Mellanox/ngc_multinode_perf PR #129). A GPU whose NVLinks are down shows no NV# to the
others; a NIC card in another slot (nic-slot) is PIX to the GPU it really sits by."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.scenario import FaultKind
from fabtui.topology.pairing import gpu_map
from fabtui.topology.platform import platform_of

_X86_CPUS = {0: "0-55,112-167", 1: "56-111,168-223"}
_GRACE_CPUS = {0: "0-71", 1: "72-143"}


def nvidia_smi_topo(node: Node, sim: Sim | None = None, t: float = 0.0) -> str:
    gpus = sorted(node.gpus, key=lambda g: g.index)
    nics = list(node.nics)
    mapping = dict(gpu_map(node))
    numa_moved: dict[str, int | None] = {}
    if sim is not None:  # a card in another slot than the topology's sits by another GPU
        for fault in sim.active(FaultKind.NIC_SLOT, t):
            if fault.host == node.hostname and fault.nic and fault.gpu is not None:
                mapping[fault.nic] = (fault.gpu,)
                numa_moved[fault.nic] = next(
                    (g.numa for g in node.gpus if g.index == fault.gpu), None)
    platform = platform_of(gpus[0].model) if gpus else None
    grace = platform is not None and platform.grace
    links = platform.nvlink_links if platform is not None else 18
    devices = [f"GPU{g.index}" for g in gpus] + [f"NIC{i}" for i in range(len(nics))]
    header = "\t" + "\t".join(devices) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    rows = [header]
    numa_cpus = _GRACE_CPUS if grace else _X86_CPUS

    def numa_of(index: int) -> int:
        if index < len(gpus):
            return gpus[index].numa or 0
        nic = nics[index - len(gpus)]
        return numa_moved.get(nic.name, nic.numa) or 0

    def lost(index: int) -> bool:
        return sim is not None and sim.nvlink_lost(node.hostname, t, gpus[index].index)

    def relation(i: int, j: int) -> str:
        if i == j:
            return " X "
        if i < len(gpus) and j < len(gpus):
            if not lost(i) and not lost(j):
                return f"NV{links}"
            return "NODE" if numa_of(i) == numa_of(j) else "SYS"
        gpu_i, nic_j = (i, j) if i < len(gpus) else (j, i)
        if gpu_i < len(gpus) and nic_j >= len(gpus) and not grace:
            nic = nics[nic_j - len(gpus)]
            if gpus[gpu_i].index in mapping[nic.name]:
                return "PIX"
        return "NODE" if numa_of(i) == numa_of(j) else "SYS"

    for i, name in enumerate(devices):
        cells = [relation(i, j) for j in range(len(devices))]
        if i < len(gpus):
            numa = gpus[i].numa or 0
            # Grace GPUs expose their memory as NUMA nodes of their own (2, 10, 18, 26, ...).
            cells += [numa_cpus.get(numa, "0-223"), str(numa),
                      str(2 + 8 * gpus[i].index) if grace else "N/A"]
        rows.append(f"{name}\t" + "\t".join(cells))
    legend = ["", "Legend:", "",
              "  X    = Self",
              "  SYS  = Connection traversing PCIe as well as the SMP interconnect between "
              "NUMA nodes (e.g., QPI/UPI)",
              "  NODE = Connection traversing PCIe as well as the interconnect between PCIe "
              "Host Bridges within a NUMA node",
              "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically "
              "the CPU)",
              "  PXB  = Connection traversing multiple PCIe bridges (without traversing the "
              "PCIe Host Bridge)",
              "  PIX  = Connection traversing at most a single PCIe bridge",
              "  NV#  = Connection traversing a bonded set of # NVLinks", "",
              "NIC Legend:", ""]
    legend += [f"  NIC{i}: {nic.name}" for i, nic in enumerate(nics)]
    return "\n".join(rows + legend) + "\n"
