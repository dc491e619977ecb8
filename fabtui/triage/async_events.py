"""IB asynchronous events (`enum ibv_event_type`) as NCCL prints them, for triage.

NCCL's IB async thread prints `NET/IB : mlx5_0:1 Got async event : <text>` (older releases
`NET/IB : Got async event : <text>`, 2.2x `NET/IB : mlx5_1:1 async fatal event on QP (0x..):
<text>`), the text being `ibv_event_type_str()` of rdma-core (`libibverbs/enum_strs.c`). An
error event is raised by the reporting host's own NIC: it names the host and the NIC at fault,
while the peers of its queue pairs only see the consequence (flushed work requests, retries
exceeded, remote invalid request). Informational events (port active, GID table change, LID
change, SM change, client reregistration, ...) are not faults and are never blamed.
"""

from __future__ import annotations

from typing import NamedTuple


class AsyncEvent(NamedTuple):
    """What one async event text means for a hang."""

    name: str
    meaning: str


FAULTS: dict[str, AsyncEvent] = {
    "local access violation work queue error": AsyncEvent(
        "IBV_EVENT_QP_ACCESS_ERR", "the NIC found an access its memory registration does not "
        "allow on one of its queue pairs (memory registration or GPUDirect RDMA on this host, "
        "or the NIC's driver or firmware); the peers only see the queue pair go away"),
    "invalid request local work queue error": AsyncEvent(
        "IBV_EVENT_QP_REQ_ERR", "the NIC rejected a request of one of its queue pairs as "
        "invalid (driver, firmware or library on this host)"),
    "local work queue catastrophic error": AsyncEvent(
        "IBV_EVENT_QP_FATAL", "a queue pair of this NIC failed fatally (NIC, driver or "
        "firmware on this host)"),
    "local catastrophic error": AsyncEvent(
        "IBV_EVENT_DEVICE_FATAL", "the NIC itself failed (hardware or firmware fault): every "
        "queue pair on it is lost"),
    "port error": AsyncEvent(
        "IBV_EVENT_PORT_ERR", "the NIC's port went down: the link of this NIC (cable, optic, "
        "switch port)"),
    "cq error": AsyncEvent(
        "IBV_EVENT_CQ_ERR", "a completion queue of this NIC overran (driver or library on this "
        "host)"),
    "srq catastrophic error": AsyncEvent(
        "IBV_EVENT_SRQ_ERR", "a shared receive queue of this NIC failed (NIC, driver or "
        "firmware on this host)"),
    "path migration request error": AsyncEvent(
        "IBV_EVENT_PATH_MIG_ERR", "the NIC could not migrate a queue pair to its alternate "
        "path"),
    "wq fatal": AsyncEvent("IBV_EVENT_WQ_FATAL", "a work queue of this NIC failed fatally"),
}
"""Error events, by `ibv_event_type_str()` text (lower case)."""

INFORMATIONAL = ("communication established", "send queue drained", "path migrated",
                 "port active", "lid change", "p_key change", "sm change",
                 "srq limit reached", "last wqe reached", "client reregistration",
                 "gid table change")
"""Events that report a state change, not a fault."""


def describe(message: str) -> AsyncEvent | None:
    """The fault an NCCL async-event message reports, or None (informational or unknown)."""
    lowered = message.lower()
    text = lowered.rsplit(":", 1)[-1].strip()
    if any(text.startswith(info) for info in INFORMATIONAL):
        return None
    for key, event in FAULTS.items():
        if key in lowered:
            return event
    return None
