"""GPU health from an NVML snapshot: temperature, ECC, row remapping, PCIe, clocks, NVLink.

Rules and sources: shared/reference/fabric-diagnostics.md section 5 (Azure NHC, Meta GCM, NVIDIA
DCGM). PCIe generation drops at idle by design (link power saving), so only a *width* below
maximum, or a generation below maximum while the GPU is busy, counts as downtrained.
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator

_HARDWARE_SLOWDOWN = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
                      "sw_thermal_slowdown")


@evaluator("nvml")
def nvml(_before: Any, after: dict[str, Any], ctx: EvalContext) -> list[Metric]:
    """Per-GPU metrics from `NvmlTransport.snapshot()` values."""
    metrics: list[Metric] = []
    for gpu in after.get("gpus", []):
        component = ctx.component(f"GPU{gpu['index']}")

        def add(name: str, value: Any, unit: str = "", verdict: Verdict = Verdict.OK,
                where: str = component) -> None:
            if value is not None:
                metrics.append(Metric(name=name, value=value, unit=unit, component=where,
                                      verdict=verdict))

        add("temperature_c", gpu.get("temperature_c"), "°C")
        add("utilization_gpu_pct", gpu.get("utilization_gpu_pct"), "%")
        add("power_draw_w", gpu.get("power_draw_w"), "W")
        ecc = gpu.get("ecc") or {}
        add("ecc.volatile_uncorrectable", ecc.get("volatile_uncorrectable"))
        add("ecc.volatile_correctable", ecc.get("volatile_correctable"))
        rows = gpu.get("remapped_rows")
        if rows is not None:
            add("remapped_rows.pending", int(rows["pending"]),
                verdict=Verdict.FAIL if rows["pending"] else Verdict.OK)
            add("remapped_rows.failure", int(rows["failure"]),
                verdict=Verdict.FAIL if rows["failure"] else Verdict.OK)
            add("remapped_rows.uncorrectable", rows["uncorrectable"])
        if gpu.get("retired_pages_pending") is not None:
            pending = gpu["retired_pages_pending"]
            add("retired_pages.pending", int(pending),
                verdict=Verdict.FAIL if pending else Verdict.OK)
        metrics.extend(_pcie(gpu, component))
        reasons = gpu.get("clocks_event_reasons")
        if reasons is not None:
            slow = [r for r in reasons if r in _HARDWARE_SLOWDOWN]
            add("clocks.slowdown", ",".join(slow) or "none",
                verdict=Verdict.WARN if slow else Verdict.OK)
        links = gpu.get("nvlinks")
        if links:
            down = [str(link["link"]) for link in links if not link["active"]]
            add("nvlink.inactive", len(down),
                verdict=Verdict.FAIL if down else Verdict.OK)
    return metrics


def _pcie(gpu: dict[str, Any], component: str) -> list[Metric]:
    pcie = gpu.get("pcie") or {}
    metrics = []
    width, width_max = pcie.get("width_current"), pcie.get("width_max")
    if width is not None and width_max:
        metrics.append(Metric(name="pcie.width", value=f"x{width} of x{width_max}",
                              component=component,
                              verdict=Verdict.FAIL if width < width_max else Verdict.OK))
    gen, gen_max = pcie.get("gen_current"), pcie.get("gen_max")
    busy = (gpu.get("utilization_gpu_pct") or 0) > 0
    if gen is not None and gen_max:
        metrics.append(Metric(name="pcie.gen", value=f"Gen{gen} of Gen{gen_max}",
                              component=component,
                              verdict=Verdict.WARN if gen < gen_max and busy else Verdict.OK))
    return metrics
