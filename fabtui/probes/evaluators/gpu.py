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


@evaluator("nvidia-smi-q")
def smi_q(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """The same judgement as NVML, from `nvidia-smi -q (-x)` on a remote node."""
    gpus = []
    for index, gpu in enumerate(after.gpus):
        gpus.append({
            "index": index, "temperature_c": gpu.temperature_c,
            "utilization_gpu_pct": gpu.utilization_gpu_pct, "power_draw_w": gpu.power_draw_w,
            "ecc": {"volatile_uncorrectable": gpu.ecc_volatile_uncorrectable_total,
                    "volatile_correctable": gpu.ecc_volatile_correctable_total},
            "remapped_rows": None if gpu.remapped_rows_pending is None else {
                "pending": bool(gpu.remapped_rows_pending),
                "failure": bool(gpu.remapped_rows_failure),
                "uncorrectable": gpu.remapped_rows_uncorrectable},
            "retired_pages_pending": gpu.retired_pages_pending,
            "pcie": {"gen_current": gpu.pcie_gen_current, "gen_max": gpu.pcie_gen_max,
                     "width_current": gpu.pcie_width_current, "width_max": gpu.pcie_width_max},
            "clocks_event_reasons": gpu.clocks_event_reasons,
        })
    return nvml(None, {"gpus": gpus}, ctx)


_BAD_PATHS = ("NODE", "SYS", "SOC", "PHB")
"""GPUDirect through these crosses a host bridge or the CPU interconnect (topo -m legend)."""


@evaluator("nvidia-smi-topo")
def topo(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """GPU i's closest NIC must be PIX or PXB (fabric-diagnostics 6.2, linux-rdma/perftest #241)."""
    metrics = []
    for gpu, affinity in sorted(after.gpu_nic_affinity.items()):
        bad = affinity.connection.upper() in _BAD_PATHS
        nics = ",".join(affinity.nic_devices or affinity.nics) or "no NIC"
        metrics.append(Metric(name="gpu_nic_affinity", value=f"{affinity.connection} to {nics}",
                              component=ctx.component(gpu),
                              verdict=Verdict.FAIL if bad else Verdict.OK))
    return metrics


@evaluator("nvidia-smi")
def smi_table(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per GPU from the default table: temperature and volatile uncorrectable ECC; GPUs that
    nvidia-smi could not reach (a lost GPU is left out of the table) as warnings."""
    metrics = []
    for gpu in after.gpus:
        where = ctx.component(f"GPU{gpu.index}")
        if gpu.temperature_c is not None:
            metrics.append(Metric(name="temperature_c", value=gpu.temperature_c, unit="°C",
                                  component=where))
        if gpu.volatile_uncorrectable_ecc is not None:
            metrics.append(Metric(name="ecc.volatile_uncorrectable",
                                  value=gpu.volatile_uncorrectable_ecc, component=where))
    for warning in after.warnings:
        if "Unable to determine the device handle" in warning:
            metrics.append(Metric(name="gpu_unreachable", value=warning[:160],
                                  component=ctx.component(), verdict=Verdict.FAIL))
    return metrics


@evaluator("dcgmi-diag")
def dcgmi(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """One metric per DCGM test (never only the summary: IBM/autopilot #68)."""
    verdicts = {"pass": Verdict.OK, "fail": Verdict.FAIL, "warn": Verdict.WARN}
    metrics = [Metric(name="overall", value=after.overall, component=ctx.component(),
                      verdict=verdicts.get(after.overall, Verdict.WARN))]
    for test, result in sorted(after.tests.items()):
        failed = after.failed_gpus.get(test) or []
        where = ctx.component(",".join(f"GPU{g}" for g in failed)) if failed else \
            ctx.component()
        metrics.append(Metric(name=f"test.{test}", value=result, component=where,
                              verdict=verdicts.get(result, Verdict.OK)))
    return metrics
