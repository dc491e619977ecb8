"""RoCE v2 GIDs per RDMA device from `show_gids`: NCCL and perftest need one with an IPv4
address (its GID index)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("show-gids")
def show_gids(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """RoCE v2 GIDs with an IPv4 address per device: NCCL and perftest need one (GID index)."""
    devices: dict[str, list[Any]] = {}
    for gid in after.gids:
        devices.setdefault(gid.dev, []).append(gid)
    metrics = []
    for device, gids in sorted(devices.items()):
        usable = [g for g in gids if (g.version or "").lower() == "v2" and g.ipv4]
        where = ctx.component() if ctx.target.nic is not None else ctx.component(device)
        metrics.append(Metric(name="roce_v2_ipv4_gids", value=len(usable), component=where,
                              verdict=Verdict.OK if usable else Verdict.FAIL))
        if usable:
            metrics.append(Metric(name="gid_index", value=usable[0].index, component=where))
    return metrics
