"""NCCL_DEBUG=INFO/WARN logs, PyTorch ProcessGroupNCCL watchdog/desync messages, torchrun failures.

    host:1234:1250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [RO]; OOB ...
    host:1234:1250 [0] NCCL INFO Channel 00/0 : 1[1] -> 8[0] [receive] via NET/IB/0/GDRDMA
    host:1234:1299 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer ...
    [rank1]:[E1003 ...] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(...)

Such logs are usually mixed with training output, bash traces and launcher prefixes, and can be
hundreds of megabytes. Each line is classified by cheap substring tests before any regular
expression runs; ordinary INFO lines are only counted or aggregated (transports, GPUDirect RDMA
per NET device, channel counts, NCCL settings), and only failures and Init COMPLETE lines become
events.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, compress, pairwise
from itertools import count as numbers
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from fabtui.gcpause import gc_paused
from fabtui.parsers._nccl_log_records import Event, Interface, NetDevice, Rank, dump, moved
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Plain, line_batches
from fabtui.parsers.text import normalize, strip_launcher_prefix

if TYPE_CHECKING:
    from fabtui.model.parsed.nccl_log import EventType, NcclLog, NcclLogEvent
    from fabtui.model.table import Table

KIND = "nccl-log"
DESCRIPTION = ("NCCL_DEBUG=INFO/WARN logs and PyTorch ProcessGroupNCCL watchdog, desync and "
               "torchrun failure messages")

MAX_EVENTS = 10000
SCHEMA_VERSION = 1
"""`fabtui.model.parsed.SCHEMA_VERSION` (not imported: it would import pydantic)."""
_INIT_EVENTS_MAX = 256
"""init_complete events kept; `ranks` still records every rank's init."""
_RankSource = Literal["pytorch", "desync", "torchrun", "init", "text"] | None
_MESSAGE_MAX = 500

_PREFIX = re.compile(r"(?:^|[\s\]:>])([A-Za-z0-9_.\-]+):(\d+):(\d+) \[(\d+)\]")
_WARN_SOURCE = re.compile(r"\]\s+(\S+?:\d+)(?:\s+\([^)]*\))?\s*$")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+[\w.+\-]*)")
# A log collector may number the lines (`[80746] [rank0]:[E321 02:07:08.40 File.cpp:607] ...`);
# glog-style c10 prefixes print the month unpadded (`E321` is March 21).
_RANK_PREFIX = re.compile(r"^\s*(?:\[\d+\]\s+)?\[rank(\d+)\]:")
_C10_PREFIX = re.compile(r"^(?:\s*(?:\[\d+\]\s+)?\[rank\d+\]:)?\s*\[?[EWIF](?:\d{3,4} [\d:.]+"
                         r"(?: +\d+)?)? ?[\w./\-]+:\d+\]\s*")
_PG_RANK = re.compile(r"\[(?:PG (.+?) )?Rank (\d+)\]")
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
_EXITCODE = re.compile(r"failed \(exitcode: (-?\d+)\)(?: local_rank: (\d+))?(?: \(pid: (\d+)\))?")
_TERMINATE = re.compile(r"terminate called after throwing an instance of '([^']+)'")
# A peer is `addr<port>` (any name), or a bare token that looks like an address.
_PEER = re.compile(r"(?:from peer|[Cc]onnect to|remote peer|recv from|send to|from)\s+"
                   r"(?:([^\s<>,]+)<(\d+)>|(?=[^\s<>,]*[\d.:])([^\s<>,]+))")
_LOADED_PLUGIN = re.compile(r"[Ll]oaded net plugin\s+(.+?)\s*$")
_IB_STATUS = re.compile(r"with (?:error (\d+)|status=(?:(\w+)\()?(\d+)\)?)")
_IB_OPCODE = re.compile(r"opcode[= ](?:(\w+)\()?(\d+)")
_IB_LEN = re.compile(r"\blen[= ](\d+)")
_IB_VENDOR = re.compile(r"vendor[ _]err[= ](\d+)")
_IB_DIRECTION = re.compile(r"vendor[ _]err[= ]\d+\s*\((\w+)\)")
_IB_LOCAL_GID = re.compile(r"localGid\s+(\S+)")
_IB_REMOTE_GID = re.compile(r"remoteGids?\s*(\S+)")
_HCA = re.compile(r"\bhca\s+(\S+)|\b(mlx\d+_\w+|ibp\w+|rdmap\w+|irdma\w*|bnxt_\w+):\d+")
_ERRNO = re.compile(r"(?:returned|errno)\s+(\d+)")
_NET_USING = re.compile(r"^NET/(\w+)\s*:\s*Using\s+(.*)$")
_NET_ENTRY = re.compile(r"\[(\d+)\]([^\s\[;]+)")
_IB_ENTRY = re.compile(r"^([^:]+):(\d+)/(\S+)$")
_SOCK_ENTRY = re.compile(r"^([^:]+):(.+?)(?:<\d+>)?$")
_OOB = re.compile(r"OOB\s+([^:\s]+):(\S+?)(?:<\d+>)?(?:\s|$)")
_BOOTSTRAP_USING = re.compile(r"^Bootstrap\s*:\s*Using\s+(?:\[\d+\])?([^:\s]+):(\S+?)(?:<\d+>)?"
                              r"(?:\s|$)")
_CHANNEL_NET = re.compile(r":\s*(\d+)(?:\[\d+\])?\s*->\s*(\d+)(?:\[\d+\])?\s*"
                          r"(?:\[(send|receive)\]\s*)?via NET/([^/]+)/(\d+)(?:\(\d+\))?(\S*)")
_RING_DEF = re.compile(r"^Channel (\d+)(?:/(\d+))? :[\s\d]+$")
_CHANNEL_COUNTS = re.compile(r"(\d+) (coll|collnet|nvls|p2p) channels(?!,? per)|"
                             r"(\d+) p2p channels per peer")
_INIT = re.compile(r"\brank (\d+) nranks (\d+)", re.IGNORECASE)
_COMM_TOPO = re.compile(r"^comm (0x[0-9a-fA-F]+) rank (\d+) nRanks (\d+) nNodes (\d+) "
                        r"localRanks (\d+) localRank (\d+)")
_CUDA_DEV = re.compile(r"cudaDev (\d+)")
_BUS_ID = re.compile(r"busId (\w+)")
_COMM_ID = re.compile(r"commId (0x[0-9a-fA-F]+)")
_COMM_PTR = re.compile(r"\bcomm (0x[0-9a-fA-F]+)")
_ENV = re.compile(r"^(NCCL_\w+) set (?:by environment )?to (.*?)\.?\s*$")
_RING_GDR = re.compile(r"use ring PXN \d+ GDR (\d)")
_OFI_VERSION = re.compile(r"NET/OFI (?:Using|Initializing) (aws-ofi-nccl \S+)")
_OFI_PROVIDER = re.compile(r"NET/OFI Selected [Pp]rovider is ([^,(]+?)\s*(?:[,(]|$)")
_BLOCK_FIELD = re.compile(r"^\s*(time|host|rank|exitcode|error_file|traceback)\s*:\s*(.*?)\s*$")
_BLOCK_ENTRY = re.compile(r"^\s*\[(\d+)\]:\s*$")

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
_NCCL_RESULTS = (
    ("unhandled system error", "ncclSystemError"), ("internal error", "ncclInternalError"),
    ("remote process exited or there was a network error", "ncclRemoteError"),
    ("invalid usage", "ncclInvalidUsage"), ("invalid argument", "ncclInvalidArgument"),
    ("unhandled cuda error", "ncclUnhandledCudaError"),
)
_NCCL_RESULT_NAME = re.compile(r"\b(nccl(?:SystemError|InternalError|RemoteError|InvalidUsage|"
                               r"InvalidArgument|UnhandledCudaError))\b")
_NCCL_RESULT_LINE = re.compile(r"^\s*(nccl(?:SystemError|InternalError|RemoteError|InvalidUsage|"
                               r"InvalidArgument|UnhandledCudaError)):")
_OLD_NCCL_ERROR = re.compile(r"NCCL error:\s*(.*?)(?:,\s*NCCL version\s+(\S+))?\s*$")
_EXCEPTION = re.compile(r"(?:^|[\s'])((?:[A-Za-z_]\w*(?:\.|::))*[A-Z]\w*(?:Error|Exception))"
                        r"(?::\s|'|$)")
_SOURCE = re.compile(r"\[(?:[EWIF]\d*(?: [\d:.]+)?(?: +\d+)? )?([\w./\\\-]+\."
                     r"(?:cc|cpp|c|h|hpp|cu|py):\d+)\]")
_BRACKET_PEER = re.compile(r"\[([^\]\s\[]+)\]:(\d+)")
_TUPLE_PEER = re.compile(r"\(([^,()\s]+),\s*(\d+)\)")
_HOST_PORT = re.compile(r"(?:to|host|address)\s+(?:host\s+)?([\w.\-]+|[\d.:a-fA-F]+):(\d+)\b")
_SOCK_ERRNO = re.compile(r"\((?:errno|system error):\s*(\d+)\s*-\s*([^)]+?)\)")
_FROM_RANK = re.compile(r"\bfrom rank (\d+)")
_ABORTED_ON = re.compile(r"aborted on rank (\d+)")
_RANK_TAG = re.compile(r"\[rank(\d+)\]:")
_OTHER_KEYS = re.compile(r"atchdog|ollective|NCCL|DistBackend|erminat|what\(\):|ChildFailed|"
                         r"exitcode|CUDA|Cuda|onnect|eartbeat|TCPStore|DistStore|DistNetwork|"
                         r"gloo|c10d|nccl[A-Z]")
_CACHE_MAX = 200000
_INERT_MAX = 50000
_REPLAY_MAX = 200000
_REPLAY_LINE_MAX = 2000
"""Lines longer than this are never remembered: memory stays a few tens of MB at most."""


_ChannelFacts = tuple[str | None, tuple[str, int, bool] | None, int | None]


class _Replay(NamedTuple):
    """What reading a line again does: counters to add (each times the line's count)."""

    info: int = 0
    warn: int = 0
    dropped: int = 0
    init: int = 0
    gdr: int = 0
    call: str | None = None
    channel: tuple[str, int, bool] | None = None
    owner: int | None = None
    event: Event | None = None
    """The event the line adds again (a copy with its own line number) while there is room:
    such lines are read in order, not counted. Past the events cap it only counts as dropped."""
    following: str | None = None
    """For a WARN line's event: the next line it was read with (a WARN may wrap onto it)."""


_PLAIN = _Replay()
_INFO = _Replay(info=1)
_INIT_DROPPED = _Replay(info=1, init=1, dropped=1)
_DROPPED_INFO = _Replay(info=1, dropped=1)
_GDR_ENABLED = _Replay(info=1, gdr=1)


@dataclass
class _Prefix:
    host: str | None = None
    pid: int | None = None
    device: int | None = None
    source: str | None = None


@dataclass
class _ChildBlock:
    """A torchrun ChildFailedError report being read."""

    event: Event
    section: str | None = None
    entry: Event | None = None
    left: int = 80


@dataclass(slots=True)
class _State:
    events: list[Event] = field(default_factory=list)
    dropped: int = 0
    versions: dict[str, None] = field(default_factory=dict)
    hosts: dict[str, None] = field(default_factory=dict)
    ranks: dict[tuple[object, ...], Rank] = field(default_factory=dict)
    pid_rank: dict[tuple[str | None, int], tuple[int, int]] = field(default_factory=dict)
    topo: dict[tuple[str | None, int | None, str], tuple[int, int, int]] = \
        field(default_factory=dict)
    watchdogs: dict[tuple[int | None, int | None], Event] = field(default_factory=dict)
    desync_ops: dict[int, str] = field(default_factory=dict)
    net_devices: dict[tuple[object, ...], NetDevice] = field(default_factory=dict)
    oob: dict[tuple[str, str], Interface] = field(default_factory=dict)
    bootstrap: dict[tuple[str, str], Interface] = field(default_factory=dict)
    relaxed_ordering: bool | None = None
    networks: dict[str, None] = field(default_factory=dict)
    plugins: dict[str, None] = field(default_factory=dict)
    ofi_provider: str | None = None
    channel_transports: dict[str, None] = field(default_factory=dict)
    channel_use: dict[tuple[str, int, bool], list[Any]] = field(default_factory=dict)
    channel_cache: dict[str, _ChannelFacts] = field(default_factory=dict)
    inert: dict[str, bool] = field(default_factory=dict)
    """INFO messages whose reading again would change nothing (TUNER/Plugin lines, settings
    already kept), mapped to whether their line's host is still to be noted."""
    plain: set[str] = field(default_factory=set)
    """Other lines (neither INFO nor WARN) that changed nothing and never can: skipped."""
    using_cache: dict[tuple[str, str], list[tuple[object, ...]]] = field(default_factory=dict)
    init_events: int = 0
    ring_gdr: set[int] = field(default_factory=set)
    gdr_enabled: int = 0
    gdr_disabled: dict[str, None] = field(default_factory=dict)
    channels: dict[str, int] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    info_lines: int = 0
    warn_lines: int = 0
    block: _ChildBlock | None = None
    pending_terminate: Event | None = None
    pending_line: int = 0
    pending_nccl: Event | None = None
    """An NCCL error whose `ncclXxxError:` / `Last error:` lines may follow (PyTorch >= 2.0)."""
    pending_nccl_line: int = 0
    last_error_next: bool = False
    nranks: int | None = None
    n_nodes: int | None = None
    local_ranks: int | None = None
    cuda_driver: int | None = None
    evidence: bool = False
    replay: dict[str, _Replay] = field(default_factory=dict)
    """Lines read before, by what reading each again does (see `scan_batches`)."""
    replay_broken: bool = False
    """Set by a reading that overwrote a value a replayed line had set (a communicator's
    topology, a desync's op, a rank entry taken over): replays could then undo it, so the
    remembered replays are dropped and the batch's rest is read line by line."""


def __getattr__(name: str) -> object:
    # `MODEL` is imported when asked for: `fabtui parse` writes the plain result without it.
    if name == "MODEL":
        from fabtui.model.parsed.nccl_log import NcclLog

        return NcclLog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def detect(text: str) -> float:
    """How sure we are that `text` is an NCCL / PyTorch-NCCL log (0..1)."""
    sample = text[:65536] + ("\n" + text[-32768:] if len(text) > 65536 else "")
    if "NCCL INFO" in sample or "NCCL WARN" in sample:
        return 0.9 if _PREFIX.search(sample) else 0.85
    if any(key in sample for key in ("Watchdog caught collective operation timeout",
                                     "failure detected by watchdog", "WorkNCCL(",
                                     "ProcessGroupNCCL", "NCCL error in:")):
        return 0.9
    if "didn't join collective #" in sample or "didn't finish collective #" in sample:
        return 0.85
    if _NCCL_RESULT_NAME.search(sample) or "third_party/gloo" in sample \
            or "[c10d]" in sample:
        return 0.8
    if "NCCL version" in sample:
        return 0.6
    if any(key in sample for key in ("TCPStore", "DistStoreError", "DistNetworkError",
                                     "Gloo connectFullMesh")):
        return 0.7
    if "ChildFailedError:" in sample and "Root Cause" in sample:
        return 0.6  # torchrun's failure report
    if "ChildFailedError" in sample or "DistBackendError" in sample:
        return 0.4
    return 0.0


def parse(text: str) -> NcclLog:
    """Parse an NCCL / PyTorch distributed log; raises `ParseError` if it has no NCCL content."""
    return parse_lines(normalize(text).split("\n")).assemble()


def parse_lines(lines: Iterable[str]) -> Plain[NcclLog]:
    """Parse a log read line by line (`fabtui parse` streams files through this): memory stays
    bounded whatever its length, as events are capped and everything else is tallied. The
    result is plain data (`_result`), validated into `NcclLog` only when assembled."""
    with gc_paused():  # tens of thousands of tallies and events, none in a cycle
        data = scan_batches_data(line_batches(lines))
    if data is None:
        raise ParseError(KIND, None, "no NCCL log line, PyTorch NCCL message or torchrun failure "
                                     "found")
    return Plain(data, _model)


def _model(data: dict[str, object]) -> NcclLog:
    from fabtui.model.parsed.nccl_log import NcclLog

    return NcclLog.model_validate(data)


def scan(lines: Iterable[str]) -> NcclLog | None:
    """The NCCL log read from normalised `lines` (line numbers are their 1-based positions), or
    None when they hold no NCCL, PyTorch distributed or torchrun content. Other parsers whose
    output interleaves NCCL lines (nccl-tests) read them through this, blanking the rest."""
    return scan_batches(line_batches(lines))


def scan_batches(batches: Iterable[list[str]]) -> NcclLog | None:
    """`scan` of the lines of `batches` (lists of consecutive lines, a file's chunks say)."""
    data = scan_batches_data(batches)
    return None if data is None else _model(data)


def scan_batches_data(batches: Iterable[list[str]]) -> dict[str, object] | None:
    """`scan_batches` as the plain JSON data of the `NcclLog` (no model built).

    Most lines of a big log repeat a line read before (every rank prints the same INFO lines,
    a restarted job prints its log again), and reading such a line again only bumps counters.
    So each batch is counted (`Counter`, in C), each distinct line is looked up once in the
    `_Replay` tallies of lines already read, and only the other lines are read in order, one by
    one (`_read_line`, exactly as `scan_each_line` reads every line); the counted lines' tallies
    are then added times their counts. While a torchrun report or an NCCL error's follow-up
    lines are open, every line goes through `_read_line`, which may consume it.
    """
    state = _State()
    base = 0
    pending: list[str] | None = None
    for batch in batches:
        if not batch:
            continue
        if pending is not None:
            _scan_batch(state, pending, base, batch[0])
            base += len(pending)
        pending = batch
    if pending is not None:
        _scan_batch(state, pending, base, "")
    return _result(state) if state.evidence else None


def scan_each_line(lines: Iterable[str]) -> NcclLog | None:
    """`scan` reading every line with `_read_line`, in order: the reference the counted path of
    `scan_batches` must agree with (tests compare the two)."""
    state = _State()
    _read_lines(state, lines, 0, "")
    return _model(_result(state)) if state.evidence else None


def _read_lines(state: _State, lines: Iterable[str], number: int, after: str) -> None:
    """Read each of `lines` in order (numbered from `number` + 1; `after`: the line after the
    last), as `_read_line` does, without working out what reading each again would do."""
    info_lines = 0
    other_keys = _OTHER_KEYS.search
    channel_cache, inert, plain = state.channel_cache, state.inert, state.plain
    # Each line with the one after it: a WARN may wrap onto the next.
    for line, following in pairwise(chain(lines, (after,))):
        number += 1
        if (state.block is not None or state.pending_nccl is not None) \
                and _offer(state, number, line):
            continue
        pos = line.find("NCCL INFO")
        if pos >= 0:
            info_lines += 1
            msg = line[pos + 10:].strip()
            if msg.startswith(("Channel ", "Ring ")):
                cached = channel_cache.get(msg)
                if cached is None or cached[1] is not None:
                    _channel_line(state, msg, cached)
            else:
                notes_host = inert.get(msg)
                if notes_host is None:
                    _info_line(state, number, line, pos, msg)
                elif notes_host:
                    _note_host(state, line, pos)
        elif "NCCL WARN" in line:
            _warn_line(state, number, line, following)
        elif line in plain:
            continue
        elif other_keys(line):
            _other_line(state, number, line)
        elif len(plain) < _INERT_MAX:
            plain.add(line)
    if info_lines:
        state.info_lines += info_lines
        state.evidence = True


def _scan_batch(state: _State, lines: list[str], base: int, after: str) -> None:
    """Read `lines` (numbered from `base` + 1; `after` is the line that follows the last)."""
    counts = Counter(lines)
    if len(counts) * 4 > len(lines) * 3:  # few lines repeat: counting would not pay
        _read_lines(state, lines, base, after)
        return
    replay = state.replay
    slow: set[str] = set()
    counted: list[tuple[str, _Replay]] = []
    for line in counts:
        known = replay.get(line)
        if known is not None and known.event is not None:
            if len(state.events) < MAX_EVENTS:
                slow.add(line)  # its event is added again, in order
                continue
            known = replay[line] = known._replace(dropped=1, event=None, following=None)
        if known is None:
            known = _replay_before_reading(state, line)
            if known is None:
                slow.add(line)
                continue
            if len(replay) < _REPLAY_MAX and len(line) <= _REPLAY_LINE_MAX:
                replay[line] = known
        counted.append((line, known))
    if slow or state.block is not None or state.pending_nccl is not None:
        _read_in_order(state, lines, base, after, slow, counts)
    _add_replays(state, counts, counted)


def _read_in_order(state: _State, lines: list[str], base: int, after: str, slow: set[str],
                   counts: Counter[str]) -> None:
    """Read the `slow` lines of a batch in order; lines met while a report or an NCCL error's
    follow-up is open are offered to it first. A counted line that is consumed so is taken off
    `counts`, and from a line whose reading would make a replay wrong on, the rest of the batch
    is read line by line (and taken off `counts`)."""
    # The indexes of the slow lines, found in C (a batch is ~10,000 lines).
    positions = list(compress(numbers(), map(slow.__contains__, lines))) if slow else []
    replay = state.replay
    at, count, end = 0, 0, len(lines)
    while at < end:
        if state.block is None and state.pending_nccl is None:
            while count < len(positions) and positions[count] < at:
                count += 1
            if count == len(positions):
                return
            at = positions[count]
        line = lines[at]
        number = base + at + 1
        following = lines[at + 1] if at + 1 < end else after
        if line not in slow:
            # A counted line while a report / an NCCL error is open: only that may read it.
            if _offer(state, number, line):
                counts[line] -= 1
            at += 1
            continue
        opened = state.block is not None or state.pending_nccl is not None
        known = None if opened else replay.get(line)
        if known is not None and known.following not in (None, following):
            known = None  # a WARN line read with another line after it
        if known is not None:  # read before: its tally (and event) now suffice
            _add_replay(state, known, 1)
            if known.event is not None:
                _add_copy(state, known.event, number)
        else:
            known = _read_line(state, number, line, following)
            if state.replay_broken:
                _read_rest(state, lines, base, after, at + 1, slow, counts)
                return
            if known is not None and not opened and state.block is None \
                    and state.pending_nccl is None and len(replay) < _REPLAY_MAX \
                    and len(line) <= _REPLAY_LINE_MAX:
                replay[line] = known
        at += 1


def _read_rest(state: _State, lines: list[str], base: int, after: str, start: int,
               slow: set[str], counts: Counter[str]) -> None:
    """After a reading that replays could undo (a value overwritten): forget every replay and
    read the rest of the batch line by line."""
    state.replay.clear()
    state.replay_broken = False
    rest = lines[start:]
    counts.subtract(line for line in rest if line not in slow)
    for offset, line in enumerate(rest):
        index = start + offset
        following = lines[index + 1] if index + 1 < len(lines) else after
        _read_line(state, base + index + 1, line, following)
    state.replay.clear()
    state.replay_broken = False


def _add_replays(state: _State, counts: Counter[str], counted: list[tuple[str, _Replay]]) \
        -> None:
    """Add the tallies of the `counted` lines of a batch, each times its count."""
    info = 0
    for line, known in counted:
        count = counts[line]
        if count <= 0:
            continue
        if known is _INFO:
            info += count
        elif known is not _PLAIN:
            _add_replay(state, known, count)
    if info:
        state.info_lines += info
        state.evidence = True


def _add_replay(state: _State, known: _Replay, count: int) -> None:
    """What reading a line `count` more times does, as its `_Replay` says."""
    if known.info:
        state.info_lines += count
        state.evidence = True
    if known.warn:
        state.warn_lines += count
    if known.dropped:
        state.dropped += count * known.dropped
        state.evidence = True
    if known.init:
        state.init_events += count
    if known.gdr:
        state.gdr_enabled += count
    if known.call is not None:
        state.calls[known.call] = state.calls.get(known.call, 0) + count
    if known.channel is not None:
        use = state.channel_use.get(known.channel)
        if use is None:
            use = state.channel_use[known.channel] = [0, set()]
        use[0] += count
        if known.owner is not None:
            use[1].add(known.owner)


def _add_copy(state: _State, event: Event, number: int) -> None:
    """Add again the event a line read before added, now read at line `number`."""
    if not _dropped(state):
        state.evidence = True
        state.events.append(moved(event, number))


def _replay_before_reading(state: _State, line: str) -> _Replay | None:
    """The tally of reading `line` (not read before) now, when the caches on messages tell it:
    an INFO message remembered as inert or a channel line already read, or a line that is
    neither INFO, WARN nor a candidate for anything else; None when it must be read."""
    pos = line.find("NCCL INFO")
    if pos >= 0:
        msg = line[pos + 10:].strip()
        if msg.startswith(("Channel ", "Ring ")):
            cached = state.channel_cache.get(msg)
            if cached is None:
                return None
            name, key, owner = cached
            return _INFO if name is None or key is None else _Replay(info=1, channel=key,
                                                                      owner=owner)
        notes_host = state.inert.get(msg)
        if notes_host is None:
            return None
        if notes_host:
            host = _plain_prefix(line[:pos]).host
            if host and host not in state.hosts:
                return None
        return _INFO
    if "NCCL WARN" in line:
        return None
    if line in state.plain or not _OTHER_KEYS.search(line):
        return _PLAIN
    return None


def _offer(state: _State, number: int, line: str) -> bool:
    """An open torchrun report or NCCL error reads `line` first; True if it consumed it."""
    if state.block is not None and _child_block_line(state, state.block, number, line):
        return True
    return state.pending_nccl is not None and _nccl_followup(state, number, line)


def _read_line(state: _State, number: int, line: str, following: str) -> _Replay | None:
    """Read one line (`following`: the next, "" after the last); returns what reading the same
    line again would do (`_Replay`), or None when it must be read again."""
    if (state.block is not None or state.pending_nccl is not None) \
            and _offer(state, number, line):
        return None
    pos = line.find("NCCL INFO")
    if pos >= 0:
        state.info_lines += 1
        state.evidence = True
        msg = line[pos + 10:].strip()
        if msg.startswith(("Channel ", "Ring ")):
            cached = state.channel_cache.get(msg)
            # Only a NET connection (a tally key) counts each time; a P2P/SHM line
            # noted its transport when first read.
            if cached is None or cached[1] is not None:
                _channel_line(state, msg, cached)
            return _replay_before_reading(state, line)
        notes_host = state.inert.get(msg)
        if notes_host is None:
            return _info_line(state, number, line, pos, msg)
        if notes_host:
            _note_host(state, line, pos)
        return _INFO
    capped = len(state.events) >= MAX_EVENTS
    dropped = state.dropped
    if "NCCL WARN" in line:
        event = _warn_line(state, number, line, following)
        if event is not None:
            return _Replay(warn=1, event=event, following=following)
        warn = 1
    elif line in state.plain:
        return _PLAIN
    elif _OTHER_KEYS.search(line):
        event = _other_line(state, number, line)
        if event is not None:
            return _Replay(event=event)
        warn = 0
    else:
        if len(state.plain) < _INERT_MAX:
            state.plain.add(line)
        return _PLAIN
    # Past the events cap, reading a WARN or PyTorch line again only counts it (and the event
    # it would have been, if any); see `_State.replay_broken` for the values it may overwrite.
    if capped and state.pending_terminate is None:
        return _Replay(warn=warn, dropped=state.dropped - dropped)
    return None


# ---- NCCL INFO ------------------------------------------------------------------------------

def _info_line(state: _State, number: int, line: str, pos: int, msg: str) -> _Replay | None:
    """Dispatch an INFO line (`msg`: its message, not a channel line, counted by the caller) on
    its message start; most lines are only tallied. Returns what reading the same line again
    would do (None: it must be read again)."""
    if ": opCount " in msg:
        name = msg.split(":", 1)[0]
        state.calls[name] = state.calls.get(name, 0) + 1
        return _Replay(info=1, call=name)
    if "Init " in msg and ("Init COMPLETE" in msg or "Init START" in msg):
        return _init_line(state, number, line, pos, msg)
    if msg.startswith("NCCL version"):
        _version(state, msg)
        _note_host(state, line, pos)
        _inert(state, msg, notes_host=True)
    elif msg.startswith("NET/"):
        return _net_info(state, number, line, pos, msg)
    elif msg.startswith("Bootstrap"):
        _bootstrap_info(state, line, pos, msg)
    elif msg.startswith("NCCL_") and " set " in msg:
        env = _ENV.match(msg)
        if env and env.group(1) not in state.env:
            state.env[env.group(1)] = env.group(2)
        _inert(state, msg)  # the first setting of a variable is the one kept
    else:
        return _misc_info(state, line, pos, msg)
    return _INFO


def _channel_line(state: _State, msg: str, cached: _ChannelFacts | None) -> None:
    """Tally a channel connection line; identical lines (common) are read once and cached
    (`cached`: what the cache holds for `msg`)."""
    if cached is None:
        cached = _read_channel(state, msg)
        if len(state.channel_cache) < _CACHE_MAX:
            state.channel_cache[msg] = cached
    name, key, owner = cached
    if name is None:
        return
    state.channel_transports[name] = None
    if key is None:
        return
    use = state.channel_use.get(key)
    if use is None:
        use = state.channel_use[key] = [0, set()]
    use[0] += 1
    if owner is not None:
        use[1].add(owner)


def _read_channel(state: _State, msg: str) -> _ChannelFacts:
    via = msg.find(" via ")
    if via < 0:
        ring = _RING_DEF.match(msg)
        if ring:
            total = int(ring.group(2)) if ring.group(2) else int(ring.group(1)) + 1
            if total > state.channels.get("ring", 0):
                state.channels["ring"] = total
        return None, None, None
    parts = msg[via + 5:].split("/", 2)
    name = f"{parts[0]}/{parts[1]}" if parts[0] in ("NET", "P2P") and len(parts) > 1 \
        else parts[0]
    match = _CHANNEL_NET.search(msg) if parts[0] == "NET" else None
    if match is None:
        return name.strip(), None, None
    src, dst, direction, net, nic, rest = match.groups()
    owner = int(dst) if direction == "receive" else int(src)
    return name.strip(), (net, int(nic), "GDRDMA" in rest), owner


def _init_line(state: _State, number: int, line: str, pos: int, msg: str) -> _Replay | None:
    """Init START / COMPLETE: the rank map (rank -> host, pid, GPU) and init_complete events."""
    prefix = _prefix(line[:pos])
    _add_host(state, prefix.host)
    init = _INIT.search(msg)
    if init is None:
        return _INFO
    rank, nranks = int(init.group(1)), int(init.group(2))
    device = _int_group(_CUDA_DEV.search(msg))
    bus = _bus_id(msg)
    comm_match = _COMM_ID.search(msg) or _COMM_PTR.search(msg)
    comm = comm_match.group(1) if comm_match else None
    key = (prefix.host, prefix.pid, rank, nranks, comm)
    pointer = _COMM_PTR.search(msg)
    # The `comm 0x.. rank R nRanks N nNodes ..` line of the same communicator came first
    # (no Init START in the log): replace its entry, which only knew the comm pointer.
    if key not in state.ranks and pointer is not None and state.ranks.pop(
            (prefix.host, prefix.pid, rank, nranks, pointer.group(1)), None) is not None:
        state.replay_broken = True
    if key not in state.ranks:
        state.ranks[key] = Rank(
            rank=rank, nranks=nranks, host=prefix.host, pid=prefix.pid, device=device,
            bus_id=bus, comm_id=comm)
    if prefix.pid is not None:
        known = state.pid_rank.get((prefix.host, prefix.pid))
        if known is None or nranks > known[0]:
            state.pid_rank[(prefix.host, prefix.pid)] = (nranks, rank)
    state.nranks = max(state.nranks or 0, nranks)
    if "Init COMPLETE" in msg:
        # One per rank and communicator: a big job prints thousands. Keep a sample so they
        # never crowd out the failures that matter (MAX_EVENTS caps all events together).
        state.init_events += 1
        if state.init_events > _INIT_EVENTS_MAX:
            state.dropped += 1
            return _INIT_DROPPED
        added = _add_event(state, Event(
            type="init_complete", rank=rank, rank_source="init", host=prefix.host, seq=None,
            op=None, timeout_ms=None, peer=None, status=None, line=number,
            message=msg[:_MESSAGE_MAX], pid=prefix.pid,
            device=device if device is not None else prefix.device, nranks=nranks,
            bus_id=bus, comm_id=comm))
        return None if added else _INIT_DROPPED
    return _INFO


def _bus_id(msg: str) -> str | None:
    match = _BUS_ID.search(msg)
    return match.group(1) if match else None


def _net_info(state: _State, number: int, line: str, pos: int, msg: str) -> _Replay | None:
    if not msg.startswith("NET/Plugin: Failed to find"):
        _note_host(state, line, pos)
    using = _NET_USING.match(msg)
    if using:
        _net_using(state, line, pos, using.group(1), using.group(2))
        return _INFO
    if msg.startswith("NET/Plugin"):
        lowered = msg.lower()
        if "could not find" in lowered or "no plugin found" in lowered \
                or "plugin load returned" in lowered or "failed to load" in lowered \
                or "dlopen" in lowered:
            capped = len(state.events) >= MAX_EVENTS
            event = _event_from_prefix(state, number, line, pos, "plugin_not_found", msg)
            return _DROPPED_INFO if capped else _Replay(info=1, event=event) if event else None
        loaded = _LOADED_PLUGIN.search(msg)
        if loaded:
            state.plugins[loaded.group(1)] = None
        _inert(state, msg, notes_host=not msg.startswith("NET/Plugin: Failed to find"))
        return _INFO
    if msg.startswith("NET/OFI"):
        version = _OFI_VERSION.search(msg)
        if version:
            state.plugins[version.group(1)] = None
        provider = _OFI_PROVIDER.search(msg)
        if provider and state.ofi_provider is None:
            state.ofi_provider = provider.group(1)
        _inert(state, msg, notes_host=True)  # the plugin and the first provider are kept
        return _INFO
    if "GPU Direct RDMA" in msg:
        return _gdr_line(state, msg)  # counted on every line
    _inert(state, msg, notes_host=True)
    return _INFO


def _net_using(state: _State, line: str, pos: int, transport: str, rest: str) -> None:
    host = _prefix(line[:pos]).host
    _add_host(state, host)
    devices, _, oob = rest.partition(";")
    if "[RO]" in devices:
        state.relaxed_ordering = True
    # Every process prints the same device list: parse each distinct list once.
    keys = state.using_cache.get((transport, devices))
    if keys is None:
        keys = []
        for index, entry in _NET_ENTRY.findall(devices):
            device = _net_device(transport, int(index), entry)
            if device is None:
                continue
            found: tuple[object, ...] = (device.transport, device.index, device.device,
                                         device.port, device.link_layer, device.address)
            state.net_devices.setdefault(found, device)
            keys.append(found)
        state.using_cache[(transport, devices)] = keys
    for key in keys:
        known = state.net_devices[key]
        if host and host not in known.hosts:
            known.hosts.append(host)
    for interface, address in _OOB.findall(oob):
        _add_interface(state.oob, interface, address, host)


def _net_device(transport: str, index: int, entry: str) -> NetDevice | None:
    if entry == "RO":
        return None
    ib = _IB_ENTRY.match(entry)
    if ib:
        return NetDevice(transport=transport, index=index, device=ib.group(1),
                             port=int(ib.group(2)), link_layer=ib.group(3))
    sock = _SOCK_ENTRY.match(entry)
    if sock:
        return NetDevice(transport=transport, index=index, device=sock.group(1), port=None,
                             link_layer=None, address=sock.group(2))
    return NetDevice(transport=transport, index=index, device=entry, port=None,
                         link_layer=None)


def _add_interface(target: dict[tuple[str, str], Interface], interface: str, address: str,
                   host: str | None) -> None:
    known = target.setdefault((interface, address),
                              Interface(interface=interface, address=address))
    if host and host not in known.hosts:
        known.hosts.append(host)


def _bootstrap_info(state: _State, line: str, pos: int, msg: str) -> None:
    using = _BOOTSTRAP_USING.match(msg)
    if using:
        host = _prefix(line[:pos]).host
        _add_host(state, host)
        _add_interface(state.bootstrap, using.group(1), using.group(2), host)


def _gdr_line(state: _State, msg: str) -> _Replay:
    if "Disabled" in msg:
        if len(state.gdr_disabled) < 50:
            state.gdr_disabled[msg] = None
    elif "Enabled" in msg:
        state.gdr_enabled += 1
        return _GDR_ENABLED
    return _INFO


def _inert(state: _State, msg: str, *, notes_host: bool = False) -> None:
    """Remember that reading `msg` again would change nothing but, with `notes_host`, note its
    line's host (the scan then does only that)."""
    if len(state.inert) < _INERT_MAX:
        state.inert[msg] = notes_host


def _misc_info(state: _State, line: str, pos: int, msg: str) -> _Replay:
    # Branches that note the line's host or count lines return; the others (maxima, sets,
    # first values) read the same message to the same effect, so it is remembered as inert.
    if "coll channels" in msg or "p2p channels" in msg:
        for number, kind, per_peer in _CHANNEL_COUNTS.findall(msg):
            name, value = ("p2p_per_peer", per_peer) if per_peer else (kind, number)
            if int(value) > state.channels.get(name, -1):
                state.channels[name] = int(value)
    elif msg.startswith("comm ") and "nRanks" in msg:
        _comm_topology(state, line, pos, msg)
        return _INFO
    elif msg.startswith("Connected all rings") and "GDR" in msg:
        gdr = _RING_GDR.search(msg)
        if gdr:
            state.ring_gdr.add(int(gdr.group(1)))
    elif msg.startswith("GPU Direct RDMA"):
        return _gdr_line(state, msg)
    elif msg.startswith("Using network "):
        state.networks[msg[len("Using network "):].strip()] = None
    elif msg.startswith("cudaDriverVersion") and state.cuda_driver is None:
        _note_host(state, line, pos)
        value = msg.split()[-1]
        state.cuda_driver = int(value) if value.isdigit() else None
        return _INFO
    elif msg.startswith("Successfully loaded external plugin"):
        state.plugins[msg.rsplit(" ", 1)[-1]] = None
    elif "NCCL version" in msg:
        _version(state, msg)
    _inert(state, msg)
    return _INFO


def _comm_topology(state: _State, line: str, pos: int, msg: str) -> None:
    topo = _COMM_TOPO.match(msg)
    if topo is None:
        return
    pointer, rank, nranks, nodes, local_ranks, local_rank = topo.groups()
    prefix = _prefix(line[:pos])
    _add_host(state, prefix.host)
    facts = (int(nodes), int(local_ranks), int(local_rank))
    if state.topo.setdefault((prefix.host, prefix.pid, pointer), facts) != facts:
        state.topo[(prefix.host, prefix.pid, pointer)] = facts
        state.replay_broken = True
    state.n_nodes = max(state.n_nodes or 0, int(nodes))
    state.local_ranks = max(state.local_ranks or 0, int(local_ranks))
    state.nranks = max(state.nranks or 0, int(nranks))
    key = (prefix.host, prefix.pid, int(rank), int(nranks), pointer)
    if not any(r.rank == int(rank) and r.nranks == int(nranks) and r.host == prefix.host
               and r.pid == prefix.pid for r in state.ranks.values()):
        state.ranks[key] = Rank(rank=int(rank), nranks=int(nranks), host=prefix.host,
                                       pid=prefix.pid, device=prefix.device, bus_id=None,
                                       comm_id=pointer)
    if prefix.pid is not None:
        known = state.pid_rank.get((prefix.host, prefix.pid))
        if known is None or int(nranks) > known[0]:
            state.pid_rank[(prefix.host, prefix.pid)] = (int(nranks), int(rank))


# ---- NCCL WARN ------------------------------------------------------------------------------

def _warn_line(state: _State, number: int, line: str, following: str) -> Event | None:
    """Every WARN line is an event (returned, None past the cap); a completion error wrapped
    onto the next line is joined."""
    state.warn_lines += 1
    state.evidence = True
    pos = line.find("NCCL WARN")
    msg = line[pos + 9:].strip()
    if "Got completion from peer" in msg and "vendor" not in msg:
        follow = following.strip()
        if follow and "NCCL" not in follow:
            msg = f"{msg} {follow}"
    kind = _classify_warn(msg, line[:pos])
    return _event_from_prefix(state, number, line, pos, kind, msg, warn=True)


def _classify_warn(msg: str, head: str) -> EventType:
    lowered = msg.lower()
    if "got completion from peer" in lowered:
        return "ib_completion_error"
    if "async event" in lowered or "async fatal event" in lowered:
        return "ib_async_event"
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


def _event_from_prefix(state: _State, number: int, line: str, pos: int, kind: EventType,
                       msg: str, *, warn: bool = False) -> Event | None:
    """The event of an NCCL line, built from the line alone; None past the cap."""
    if _dropped(state):  # past the cap only the host and the count matter
        _note_host(state, line, pos)
        return None
    prefix = _prefix(line[:pos], source=warn)
    _add_host(state, prefix.host)
    # torchrun's `[rankN]:` line prefix states the rank; the bracketed `[N]` is only the device.
    tagged = _RANK_TAG.search(line[:pos]) or _PG_RANK.search(msg)
    rank = int(tagged.group(tagged.lastindex or 1)) if tagged else None
    event = Event(type=kind, rank=rank,
                         rank_source="pytorch" if tagged else None, host=prefix.host, seq=None,
                         op=None, timeout_ms=None, peer=None, status=None, line=number,
                         message=msg[:_MESSAGE_MAX], pid=prefix.pid, device=prefix.device,
                         source=prefix.source)
    event.peer_rank = _int_group(_FROM_RANK.search(msg))
    _fill_network_details(event, msg)
    return event if _add_event(state, event) else None


def _fill_network_details(event: Event, msg: str, kind: EventType | None = None) -> None:
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
    if kind in ("ib_completion_error", "ib_async_event"):
        hca = _HCA.search(msg)
        if hca:
            event.hca = hca.group(1) or hca.group(2)
    if kind == "ib_completion_error":
        _fill_ib_completion(event, msg)


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
    event.length = _int_group(_IB_LEN.search(msg))
    event.vendor_err = _int_group(_IB_VENDOR.search(msg))
    direction = _IB_DIRECTION.search(msg)
    event.direction = direction.group(1) if direction else None
    local, remote = _IB_LOCAL_GID.search(msg), _IB_REMOTE_GID.search(msg)
    event.local_gid = local.group(1) if local else None
    event.remote_gid = remote.group(1) if remote else None


# ---- PyTorch, torchrun and other lines -------------------------------------------------------

def _other_line(state: _State, number: int, raw: str) -> Event | None:
    """PyTorch, torchrun and plain-text lines that passed the keyword pre-filter. Returns the
    event added when it was built from the line alone and reading the line did nothing else
    that reading it again would not redo: the line then adds a copy of it."""
    _, line = strip_launcher_prefix(raw)
    what = "what():" in line
    if what and state.pending_terminate is not None and number - state.pending_line <= 3:
        _what_line(state, line)
    if "NCCL version" in line and "NCCL error in" not in line:
        _version(state, line)
        state.evidence = True
    event = None
    if "eartbeat monitor timed out" in line or "watchdog got stuck" in line:
        event = _add_simple(state, number, line, "heartbeat_timeout")
    elif "atchdog" in line or "NCCL work" in line:
        _watchdog_line(state, number, line)
    elif "ollective" in line and ("didn't join" in line or "didn't finish" in line
                                  or "Timeout at collective" in line):
        _desync_line(state, number, line)
    elif "NCCL error in:" in line or ("NCCL error:" in line and not what):
        _nccl_error_line(state, number, line)
    elif "communicator was aborted on rank" in line:
        _aborted_line(state, number, line)
    elif "nccl" in line and _NCCL_RESULT_LINE.match(_message(line)):
        _nccl_result_line(state, number, line)
    elif "erminat" in line:
        _terminate_line(state, number, line)
    elif "DistBackendError:" in line:
        event = _add_simple(state, number, line, "dist_backend_error")
    elif "ChildFailedError:" in line:
        # The exception line; `raise ChildFailedError(` of the traceback above it is code.
        _child_failed_start(state, number, line)
    elif "failed (exitcode:" in line:
        event = _exitcode_line(state, number, line)
    elif "CUDA error:" in line or "CUDA out of memory" in line or "Cuda failure" in line:
        event = _add_simple(state, number, line, "cuda_error")
    else:
        kind = _network_kind(line.lower())
        if kind is not None:
            event = _network_line(state, number, line, kind)
        elif not what and "NCCL version" not in line and len(state.plain) < _INERT_MAX:
            state.plain.add(raw)  # a traceback line every rank prints, say
    return None if what else event


def _watchdog_line(state: _State, number: int, line: str) -> None:
    """Watchdog lines; restatements of one rank's timeout at one seq merge into one event."""
    seq = _SEQNUM.search(line) or _WORK_SEQ.search(line)
    if seq is None and "Watchdog caught collective operation timeout" not in line:
        if "dump signal" in line:
            _pg_status_line(state, number, line)
        elif "watchdog thread terminated with exception" in line:
            # PyTorch >= 2.2: an NCCL error (not a timeout) ended the rank's process group.
            rank, pg, source = _pytorch_rank(line)
            _add_event(state, Event(
                type="nccl_error", rank=rank, rank_source=source, host=None, seq=None, op=None,
                timeout_ms=None, peer=None, status=None, line=number, message=_message(line),
                pg=pg))
        return
    rank, pg, source = _pytorch_rank(line)
    key = (rank, int(seq.group(1)) if seq else None)
    event = state.watchdogs.get(key)
    if event is None:
        event = Event(type="watchdog_timeout", rank=rank, rank_source=source, host=None,
                             seq=key[1], op=None, timeout_ms=None, peer=None, status=None,
                             line=number, message=_message(line), pg=pg)
        if not _add_event(state, event):
            return
        state.watchdogs[key] = event
    _fill_watchdog(event, line, pg)


def _pg_status_line(state: _State, number: int, line: str) -> None:
    """`Received a dump signal ... Last enqueued NCCL work: X, last completed NCCL work: Y`."""
    enqueued = _ENQUEUED.search(line.replace("Last enqueued", "last enqueued"))
    if enqueued is None:
        return
    event = _add_simple(state, number, line, "pg_status")
    if event is not None:
        event.last_enqueued = int(enqueued.group(1))
        event.last_completed = _int_group(_COMPLETED.search(line))


def _fill_watchdog(event: Event, line: str, pg: str | None) -> None:
    event.op = event.op or _group(_OPTYPE.search(line))
    event.timeout_ms = event.timeout_ms if event.timeout_ms is not None \
        else _int_group(_TIMEOUT.search(line))
    event.ran_for_ms = event.ran_for_ms if event.ran_for_ms is not None \
        else _int_group(_RAN_FOR.search(line))
    event.numel_in = event.numel_in if event.numel_in is not None \
        else _int_group(_NUMEL_IN.search(line))
    event.numel_out = event.numel_out if event.numel_out is not None \
        else _int_group(_NUMEL_OUT.search(line))
    event.last_enqueued = event.last_enqueued if event.last_enqueued is not None \
        else _int_group(_ENQUEUED.search(line))
    event.last_completed = event.last_completed if event.last_completed is not None \
        else _int_group(_COMPLETED.search(line))
    event.pg = event.pg or pg


def _pytorch_rank(line: str) -> tuple[int | None, str | None, _RankSource]:
    """Rank and process group from `[PG ... Rank N]` / `[Rank N]`, else the `[rankN]:` prefix."""
    tagged = _PG_RANK.search(line)
    if tagged:
        return int(tagged.group(2)), tagged.group(1), "pytorch"
    prefix = _RANK_PREFIX.match(line)
    if prefix:
        return int(prefix.group(1)), None, "pytorch"
    return None, None, None


def _desync_line(state: _State, number: int, line: str) -> None:
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
    rank, finished, _, seq = match.groups()
    _add_event(state, Event(
        type="desync", rank=int(rank), rank_source="desync", host=None, seq=int(seq), op=None,
        timeout_ms=None, peer=None, status=None, line=number, message=_message(line),
        last_completed=int(finished) if finished else None))


def _nccl_error_line(state: _State, number: int, line: str) -> None:
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
    rank, pg, source = _pytorch_rank(line)
    event = Event(
        type=kind, rank=rank, rank_source=source, host=None, seq=None, op=None,
        timeout_ms=None, peer=None, status=None, line=number, message=_message(line),
        source=f"{match.group(1)}:{match.group(2)}" if match else None, pg=pg,
        exception=_exception(line))
    _nccl_details(event, line)
    if _add_event(state, event):
        state.pending_nccl, state.pending_nccl_line = event, number
        state.last_error_next = False


def _nccl_result_line(state: _State, number: int, line: str) -> None:
    """`ncclInternalError: Internal check failed.` whose `NCCL error in:` line is not in the
    capture: the failure still is an event, and its `Last error:` may follow."""
    event = _add_simple(state, number, line, "nccl_error")
    if event is not None:
        _nccl_details(event, line)
        state.pending_nccl, state.pending_nccl_line = event, number
        state.last_error_next = False


def _aborted_line(state: _State, number: int, line: str) -> None:
    """`NCCL communicator was aborted on rank N. Original reason for failure was: ...`."""
    event = _add_simple(state, number, line, "nccl_error")
    if event is None:
        return
    if event.rank is None:
        event.rank, event.rank_source = _int_group(_ABORTED_ON.search(line)), "text"
    _nccl_details(event, line)
    seq = _SEQNUM.search(line)
    if seq:
        event.seq = int(seq.group(1))
        _fill_watchdog(event, line, event.pg)


def nccl_result_of(text: str) -> str | None:
    """The NCCL result code a failure message names or implies (`internal error` ->
    ncclInternalError); None when it tells none."""
    named = _NCCL_RESULT_NAME.search(text)
    if named:
        return named.group(1)
    lowered = text.lower()
    return next((code for phrase, code in _NCCL_RESULTS if phrase in lowered), None)


def failure_event(text: str, line: int, host: str | None) -> NcclLogEvent | None:
    """The network or CUDA failure a message quotes (the `Last error` part of an NCCL error),
    as an event of its own; None when it names no such failure."""
    kind = _classify_warn(text, "")
    if kind in ("nccl_warn", "plugin_not_found", "net_plugin_error"):
        return None
    event = Event(type=kind, rank=None, host=host, seq=None, op=None, timeout_ms=None,
                         peer=None, status=None, line=line, message=text[:_MESSAGE_MAX])
    _fill_network_details(event, text)
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
        event.message = f"{event.message}; Last error: {text}"[:_MESSAGE_MAX]
    kind = _classify_warn(text, "")
    if kind in ("ib_completion_error", "connect_failed", "socket_connect_refused",
                "connection_closed", "ib_async_event") and event.peer is None:
        _fill_network_details(event, text, kind)


def _nccl_followup(state: _State, number: int, raw: str) -> bool:
    """`ncclRemoteError: ...`, `Last error:` and its text after an NCCL error; True if read."""
    event = state.pending_nccl
    if event is None or number - state.pending_nccl_line > 4 or "NCCL INFO" in raw:
        state.pending_nccl = None
        return False
    _, line = strip_launcher_prefix(raw)
    text = _RANK_PREFIX.sub("", line, count=1).strip()
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


def _terminate_line(state: _State, number: int, line: str) -> None:
    terminate = _TERMINATE.search(line)
    if terminate:
        kind: EventType = "dist_backend_error" if "DistBackendError" in terminate.group(1) \
            else "process_terminated"
        state.pending_terminate = _add_simple(state, number, line, kind)
        state.pending_line = number
        if state.pending_terminate is not None:
            state.pending_terminate.exception = terminate.group(1)
        if "what():" in line[terminate.end():]:
            _what_line(state, line[terminate.end():])
    elif "Terminating the process after attempting to dump debug info" in line:
        _add_simple(state, number, line, "process_terminated")
    elif "DistBackendError:" in line:
        _add_simple(state, number, line, "dist_backend_error")


def _what_line(state: _State, line: str) -> None:
    event = state.pending_terminate
    state.pending_terminate = None
    if event is None:
        return
    text = line.split("what():", 1)[1].strip()
    event.message = f"{event.message}: {text}"[:_MESSAGE_MAX]
    _nccl_details(event, text)
    rank, pg, source = _pytorch_rank(text)
    if rank is not None and event.rank is None:
        event.rank, event.rank_source = rank, source
    seq = _SEQNUM.search(text) or _WORK_SEQ.search(text)
    if seq:
        event.seq = int(seq.group(1))
        _fill_watchdog(event, text, pg)


def _add_simple(state: _State, number: int, line: str, kind: EventType) -> Event | None:
    if _dropped(state):
        return None
    rank, pg, source = _pytorch_rank(line)
    event = Event(type=kind, rank=rank, rank_source=source, host=None,
                         seq=None, op=None, timeout_ms=None, peer=None, status=None,
                         line=number, message=_message(line), pg=pg,
                         exception=_exception(line))
    return event if _add_event(state, event) else None


def _exception(line: str) -> str | None:
    found = _EXCEPTION.search(line)
    return found.group(1) if found else None


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


def _network_line(state: _State, number: int, line: str, kind: EventType) \
        -> Event | None:
    """gloo `Connection closed by peer [addr]:port`, c10d `The client socket has failed to
    connect to [host]:port (errno: 111 - Connection refused)`, TCPStore and socket failures
    (`kind`, see `_network_kind`): the event added, None past the cap."""
    event = _add_simple(state, number, line, kind)
    if event is None:
        return None
    where = _SOURCE.search(line)
    event.source = where.group(1) if where else None
    text = event.message
    peer = _BRACKET_PEER.search(text) or _TUPLE_PEER.search(text) or _HOST_PORT.search(text)
    if peer:
        event.peer, event.peer_port = peer.group(1), int(peer.group(2))
    else:
        _fill_network_details(event, text)
    errno = _SOCK_ERRNO.search(text)
    if errno:
        event.status, event.status_meaning = int(errno.group(1)), errno.group(2).strip()
    return event


def _exitcode_line(state: _State, number: int, line: str) -> Event | None:
    match = _EXITCODE.search(line)
    if match is None:
        return None
    event = _add_simple(state, number, line, "child_failed")
    if event is not None:
        event.status = int(match.group(1))
        event.local_rank = _int_group(match, 2)
        event.pid = _int_group(match, 3)
    return event


def _child_failed_start(state: _State, number: int, line: str) -> None:
    event = _add_simple(state, number, line, "child_failed")
    if event is not None and event.exception is None and "ChildFailedError" in line:
        event.exception = "ChildFailedError"
    if event is not None:
        state.block = _ChildBlock(event=event)


def _child_block_line(state: _State, block: _ChildBlock, number: int, raw: str) -> bool:
    """A line of torchrun's failure report; True when consumed."""
    block.left -= 1
    _, line = strip_launcher_prefix(raw)
    text = line.strip()
    if block.left <= 0 or (text.startswith("=") and block.section == "root" and block.entry):
        state.block = None
        return bool(text.startswith("="))
    if text.startswith("Failures:"):
        block.section, block.entry = "failures", None
    elif text.startswith("Root Cause"):
        block.section, block.entry = "root", None
    elif text.startswith("[") and _BLOCK_ENTRY.match(text):
        block.entry = _block_entry(state, block, number)
    elif block.entry is not None and ":" in line and (found := _BLOCK_FIELD.match(line)):
        _block_field(block.entry, found.group(1), found.group(2))
    elif not (text.startswith(("=", "-")) or text.endswith("FAILED") or not text
              or "<NO_OTHER_FAILURES>" in text):
        return False
    return True


def _block_entry(state: _State, block: _ChildBlock, number: int) -> Event | None:
    if block.section == "root":
        return block.event
    if block.section != "failures":
        return None
    event = Event(type="child_failed", rank=None, host=None, seq=None, op=None,
                         timeout_ms=None, peer=None, status=None, line=number,
                         message=block.event.message, exception=block.event.exception)
    return event if _add_event(state, event) else None


def _block_field(event: Event, name: str, value: str) -> None:
    if name == "host":
        event.host = value or None
    elif name == "rank":
        rank = re.match(r"(\d+)(?:\s*\(local_rank:\s*(\d+)\))?", value)
        if rank:
            event.rank, event.rank_source = int(rank.group(1)), "torchrun"
            event.local_rank = _int_group(rank, 2)
    elif name == "exitcode":
        code = re.match(r"(-?\d+)(?:\s*\(pid:\s*(\d+)\))?", value)
        if code:
            event.status = int(code.group(1))
            event.pid = _int_group(code, 2)
    elif name == "traceback" and value and "To enable traceback" not in value:
        event.message = f"{event.message}; {value}"[:_MESSAGE_MAX]


# ---- helpers ----------------------------------------------------------------------------------

def _prefix(head: str, *, source: bool = False) -> _Prefix:
    """The `host:pid:tid [dev]` prefix of a line; callers never change the returned value."""
    if not source:
        return _plain_prefix(head)
    match = _PREFIX.search(head)
    if match is None:
        return _Prefix()
    found = _Prefix(host=match.group(1), pid=int(match.group(2)), device=int(match.group(4)))
    where = _WARN_SOURCE.search(head[match.end() - 1:])
    found.source = where.group(1) if where else None
    return found


@lru_cache(maxsize=65536)
def _plain_prefix(head: str) -> _Prefix:
    # One process's threads print the same heads again and again: read each once.
    match = _PREFIX.search(head)
    if match is None:
        return _Prefix()
    return _Prefix(host=match.group(1), pid=int(match.group(2)), device=int(match.group(4)))


def _note_host(state: _State, line: str, pos: int) -> None:
    host = _plain_prefix(line[:pos]).host
    if host:
        state.hosts.setdefault(host, None)


def _add_host(state: _State, host: str | None) -> None:
    if host:
        state.hosts.setdefault(host, None)


def _version(state: _State, text: str) -> None:
    match = _VERSION.search(text)
    if match:
        state.versions.setdefault(match.group(1), None)


def _message(line: str) -> str:
    text = _C10_PREFIX.sub("", line, count=1)
    text = _RANK_PREFIX.sub("", text, count=1).strip()
    return text[:_MESSAGE_MAX]


def _group(match: re.Match[str] | None, index: int = 1) -> str | None:
    return match.group(index) if match else None


def _int_group(match: re.Match[str] | None, index: int = 1) -> int | None:
    if match is None or match.group(index) is None:
        return None
    return int(match.group(index))


def _dropped(state: _State) -> bool:
    """True (and counted) when an event would be dropped: the cap is reached, so a caller can
    skip building it. Long logs have tens of thousands past the cap."""
    if len(state.events) < MAX_EVENTS:
        return False
    state.evidence = True
    state.dropped += 1
    return True


def _add_event(state: _State, event: Event) -> bool:
    state.evidence = True
    if len(state.events) >= MAX_EVENTS:
        state.dropped += 1
        return False
    state.events.append(event)
    return True


def _result(state: _State) -> dict[str, object]:
    """The `NcclLog` as `model_dump(mode="json")` would give it (its fields in their order)."""
    _resolve_ranks(state)
    versions = list(state.versions)
    channel_use = [{"net": net, "nic_index": nic, "gdrdma": gdr, "connections": count,
                    "ranks": sorted(ranks)}
                   for (net, nic, gdr), (count, ranks) in sorted(state.channel_use.items())]
    connections = sum(use[0] for use in state.channel_use.values())
    with_gdr = sum(use[0] for (_, _, gdr), use in state.channel_use.items() if gdr)
    warnings = [f"{state.dropped} event(s) beyond the first {MAX_EVENTS} were not kept"] \
        if state.dropped else []
    channels = state.channels
    ranks = sorted(state.ranks.values(), key=lambda r: (-r.nranks, r.rank, r.host or ""))
    return {
        "kind": KIND, "schema_version": SCHEMA_VERSION, "warnings": warnings,
        "nccl_version": versions[0] if versions else None, "nccl_versions": versions,
        "events": [dump(event) for event in state.events], "events_dropped": state.dropped,
        "hosts": list(state.hosts), "ranks": [dump(rank) for rank in ranks],
        "nranks": state.nranks, "n_nodes": state.n_nodes, "local_ranks": state.local_ranks,
        "cuda_driver_version": state.cuda_driver,
        "transports": [dump(device) for device in state.net_devices.values()],
        "relaxed_ordering": state.relaxed_ordering,
        "oob_interfaces": [dump(interface) for interface in state.oob.values()],
        "bootstrap_interfaces": [dump(interface) for interface in state.bootstrap.values()],
        "networks": list(state.networks), "net_plugins": list(state.plugins),
        "ofi_provider": state.ofi_provider,
        "channel_transports": sorted(state.channel_transports),
        "net_connections": connections, "net_connections_gdrdma": with_gdr,
        "gpudirect_rdma": _gdr_verdict(state, connections, with_gdr),
        "gpudirect_rdma_disabled": list(state.gdr_disabled), "net_channel_use": channel_use,
        "coll_channels": channels.get("coll", channels.get("ring")),
        "collnet_channels": channels.get("collnet"), "nvls_channels": channels.get("nvls"),
        "p2p_channels": channels.get("p2p"),
        "p2p_channels_per_peer": channels.get("p2p_per_peer"),
        "env": dict(state.env), "collective_calls": dict(state.calls),
        "info_lines": state.info_lines, "warn_lines": state.warn_lines,
    }


def _gdr_verdict(state: _State, connections: int, with_gdr: int) -> bool | None:
    if connections:
        return with_gdr == connections
    if state.ring_gdr:
        return state.ring_gdr == {1}
    if state.gdr_enabled and not state.gdr_disabled:
        return True
    if state.gdr_disabled and not state.gdr_enabled:
        return False
    return None


def _resolve_ranks(state: _State) -> None:
    """Ranks of NCCL-line events from init lines of the same process; desync ops by seq."""
    for event in state.events:
        if event.type == "desync" and event.op is None and event.seq in state.desync_ops:
            event.op = state.desync_ops[event.seq]
        if event.type == "init_complete":
            topo = state.topo.get((event.host, event.pid, event.comm_id or ""))
            if topo is None:
                topo = next((t for (h, p, _), t in state.topo.items()
                             if h == event.host and p == event.pid), None)
            if topo:
                event.n_nodes, event.local_ranks, event.local_rank = topo
            continue
        if event.rank is not None or event.pid is None:
            continue
        known = state.pid_rank.get((event.host, event.pid))
        if known:
            event.rank, event.rank_source = known[1], "init"


def tables(result: NcclLog) -> list[Table]:
    """A summary of the init facts, then one row per event."""
    from fabtui.model.table import Table
    summary = [
        f"NCCL {result.nccl_version or '?'}   ranks: {result.nranks or '?'}   nodes: "
        f"{result.n_nodes or '?'}   hosts: {len(result.hosts)}   INFO/WARN lines: "
        f"{result.info_lines}/{result.warn_lines}",
        f"transports: {', '.join(result.channel_transports) or '-'}   GPUDirect RDMA: "
        f"{_yes_no(result.gpudirect_rdma)} ({result.net_connections_gdrdma}/"
        f"{result.net_connections} NET connections)",
    ]
    if result.transports:
        summary.append("NET devices: " + " ".join(
            f"[{d.index}]{d.device}" + (f":{d.port}/{d.link_layer}" if d.port is not None
                                         else f":{d.address}")
            for d in result.transports))
    return [Table.build([], title=summary), events_table(result.events)]


def events_table(events: list[NcclLogEvent]) -> Table:
    """One row per NCCL / PyTorch event; nccl-tests output shows its events the same way."""
    from fabtui.model.table import Table, left
    columns = [left("line"), left("type"), left("rank"), left("device"), left("host"),
               left("seq"), left("op"), left("peer"), left("status"), left("message")]
    rows = [(e.line, e.type, e.rank, e.device, e.host, e.seq, e.op, e.peer,
             e.status_name or e.status, e.message) for e in events]
    return Table.build(columns, rows)


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"
