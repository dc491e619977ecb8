"""Kernel log events: Xid/SXid, link flaps, PCIe downtraining, each judged over its rule's window.

Windows (docs/thresholds.md): a kernel log reaches back to boot, but each rule counts only the
events of its source's window, measured back from the newest line of the log (dmesg prints no
"now"; on a log that has gone quiet this overstates how recent old events are, never
understates). Xids and SXids: the last 2 h (Azure/azurehpc-health-checks customTests/
azure_gpu_xid.nhc judges only Xids of the last 2 h). Link flaps: 5 link-down events of one
interface in 24 h fail it (customTests/azure_ib_link_flapping.nhc), any in 24 h warns. A line
without a time is counted whatever its age.

Xid severity: the node-failing list of azure_gpu_xid.nhc (48, 56-58, 62-65, 68, 69, 73, 74,
79-81, 92, 119, 120) plus 95, an uncontained ECC error that needs a GPU reset (NVIDIA Xid
catalog, docs.nvidia.com/deploy/xid-errors: resolution RESET_GPU); other Xids warn, since suites
disagree. SXids the driver prints as `Fatal` fail (the NVSwitch needs a reset, NVIDIA Fabric
Manager guide), others warn. Any PCIe "limited by" line fails (imbue-ai/cluster-health
health_checks.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators._xid_actions import gpu_actions
from fabtui.probes.evaluators.base import EvalContext, evaluator

FAILING_XIDS = frozenset({48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 95,
                          119, 120})
XID_WINDOW_S = 2 * 3600.0
FLAP_WINDOW_S = 24 * 3600.0
FLAP_FAIL = 5

_WALL_FORMATS = ("%a %b %d %H:%M:%S %Y", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S",
                 "%b %d %H:%M:%S")


def _seconds(event: Any) -> float | None:
    """The event's time in seconds on one clock (uptime, else wall clock), None if unknown."""
    if event.uptime_s is not None:
        return float(event.uptime_s)
    text = re.sub(r"[.,]\d+|[+-]\d{2}:?\d{2}$|Z$", "", (event.wallclock or "").strip())
    text = re.sub(r"\s+", " ", text)
    for fmt in _WALL_FORMATS:
        try:
            return datetime.strptime(text, fmt).timestamp()
        except ValueError:
            continue
    return None


def _recent(events: Iterable[Any], newest: float | None, window: float) -> list[Any]:
    """Events within `window` seconds of `newest` (untimed events always count)."""
    kept = []
    for event in events:
        at = _seconds(event)
        if newest is None or at is None or newest - at <= window:
            kept.append(event)
    return kept


@evaluator("kernel-log")
def kernel_log(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """One metric per Xid / SXid code and per flapping interface in its window, one per
    downtrained device."""
    times = [t for t in (_seconds(e) for e in after.events) if t is not None]
    newest = max(times) if times else None
    metrics = []
    xids = _recent((e for e in after.events if e.type in ("xid", "gpu_fallen_off_bus")),
                   newest, XID_WINDOW_S)
    codes = sorted({e.code if e.code is not None else 79 for e in xids})
    for code in codes:
        hits = [e for e in xids if (e.code if e.code is not None else 79) == code]
        devices = sorted({e.pci or e.device or "?" for e in hits})
        metrics.append(Metric(name=f"xid.{code}", value=len(hits),
                              component=ctx.component(",".join(devices)),
                              verdict=Verdict.FAIL if code in FAILING_XIDS else Verdict.WARN,
                              source="Xid in the last 2 h (azure_gpu_xid.nhc; NVIDIA Xid "
                                     "catalog)"))
    for action in gpu_actions(xids):
        verdict = Verdict.OK if action.action == "none" else (
            Verdict.WARN if action.action == "follow Xid 154" else Verdict.FAIL)
        metrics.append(Metric(name="recovery_action", value=f"{action.action}: {action.why}",
                              component=ctx.component(action.gpu), verdict=verdict,
                              source=action.source))
    sxids = _recent((e for e in after.events if e.type == "sxid"), newest, XID_WINDOW_S)
    for code in sorted({e.code for e in sxids if e.code is not None}):
        hits = [e for e in sxids if e.code == code]
        fatal = any((e.severity or "").lower() == "fatal" for e in hits)
        devices = sorted({e.device or "nvswitch" for e in hits})
        metrics.append(Metric(name=f"sxid.{code}", value=len(hits),
                              component=ctx.component(",".join(devices)),
                              verdict=Verdict.FAIL if fatal else Verdict.WARN))
    downs = _recent((e for e in after.events if e.type == "link_down"), newest, FLAP_WINDOW_S)
    flaps: dict[str, int] = {}
    for event in downs:
        name = event.interface or event.device or "?"
        flaps[name] = flaps.get(name, 0) + 1
    for interface, count in sorted(flaps.items()):
        verdict = Verdict.FAIL if count >= FLAP_FAIL else Verdict.WARN
        metrics.append(Metric(name="link_flaps", value=count,
                              component=ctx.component(_nic_name(ctx, interface)),
                              verdict=verdict, limit=FLAP_FAIL,
                              source="link-down events in the last 24 h; 5 fail "
                                     "(azure_ib_link_flapping.nhc)"))
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
