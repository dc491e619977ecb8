"""Kernel log events: Xid/SXid, link flaps, PCIe downtraining.

Xid severity follows the node-failing list of Azure/azurehpc-health-checks
customTests/azure_gpu_xid.nhc (48, 56-58, 62-65, 68, 69, 73, 74, 79-81, 92, 119, 120); other Xids
are warnings, since suites disagree (fabric-diagnostics 5.1). Five link-down events fail the
link (customTests/azure_ib_link_flapping.nhc); any PCIe "limited by" line fails
(imbue-ai/cluster-health health_checks.py).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluate import EvalContext, evaluator

FAILING_XIDS = frozenset({48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119,
                          120})


@evaluator("kernel-log")
def kernel_log(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """One metric per Xid code, per flapping interface, per downtrained device."""
    metrics = []
    for code, count in sorted(after.xids.items()):
        devices = sorted({e.pci or e.device or "?" for e in after.events
                          if e.type in ("xid", "gpu_fallen_off_bus") and e.code == code})
        metrics.append(Metric(name=f"xid.{code}", value=count,
                              component=ctx.component(",".join(devices)),
                              verdict=Verdict.FAIL if code in FAILING_XIDS else Verdict.WARN))
    for code, count in sorted(after.sxids.items()):
        metrics.append(Metric(name=f"sxid.{code}", value=count, component=ctx.component(),
                              verdict=Verdict.WARN))
    for interface, count in sorted(after.link_flaps.items()):
        verdict = Verdict.FAIL if count >= 5 else Verdict.WARN
        metrics.append(Metric(name="link_flaps", value=count,
                              component=ctx.component(_nic_name(ctx, interface)),
                              verdict=verdict, limit=5))
    for event in after.events:
        if event.type == "pcie_downtrained":
            metrics.append(Metric(name="pcie_downtrained", value=event.message[:120],
                                  component=ctx.component(event.device or event.pci or "pcie"),
                                  verdict=Verdict.FAIL))
    return metrics


def _nic_name(ctx: EvalContext, interface: str) -> str:
    """The topology's NIC name (`mlx5_1`) for a kernel interface name (`enp41s0f0np0`)."""
    node = ctx.target.node
    if node is not None:
        for nic in node.nics:
            if interface in (nic.netdev, nic.name):
                return nic.name
    return interface
