"""PyTorch distributed lines: watchdog timeouts, desync reports, ProcessGroup status dumps, NCCL
errors and their follow-up lines, `terminate called` / `what():`, gloo / c10d / TCPStore and
socket failures.

The reader hands over only the lines that carry one of `OTHER_KEYS`; `other_line` dispatches
them (torchrun's failure reports to `_torchrun`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fabtui.parsers.nccl_log._records import Event, dump
from fabtui.parsers.nccl_log._state import (
    INERT_MAX,
    MESSAGE_MAX,
    RANK_PREFIX,
    State,
    add_event,
    add_simple,
    clean_message,
    event_dropped,
    exception_name,
    int_group,
    note_version,
    pytorch_rank,
)
from fabtui.parsers.nccl_log._torchrun import child_failed_start, exitcode_line
from fabtui.parsers.nccl_log._warn import classify_warn, fill_network_details
from fabtui.parsers.text import strip_launcher_prefix

if TYPE_CHECKING:
    from fabtui.model.parsed.nccl_log import EventType, NcclLogEvent

_SEQNUM = re.compile(r"SeqNum=(\d+)")
_OPTYPE = re.compile(r"OpType=(\w+)")
_TIMEOUT = re.compile(r"Timeout\(ms\)=(\d+)")
_RAN_FOR = re.compile(r"ran for (\d+) milliseconds")
_NUMEL_IN = re.compile(r"NumelIn=(-?\d+)")
_NUMEL_OUT = re.compile(r"NumelOut=(-?\d+)")
_WORK_SEQ = re.compile(r"(?:work sequence id:|watchdog at work:|Timeout at NCCL work:)\s*(\d+)")
_ENQUEUED = re.compile(r"last enqueued (?:NCCL )?work:\s*(\d+)")
_COMPLETED = re.compile(r"last completed (?:NCCL )?work:\s*(\d+)")
_DESYNC = re.compile(r"\[(\d+)\]\s+(?:finished collective #(\d+),? but |joined but )?"
                     r"didn't (join|finish) collective #(\d+)")
_DESYNC_TIMEOUT = re.compile(r"Timeout at collective:\s*(\w+),\s*#(\d+)")
_NCCL_ERROR = re.compile(r"NCCL error in:\s*(\S+?):(\d+),\s*(.*?)(?:,\s*NCCL version\s+(\S+?))?"
                         r"\s*$")
_TERMINATE = re.compile(r"terminate called after throwing an instance of '([^']+)'")
_NCCL_RESULTS = (
    ("unhandled system error", "ncclSystemError"), ("internal error", "ncclInternalError"),
    ("remote process exited or there was a network error", "ncclRemoteError"),
    ("invalid usage", "ncclInvalidUsage"), ("invalid argument", "ncclInvalidArgument"),
    ("unhandled cuda error", "ncclUnhandledCudaError"),
)
NCCL_RESULT_NAME = re.compile(r"\b(nccl(?:SystemError|InternalError|RemoteError|InvalidUsage|"
                              r"InvalidArgument|UnhandledCudaError))\b")
_NCCL_RESULT_LINE = re.compile(r"^\s*(nccl(?:SystemError|InternalError|RemoteError|InvalidUsage|"
                               r"InvalidArgument|UnhandledCudaError)):")
_OLD_NCCL_ERROR = re.compile(r"NCCL error:\s*(.*?)(?:,\s*NCCL version\s+(\S+))?\s*$")
_SOURCE = re.compile(r"\[(?:[EWIF]\d*(?: [\d:.]+)?(?: +\d+)? )?([\w./\\\-]+\."
                     r"(?:cc|cpp|c|h|hpp|cu|py):\d+)\]")
_BRACKET_PEER = re.compile(r"\[([^\]\s\[]+)\]:(\d+)")
_TUPLE_PEER = re.compile(r"\(([^,()\s]+),\s*(\d+)\)")
_HOST_PORT = re.compile(r"(?:to|host|address)\s+(?:host\s+)?([\w.\-]+|[\d.:a-fA-F]+):(\d+)\b")
_SOCK_ERRNO = re.compile(r"\((?:errno|system error):\s*(\d+)\s*-\s*([^)]+?)\)")
_ABORTED_ON = re.compile(r"aborted on rank (\d+)")
OTHER_KEYS = re.compile(r"atchdog|ollective|NCCL|DistBackend|erminat|what\(\):|ChildFailed|"
                        r"exitcode|CUDA|Cuda|onnect|eartbeat|TCPStore|DistStore|DistNetwork|"
                        r"gloo|c10d|nccl[A-Z]")


def other_line(state: State, number: int, raw: str) -> Event | None:
    """PyTorch, torchrun and plain-text lines that passed the keyword pre-filter. Returns the
    event added when it was built from the line alone and reading the line did nothing else
    that reading it again would not redo: the line then adds a copy of it."""
    _, line = strip_launcher_prefix(raw)
    what = "what():" in line
    if what and state.pending_terminate is not None and number - state.pending_line <= 3:
        _what_line(state, line)
    if "NCCL version" in line and "NCCL error in" not in line:
        note_version(state, line)
        state.evidence = True
    event = None
    if "eartbeat monitor timed out" in line or "watchdog got stuck" in line:
        event = add_simple(state, number, line, "heartbeat_timeout")
    elif "atchdog" in line or "NCCL work" in line:
        _watchdog_line(state, number, line)
    elif "ollective" in line and ("didn't join" in line or "didn't finish" in line
                                  or "Timeout at collective" in line):
        _desync_line(state, number, line)
    elif "NCCL error in:" in line or ("NCCL error:" in line and not what):
        _nccl_error_line(state, number, line)
    elif "communicator was aborted on rank" in line:
        _aborted_line(state, number, line)
    elif "nccl" in line and _NCCL_RESULT_LINE.match(clean_message(line)):
        _nccl_result_line(state, number, line)
    elif "erminat" in line:
        _terminate_line(state, number, line)
    elif "DistBackendError:" in line:
        event = add_simple(state, number, line, "dist_backend_error")
    elif "ChildFailedError:" in line:
        # The exception line; `raise ChildFailedError(` of the traceback above it is code.
        child_failed_start(state, number, line)
    elif "failed (exitcode:" in line:
        event = exitcode_line(state, number, line)
    elif "CUDA error:" in line or "CUDA out of memory" in line or "Cuda failure" in line:
        event = add_simple(state, number, line, "cuda_error")
    else:
        kind = _network_kind(line.lower())
        if kind is not None:
            event = _network_line(state, number, line, kind)
        elif not what and "NCCL version" not in line and len(state.plain) < INERT_MAX:
            state.plain.add(raw)  # a traceback line every rank prints, say
    return None if what else event


def _watchdog_line(state: State, number: int, line: str) -> None:
    """Watchdog lines; restatements of one rank's timeout at one seq merge into one event."""
    # A cheap `in` before each search: most lines past the events cap only merge into an event.
    seq = (_SEQNUM.search(line) if "SeqNum=" in line else None) \
        or (_WORK_SEQ.search(line) if "work:" in line or "work sequence" in line else None)
    if seq is None and "Watchdog caught collective operation timeout" not in line:
        if "dump signal" in line:
            _pg_status_line(state, number, line)
        elif "watchdog thread terminated with exception" in line:
            # PyTorch >= 2.2: an NCCL error (not a timeout) ended the rank's process group.
            rank, pg, source = pytorch_rank(line)
            add_event(state, Event(
                type="nccl_error", rank=rank, rank_source=source, host=None, seq=None, op=None,
                timeout_ms=None, peer=None, status=None, line=number, message=clean_message(line),
                pg=pg))
        return
    rank, pg, source = pytorch_rank(line)
    key = (rank, int(seq.group(1)) if seq else None)
    event = state.watchdogs.get(key)
    if event is None:
        if event_dropped(state):  # past the cap: counted, not built
            return
        event = Event(type="watchdog_timeout", rank=rank, rank_source=source, host=None,
                      seq=key[1], op=None, timeout_ms=None, peer=None, status=None,
                      line=number, message=clean_message(line), pg=pg)
        add_event(state, event)
        state.watchdogs[key] = event
    _fill_watchdog(event, line, pg)


def _pg_status_line(state: State, number: int, line: str) -> None:
    """`Received a dump signal ... Last enqueued NCCL work: X, last completed NCCL work: Y`."""
    enqueued = _ENQUEUED.search(line.replace("Last enqueued", "last enqueued"))
    if enqueued is None:
        return
    event = add_simple(state, number, line, "pg_status")
    if event is not None:
        event.last_enqueued = int(enqueued.group(1))
        event.last_completed = int_group(_COMPLETED.search(line))


def _fill_watchdog(event: Event, line: str, pg: str | None) -> None:
    # Each search only where its words are in the line (its first literal): a watchdog
    # line is read again for every rank that restates it, and most fields are filled already.
    if event.op is None and "OpType=" in line:
        event.op = _group(_OPTYPE.search(line))
    if event.timeout_ms is None and "Timeout(ms)=" in line:
        event.timeout_ms = int_group(_TIMEOUT.search(line))
    if event.ran_for_ms is None and "ran for " in line:
        event.ran_for_ms = int_group(_RAN_FOR.search(line))
    if event.numel_in is None and "NumelIn=" in line:
        event.numel_in = int_group(_NUMEL_IN.search(line))
    if event.numel_out is None and "NumelOut=" in line:
        event.numel_out = int_group(_NUMEL_OUT.search(line))
    if event.last_enqueued is None and "last enqueued " in line:
        event.last_enqueued = int_group(_ENQUEUED.search(line))
    if event.last_completed is None and "last completed " in line:
        event.last_completed = int_group(_COMPLETED.search(line))
    event.pg = event.pg or pg


def _desync_line(state: State, number: int, line: str) -> None:
    timeout = _DESYNC_TIMEOUT.search(line)
    if timeout:
        if state.desync_ops.setdefault(int(timeout.group(2)), timeout.group(1)) \
                != timeout.group(1):
            state.desync_ops[int(timeout.group(2))] = timeout.group(1)
            state.replay_broken = True
        state.evidence = True
        return
    match = _DESYNC.search(line)
    if match is None:
        return
    if event_dropped(state):  # past the cap: counted, not built
        return
    rank, finished, _, seq = match.groups()
    add_event(state, Event(
        type="desync", rank=int(rank), rank_source="desync", host=None, seq=int(seq), op=None,
        timeout_ms=None, peer=None, status=None, line=number, message=clean_message(line),
        last_completed=int(finished) if finished else None))


def _nccl_error_line(state: State, number: int, line: str) -> None:
    """`NCCL error in: FILE:LINE, REASON, NCCL version V` (and the older `NCCL error: REASON`);
    the `ncclXxxError:` and `Last error:` lines PyTorch prints after it are read as follow-ups."""
    match = _NCCL_ERROR.search(line)
    old = None if match else _OLD_NCCL_ERROR.search(line)
    if match is None and old is None:
        return
    reason = (match.group(3) if match else old.group(1) if old else "").strip()
    lowered = reason.lower()
    kind: EventType = ("unhandled_system_error" if "unhandled system error" in lowered
                       else "cuda_error" if "cuda" in lowered else "nccl_error")
    version = match.group(4) if match else old.group(2) if old else None
    if version:
        state.versions.setdefault(version, None)
    if event_dropped(state):  # past the cap: counted, not built
        return
    rank, pg, source = pytorch_rank(line)
    event = Event(
        type=kind, rank=rank, rank_source=source, host=None, seq=None, op=None,
        timeout_ms=None, peer=None, status=None, line=number, message=clean_message(line),
        source=f"{match.group(1)}:{match.group(2)}" if match else None, pg=pg,
        exception=exception_name(line))
    _nccl_details(event, line)
    add_event(state, event)
    state.pending_nccl, state.pending_nccl_line = event, number
    state.last_error_next = False


def _nccl_result_line(state: State, number: int, line: str) -> None:
    """`ncclInternalError: Internal check failed.` whose `NCCL error in:` line is not in the
    capture: the failure still is an event, and its `Last error:` may follow."""
    event = add_simple(state, number, line, "nccl_error")
    if event is not None:
        _nccl_details(event, line)
        state.pending_nccl, state.pending_nccl_line = event, number
        state.last_error_next = False


def _aborted_line(state: State, number: int, line: str) -> None:
    """`NCCL communicator was aborted on rank N. Original reason for failure was: ...`."""
    event = add_simple(state, number, line, "nccl_error")
    if event is None:
        return
    if event.rank is None:
        event.rank, event.rank_source = int_group(_ABORTED_ON.search(line)), "text"
    _nccl_details(event, line)
    seq = _SEQNUM.search(line)
    if seq:
        event.seq = int(seq.group(1))
        _fill_watchdog(event, line, event.pg)


def nccl_result_of(text: str) -> str | None:
    """The NCCL result code a failure message names or implies (`internal error` ->
    ncclInternalError); None when it tells none."""
    named = NCCL_RESULT_NAME.search(text)
    if named:
        return named.group(1)
    lowered = text.lower()
    return next((code for phrase, code in _NCCL_RESULTS if phrase in lowered), None)


def failure_event(text: str, line: int, host: str | None) -> NcclLogEvent | None:
    """The network or CUDA failure a message quotes (the `Last error` part of an NCCL error),
    as an event of its own; None when it names no such failure."""
    kind = classify_warn(text, "")
    if kind in ("nccl_warn", "plugin_not_found", "net_plugin_error"):
        return None
    event = Event(type=kind, rank=None, host=host, seq=None, op=None, timeout_ms=None,
                  peer=None, status=None, line=line, message=text[:MESSAGE_MAX])
    fill_network_details(event, text)
    from fabtui.model.parsed.nccl_log import NcclLogEvent

    return NcclLogEvent.model_validate(dump(event))


def _nccl_details(event: Event, text: str) -> None:
    """The NCCL result code of an error message, and the network failure of its `Last error:`."""
    event.nccl_result = event.nccl_result or nccl_result_of(text)
    if "Last error:" in text:
        _last_error(event, text.split("Last error:", 1)[1].strip())


def _last_error(event: Event, text: str) -> None:
    if not text:
        return
    if "Last error" not in event.message:
        event.message = f"{event.message}; Last error: {text}"[:MESSAGE_MAX]
    kind = classify_warn(text, "")
    if kind in ("ib_completion_error", "connect_failed", "socket_connect_refused",
                "connection_closed", "ib_async_event") and event.peer is None:
        fill_network_details(event, text, kind)


def nccl_followup(state: State, number: int, raw: str) -> bool:
    """`ncclRemoteError: ...`, `Last error:` and its text after an NCCL error; True if read."""
    event = state.pending_nccl
    if event is None or number - state.pending_nccl_line > 4 or "NCCL INFO" in raw:
        state.pending_nccl = None
        return False
    _, line = strip_launcher_prefix(raw)
    text = RANK_PREFIX.sub("", line, count=1).strip()
    if not text:
        return False
    code = _NCCL_RESULT_LINE.match(text)
    if code:
        event.nccl_result = code.group(1)
        _nccl_details(event, text)
        return True
    if text.startswith("Last error:"):
        rest = text[len("Last error:"):].strip()
        state.last_error_next = not rest
        _last_error(event, rest)
        return True
    if state.last_error_next:
        state.last_error_next = False
        state.pending_nccl = None
        _last_error(event, text.split("NCCL WARN", 1)[-1].strip())
        # Not consumed: a socket or IB failure line is also an event of its own.
    return False


def _terminate_line(state: State, number: int, line: str) -> None:
    terminate = _TERMINATE.search(line)
    if terminate:
        kind: EventType = "dist_backend_error" if "DistBackendError" in terminate.group(1) \
            else "process_terminated"
        state.pending_terminate = add_simple(state, number, line, kind)
        state.pending_line = number
        if state.pending_terminate is not None:
            state.pending_terminate.exception = terminate.group(1)
        if "what():" in line[terminate.end():]:
            _what_line(state, line[terminate.end():])
    elif "Terminating the process after attempting to dump debug info" in line:
        add_simple(state, number, line, "process_terminated")
    elif "DistBackendError:" in line:
        add_simple(state, number, line, "dist_backend_error")


def _what_line(state: State, line: str) -> None:
    event = state.pending_terminate
    state.pending_terminate = None
    if event is None:
        return
    text = line.split("what():", 1)[1].strip()
    event.message = f"{event.message}: {text}"[:MESSAGE_MAX]
    _nccl_details(event, text)
    rank, pg, source = pytorch_rank(text)
    if rank is not None and event.rank is None:
        event.rank, event.rank_source = rank, source
    seq = _SEQNUM.search(text) or _WORK_SEQ.search(text)
    if seq:
        event.seq = int(seq.group(1))
        _fill_watchdog(event, text, pg)


def _network_kind(lowered: str) -> EventType | None:
    """The failure a PyTorch / gloo / c10d / plain socket line reports, if it reports one."""
    if "tcpstore" in lowered or "diststoreerror" in lowered:
        return "store_error" if ("fail" in lowered or "timed out" in lowered
                                 or "error" in lowered) else None
    if "timed out" in lowered and "connect" in lowered:
        return "connect_timeout"
    if "connection refused" in lowered:
        return "socket_connect_refused"
    if "failed to connect" in lowered or "connectfullmesh failed" in lowered \
            or ("connect to" in lowered and ("failed" in lowered or "returned" in lowered)):
        return "connect_failed"
    if "connection closed by" in lowered or "closed by remote peer" in lowered \
            or "connection reset by" in lowered or "broken pipe" in lowered:
        return "connection_closed"
    if "distnetworkerror" in lowered:
        return "connect_failed"
    return None


def _network_line(state: State, number: int, line: str, kind: EventType) \
        -> Event | None:
    """gloo `Connection closed by peer [addr]:port`, c10d `The client socket has failed to
    connect to [host]:port (errno: 111 - Connection refused)`, TCPStore and socket failures
    (`kind`, see `_network_kind`): the event added, None past the cap."""
    event = add_simple(state, number, line, kind)
    if event is None:
        return None
    where = _SOURCE.search(line)
    event.source = where.group(1) if where else None
    text = event.message
    peer = _BRACKET_PEER.search(text) or _TUPLE_PEER.search(text) or _HOST_PORT.search(text)
    if peer:
        event.peer, event.peer_port = peer.group(1), int(peer.group(2))
    else:
        fill_network_details(event, text)
    errno = _SOCK_ERRNO.search(text)
    if errno:
        event.status, event.status_meaning = int(errno.group(1)), errno.group(2).strip()
    return event


def _group(match: re.Match[str] | None, index: int = 1) -> str | None:
    return match.group(index) if match else None
