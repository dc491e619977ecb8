"""What NCCL printed that ends a job, as failing metrics: shared by the nccl-tests and nccl-log
evaluators (`nccl_tests.py`, `nccl_log.py`), so a failed test run names its NIC and peer as a
log does."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext

_JOB_FATAL = {"watchdog_timeout", "ib_completion_error", "dist_backend_error",
              "unhandled_system_error", "nccl_error", "child_failed", "desync",
              "connect_failed", "socket_connect_refused", "connect_timeout",
              "connection_closed", "store_error", "bootstrap_error", "cuda_error"}


def event_metrics(events: Any, hosts: dict[int, str], ctx: EvalContext) -> list[Metric]:
    """One failing metric per job-fatal event kind and place (watchdog timeouts are summed up
    by the caller): an IB completion error on its host's NIC with its status and peer, other
    failures on their host and rank, with the peer when the event names one."""
    metrics: list[Metric] = []
    seen: set[tuple[str, str]] = set()
    for event in events:
        if event.type not in _JOB_FATAL or event.type == "watchdog_timeout":
            continue
        host = event.host or hosts.get(event.rank) if event.rank is not None else event.host
        if event.type == "ib_completion_error":
            where = f"{host}:{event.hca}" if host and event.hca else \
                (host or (f"rank{event.rank}" if event.rank is not None else None))
            meaning = ": ".join(x for x in (event.status_name, event.status_meaning) if x)
            value = f"status {event.status} ({meaning or '?'}) with peer {event.peer}"
        else:
            rank = f"rank{event.rank}" if event.rank is not None else None
            where = f"{host}:{rank}" if host and rank else (rank or host)
            value = event.message[:160]
            if event.peer and event.peer not in value:
                value += f" (peer {event.peer})"
        key = (event.type, where or "")
        if key in seen:
            continue
        seen.add(key)
        metrics.append(Metric(name=f"event.{event.type}", value=value,
                              component=_absolute(ctx, where), verdict=Verdict.FAIL))
    return metrics


def _absolute(ctx: EvalContext, where: str | None) -> str:
    """`node003:mlx5_5` as is (it names its host); otherwise under the probe's target."""
    if where is None:
        return ctx.component()
    return where if ":" in where else ctx.component(where)
