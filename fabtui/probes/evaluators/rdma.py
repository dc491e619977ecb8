"""RDMA counters (rdma statistic, hw_counters) and InfiniBand port counters (perfquery).

Counter meanings: torvalds/linux drivers/infiniband/hw/mlx5/counters.c (CNP/ECN follow DCQCN
terms: np = receiver, rp = sender) and the IBTA PortCounters names (shared/reference/
fabric-diagnostics.md sections 3.2 and 3.4).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.probes.evaluators.counters import counter_metrics

_RDMA_DELTAS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "req_cqe_error",
                "resp_cqe_error", "*_cqe_flush_error", "out_of_buffer", "rnr_nak_retry_err",
                "duplicate_request", "implied_nak_seq_err", "req_remote_access_errors",
                "resp_local_length_error", "req_transport_retries_exceeded",
                "roce_slow_restart*")
_RDMA_RATES = ("np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored",
               "rx_write_requests", "rx_read_requests")
_IB_DELTAS = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
              "PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
              "PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors",
              "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
              "PortLocalPhysicalErrors", "PortMalformedPktErrors", "PortBufferOverrunErrors")
_IB_RATES = ("PortXmitWait", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts")


def _mine(ctx: EvalContext, device: str) -> bool:
    """On a NIC target only that NIC's counters count (a dump may list every device)."""
    nic = ctx.target.nic
    return nic is None or device in (nic.name, "unknown")


@evaluator("rdma-statistic")
def rdma_statistic(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per link (`mlx5_0/1`): retransmit and sequence errors as deltas, CNP/ECN as rates."""
    metrics = []
    for link, counters in after.links.items():
        if not _mine(ctx, link.split("/")[0]):
            continue
        old = before.links.get(link) if before is not None else None
        if before is not None and old is None:
            continue
        metrics += counter_metrics(old, counters, ctx.component(), ctx.interval,
                                   deltas=_RDMA_DELTAS, rates=_RDMA_RATES)
    return metrics


@evaluator("rdma-hw-counters")
def rdma_hw_counters(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """The same judgement from a hw_counters dump, per device and port."""
    metrics = []
    for device, data in after.devices.items():
        if not _mine(ctx, device):
            continue
        for port, counters in data.ports.items():
            old = None
            if before is not None:
                previous = before.devices.get(device)
                old = previous.ports.get(port) if previous is not None else None
                if old is None:
                    continue
            metrics += counter_metrics(old, counters, ctx.component(), ctx.interval,
                                       deltas=_RDMA_DELTAS, rates=_RDMA_RATES)
    return metrics


@evaluator("perfquery")
def perfquery(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """IB port error counters as deltas; PortXmitWait (congestion) and data as rates."""
    metrics = []
    previous = {(p.lid, p.port, p.counter_set): p for p in before.ports} if before else {}
    for port in after.ports:
        old = previous.get((port.lid, port.port, port.counter_set))
        if before is not None and old is None:
            continue
        metrics += counter_metrics(old.counters if old else None, port.counters,
                                   ctx.component(), ctx.interval, deltas=_IB_DELTAS,
                                   rates=_IB_RATES)
    return metrics
