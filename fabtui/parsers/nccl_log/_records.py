"""Plain records the NCCL log parser builds while reading: its models' fields, without pydantic.

A 100 MB log is read in about a second; importing pydantic and building the `NcclLog` models
costs a seventh of that, and a validated model per event more. So the parser keeps events,
ranks, NET devices and interfaces as these slotted dataclasses (the same field names, order and
defaults as `fabtui.model.parsed.nccl_log`; tests/test_nccl_log_records.py keeps them equal) and
the result as the plain JSON data `model_dump(mode="json")` would give. `fabtui parse` writes
that data as it is; `nccl_log.parse` and `scan` validate it into `NcclLog` (the contract).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabtui.model.parsed.nccl_log import EventType

    RankSource = str | None


@dataclass(slots=True)
class Event:
    """`NcclLogEvent`, plain."""

    type: EventType
    rank: int | None
    host: str | None
    seq: int | None
    op: str | None
    timeout_ms: int | None
    peer: str | None
    status: int | None
    line: int
    message: str
    rank_source: RankSource = None
    pid: int | None = None
    device: int | None = None
    source: str | None = None
    pg: str | None = None
    last_enqueued: int | None = None
    last_completed: int | None = None
    ran_for_ms: int | None = None
    numel_in: int | None = None
    numel_out: int | None = None
    peer_port: int | None = None
    status_name: str | None = None
    status_meaning: str | None = None
    peer_rank: int | None = None
    nccl_result: str | None = None
    exception: str | None = None
    vendor_err: int | None = None
    opcode: int | None = None
    length: int | None = None
    direction: str | None = None
    local_gid: str | None = None
    remote_gid: str | None = None
    hca: str | None = None
    nranks: int | None = None
    local_ranks: int | None = None
    local_rank: int | None = None
    n_nodes: int | None = None
    comm_id: str | None = None
    bus_id: str | None = None


@dataclass(slots=True)
class Rank:
    """`NcclLogRank`, plain."""

    rank: int
    nranks: int
    host: str | None
    pid: int | None
    device: int | None
    bus_id: str | None
    comm_id: str | None


@dataclass(slots=True)
class NetDevice:
    """`NcclNetDevice`, plain."""

    transport: str
    index: int
    device: str
    port: int | None
    link_layer: str | None
    address: str | None = None
    hosts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Interface:
    """`NcclInterface`, plain."""

    interface: str
    address: str
    hosts: list[str] = field(default_factory=list)


Record = Event | Rank | NetDevice | Interface


def _dumper(kind: type[Record]) -> tuple[tuple[str, ...], attrgetter[tuple[object, ...]]]:
    names = tuple(item.name for item in fields(kind))
    return names, attrgetter(*names)


_DUMPERS = {kind: _dumper(kind) for kind in (Event, Rank, NetDevice, Interface)}


_EVENT_VALUES = _DUMPERS[Event][1]
RANK_FIELDS, rank_values = _DUMPERS[Rank]
"""A rank entry's field names, and its values in their order (written without a dict each)."""


def moved(event: Event, line: int) -> Event:
    """A copy of `event` at `line` (`dataclasses.replace` costs ten times more; thousands of
    repeated lines each add a copy)."""
    copy = Event(*_EVENT_VALUES(event))  # type: ignore[arg-type]  # its own fields, in order
    copy.line = line
    return copy


def dump(record: Record) -> dict[str, object]:
    """The record as its model's `model_dump(mode="json")` gives it (lists are shared, not
    copied: the caller writes them and drops the dict)."""
    names, values = _DUMPERS[type(record)]
    return dict(zip(names, values(record), strict=True))
