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

This module is the parser's face (detection, the entry points, the result and its tables); the
lines are read by family:

- `_reader.py`: batches of lines, each line read before replayed from its tally;
- `_info.py`: NCCL INFO lines (init facts, NET devices, channels, settings);
- `_warn.py`: NCCL WARN lines and the network failures they report (IB completion errors);
- `_torch.py`: PyTorch lines (watchdog, desync, ProcessGroup status, NCCL errors, terminate);
- `_torchrun.py`: torchrun's child-failed reports;
- `_state.py`: what a scan holds while it reads, and the helpers that add events;
- `_records.py`: the plain records of the result (the models' fields, without pydantic).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from fabtui.gcpause import gc_paused
from fabtui.parsers.errors import ParseError
from fabtui.parsers.nccl_log import _reader
from fabtui.parsers.nccl_log._prefetch import Prefetcher, prefetch_usable
from fabtui.parsers.nccl_log._reader import read_batches, read_lines, read_prefetched
from fabtui.parsers.nccl_log._records import RANK_FIELDS, dump, rank_values
from fabtui.parsers.nccl_log._state import PREFIX, State
from fabtui.parsers.nccl_log._torch import NCCL_RESULT_NAME
from fabtui.parsers.nccl_log._torch import failure_event as failure_event
from fabtui.parsers.nccl_log._torch import nccl_result_of as nccl_result_of
from fabtui.parsers.streaming import LazyList, Plain, flat_rows_encoded, line_batches
from fabtui.parsers.text import normalize

if TYPE_CHECKING:
    from fabtui.model.parsed.nccl_log import NcclLog, NcclLogEvent
    from fabtui.model.table import Table

KIND = "nccl-log"
DESCRIPTION = ("NCCL_DEBUG=INFO/WARN logs and PyTorch ProcessGroupNCCL watchdog, desync and "
               "torchrun failure messages")
MAX_EVENTS = 10000
"""Events kept in all; the rest are counted. Read at each scan (tests lower it here)."""
SCHEMA_VERSION = 1
"""`fabtui.model.parsed.SCHEMA_VERSION` (not imported: it would import pydantic)."""
_INIT_EVENTS_MAX = 256
"""init_complete events kept; `ranks` still records every rank's init."""


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
        return 0.9 if PREFIX.search(sample) else 0.85
    if any(key in sample for key in ("Watchdog caught collective operation timeout",
                                     "failure detected by watchdog", "WorkNCCL(",
                                     "ProcessGroupNCCL", "NCCL error in:")):
        return 0.9
    if "didn't join collective #" in sample or "didn't finish collective #" in sample:
        return 0.85
    if NCCL_RESULT_NAME.search(sample) or "third_party/gloo" in sample \
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
        reader = _reader_process(lines)
        if reader is not None:  # a big file: a second process reads and sieves ahead
            state = _new_state()
            with reader:
                read_prefetched(state, reader)
            data = _result(state) if state.evidence else None
        else:
            data = scan_batches_data(line_batches(lines))
    if data is None:
        raise ParseError(KIND, None, "no NCCL log line, PyTorch NCCL message or torchrun failure "
                                     "found")
    return Plain(data, _model)


def _model(data: dict[str, object]) -> NcclLog:
    from fabtui.model.parsed.nccl_log import NcclLog

    ranks = data["ranks"]
    if type(ranks) is LazyList:  # dumped one at a time when written; all of them here
        data = {**data, "ranks": list(ranks)}
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
    """`scan_batches` as the plain JSON data of the `NcclLog` (no model built). A line read
    before is not read again: its tally is added (`_reader` says how)."""
    state = _new_state()
    read_batches(state, batches)
    return _result(state) if state.evidence else None


def _reader_process(lines: Iterable[str]) -> Prefetcher | None:
    """A reader process for `lines`, where one is usable (`prefetch_usable`) and starts; None
    where the parse reads them itself (a fork refused at a process limit, say)."""
    if not prefetch_usable(lines):
        return None
    try:
        return Prefetcher(lines, _reader._UNCOUNTED_RUN)  # type: ignore[arg-type]
    except OSError:
        return None


def scan_each_line(lines: Iterable[str]) -> NcclLog | None:
    """`scan` reading every line with `_read_line`, in order: the reference the counted path of
    `scan_batches` must agree with (tests compare the two)."""
    state = _new_state()
    read_lines(state, lines, 0, "")
    return _model(_result(state)) if state.evidence else None


def _new_state() -> State:
    # The caps are read at each scan, from this module: tests lower them here.
    return State(max_events=MAX_EVENTS, init_events_max=_INIT_EVENTS_MAX)


def _result(state: State) -> dict[str, object]:
    """The `NcclLog` as `model_dump(mode="json")` would give it (its fields in their order)."""
    _resolve_ranks(state)
    versions = list(state.versions)
    channel_use = [{"net": net, "nic_index": nic, "gdrdma": gdr, "connections": count,
                    "ranks": sorted(ranks)}
                   for (net, nic, gdr), (count, ranks) in sorted(state.channel_use.items())]
    connections = sum(use[0] for use in state.channel_use.values())
    with_gdr = sum(use[0] for (_, _, gdr), use in state.channel_use.items() if gdr)
    warnings = [f"{state.dropped} event(s) beyond the first {state.max_events} were not kept"] \
        if state.dropped else []
    channels = state.channels
    ranks = sorted(state.ranks.values(), key=lambda r: (-r.nranks, r.rank, r.host or ""))
    # A big job's log has hundreds of thousands of rank entries: their dicts are made one at a
    # time as `write_json` writes them (all at once they were the peak of a 1 GB log's memory,
    # beside the scan's caches), and the records only are kept until then.
    return {
        "kind": KIND, "schema_version": SCHEMA_VERSION, "warnings": warnings,
        "nccl_version": versions[0] if versions else None, "nccl_versions": versions,
        "events": [dump(event) for event in state.events], "events_dropped": state.dropped,
        "hosts": list(state.hosts),
        "ranks": LazyList(lambda: map(dump, ranks),
                          lambda indent: flat_rows_encoded(RANK_FIELDS, map(rank_values, ranks),
                                                           indent)),
        "nranks": state.nranks, "n_nodes": state.n_nodes, "local_ranks": state.local_ranks,
        "mnnvl": _mnnvl(state),
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


def _mnnvl(state: State) -> bool | None:
    """MNNVL of the job's largest communicator (most nRanks): True when any of its ranks
    printed `MNNVL 1`, False when they all printed 0, None when no comm line printed it."""
    if not state.mnnvl:
        return None
    largest = max(nranks for nranks, _ in state.mnnvl.values())
    return any(on for nranks, on in state.mnnvl.values() if nranks == largest)


def _gdr_verdict(state: State, connections: int, with_gdr: int) -> bool | None:
    if connections:
        return with_gdr == connections
    if state.ring_gdr:
        return state.ring_gdr == {1}
    if state.gdr_enabled and not state.gdr_disabled:
        return True
    if state.gdr_disabled and not state.gdr_enabled:
        return False
    return None


def _resolve_ranks(state: State) -> None:
    """Ranks of NCCL-line events from init lines of the same process; desync ops by seq."""
    # A process's first topology, by (host, pid): built once when a comm id is not found
    # (a scan of every topology per event was a term in the number of processes times 256).
    by_process: dict[tuple[str | None, int | None], tuple[int, int, int]] | None = None
    for event in state.events:
        if event.type == "desync" and event.op is None and event.seq in state.desync_ops:
            event.op = state.desync_ops[event.seq]
        if event.type == "init_complete":
            topo = state.topo.get((event.host, event.pid, event.comm_id or ""))
            if topo is None:
                if by_process is None:
                    by_process = {}
                    for (h, p, _), t in state.topo.items():
                        by_process.setdefault((h, p), t)
                topo = by_process.get((event.host, event.pid))
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
