"""PyTorch Flight Recorder: analyzer reports, dump contents and per-entry state listings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class FrFrame(BaseModel):
    """One Python stack frame of an entry."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    """Function name, e.g. `all_reduce` or `<module>`."""
    filename: str | None = None
    """Source file as recorded."""
    line: int | None = None
    """Line number in that file."""


class FrEntry(BaseModel):
    """One Flight Recorder ring-buffer entry (a collective or P2P operation on one rank)."""

    model_config = ConfigDict(extra="forbid")

    rank: int | None = None
    """Rank whose buffer holds the entry, when the capture says so."""
    record_id: int | None = None
    """Position in the ring buffer (monotonic per rank)."""
    pg_id: int | None = None
    """Process group id as recorded (`pg_id`)."""
    pg_name: str | None = None
    """Process group name (first element of `process_group`)."""
    pg_desc: str | None = None
    """Process group description, e.g. `default_pg` (second element of `process_group`)."""
    collective_seq_id: int | None = None
    """Collective sequence number within the PG (`seq_id` in version 1 dumps); ranks of one
    PG must agree on it for the same collective."""
    p2p_seq_id: int | None = None
    """Point-to-point sequence number within the PG."""
    op_id: int | None = None
    """Operation id as recorded."""
    profiling_name: str | None = None
    """As recorded: `nccl:all_reduce`, `nccl:send 1->2`, `nccl:recv 3<-0`."""
    op: str | None = None
    """The operation without backend and peers: `all_reduce`, `send`."""
    is_p2p: bool | None = None
    """Whether the entry is a point-to-point operation."""
    state: str | None = None
    """`scheduled`, `started` or `completed`."""
    input_sizes: list[list[int]] | None = None
    """Shapes of the input tensors."""
    output_sizes: list[list[int]] | None = None
    """Shapes of the output tensors."""
    input_dtypes: list[str] | None = None
    """Input tensor dtypes, e.g. `Float`."""
    output_dtypes: list[str] | None = None
    """Output tensor dtypes."""
    timeout_ms: int | None = None
    """The collective's timeout, ms."""
    time_created_ns: int | None = None
    """When the entry was created, ns since the epoch."""
    time_discovered_started_ns: int | None = None
    """When the watchdog saw the operation start, ns (null if never seen)."""
    time_discovered_completed_ns: int | None = None
    """When the watchdog saw the operation complete, ns (null if never seen)."""
    retired: bool | None = None
    """Whether the entry was retired from the watchdog's work list."""
    frames: list[FrFrame] = []
    """Python stack of the call site, innermost first."""


class FrPgConfig(BaseModel):
    """One process group of `pg_config`."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    """Process group name."""
    desc: str | None = None
    """Process group description, e.g. `default_pg`."""
    ranks: list[int] | None = None
    """Global ranks of the group (the dump prints them as a string such as `[0, 1]`)."""


class FrPgStatus(BaseModel):
    """One process group of `pg_status`: how far the rank got (-1: none yet)."""

    model_config = ConfigDict(extra="forbid")

    last_enqueued_collective: int | None = None
    """Sequence id of the last collective enqueued."""
    last_started_collective: int | None = None
    """Sequence id of the last collective seen started (-1: none)."""
    last_completed_collective: int | None = None
    """Sequence id of the last collective seen completed."""
    other: dict[str, int] = {}
    """Any other integer counters of the group's status, by name (e.g. P2P ones)."""


class FrCulprit(BaseModel):
    """One `Culprit rank R; Error type: T, detail` item of an analyzer error message."""

    model_config = ConfigDict(extra="forbid")

    rank: int | None
    """The rank the analyzer blames."""
    error_type: str | None
    """`COLLECTIVE_TYPE_MISMATCH`, `SIZE_OR_SYNTAX_MISMATCH`, `COLLECTIVE_STATE_MISMATCH`,
    `COLLECTIVE_DTYPE_MISMATCH`, ..."""
    detail: str | None = None
    """The rest of the item as printed (e.g. `Expected state: 'completed' does not match found
    state: 'scheduled'`)."""


class FrMismatch(BaseModel):
    """One problem the analyzer (`torchfrtrace` / `fr_trace`) reports."""

    model_config = ConfigDict(extra="forbid")

    error: Literal["not_all_ranks_joining", "size_mismatch", "collective_errors",
                   "cannot_decide", "too_many_mismatches"]
    """Kind of report: missing ranks, alltoall input/output size mismatch, per-rank errors
    (type/size/state/dtype), undecidable (dumps missing), or matching aborted for a PG."""
    message: str
    """The report's first line as printed."""
    collective_seq_id: int | None = None
    """Sequence number of the collective the report is about."""
    record_id: int | None = None
    """Ring-buffer entry (`at entry N` / `internal record id`)."""
    pg: str | None = None
    """`group info` as printed, e.g. `0:default_pg`."""
    pg_name: str | None = None
    """Process group name (before the colon of `group info`)."""
    pg_desc: str | None = None
    """Process group description (after the colon)."""
    profiling_name: str | None = None
    """The collective, e.g. `nccl:all_reduce`."""
    missing_ranks: list[int] = []
    """Ranks that did not join (the suspects); for `cannot_decide`, the ranks whose dumps are
    missing."""
    expected_ranks: list[int] | None = None
    """Member ranks, when printed as a set (newer analyzers)."""
    expected_rank_count: int | None = None
    """Number of member ranks (`expected ranks: N` / `world size: N`)."""
    input_sizes: list[list[int]] | None = None
    """Input shapes of the collective."""
    output_sizes: list[list[int]] | None = None
    """Output shapes of the collective."""
    input_numel: int | None = None
    """Total input elements (alltoall size mismatch)."""
    output_numel: int | None = None
    """Total output elements (alltoall size mismatch)."""
    state: str | None = None
    """`collective state`: `scheduled`, `started` or `completed`."""
    culprits: list[FrCulprit] = []
    """Blamed ranks with their error types (`collective_errors`)."""
    error_message: str | None = None
    """The raw `error msg` / `error message` line."""
    stack: list[str] = []
    """`collective stack trace` lines as printed (`all_reduce at file.py:2696`)."""


class FlightRecorder(ParsedOutput):
    """Entries, process-group state and analyzer findings, whichever the capture holds."""

    kind: Literal["flight-recorder"] = "flight-recorder"
    format: Literal["fr_trace", "dump", "state_listing"]
    """`fr_trace`: the `torchfrtrace` / `tools/flight_recorder/fr_trace.py` analyzer report;
    `dump`: a dump's contents (JSON, or the unpickled dict printed as Python); `state_listing`:
    a per-entry `<state> <profiling_name>` listing with indented frames (third-party
    analyzers)."""
    version: str | None = None
    """Dump format version, e.g. `2.5`."""
    rank: int | None = None
    """The rank of the dump, when recorded."""
    pg_config: dict[str, FrPgConfig] = Field(default_factory=dict)
    """PG id -> name, description and member ranks."""
    pg_status: dict[str, FrPgStatus] = Field(default_factory=dict)
    """PG id -> last enqueued / started / completed collective."""
    entries: list[FrEntry] = Field(default_factory=list)
    """Entries in printed order."""
    mismatches: list[FrMismatch] = Field(default_factory=list)
    """Analyzer findings in printed order."""
    elided: int = 0
    """How many `...` elisions the capture contains (content left out by whoever published
    it)."""
