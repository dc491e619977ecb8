"""`nvidia-smi topo -m` on a simulated node: the GPU/NIC connection matrix, PIX where the
topology pairs a GPU with a NIC."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.topology.pairing import gpu_map


def nvidia_smi_topo(node: Node) -> str:
    gpus = sorted(node.gpus, key=lambda g: g.index)
    nics = list(node.nics)
    mapping = gpu_map(node)
    devices = [f"GPU{g.index}" for g in gpus] + [f"NIC{i}" for i in range(len(nics))]
    header = "\t" + "\t".join(devices) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    rows = [header]
    numa_cpus = {0: "0-55,112-167", 1: "56-111,168-223"}

    def numa_of(index: int) -> int:
        if index < len(gpus):
            return gpus[index].numa or 0
        return nics[index - len(gpus)].numa or 0

    def relation(i: int, j: int) -> str:
        if i == j:
            return " X "
        if i < len(gpus) and j < len(gpus):
            return "NV18"
        gpu_i, nic_j = (i, j) if i < len(gpus) else (j, i)
        if gpu_i < len(gpus) and nic_j >= len(gpus):
            nic = nics[nic_j - len(gpus)]
            if gpus[gpu_i].index in mapping[nic.name]:
                return "PIX"
        return "NODE" if numa_of(i) == numa_of(j) else "SYS"

    for i, name in enumerate(devices):
        cells = [relation(i, j) for j in range(len(devices))]
        if i < len(gpus):
            numa = gpus[i].numa or 0
            cells += [numa_cpus.get(numa, "0-223"), str(numa), "N/A"]
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
