"""GPU to NIC affinity from `nvidia-smi topo -m`, judged by the node's platform: on x86 HGX
GPUDirect must not cross a host bridge or the CPU interconnect; on Grace parts (GH200, GB200,
GB300) the NIC hangs off the CPU by design, so `NODE` is their normal relation and GPUDirect is
judged by measured GPU-memory RDMA instead (fabtui.topology.platform)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.platform import PCIE_PATHS, PCIE_RULE_SOURCE, Platform, platform_of


def node_platform(ctx: EvalContext) -> Platform | None:
    """The platform of the target node's GPUs as the topology gives them; None when unknown."""
    node = ctx.target.node
    models = {g.model for g in node.gpus} if node is not None else set()
    platforms = {platform_of(m) for m in models}
    return platforms.pop() if len(platforms) == 1 else None


@evaluator("nvidia-smi-topo")
def nvidia_smi_topo(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """GPU i's closest NIC must be PIX or PXB, or also NODE on a Grace platform
    (fabric-diagnostics 6.2, linux-rdma/perftest #241; Mellanox/ngc_multinode_perf PR #129)."""
    platform = node_platform(ctx)
    allowed = platform.gpu_nic_paths if platform is not None else PCIE_PATHS
    rule = platform.gpu_nic_rule if platform is not None else \
        f"unknown platform: PIX or PXB ({PCIE_RULE_SOURCE})"
    metrics = []
    for gpu, affinity in sorted(after.gpu_nic_affinity.items()):
        good = affinity.connection.upper() in allowed
        nics = ",".join(affinity.nic_devices or affinity.nics) or "no NIC"
        metrics.append(Metric(name="gpu_nic_affinity", value=f"{affinity.connection} to {nics}",
                              component=ctx.component(gpu), source=rule,
                              verdict=Verdict.OK if good else Verdict.FAIL))
    return metrics
