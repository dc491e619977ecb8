"""nccl-tests results and NCCL / PyTorch logs.

nccl-tests: busbw at the largest message is what the hardware bottleneck moves; #wrong > 0 and a
failed '# Out of bounds values' line are data corruption whatever the bandwidth; an average of 0
after an init failure means "did not run", not "slow" (NVIDIA/nccl-tests #267, #294).
NCCL logs: a watchdog timeout or an IB completion error fails the job; GPUDirect RDMA not in
effect is a warning (busbw halves when traffic bounces through host memory, perftest #241).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluate import EvalContext, evaluator

_JOB_FATAL = {"watchdog_timeout", "ib_completion_error", "dist_backend_error",
              "unhandled_system_error", "child_failed", "desync", "connect_failed",
              "socket_connect_refused", "bootstrap_error", "cuda_error"}


@evaluator("nccl-tests")
def nccl_tests(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """busbw (largest size and peak), correctness, and whether the test ran at all."""
    where = ctx.component()
    metrics = [Metric(name="status", value=after.status, component=where,
                      verdict=Verdict.OK if after.status in ("ok", "incomplete") else
                      Verdict.ERROR if after.status == "did_not_run" else Verdict.FAIL)]
    if after.rows:
        largest = max(after.rows, key=lambda r: r.size_bytes)
        busbw = largest.out_of_place.busbw
        if busbw is not None:
            metrics.append(Metric(name="busbw_max", value=busbw, unit="GB/s", component=where))
        wrong = sum((r.out_of_place.wrong or 0) + (r.in_place.wrong or 0) for r in after.rows)
        metrics.append(Metric(name="wrong_total", value=wrong, component=where))
        metrics.append(Metric(name="message_bytes", value=largest.size_bytes, component=where))
    if after.peak_busbw is not None:
        metrics.append(Metric(name="busbw_peak", value=after.peak_busbw, unit="GB/s",
                              component=where))
    if after.avg_busbw is not None:
        metrics.append(Metric(name="avg_busbw", value=after.avg_busbw, unit="GB/s",
                              component=where))
    if after.out_of_bounds is not None:
        metrics.append(Metric(name="out_of_bounds", value=after.out_of_bounds, component=where))
    for failure in after.failures:
        metrics.append(Metric(name=f"failure.{failure.category}", value=failure.message[:160],
                              component=ctx.component(failure.host) if failure.host else where,
                              verdict=Verdict.FAIL))
    return metrics


@evaluator("nccl-log")
def nccl_log(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Job-fatal events by type and rank, and whether GPUDirect RDMA is in effect."""
    metrics = []
    for event in after.events:
        if event.type not in _JOB_FATAL:
            continue
        detail = f"rank{event.rank}" if event.rank is not None else (event.host or None)
        value = event.message[:160]
        metrics.append(Metric(name=f"event.{event.type}", value=value,
                              component=ctx.component(detail) if detail else ctx.component(),
                              verdict=Verdict.FAIL))
    if after.gpudirect_rdma is False or after.gpudirect_rdma_disabled:
        which = ",".join(after.gpudirect_rdma_disabled) or "all NICs"
        metrics.append(Metric(name="gpudirect_rdma", value=f"not in effect on {which}",
                              component=ctx.component(), verdict=Verdict.WARN))
    elif after.gpudirect_rdma:
        metrics.append(Metric(name="gpudirect_rdma", value="in effect",
                              component=ctx.component()))
    return metrics
