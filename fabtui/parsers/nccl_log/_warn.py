"""NCCL WARN lines and the network failures they report: IB completion errors (with the
`ibv_wc_status` meaning), IB async events, socket connect / close failures, bootstrap and NET
plugin errors.

Every WARN line is an event. `classify_warn` and `fill_network_details` also read the failure
an NCCL error quotes as its `Last error` (`_torch`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fabtui.parsers.nccl_log._records import Event
from fabtui.parsers.nccl_log._state import (
    MESSAGE_MAX,
    PG_RANK,
    State,
    add_event,
    add_host,
    event_dropped,
    int_group,
    line_prefix,
    note_host,
)

if TYPE_CHECKING:
    from fabtui.model.parsed.nccl_log import EventType

# A peer is `addr<port>` (any name), or a bare token that looks like an address.
_PEER = re.compile(r"(?:from peer|[Cc]onnect to|remote peer|recv from|send to|from)\s+"
                   r"(?:([^\s<>,]+)<(\d+)>|(?=[^\s<>,]*[\d.:])([^\s<>,]+))")
_IB_STATUS = re.compile(r"with (?:error (\d+)|status=(?:(\w+)\()?(\d+)\)?)")
_IB_OPCODE = re.compile(r"opcode[= ](?:(\w+)\()?(\d+)")
_IB_LEN = re.compile(r"\blen[= ](\d+)")
_IB_VENDOR = re.compile(r"vendor[ _]err[= ](\d+)")
_IB_DIRECTION = re.compile(r"vendor[ _]err[= ]\d+\s*\((\w+)\)")
_IB_LOCAL_GID = re.compile(r"localGid\s+(\S+)")
_IB_REMOTE_GID = re.compile(r"remoteGids?\s*(\S+)")
_QP_LOCAL_GID = re.compile(r"local GID (?!index\b)([^\s,]+)")
_QP_REMOTE_GID = re.compile(r"remote GID ([^\s,]+)")
_HCA = re.compile(r"\bhca\s+(\S+)|\b(mlx\d+_\w+|ibp\w+|rdmap\w+|irdma\w*|bnxt_\w+):\d+"
                  r"|\bon dev (\S+?):\d+")
_ERRNO = re.compile(r"(?:returned|errno|failed with)\s+(\d+)")
# enum ibv_wc_status and ibv_wc_status_str() of rdma-core libibverbs/verbs.c, by value.
_WC_STATUS = (
    ("SUCCESS", "success"), ("LOC_LEN_ERR", "local length error"),
    ("LOC_QP_OP_ERR", "local QP operation error"),
    ("LOC_EEC_OP_ERR", "local EE context operation error"),
    ("LOC_PROT_ERR", "local protection error"), ("WR_FLUSH_ERR", "Work Request Flushed Error"),
    ("MW_BIND_ERR", "memory management operation error"), ("BAD_RESP_ERR", "bad response error"),
    ("LOC_ACCESS_ERR", "local access error"), ("REM_INV_REQ_ERR", "remote invalid request error"),
    ("REM_ACCESS_ERR", "remote access error"), ("REM_OP_ERR", "remote operation error"),
    ("RETRY_EXC_ERR", "transport retry counter exceeded"),
    ("RNR_RETRY_EXC_ERR", "RNR retry counter exceeded"),
    ("LOC_RDD_VIOL_ERR", "local RDD violation error"),
    ("REM_INV_RD_REQ_ERR", "remote invalid RD request"), ("REM_ABORT_ERR", "aborted error"),
    ("INV_EECN_ERR", "invalid EE context number"),
    ("INV_EEC_STATE_ERR", "invalid EE context state"),
    ("FATAL_ERR", "fatal error"), ("RESP_TIMEOUT_ERR", "response timeout error"),
    ("GENERAL_ERR", "general error"), ("TM_ERR", "TM error"),
    ("TM_RNDV_INCOMPLETE", "TM software rendezvous"),
)
_FROM_RANK = re.compile(r"\bfrom rank (\d+)")
_RANK_TAG = re.compile(r"\[rank(\d+)\]:")


def warn_line(state: State, number: int, line: str, following: str) -> Event | None:
    """Every WARN line is an event (returned, None past the cap); a completion error wrapped
    onto the next line is joined."""
    state.warn_lines += 1
    state.evidence = True
    pos = line.find("NCCL WARN")
    if len(state.events) >= state.max_events:  # past the cap: what `event_from_prefix` does
        state.dropped += 1  # (the message and its kind are not needed)
        note_host(state, line, pos)
        return None
    msg = line[pos + 9:].strip()
    if "Got completion from peer" in msg and "vendor" not in msg:
        follow = following.strip()
        if follow and "NCCL" not in follow:
            msg = f"{msg} {follow}"
    kind = classify_warn(msg, line[:pos])
    return event_from_prefix(state, number, line, pos, kind, msg, warn=True)


def classify_warn(msg: str, head: str) -> EventType:
    lowered = msg.lower()
    if "got completion from peer" in lowered or "got completion with error" in lowered:
        # NCCL before 2.12 printed no peer: `Got completion with error 12, opcode 0, ...`.
        return "ib_completion_error"
    if "async event" in lowered or "async fatal event" in lowered:
        return "ib_async_event"
    if "ibv_modify_qp failed" in lowered and "timed out" in lowered:
        # Moving a queue pair to RTR/RTS timed out (errno 110): the two NICs never reached each
        # other (no route between them, as across the rails of a rail-only fabric).
        return "connect_failed"
    if "connect to" in lowered and ("failed" in lowered or "returned" in lowered):
        return "socket_connect_refused" if "refused" in lowered else "connect_failed"
    if "connection refused" in lowered:
        return "socket_connect_refused"
    if "closed by remote peer" in lowered or "connection closed" in lowered \
            or "reset by peer" in lowered or "broken pipe" in lowered \
            or re.search(r"call to (?:recv|send) (?:from|to) \S+ failed", lowered):
        return "connection_closed"
    if lowered.startswith("bootstrap") or "bootstrap.cc" in head or "no socket interface" \
            in lowered or "no interface found" in lowered:
        return "bootstrap_error"
    if re.search(r"network .+ not found|net/plugin.*(?:could not find|not found|no plugin)",
                 lowered):
        return "plugin_not_found"
    if "net/plugin" in lowered or "net plugin" in lowered or lowered.startswith("net/ofi"):
        return "net_plugin_error"
    if "cuda failure" in lowered or "cuda error" in lowered:
        return "cuda_error"
    return "nccl_warn"


def event_from_prefix(state: State, number: int, line: str, pos: int, kind: EventType,
                      msg: str, *, warn: bool = False) -> Event | None:
    """The event of an NCCL line, built from the line alone; None past the cap."""
    if event_dropped(state):  # past the cap only the host and the count matter
        note_host(state, line, pos)
        return None
    prefix = line_prefix(line[:pos], source=warn)
    add_host(state, prefix.host)
    # torchrun's `[rankN]:` line prefix states the rank; the bracketed `[N]` is only the device.
    tagged = _RANK_TAG.search(line[:pos]) or PG_RANK.search(msg)
    rank = int(tagged.group(tagged.lastindex or 1)) if tagged else None
    event = Event(type=kind, rank=rank,
                  rank_source="pytorch" if tagged else None, host=prefix.host, seq=None,
                  op=None, timeout_ms=None, peer=None, status=None, line=number,
                  message=msg[:MESSAGE_MAX], pid=prefix.pid, device=prefix.device,
                  source=prefix.source)
    event.peer_rank = int_group(_FROM_RANK.search(msg))
    fill_network_details(event, msg)
    return event if add_event(state, event) else None


def fill_network_details(event: Event, msg: str, kind: EventType | None = None) -> None:
    """Peer, status and IB completion fields of a network failure message of type `kind`
    (default: the event's own type; another when the failure is an NCCL error's `Last error`)."""
    kind = kind or event.type
    if kind in ("ib_completion_error", "connect_failed", "socket_connect_refused",
                "connection_closed"):
        peer = _PEER.search(msg)
        if peer:
            event.peer = peer.group(1) or peer.group(3)
            event.peer_port = int(peer.group(2)) if peer.group(2) else None
    if kind in ("connect_failed", "socket_connect_refused", "connection_closed"):
        errno = _ERRNO.search(msg)
        event.status = int(errno.group(1)) if errno else None
    if kind in ("ib_completion_error", "ib_async_event", "connect_failed"):
        hca = _HCA.search(msg)
        if hca:
            event.hca = hca.group(1) or hca.group(2) or hca.group(3)
    if kind == "ib_completion_error":
        _fill_ib_completion(event, msg)
    elif kind == "connect_failed" and "ibv_modify_qp" in msg:
        # `..., local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.0.2`: the far NIC.
        local, remote = _QP_LOCAL_GID.search(msg), _QP_REMOTE_GID.search(msg)
        event.local_gid = local.group(1) if local else None
        event.remote_gid = remote.group(1) if remote else None


def _fill_ib_completion(event: Event, msg: str) -> None:
    status = _IB_STATUS.search(msg)
    if status:
        event.status = int(status.group(1) or status.group(3))
        name = status.group(2)
        if 0 <= event.status < len(_WC_STATUS):
            short, meaning = _WC_STATUS[event.status]
            name = name or f"IBV_WC_{short}"
            event.status_meaning = meaning
        event.status_name = name
    opcode = _IB_OPCODE.search(msg)
    event.opcode = int(opcode.group(2)) if opcode else None
    event.length = int_group(_IB_LEN.search(msg))
    event.vendor_err = int_group(_IB_VENDOR.search(msg))
    direction = _IB_DIRECTION.search(msg)
    event.direction = direction.group(1) if direction else None
    local, remote = _IB_LOCAL_GID.search(msg), _IB_REMOTE_GID.search(msg)
    event.local_gid = local.group(1) if local else None
    event.remote_gid = remote.group(1) if remote else None
