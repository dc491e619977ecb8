"""GPU platforms: what a GPU generation brings to collectives and which rules it is judged by.

One table for the rules that depend on the platform, each with its public source
(docs/thresholds.md): NVLink bandwidth, NVLink SHARP, whether a Grace CPU sits between the GPU
and the NIC (GH200, GB200, GB300: the NIC reaches GPU memory through the CPU, so `NODE` is the
normal GPU-NIC relation there, not a mis-seated riser) and what an `nvidia-smi` product name
calls it. Expected bandwidth figures live in `fabtui.topology.expected`. Pure data, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PCIE_PATHS = ("PIX", "PXB")
"""`nvidia-smi topo -m` codes of a GPU and NIC under one PCIe switch (GPUDirect at line rate;
across a host bridge it ran at about half: linux-rdma/perftest #241)."""
GRACE_PATHS = ("PIX", "PXB", "NODE")
"""On Grace parts the NIC hangs off the CPU and the GPU is reached over NVLink-C2C: `NODE` is
their relation by design (Mellanox/ngc_multinode_perf PR #129, for GB200 + ConnectX-7: allow
the 'node' relation "for systems where no 'PIX' or 'PXB' relations are available"; NVIDIA/nccl
#1579, maintainer: on GH200/GB200 "the NIC was accessed through a CPU")."""

PCIE_RULE_SOURCE = "linux-rdma/perftest #241 (GPUDirect at about half speed across the host " \
                   "bridge); fabric-diagnostics 6.2"
GRACE_RULE_SOURCE = "Mellanox/ngc_multinode_perf PR #129 (GB200 + CX-7: 'node' relation " \
                    "allowed where no PIX/PXB exists); NVIDIA/nccl #1579 (GH200/GB200: the " \
                    "NIC is accessed through the CPU); judged by GPU-memory RDMA instead"


@dataclass(frozen=True)
class Platform:
    """A GPU generation as fabtui judges it."""

    generation: str
    """`H100`, `GB200`, ... (what `gpu_generation` returns)."""
    architecture: str
    """What `nvidia-smi -q` prints as the product architecture."""
    nvlink_gbs: float
    """NVLink bandwidth per GPU, per direction, GB/s (half the datasheet's bidirectional)."""
    nvlink_links: int
    """NVLinks per GPU (`NV18` in `nvidia-smi topo -m`)."""
    nvls: bool
    """NVLink SHARP in the NVSwitch (H100 and later)."""
    grace: bool = False
    """A Grace CPU between GPU and NIC (GPU-NIC relation `NODE` by design)."""
    source: str = ""
    """The datasheet the NVLink figure comes from."""

    @property
    def gpu_nic_paths(self) -> tuple[str, ...]:
        """The `topo -m` codes a GPU and its closest NIC may show on this platform."""
        return GRACE_PATHS if self.grace else PCIE_PATHS

    @property
    def gpu_nic_rule(self) -> str:
        """The affinity rule in words, with its source."""
        if self.grace:
            return f"{self.generation} (Grace): PIX, PXB or NODE ({GRACE_RULE_SOURCE})"
        return f"{self.generation}: PIX or PXB ({PCIE_RULE_SOURCE})"


PLATFORMS: dict[str, Platform] = {
    "A100": Platform("A100", "Ampere", 300, 12, nvls=False,
                     source="NVIDIA A100 datasheet: 12 NVLink3 links, 600 GB/s bidirectional"),
    "H100": Platform("H100", "Hopper", 450, 18, nvls=True,
                     source="NVIDIA H100 datasheet: 18 NVLink4 links, 900 GB/s bidirectional"),
    "H200": Platform("H200", "Hopper", 450, 18, nvls=True,
                     source="NVIDIA H200 datasheet: NVLink 900 GB/s bidirectional"),
    "GH200": Platform("GH200", "Hopper", 450, 18, nvls=True, grace=True,
                      source="NVIDIA GH200 datasheet: NVLink 900 GB/s; NVLink-C2C to Grace"),
    "B200": Platform("B200", "Blackwell", 900, 18, nvls=True,
                     source="NVIDIA B200 / HGX B200 datasheet: NVLink5 1.8 TB/s per GPU"),
    "B300": Platform("B300", "Blackwell", 900, 18, nvls=True,
                     source="NVIDIA HGX B300 datasheet: NVLink5 1.8 TB/s per GPU"),
    "GB200": Platform("GB200", "Blackwell", 900, 18, nvls=True, grace=True,
                      source="NVIDIA GB200 NVL72 datasheet: NVLink5 1.8 TB/s per GPU, "
                             "72 GPUs in one NVLink domain"),
    "GB300": Platform("GB300", "Blackwell", 900, 18, nvls=True, grace=True,
                      source="NVIDIA GB300 NVL72 datasheet: NVLink5 1.8 TB/s per GPU, "
                             "72 GPUs in one NVLink domain"),
}

_NAME = re.compile(r"(?<![A-Z0-9])(G[BH]\d{3}|[ABH]\d{3})(?![0-9])")
"""A generation inside a model or product name: `GB200` inside `NVIDIA GB200` (a word boundary
before the `B` would miss it), `H100` in `H100-SXM5-80GB`, not `H20` or `V100`."""


def gpu_generation(model: str | None) -> str | None:
    """`H100` from `H100-SXM5-80GB` or `NVIDIA H100 80GB HBM3`, `GB200` from `NVIDIA GB200`,
    `GH200` from `NVIDIA GH200 480GB`; None when unknown."""
    for match in _NAME.finditer((model or "").upper()):
        if match.group(1) in PLATFORMS:
            return match.group(1)
    return None


def platform_of(model: str | None) -> Platform | None:
    """The platform of a GPU model or product name; None when unknown."""
    generation = gpu_generation(model)
    return PLATFORMS[generation] if generation else None
