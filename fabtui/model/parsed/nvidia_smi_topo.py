"""`nvidia-smi topo -m` / `topo --matrix` / `topo -p2p <r|w|n|a|p>`: the GPU/NIC matrix."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class TopoGpuNicAffinity(BaseModel):
    """For one GPU: the NIC(s) it reaches over the closest PCIe path, and that path's code."""

    model_config = ConfigDict(extra="forbid")

    nics: list[str]
    """The closest NIC(s), named as the matrix names them (`NIC0`, or `mlx5_0` on old drivers)."""
    nic_devices: list[str]
    """The same NICs by RDMA device name (resolved through the NIC Legend; same as `nics` when
    the NICs are named inline)."""
    connection: str
    """The code of that closest path as printed: `PIX`, `PXB`, `PHB`, `NODE`, `SYS` or `SOC`.
    `PIX`/`PXB` are what GPUDirect RDMA wants; `NODE`/`SYS`/`SOC` mean the traffic crosses a
    host bridge or the inter-socket link."""


class NvidiaSmiTopo(ParsedOutput):
    """The connection matrix between GPUs (and NICs), with CPU/NUMA affinity and the legends."""

    kind: Literal["nvidia-smi-topo"] = "nvidia-smi-topo"
    matrix_type: str
    """Which matrix this is: `topology` (`topo -m`), or a P2P status matrix (`topo -p2p X`):
    `p2p_read`, `p2p_write`, `p2p_nvlink`, `p2p_atomics`, `p2p_pcie`, or `p2p` when the
    command line is not in the capture."""
    devices: list[str]
    """Row names in printed order: `GPU0`.., then `NIC0`.. (or inline names such as `mlx5_0`)."""
    columns: list[str]
    """Matrix column headers in printed order (normally the same names as `devices`)."""
    matrix: dict[str, dict[str, str]]
    """Row device -> column device -> code as printed (`X`, `NV12`, `PIX`, `PXB`, `PHB`, `NODE`,
    `SYS`, `SOC`; `OK`, `NS`, `CNS`, `GNS`, `TNS`, `U` in P2P matrices)."""
    cpu_affinity: dict[str, str | None]
    """Device -> CPU affinity as printed (e.g. `0-47,96-143`); only rows that print a value
    (NIC rows print none); `N/A` is null."""
    numa_affinity: dict[str, str | None]
    """Device -> NUMA affinity as printed (e.g. `0`); `N/A` is null. Empty on old drivers that
    have no NUMA Affinity column."""
    gpu_numa_id: dict[str, str | None]
    """Device -> GPU NUMA ID as printed (newer drivers); `N/A` is null."""
    nic_legend: dict[str, str]
    """`NIC0` -> `mlx5_0` from the NIC Legend; empty when the NICs are named inline."""
    legend: dict[str, str]
    """Legend code -> meaning, as printed (e.g. `PIX` -> `Connection traversing at most a single
    PCIe bridge`)."""
    gpu_nic_affinity: dict[str, TopoGpuNicAffinity]
    """Derived, topology matrix only: GPU -> its closest NIC(s) and the path code, ranked
    PIX < PXB < PHB < NODE < SYS/SOC. Empty when the matrix lists no NIC."""
