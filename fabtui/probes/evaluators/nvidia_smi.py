"""Per-GPU temperature and ECC from the default `nvidia-smi` table, and the GPUs it could not
reach."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("nvidia-smi")
def nvidia_smi(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
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
