"""What the RDMA hardware counter evaluators share (`rdma_statistic.py`, `rdma_hw_counters.py`):
which counters are errors (deltas) and which flows (rates), and which device is the target's.

Counter meanings: torvalds/linux drivers/infiniband/hw/mlx5/counters.c (CNP/ECN follow DCQCN
terms: np = receiver, rp = sender; shared/reference/fabric-diagnostics.md sections 3.2 and 3.4).
"""

from __future__ import annotations

from fabtui.probes.evaluators.base import EvalContext

RDMA_DELTAS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "req_cqe_error",
               "resp_cqe_error", "*_cqe_flush_error", "out_of_buffer", "rnr_nak_retry_err",
               "duplicate_request", "implied_nak_seq_err", "req_remote_access_errors",
               "resp_local_length_error", "req_transport_retries_exceeded",
               "roce_slow_restart*")
RDMA_RATES = ("np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored",
              "rx_write_requests", "rx_read_requests")


def mine(ctx: EvalContext, device: str) -> bool:
    """On a NIC target only that NIC's counters count (a dump may list every device)."""
    nic = ctx.target.nic
    return nic is None or device in (nic.name, "unknown")
