"""GPU health from `nvidia-smi -q (-x)` on a remote node, judged as an NVML snapshot is
(`nvml.py`)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.probes.evaluators.nvml import nvml


@evaluator("nvidia-smi-q")
def nvidia_smi_q(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
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
