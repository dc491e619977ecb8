"""nccl-tests `*_perf` output (all_reduce_perf, all_gather_perf, ...): one benchmark run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput
from fabtui.model.parsed.nccl_log import NcclLogEvent


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NcclTestsMeasurement(_Strict):
    """One half of a result row (out-of-place or in-place), numbers as printed."""

    time_us: float | None
    """Average time of one operation in microseconds (CPU time when `cputime` is true)."""
    algbw: float | None
    """Algorithm bandwidth in GB/s (10^9 bytes/s): bytes moved / time."""
    busbw: float | None
    """Bus bandwidth in GB/s: algbw times the collective's factor (comparable to link speed)."""
    wrong: int | None
    """`#wrong` column: elements outside tolerance (any non-zero value is data corruption);
    null for `N/A` (validation off, `-c 0`) and for old outputs that print `error` instead."""
    error: float | None = None
    """Old nccl-tests `error` column: the maximum deviation (a float such as 2e-07, not a count);
    null for `N/A` and for outputs with `#wrong`. Never converted into `wrong`."""
    i_min_us: float | None = None
    """`-I 1` per-iteration minimum time in microseconds; null when the column is absent."""
    i_max_us: float | None = None
    """`-I 1` per-iteration maximum time in microseconds; null when the column is absent."""
    i_p99_us: float | None = None
    """`-I 1` per-iteration 99th percentile time in microseconds; null when absent."""
    i_cv_pct: float | None = None
    """`-I 1` coefficient of variation of iteration times in percent; null when absent."""


class NcclTestsRow(_Strict):
    """One message size of the result table."""

    size_bytes: int
    """`size` column: bytes per rank as nccl-tests prints it."""
    count: int
    """`count` column: elements."""
    dtype: str
    """`type` column, as printed (float, half, bfloat16, int8, ...)."""
    redop: str | None
    """`redop` column (sum, prod, max, min, avg, mulsum); null when blank, absent or `none`
    (collectives without a reduction: all_gather, alltoall, broadcast, sendrecv)."""
    root: int | None
    """`root` column (-1 when the collective has no root); null when the column is absent."""
    out_of_place: NcclTestsMeasurement
    """Out-of-place measurement."""
    in_place: NcclTestsMeasurement
    """In-place measurement."""
    timestamp: str | None = None
    """Per-row timestamp (nccl-tests timestamp option), as printed; null when absent."""


class NcclTestsRank(_Strict):
    """One `#  Rank N Group G Pid P on HOST device D [BUS] NAME` line."""

    rank: int
    """Global rank."""
    host: str
    """Host name as printed."""
    device: int
    """CUDA device index on that host."""
    bus_id: str
    """PCI id in the brackets, as printed (`0009:01:00` in new outputs, `0x18` in old ones)."""
    name: str | None
    """GPU name (e.g. `NVIDIA H100 80GB HBM3`); null when not printed."""
    group: int | None = None
    """Group (NCCL_TESTS_SPLIT colour); null in outputs that predate it."""
    pid: int | None = None
    """Process id; null when not printed."""


class NcclTestsFailure(_Strict):
    """A failure message, with where it came from."""

    line: int
    """1-based line of the message in the input."""
    host: str | None
    """Host that printed it, when the message names one."""
    category: Literal["nccl", "cuda", "test", "timeout", "wrong", "error", "launcher"]
    """`nccl`: Test NCCL failure; `cuda`: CUDA failure; `test`: Test failure trace; `timeout`:
    Test timeout; `wrong`: per-rank `#wrong` line; `error`: `# error:` line; `launcher`:
    srun/mpirun reporting a failed task."""
    message: str
    """The message without launcher prefix and host name."""
    source: str | None = None
    """Where nccl-tests raised it, as printed: `common.cu:958`."""
    reason: str | None = None
    """The quoted reason of a Test NCCL/CUDA failure (`internal error - please report this issue
    to the NCCL developers`, `out of memory`), without the quotes."""
    nccl_result: str | None = None
    """NCCL result code the reason stands for (ncclInternalError, ncclSystemError,
    ncclRemoteError, ncclInvalidUsage, ...); null for CUDA and other failures."""
    pid: int | None = None
    """Process id of ` .. host pid N: Test failure ...` lines."""


class NcclTestsOutput(ParsedOutput):
    """Output of one nccl-tests benchmark binary, run directly or via mpirun/srun."""

    kind: Literal["nccl-tests"] = "nccl-tests"
    collective: str | None
    """all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv, gather,
    scatter, hypercube, ...: from the binary name, else inferred from the table (see
    `collective_source`); null when it cannot be told."""
    collective_source: Literal["marker", "command", "inferred"] | None = None
    """Where `collective` came from: the `# Collective test starting:` marker, the command line,
    or inferred from the table layout and the size/count ratio."""
    command: str | None = None
    """The command line that ran the binary, when the capture shows it."""
    nccl_tests_version: str | None = None
    """From `# nccl-tests version X ...`; null when not printed."""
    nccl_version: str | None = None
    """NCCL version: from an `NCCL version 2.x.y+cudaZ` line, else decoded from
    `nccl-library=CODE` (e.g. 22703 -> 2.27.3); null when neither is printed."""
    nccl_library_code: int | None = None
    """`nccl-library=` version code as printed (NCCL_VERSION_CODE of the loaded library)."""
    nccl_headers_code: int | None = None
    """`nccl-headers=` version code as printed (the NCCL the test was compiled against)."""
    n_threads: int | None = None
    """`nThread` header parameter."""
    n_gpus: int | None = None
    """`nGpus` header parameter (GPUs per thread)."""
    min_bytes: int | None = None
    """`minBytes` header parameter."""
    max_bytes: int | None = None
    """`maxBytes` header parameter."""
    step: str | None = None
    """`step:` header parameter as printed, e.g. `2(factor)` or `1048576(bytes)`."""
    step_factor: int | None = None
    """Step factor when `step:` is `N(factor)`."""
    step_bytes: int | None = None
    """Step in bytes when `step:` is `N(bytes)`."""
    warmup_iters: int | None = None
    """`warmup iters:` header parameter."""
    iters: int | None = None
    """`iters:` header parameter."""
    agg_iters: int | None = None
    """`agg iters:` header parameter."""
    validation: int | None = None
    """`validation:` header parameter (0 = `-c 0`, results not checked)."""
    graph: int | None = None
    """`graph:` header parameter (CUDA graph launches)."""
    unalign: int | None = None
    """`unalign:` header parameter (newer outputs)."""
    blocking: bool | None = None
    """True when the output says `# Blocking Enabled`; null when not said."""
    cputime: bool = False
    """True when the time columns are `cputime` (`-C 1`) instead of GPU time."""
    per_iteration_columns: bool = False
    """True when the table has the `-I 1` columns (i_min, i_max, i_p99, i_cv%)."""
    columns: list[str] = Field(default_factory=list)
    """Column names of the table header as printed (empty when the header is missing)."""
    ranks: list[NcclTestsRank] = Field(default_factory=list)
    """The `# Using devices` list."""
    rows: list[NcclTestsRow] = Field(default_factory=list)
    """Result rows in input order; empty when the run failed before measuring."""
    rows_elided: bool = False
    """True when the capture elides rows (`...`), so `rows` is not the full sweep."""
    out_of_bounds: int | None = None
    """`# Out of bounds values : N`: wrong elements summed over ranks and sizes; null if absent."""
    out_of_bounds_ok: bool | None = None
    """OK/FAILED of the out-of-bounds footer (the authoritative correctness verdict)."""
    avg_busbw: float | None = None
    """`# Avg bus bandwidth` in GB/s; null if absent. 0 after an initialisation failure means
    "did not run", not "slow"."""
    avg_busbw_ok: bool | None = None
    """OK/FAILED after the average (printed only with NCCL_TESTS_MIN_BW); null when unmarked."""
    peak_busbw: float | None = None
    """Largest busbw of any row, out-of-place or in-place, in GB/s; null without rows."""
    errors: list[str] = Field(default_factory=list)
    """Failure messages: Test NCCL/CUDA failure, Test failure, Test timeout, per-rank `#wrong`
    lines, `# error:` lines, failed tasks reported by srun/mpirun."""
    failures: list[NcclTestsFailure] = Field(default_factory=list)
    """The same messages as `errors`, with line, host and category."""
    nccl_warnings: list[str] = Field(default_factory=list)
    """Messages of `NCCL WARN` lines interleaved in the output (often the cause of a failure)."""
    events: list[NcclLogEvent] = Field(default_factory=list)
    """The NCCL lines of the output read as the nccl-log parser reads them (same event model):
    every NCCL WARN (IB completion errors with `status`, `status_name` and `status_meaning`,
    socket failures with `peer` and `peer_port`, CUDA failures, ...) with host, pid and CUDA
    device, and the rank only where an init line of the same process states it. Init COMPLETE
    lines are left out. Present even when the run failed before its table."""
    status: Literal["ok", "wrong_data", "below_min_bw", "failed", "did_not_run", "incomplete"]
    """Summary: `wrong_data` (out-of-bounds or #wrong > 0), `below_min_bw` (average FAILED),
    `failed` (failure messages after some rows), `did_not_run` (no rows: init failure, a failure
    event such as an IB completion error, or average 0), `incomplete` (rows but no footer:
    truncated or still running), else `ok`."""
