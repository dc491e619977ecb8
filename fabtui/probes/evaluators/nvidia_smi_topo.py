"""GPU to NIC affinity from `nvidia-smi topo -m`: GPUDirect must not cross a host bridge or
the CPU interconnect."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator

_BAD_PATHS = ("NODE", "SYS", "SOC", "PHB")
"""GPUDirect through these crosses a host bridge or the CPU interconnect (topo -m legend)."""


@evaluator("nvidia-smi-topo")
def nvidia_smi_topo(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """GPU i's closest NIC must be PIX or PXB (fabric-diagnostics 6.2, linux-rdma/perftest #241)."""
    metrics = []
    for gpu, affinity in sorted(after.gpu_nic_affinity.items()):
        bad = affinity.connection.upper() in _BAD_PATHS
        nics = ",".join(affinity.nic_devices or affinity.nics) or "no NIC"
        metrics.append(Metric(name="gpu_nic_affinity", value=f"{affinity.connection} to {nics}",
                              component=ctx.component(gpu),
                              verdict=Verdict.FAIL if bad else Verdict.OK))
    return metrics
