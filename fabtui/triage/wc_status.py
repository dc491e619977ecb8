"""IB work-completion statuses (`enum ibv_wc_status`, rdma-core libibverbs/verbs.h) for triage.

Each status says what it means for a hang and whether it is the first failure (`signal`) or the
consequence of one (`teardown`: once a QP is in error every posted work request completes with
status 5, flushed). Every value of the enum is here (0 is success): the numbers and names are
rdma-core's `libibverbs/verbs.h`, the wording of each meaning follows `ibv_wc_status_str()`
(`libibverbs/verbs.c`) and the ibv_poll_cq(3) descriptions (RDMAmojo, "ibv_poll_cq()"), and the
ConnectX notes rdma-core's mlx5 provider (`providers/mlx5/cq.c`, `mlx5_handle_error_cqe`: a
CQE syndrome without a verbs name becomes 21, general error; mlx5 never returns 19 or 20).
docs/triage.md lists the table.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Role = Literal["signal", "teardown", "other"]


class WcStatus(NamedTuple):
    """One status value."""

    name: str
    meaning: str
    role: Role
    host_side: bool = False
    """The error is made on the reporting host (buffers, memory registration, driver), not on
    the wire: the network path is not the suspect."""


STATUSES: dict[int, WcStatus] = {
    1: WcStatus("IBV_WC_LOC_LEN_ERR", "local length error: a posted buffer is too small for the "
                "message, or the message exceeds the port's maximum (software / driver side)",
                "signal", True),
    2: WcStatus("IBV_WC_LOC_QP_OP_ERR", "local QP operation error: the work request is "
                "inconsistent with its queue pair (software / driver side)", "signal", True),
    3: WcStatus("IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error (reliable datagram "
                "only: NCCL's RC queue pairs never get it; software / driver side)", "signal",
                True),
    4: WcStatus("IBV_WC_LOC_PROT_ERR", "local protection error: buffer or memory registration "
                "not valid for the operation (software / driver side, not the network)", "signal",
                True),
    5: WcStatus("IBV_WC_WR_FLUSH_ERR", "work request flushed: the QP was already in error; a "
                "consequence of an earlier failure (teardown), not the cause", "teardown"),
    6: WcStatus("IBV_WC_MW_BIND_ERR", "memory window bind error: a memory management operation "
                "failed (software / driver side)", "signal", True),
    7: WcStatus("IBV_WC_BAD_RESP_ERR", "bad response: the responder returned an unexpected "
                "transport opcode (the peer's NIC or what the path delivered)", "signal"),
    8: WcStatus("IBV_WC_LOC_ACCESS_ERR", "local access error: an incoming RDMA write with "
                "immediate hit a local buffer its memory registration does not allow (memory "
                "registration / GPUDirect RDMA on this host, not the network)", "signal", True),
    9: WcStatus("IBV_WC_REM_INV_REQ_ERR", "remote invalid request: the peer rejected the "
                "request", "signal"),
    10: WcStatus("IBV_WC_REM_ACCESS_ERR", "remote access error: the peer's memory key or "
                 "permissions did not allow the access", "signal"),
    11: WcStatus("IBV_WC_REM_OP_ERR", "remote operation error: the peer could not complete the "
                 "operation", "signal"),
    12: WcStatus("IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded: the peer did not "
                 "acknowledge within timeout x retries (link down or flapping, dead peer, severe "
                 "loss, PFC deadlock, non-routable GID); read the link counters of both ends",
                 "signal"),
    13: WcStatus("IBV_WC_RNR_RETRY_EXC_ERR", "receiver not ready, retries exceeded: the peer "
                 "posted no receive in time (peer stalled)", "signal"),
    14: WcStatus("IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation (reliable datagram only; "
                 "software / driver side)", "signal", True),
    15: WcStatus("IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request (reliable datagram "
                 "only): the peer rejected the request", "signal"),
    16: WcStatus("IBV_WC_REM_ABORT_ERR", "remote aborted: the peer aborted the operation",
                 "signal"),
    17: WcStatus("IBV_WC_INV_EECN_ERR", "invalid EE context number (reliable datagram only; "
                 "software / driver side)", "signal", True),
    18: WcStatus("IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state (reliable datagram "
                 "only; software / driver side)", "signal", True),
    19: WcStatus("IBV_WC_FATAL_ERR", "fatal error: the device hit an unrecoverable transport "
                 "error (providers other than mlx5); the reporting NIC, its firmware or driver: "
                 "read its kernel log", "signal", True),
    20: WcStatus("IBV_WC_RESP_TIMEOUT_ERR", "response timeout: no response from the peer in "
                 "time (providers other than mlx5, which report 12); the path or the peer, as "
                 "for status 12", "signal"),
    21: WcStatus("IBV_WC_GENERAL_ERR", "general error: a transport error no other status "
                 "describes; on ConnectX (mlx5) a CQE syndrome without a verbs name: the "
                 "`vendor err` printed with it says which", "signal"),
    22: WcStatus("IBV_WC_TM_ERR", "tag matching error (hardware tag matching offload, which "
                 "NCCL does not use; software / driver side)", "signal", True),
    23: WcStatus("IBV_WC_TM_RNDV_INCOMPLETE", "tag matching rendezvous incomplete (hardware tag "
                 "matching offload; software / driver side)", "signal", True),
}


def describe(status: int | None) -> WcStatus | None:
    """What `status` means, or None for a value not in the table."""
    return STATUSES.get(status) if status is not None else None
