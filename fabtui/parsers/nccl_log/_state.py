"""What a scan of an NCCL log holds while it reads, and the helpers every line family shares.

`State` holds one scan's events (capped), tallies and caches; `Replay` is what reading a line
again would do, which the reader adds instead of reading the line again. The helpers read the
`host:pid:tid [dev]` prefix of NCCL lines and the `[rankN]:` / `[PG .. Rank N]` tags of PyTorch
lines, and add events while the cap allows.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from fabtui.parsers.nccl_log._records import Event, Interface, NetDevice, Rank

if TYPE_CHECKING:
    from fabtui.model.parsed.nccl_log import EventType

_RankSource = Literal["pytorch", "desync", "torchrun", "init", "text"] | None
MESSAGE_MAX = 500
PREFIX = re.compile(r"(?:^|[\s\]:>])([A-Za-z0-9_.\-]+):(?:(\d+):(\d+)|[Xx*]{3,}(?::[Xx*]{3,})?) "
                    r"\[(\d+)\]")
"""NCCL's `host:pid:tid [dev]` line prefix; a paste that blanked the process and thread ids
(`host-01.example.com:XXXXXX [5]`) keeps the host and device, the pid is then unknown."""
_WARN_SOURCE = re.compile(r"\]\s+(\S+?:\d+)(?:\s+\([^)]*\))?\s*$")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+[\w.+\-]*)")
# A log collector may number the lines (`[80746] [rank0]:[E321 02:07:08.40 File.cpp:607] ...`);
# glog-style c10 prefixes print the month unpadded (`E321` is March 21).
RANK_PREFIX = re.compile(r"^\s*(?:\[\d+\]\s+)?\[rank(\d+)\]:")
_C10_PREFIX = re.compile(r"^(?:\s*(?:\[\d+\]\s+)?\[rank\d+\]:)?\s*\[?[EWIF](?:\d{3,4} [\d:.]+"
                         r"(?: +\d+)?)? ?[\w./\-]+:\d+\]\s*")
PG_RANK = re.compile(r"\[(?:PG (.+?) )?Rank (\d+)\]")
_EXCEPTION = re.compile(r"(?:^|[\s'])((?:[A-Za-z_]\w*(?:\.|::))*[A-Z]\w*(?:Error|Exception))"
                        r"(?::\s|'|$)")

INERT_MAX = 50000
"""Inert INFO messages, and other lines that change nothing, remembered at most (each)."""
ChannelFacts = tuple[str | None, tuple[str, int, bool] | None, int | None]


class Replay(NamedTuple):
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


class Known(NamedTuple):
    """What the parse learnt that lets a reader process (`_prefetch`) send fewer lines, each
    a list emptied when sent: the texts after `NCCL INFO` only counted (`_reader.COUNTED`) and
    those that only note their host (`_reader.HOST`), the hosts noted, the lines that change
    nothing, the texts that are a NET connection's tally."""

    counted: list[str]
    host_codes: list[str]
    hosts: list[str]
    plain: list[str]
    tallies: list[tuple[str, int]]
    """The texts after `NCCL INFO` of NET connection lines, with their tally code."""


PLAIN = Replay()
INFO = Replay(info=1)
INIT_DROPPED = Replay(info=1, init=1, dropped=1)
DROPPED_INFO = Replay(info=1, dropped=1)
GDR_ENABLED = Replay(info=1, gdr=1)


class Prefix(NamedTuple):
    """A line's `host:pid:tid [dev]` prefix, and a WARN line's source `file.cc:LINE` (a tuple:
    a big job's log has a distinct prefix per process and thread, each built once)."""

    host: str | None = None
    pid: int | None = None
    device: int | None = None
    source: str | None = None


_NO_PREFIX = Prefix()


@dataclass
class ChildBlock:
    """A torchrun ChildFailedError report being read."""

    event: Event
    section: str | None = None
    entry: Event | None = None
    left: int = 80


@dataclass(slots=True)
class State:
    """One scan: its events, tallies and caches, and the reports it has open."""

    max_events: int
    """Events kept (`MAX_EVENTS` of the package, read when the scan starts); past it, counted."""
    init_events_max: int
    """init_complete events kept (`_INIT_EVENTS_MAX`)."""
    events: list[Event] = field(default_factory=list)
    dropped: int = 0
    versions: dict[str, None] = field(default_factory=dict)
    hosts: dict[str, None] = field(default_factory=dict)
    ranks: dict[tuple[tuple[int, int, str | None, int | None], str | None], Rank] = \
        field(default_factory=dict)
    """Each rank entry by ((rank, nranks, host, pid), comm id or pointer)."""
    rank_seen: set[tuple[int, int, str | None, int | None]] = field(default_factory=set)
    """(rank, nranks, host, pid) of every rank kept: one lookup per comm line, not a scan."""
    shared: dict[tuple[object, ...], Any] = field(default_factory=dict)
    """Small value tuples that hundreds of thousands of entries repeat (a communicator's
    topology, its (nRanks, MNNVL)), each kept once. (Not the (nranks, rank) pairs:
    (16, True) == (16, 1), a pool of both would give one for the other.)"""
    rank_pairs: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    """The (nranks, rank) values of `pid_rank`, each kept once."""
    host_seen: set[tuple[int, str]] = field(default_factory=set)
    """(id of a NetDevice or Interface, host) pairs already in its `hosts` list."""
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
    channel_cache: dict[str, ChannelFacts] = field(default_factory=dict)
    inert: dict[str, bool] = field(default_factory=dict)
    """INFO messages whose reading again would change nothing (TUNER/Plugin lines, settings
    already kept), mapped to whether their line's host is still to be noted."""
    plain: set[str] = field(default_factory=set)
    """Other lines (neither INFO nor WARN) that changed nothing and never can: skipped."""
    using_cache: dict[tuple[str, str], list[tuple[object, ...]]] = field(default_factory=dict)
    host_read: set[tuple[str, ...]] = field(default_factory=set)
    """(host, what it printed) of the NET/… Using and Bootstrap lines read: each process of a
    node prints the same, and reading it again for the same host would change nothing."""
    per_host: set[str] = field(default_factory=set)
    """INFO messages whose reading again on a host that printed them changes nothing (the
    NET/… Using and Bootstrap lines, see `host_read`)."""
    host_tails: set[tuple[str, str]] = field(default_factory=set)
    """(host, text after `NCCL INFO`) of the `per_host` lines read (see `_reader._read_fresh`)."""
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
    block: ChildBlock | None = None
    pending_terminate: Event | None = None
    pending_line: int = 0
    pending_nccl: Event | None = None
    """An NCCL error whose `ncclXxxError:` / `Last error:` lines may follow (PyTorch >= 2.0)."""
    pending_nccl_line: int = 0
    last_error_next: bool = False
    nranks: int | None = None
    n_nodes: int | None = None
    local_ranks: int | None = None
    mnnvl: dict[tuple[str | None, int | None, str], tuple[int, bool]] = \
        field(default_factory=dict)
    """(nRanks, MNNVL printed 1) of each communicator's `comm ... MNNVL M` line."""
    cuda_driver: int | None = None
    evidence: bool = False
    replay: dict[str, Replay] = field(default_factory=dict)
    """Lines read before, by what reading each again does (see `scan_batches`)."""
    sieve: dict[str, int] = field(default_factory=dict)
    """The text after `NCCL INFO` of lines whose reading again is only a count or a tally, by
    its code (see `_reader._sieve`)."""
    sieve_codes: dict[tuple[tuple[str, int, bool], int | None], int] = \
        field(default_factory=dict)
    sieve_tallies: list[tuple[tuple[str, int, bool], int | None]] = field(default_factory=list)
    """The (NET connection, owner) of each tally code of the sieve, and its code."""
    learnt: Known | None = None
    """While a reader process sieves the lines too (`_prefetch`): what was learnt since the
    last batch that it is told. None otherwise."""
    uncounted: int = 0
    """Batches still to read line by line without counting them first: the last batch counted
    had few repeats (a big job's combined log), so counting the next few would not pay."""
    replay_broken: bool = False
    """Set by a reading that overwrote a value a replayed line had set (a communicator's
    topology, a desync's op, a rank entry taken over): replays could then undo it, so the
    remembered replays are dropped and the batch's rest is read line by line."""


def line_prefix(head: str, *, source: bool = False) -> Prefix:
    """The `host:pid:tid [dev]` prefix of a line."""
    if not source:
        return plain_prefix(head)
    match = PREFIX.search(head)
    if match is None:
        return _NO_PREFIX
    where = _WARN_SOURCE.search(head[match.end() - 1:])
    host, pid, _, device = match.groups()
    return Prefix(host, int(pid) if pid else None, int(device),
                  where.group(1) if where else None)


@lru_cache(maxsize=8192)
def plain_prefix(head: str) -> Prefix:
    # One process's threads print the same heads again and again: read each once. (A big
    # job's log has a head per process, thread and GPU, ~750,000 in 1 GB; a process's lines
    # come together, so a few thousand recent ones hit as often, for a fraction of the memory.)
    match = PREFIX.search(head)
    if match is None:
        return _NO_PREFIX
    host, pid, _, device = match.groups()
    # The host interned: a process's threads and GPUs print it under heads of their own, and
    # ranks, communicators and processes keep it (hundreds of thousands in a big job's log).
    return Prefix(sys.intern(host), int(pid) if pid else None, int(device))


def note_host(state: State, line: str, pos: int) -> None:
    host = plain_prefix(line[:pos]).host
    if host:
        state.hosts.setdefault(host, None)


def add_host(state: State, host: str | None) -> None:
    if host:
        state.hosts.setdefault(host, None)


def note_version(state: State, text: str) -> None:
    match = _VERSION.search(text)
    if match:
        state.versions.setdefault(match.group(1), None)


def clean_message(line: str) -> str:
    """A PyTorch line's message: its c10 and `[rankN]:` prefixes cut, `MESSAGE_MAX` long."""
    text = _C10_PREFIX.sub("", line, count=1)
    text = RANK_PREFIX.sub("", text, count=1).strip()
    return text[:MESSAGE_MAX]


def int_group(match: re.Match[str] | None, index: int = 1) -> int | None:
    if match is None or match.group(index) is None:
        return None
    return int(match.group(index))


def event_dropped(state: State) -> bool:
    """True (and counted) when an event would be dropped: the cap is reached, so a caller can
    skip building it. Long logs have tens of thousands past the cap."""
    if len(state.events) < state.max_events:
        return False
    state.evidence = True
    state.dropped += 1
    return True


def add_event(state: State, event: Event) -> bool:
    """Keep `event` (True), or count it as dropped when the cap is reached."""
    state.evidence = True
    if len(state.events) >= state.max_events:
        state.dropped += 1
        return False
    state.events.append(event)
    return True


def pytorch_rank(line: str) -> tuple[int | None, str | None, _RankSource]:
    """Rank and process group from `[PG ... Rank N]` / `[Rank N]`, else the `[rankN]:` prefix."""
    tagged = PG_RANK.search(line) if "Rank " in line else None  # (its literal: cheap)
    if tagged:
        return int(tagged.group(2)), tagged.group(1), "pytorch"
    prefix = RANK_PREFIX.match(line) if "[rank" in line else None
    if prefix:
        return int(prefix.group(1)), None, "pytorch"
    return None, None, None


def add_simple(state: State, number: int, line: str, kind: EventType) -> Event | None:
    """The `kind` event of a PyTorch or torchrun line, from the line alone; None past the cap."""
    if event_dropped(state):
        return None
    rank, pg, source = pytorch_rank(line)
    event = Event(type=kind, rank=rank, rank_source=source, host=None,
                  seq=None, op=None, timeout_ms=None, peer=None, status=None,
                  line=number, message=clean_message(line), pg=pg,
                  exception=exception_name(line))
    return event if add_event(state, event) else None


def exception_name(line: str) -> str | None:
    if "Error" not in line and "Exception" not in line:  # (the search is slow on long lines)
        return None
    found = _EXCEPTION.search(line)
    return found.group(1) if found else None
