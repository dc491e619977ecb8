"""IB work-completion statuses (`enum ibv_wc_status`, rdma-core libibverbs/verbs.h) for triage.

Each status says what it means for a hang and whether it is the first failure (`signal`) or the
consequence of one (`teardown`: once a QP is in error every posted work request completes with
status 5, flushed). Source: docs/triage.md and the fabric diagnostics reference, section 7.1.
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
    1: WcStatus("IBV_WC_LOC_LEN_ERR", "local length error: a posted buffer is too small "
                "(software / driver side)", "signal", True),
    2: WcStatus("IBV_WC_LOC_QP_OP_ERR", "local QP operation error (software / driver side)",
                "signal", True),
    4: WcStatus("IBV_WC_LOC_PROT_ERR", "local protection error: buffer or memory registration "
                "not valid for the operation (software / driver side, not the network)", "signal",
                True),
    5: WcStatus("IBV_WC_WR_FLUSH_ERR", "work request flushed: the QP was already in error; a "
                "consequence of an earlier failure (teardown), not the cause", "teardown"),
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
    21: WcStatus("IBV_WC_RESP_TIMEOUT_ERR", "response timeout", "signal"),
    22: WcStatus("IBV_WC_GENERAL_ERR", "general error", "signal"),
}


def describe(status: int | None) -> WcStatus | None:
    """What `status` means, or None for a value not in the table."""
    return STATUSES.get(status) if status is not None else None
