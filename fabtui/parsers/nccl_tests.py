"""nccl-tests `*_perf` output (all_reduce_perf, all_gather_perf, alltoall_perf, ...).

    # nccl-tests version 2.18.2 nccl-headers=23007 nccl-library=23007
    # Collective test starting: all_reduce_perf
    # nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 1 ...
    #  Rank  0 Group  0 Pid 204199 on  nid005471 device  0 [0009:01:00] NVIDIA GH200 120GB
    #       size         count      type   redop    root     time   algbw   busbw #wrong ...
               8             2     float     sum      -1    17.93    0.00    0.00      0 ...
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 19.7866

Columns are read by the names of the header line, so old layouts (no `root`, a float `error`
column instead of `#wrong`, no `redop` for all_gather), blank cells (alltoall's empty redop),
the `-I 1` per-iteration columns and the timestamp option all map to the same fields. Launcher
prefixes (`0: `, `[1,0]<stdout>:`), interleaved NCCL INFO lines and `...` elisions are skipped.
A run that failed before its table still parses (rows empty, `errors` filled). Pages and pastes
that stripped the `#` of the comment lines (parameters, ranks, footer) read the same, and the
collective is taken from the command line (`./build/alltoall_perf ...`, `mpirun ... -x ...
all_gather_perf`, a root prompt `# ./build/...`) when no `Collective test starting` marker says
it. Output that an author reformatted (columns removed) is refused: its numbers cannot be
trusted to be nccl-tests'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from fabtui.model.parsed.nccl_log import NcclLogEvent
from fabtui.model.parsed.nccl_tests import (
    NcclTestsFailure,
    NcclTestsMeasurement,
    NcclTestsOutput,
    NcclTestsRank,
    NcclTestsRow,
)
from fabtui.model.table import Table, right
from fabtui.parsers import nccl_log
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed
from fabtui.parsers.text import is_missing, split_lines, strip_launcher_prefix, to_float

KIND = "nccl-tests"
MODEL = NcclTestsOutput
DESCRIPTION = "nccl-tests *_perf output (all_reduce_perf, all_gather_perf, alltoall_perf, ...)"

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "alltoallv",
               "broadcast", "reduce", "sendrecv", "gather", "scatter", "hypercube")

_Category = Literal["nccl", "cuda", "test", "timeout", "wrong", "error", "launcher"]

_QUOTE = re.compile(r"^(?:>\s?)+")
_PDSH = re.compile(r"^[A-Za-z][\w.-]*: (?=\s*(?:#|\d))")
_PARAMS = re.compile(r"#\s*nThread\s+\d+")
_BARE_PARAMS = re.compile(r"^\s*nThread\s+\d+\s+nGpus\s+\d+\s+minBytes\s+\d+", re.MULTILINE)
_RANK = re.compile(r"^#\s*Rank\s+(\d+)(?:\s+Group\s+(\d+))?(?:\s+Pid\s+(\d+))?\s+on\s+(\S+)"
                   r"\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$")
_VERSION = re.compile(r"#\s*nccl-tests version\s+(\S+)(?:.*?nccl-headers=(\d+))?"
                      r"(?:.*?nccl-library=(\d+))?")
_MARKER = re.compile(r"#\s*Collective test starting:\s*(\S+)")
_BINARY = re.compile(r"(?:^|[/\s'\"=])([a-z][a-z0-9_]*?)_perf(?:_mpi)?(?=$|[\s'\";|&])")
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+[\w.+\-]*)")
# NCCL_DEBUG=VERSION/WARN prints the version bare; under pdsh it carries the `host: ` prefix.
_BARE_VERSION = re.compile(r"^(?:[A-Za-z][\w.-]*:\s+)?NCCL version \d")
_OOB = re.compile(r"#\s*Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?", re.IGNORECASE)
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?", re.IGNORECASE)
_FAILURE = re.compile(
    r"^\s*(?:\.\.\s+)?(?:(?P<host>[\w.\-]+)(?: pid (?P<pid>\d+))?:\s+)?"
    r"(?P<msg>Test (?:(?P<cat>NCCL|CUDA) failure|failure|timeout)\b.*?)\s*$")
_FAILURE_SOURCE = re.compile(r"\b([\w./\-]+\.(?:cu|cc|c|h|cpp):\d+)")
_FAILURE_REASON = re.compile(r"'(.*?)'?\s*$")
# Event types that mean the run broke (not a benign plugin or tuning warning).
_FAILURE_EVENTS = frozenset({
    "ib_completion_error", "ib_async_event", "connect_failed", "socket_connect_refused",
    "connect_timeout", "connection_closed", "bootstrap_error", "unhandled_system_error",
    "nccl_error", "cuda_error", "plugin_not_found"})
_WRONG_LINE = re.compile(r"\brank=(\d+)\s+#wrong=(\d+)")
_ERROR_LINE = re.compile(r"^#\s*error:\s*(.+?)\s*$")
_LAUNCHER = re.compile(r"(?:srun: error: .*(?:exit code|Exited|Terminated|Killed).*"
                       r"|MPI_ABORT was invoked.*|mpirun noticed that process rank.*"
                       r"|mpirun has exited due to process rank.*"
                       r"|mpirun detected that one or more processes exited with non-zero.*)$")
_NCCL_WARN = re.compile(r"NCCL WARN\s+(.*?)\s*$")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_INT = re.compile(r"^[-+]?\d[\d,_]*$")
_HASHLESS = re.compile(r"^(?:nThread\s+\d+\s+nGpus|Out of bounds values\s*:|Avg bus bandwidth\s*:|"
                       r"Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s|"
                       r"nccl-tests version\s|Collective test starting:|Using devices\s*$)")
"""nccl-tests comment lines as they read with their `#` stripped."""
_ELISION = re.compile(r"^\s*(?:\.\.\.+|\[\.\.\.\]|…)\s*$")

_NAME_ALIASES = {"#wrong": "wrong", "wrong": "wrong", "error": "error", "res": "error",
                 "bytes": "size", "n": "count", "op": "redop", "cputime": "time",
                 "i_min": "i_min_us", "i_max": "i_max_us", "i_p99": "i_p99_us",
                 "i_cv%": "i_cv_pct"}
_TYPE_SIZES = {"int8": 1, "uint8": 1, "char": 1, "half": 2, "float16": 2, "fp16": 2,
               "bfloat16": 2, "bf16": 2, "int32": 4, "uint32": 4, "int": 4, "float": 4,
               "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8,
               "f8e4m3": 1, "f8e5m2": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}
_HEADER_PARAMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("n_threads", re.compile(r"\bnThreads?\s+(\d+)")),
    ("n_gpus", re.compile(r"\bnGpus\s+(\d+)")),
    ("min_bytes", re.compile(r"\bminBytes\s+(\d+)")),
    ("max_bytes", re.compile(r"\bmaxBytes\s+(\d+)")),
    ("warmup_iters", re.compile(r"\bwarmup iters:\s*(\d+)")),
    ("iters", re.compile(r"(?<!warmup )(?<!agg )\biters:\s*(\d+)")),
    ("agg_iters", re.compile(r"\bagg iters:\s*(\d+)")),
    ("validation", re.compile(r"\bvalidation:\s*(\d+)")),
    ("graph", re.compile(r"\bgraph:\s*(\d+)")),
    ("unalign", re.compile(r"\bunalign:\s*(\d+)")),
)
_STEP = re.compile(r"\bstep:\s*(\d+)\s*\((factor|bytes)\)")


@dataclass
class _Layout:
    """Column names of the result table, split into row parameters and the two halves."""

    params: list[str]
    halves: tuple[list[str], list[str]]
    timestamp: bool
    printed: list[str]

    @property
    def measured(self) -> int:
        return len(self.halves[0]) + len(self.halves[1])


# A result row as plain values: size, count, type, redop, root, out-of-place and in-place
# measurement fields, timestamp. Models are built only when a row is handed out.
_RowValues = tuple[int, int, str, str | None, int | None, dict[str, float | int | None],
                   dict[str, float | int | None], str | None]


@dataclass
class _Rows:
    """What the result needs of every row, kept as they are read instead of the rows."""

    count: int = 0
    peak_busbw: float | None = None
    reduction: bool = False
    rooted: bool = False
    ratio: int | None = None
    wrong: bool = False
    # The row lines by table layout: re-read into models one at a time when handed out, so a
    # sweep of a million rows costs its text, not a million models.
    segments: list[tuple[_Layout, list[str]]] = field(default_factory=list)

    def add(self, layout: _Layout, line: str, values: _RowValues) -> None:
        size_bytes, count, dtype, redop, root, out_of_place, in_place, _ = values
        self.count += 1
        for half in (out_of_place, in_place):
            busbw = half["busbw"]
            if busbw is not None and (self.peak_busbw is None or busbw > self.peak_busbw):
                self.peak_busbw = busbw
            self.wrong = self.wrong or (half["wrong"] or 0) > 0
        self.reduction = self.reduction or bool(redop)
        self.rooted = self.rooted or (root is not None and root >= 0)
        if self.ratio is None:
            self.ratio = _size_ratio(dtype, count, size_bytes)
        if not self.segments or self.segments[-1][0] is not layout:
            self.segments.append((layout, []))
        self.segments[-1][1].append(line)

    def models(self) -> Iterator[NcclTestsRow]:
        for layout, lines in self.segments:
            for line in lines:
                values = _row(layout, line.split())
                assert values is not None  # it was read once already
                yield _row_model(values)

    def dumped(self) -> Iterator[dict[str, object]]:
        """`model_dump(mode="json")` of each row model, built directly (big sweeps)."""
        for layout, lines in self.segments:
            for line in lines:
                values = _row(layout, line.split())
                assert values is not None
                size_bytes, count, dtype, redop, root, out_of_place, in_place, stamp = values
                yield {"size_bytes": size_bytes, "count": count, "dtype": dtype,
                       "redop": redop, "root": root, "out_of_place": out_of_place,
                       "in_place": in_place, "timestamp": stamp}


@dataclass
class _State:
    """Everything collected while reading the lines."""

    fields: dict[str, object] = field(default_factory=dict)
    ranks: list[NcclTestsRank] = field(default_factory=list)
    rows: _Rows = field(default_factory=_Rows)
    failures: list[NcclTestsFailure] = field(default_factory=list)
    nccl_warnings: list[str] = field(default_factory=list)
    nccl_lines: set[int] = field(default_factory=set)
    nccl_text: dict[int, str] = field(default_factory=dict)
    total_lines: int = 0
    last_line: int | None = None
    warnings: list[str] = field(default_factory=list)
    layout: _Layout | None = None
    elided: bool = False
    marker: str | None = None
    command: str | None = None
    binary: str | None = None
    prompt_binary: tuple[str, str] | None = None
    footer: bool = False
    evidence: bool = False
    header_row_unknown: int = 0


def detect(text: str) -> float:
    """How sure we are that `text` is nccl-tests output (0..1)."""
    sample = text[:50000] + ("\n" + text[-20000:] if len(text) > 50000 else "")
    if "# nccl-tests version" in sample or "# Collective test starting" in sample:
        return 0.97
    if _PARAMS.search(sample) and "nGpus" in sample:
        return 0.97
    if _BARE_PARAMS.search(sample):
        # A page or paste that dropped the `#` of the comment lines (` nThread 1 nGpus 1 ...`).
        return 0.9
    if re.search(r"#\s+size\s+count\s+type\b", sample) and "busbw" in sample:
        return 0.96
    if "Out of bounds values" in sample or "Avg bus bandwidth" in sample:
        return 0.93
    if re.search(r"Test (?:NCCL |CUDA )?failure \S+\.cu:\d+", sample):
        return 0.92
    if "algbw" in sample and "busbw" in sample and "_perf" in sample:
        return 0.8
    return 0.0


def parse(text: str) -> NcclTestsOutput:
    """Parse nccl-tests output; raises `ParseError` when it is not (or no longer) that."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[NcclTestsOutput]:
    """Parse nccl-tests output line by line; the result rows are produced on demand.

    Memory grows with the row lines' text only (not with a model per row), so `fabtui parse`
    can stream a sweep of any length. Raises `ParseError` like `parse`.
    """
    state = _State()
    number = 0
    for number, raw in enumerate(lines, start=1):
        _read_line(state, number, raw)
        if number in state.nccl_lines:
            state.nccl_text[number] = raw
        if raw.strip():
            state.last_line = number
    state.total_lines = number
    events = _nccl_events(state)
    events += _quoted_causes(state, events)
    if not state.evidence and not events:
        raise ParseError(KIND, None, "not nccl-tests output: no table header, parameter line, "
                                     "result footer, test failure or NCCL WARN line")
    if not state.rows.count and not state.failures and not state.footer and not events:
        raise ParseError(KIND, state.last_line, "no result rows, footer, failure message or "
                                                "NCCL warning: the capture is truncated (or the "
                                                "run hung before its first result)")
    return Streamed(_result(state, events), {"rows": state.rows.models},
                    {"rows": state.rows.dumped})


def _nccl_events(state: _State) -> list[NcclLogEvent]:
    """The run's NCCL lines as nccl-log events (the rest blanked so line numbers hold)."""
    if not any(state.nccl_warnings) and not state.nccl_lines:
        return []
    kept = [""] * state.total_lines
    for number, line in state.nccl_text.items():
        kept[number - 1] = line
    found = nccl_log.scan(kept)
    events = [] if found is None else [e for e in found.events if e.type != "init_complete"]
    return events


def _quoted_causes(state: _State, events: list[NcclLogEvent]) -> list[NcclLogEvent]:
    """NCCL >= 2.19 quotes its last error in the failure reason (`'remote process exited ... /
    NET/IB : Got completion from peer ...'`): an event even when NCCL_DEBUG printed nothing."""
    added: list[NcclLogEvent] = []
    for failure in state.failures:
        reason = failure.reason or ""
        if failure.category != "nccl" or " / " not in reason:
            continue
        cause = reason.split(" / ", 1)[1].strip()
        event = nccl_log.failure_event(cause, failure.line, failure.host) if cause else None
        if event is not None and not any(e.type == event.type and e.peer == event.peer
                                         for e in [*events, *added]):
            added.append(event)
    return added


def _read_line(state: _State, number: int, raw: str) -> None:
    line = _clean(raw)
    stripped = line.strip()
    if not stripped:
        return
    if "NCCL" in stripped and _nccl_line(state, stripped):
        if "NCCL WARN" in stripped:
            state.nccl_lines.add(number)
            if "Got completion from peer" in stripped and "vendor" not in stripped:
                state.nccl_lines.add(number + 1)  # wrapped: the nccl-log reader joins it
        elif "NCCL INFO" in stripped and " rank " in stripped and "nranks" in stripped.lower():
            state.nccl_lines.add(number)  # init lines map (host, pid) to the rank
        return
    if stripped.startswith("#"):
        _comment_line(state, number, stripped)
        return
    if _HASHLESS.match(stripped):
        # A page or paste that dropped the `#` of nccl-tests' comment lines (markdown turns
        # them into headings): read them as the comments they were.
        _comment_line(state, number, "# " + stripped)
        return
    if "busbw" in stripped and "algbw" in stripped and _header_line(state, number, stripped):
        return
    if _ELISION.match(stripped):
        state.elided = True
        return
    first = stripped.split(None, 1)[0]
    if _INT.match(first) and not first.startswith(("+", "-")):
        _row_line(state, number, stripped)
        return
    if _failure_line(state, number, stripped):
        return
    _other_line(state, number, stripped)


def _clean(raw: str) -> str:
    """The line without launcher prefix, pdsh host prefix or markdown quoting."""
    _, line = strip_launcher_prefix(raw)
    line = _QUOTE.sub("", line)
    match = _PDSH.match(line)
    return line[match.end():] if match else line


def _nccl_line(state: _State, line: str) -> bool:
    """NCCL's own lines (INFO/WARN/version) interleaved with the output; True if consumed."""
    if "NCCL INFO" in line or "NCCL WARN" in line or _BARE_VERSION.match(line):
        version = _NCCL_VERSION.search(line)
        if version and "nccl_version" not in state.fields:
            state.fields["nccl_version"] = version.group(1)
        warn = _NCCL_WARN.search(line)
        if warn and warn.group(1) and len(state.nccl_warnings) < 200:
            state.nccl_warnings.append(warn.group(1))
        return True
    return False


def _comment_line(state: _State, number: int, line: str) -> None:
    if _header_line(state, number, line):
        return
    match = _RANK.match(line)
    if match:
        rank, group, pid, host, device, bus_id, name = match.groups()
        state.ranks.append(NcclTestsRank(
            rank=int(rank), host=host, device=int(device), bus_id=bus_id, name=name or None,
            group=int(group) if group else None, pid=int(pid) if pid else None))
        state.evidence = True
        return
    if _PARAMS.match(line):
        _read_params(state, line)
        return
    if _footer_line(state, line):
        return
    version = _VERSION.match(line)
    if version:
        state.evidence = True
        state.fields["nccl_tests_version"] = version.group(1)
        if version.group(2):
            state.fields["nccl_headers_code"] = int(version.group(2))
        if version.group(3):
            state.fields["nccl_library_code"] = int(version.group(3))
        return
    marker = _MARKER.match(line)
    if marker:
        state.evidence = True
        name = _collective_name(marker.group(1))
        if state.marker is None:
            state.marker = name
        elif name != state.marker:
            state.warnings.append(f"line {number}: a second collective ({name}) in the same "
                                  f"capture; `collective` names the first ({state.marker})")
        return
    if line.startswith("# Blocking Enabled"):
        state.fields["blocking"] = True
        return
    error = _ERROR_LINE.match(line)
    if error:
        _add_failure(state, number, None, "error", error.group(1))
        return
    if "_perf" in line and state.prompt_binary is None:
        # A root shell's `# ./build/all_reduce_perf ...` prompt, or a commented-out command
        # of a pasted script: used only when no plain command line names the binary.
        match = _BINARY.search(line.lstrip("#"))
        if match:
            state.prompt_binary = (_collective_name(match.group(1)),
                                   line.lstrip("#").strip()[:500])


def _header_line(state: _State, number: int, line: str) -> bool:
    """The `# size count type ...` header (its units line is ignored); True if consumed."""
    tokens = line.lstrip("#").split()
    lowered = [t.lower() for t in tokens]
    if "algbw" not in lowered or "busbw" not in lowered:
        return lowered[:2] == ["(b)", "(elements)"]
    layout = _layout(tokens)
    if layout is None:
        raise ParseError(KIND, number, f"table header {' '.join(tokens)!r} is not the raw "
                                       "nccl-tests layout (size, count, type, then time/algbw/"
                                       "busbw for out-of-place and in-place): reformatted output")
    if state.layout is not None and state.layout.printed != layout.printed:
        state.warnings.append(f"line {number}: a second table with other columns")
    state.layout = layout
    state.evidence = True
    return True


def _layout(tokens: list[str]) -> _Layout | None:
    names = [_NAME_ALIASES.get(t.lower(), t.lower()) for t in tokens]
    timestamp = bool(names) and names[-1] == "timestamp"
    if timestamp:
        names = names[:-1]
    starts = [i for i, name in enumerate(names) if name == "time"]
    if len(starts) != 2 or names[:3] != ["size", "count", "type"]:
        return None
    first, second = names[starts[0]:starts[1]], names[starts[1]:]
    if first != second or not {"algbw", "busbw"} <= set(first):
        return None
    params = names[:starts[0]]
    if not set(params) <= {"size", "count", "type", "redop", "root"}:
        return None
    printed = tokens[:-1] if timestamp else tokens
    return _Layout(params, (first, second), timestamp, list(printed))


def _guess_layout(tokens: list[str]) -> _Layout | None:
    """Columns of a headerless table, from the number of cells of its first row."""
    numbers = len(tokens)
    if numbers == 13:
        params, half = ["size", "count", "type", "redop", "root"], ["time", "algbw", "busbw"]
        return _Layout(params, ([*half, "wrong"], [*half, "wrong"]), False, [])
    if numbers in (11, 12):
        params = ["size", "count", "type", "redop"][: numbers - 8]
        check = tokens[-1]
        last = "error" if ("e-" in check or "." in check) else "wrong"
        half = ["time", "algbw", "busbw", last]
        return _Layout(params, (half, list(half)), False, [])
    if numbers == 21:
        params = ["size", "count", "type", "redop", "root"]
        half = ["time", "algbw", "busbw", "wrong", "i_min_us", "i_max_us", "i_p99_us",
                "i_cv_pct"]
        return _Layout(params, (half, list(half)), False, [])
    return None


def _read_params(state: _State, line: str) -> None:
    state.evidence = True
    for name, pattern in _HEADER_PARAMS:
        match = pattern.search(line)
        if match:
            state.fields[name] = int(match.group(1))
    step = _STEP.search(line)
    if step:
        state.fields["step"] = f"{step.group(1)}({step.group(2)})"
        state.fields["step_factor" if step.group(2) == "factor" else "step_bytes"] = \
            int(step.group(1))


def _footer_line(state: _State, line: str) -> bool:
    match = _OOB.match(line)
    if match:
        state.evidence = state.footer = True
        state.fields["out_of_bounds"] = int(match.group(1))
        if match.group(2):
            state.fields["out_of_bounds_ok"] = match.group(2).upper() == "OK"
        return True
    match = _AVG.match(line)
    if match:
        state.evidence = state.footer = True
        try:
            state.fields["avg_busbw"] = to_float(match.group(1))
        except ValueError:
            state.warnings.append(f"average bus bandwidth {match.group(1)!r} is not a number")
        if match.group(2):
            state.fields["avg_busbw_ok"] = match.group(2).upper() == "OK"
        return True
    return False


def _row_line(state: _State, number: int, line: str) -> None:
    tokens = line.split()
    layout = state.layout
    if layout is None:
        layout = _guess_layout(tokens)
        if layout is None:
            state.header_row_unknown += 1
            return
        state.layout = layout
        state.warnings.append(f"line {number}: no table header; columns assumed from the row "
                              "layout")
    row = _row(layout, tokens)
    if row is None:
        state.warnings.append(f"line {number}: unrecognised result row skipped: {line[:80]}")
        return
    state.rows.add(layout, line, row)
    state.evidence = True


def _row(layout: _Layout, tokens: list[str]) -> _RowValues | None:
    stamp = None
    if layout.timestamp and len(tokens) >= 2 and _TIMESTAMP.match(tokens[-2]):
        stamp = f"{tokens[-2]} {tokens[-1]}"
        tokens = tokens[:-2]
    split = len(tokens) - layout.measured
    if split < 3:
        return None
    params = _params(layout.params, tokens[:split])
    if params is None:
        return None
    measured = tokens[split:]
    size = len(layout.halves[0])
    try:
        out_of_place = _measurement(layout.halves[0], measured[:size])
        in_place = _measurement(layout.halves[1], measured[size:])
        size_bytes, count = _int(tokens[0]), _int(tokens[1])
        root_cell = params.get("root")
        root = _int(root_cell) if root_cell else None
    except ValueError:
        return None
    if size_bytes is None or count is None:
        return None
    redop = params.get("redop")
    return (size_bytes, count, tokens[2],
            None if redop is None or redop.lower() == "none" else redop,
            root, out_of_place, in_place, stamp)


def _row_model(values: _RowValues) -> NcclTestsRow:
    size_bytes, count, dtype, redop, root, out_of_place, in_place, stamp = values
    return NcclTestsRow(size_bytes=size_bytes, count=count, dtype=dtype, redop=redop, root=root,
                        out_of_place=_measurement_model(out_of_place),
                        in_place=_measurement_model(in_place), timestamp=stamp)


def _params(names: list[str], cells: list[str]) -> dict[str, str | None] | None:
    """Row parameters by column name; a blank cell (alltoall's redop) leaves its name unset."""
    if len(cells) > len(names) or not re.fullmatch(r"[A-Za-z]\w*", cells[2]):
        return None
    found: dict[str, str | None] = dict(zip(names[:3], cells[:3], strict=True))
    rest_names, rest = names[3:], cells[3:]
    if len(rest) == len(rest_names):
        found.update(zip(rest_names, rest, strict=True))
        return found
    for cell in rest:
        name = "root" if _INT.match(cell) and "root" in rest_names else "redop"
        if name not in rest_names or name in found:
            return None
        found[name] = cell
    return found


def _measurement(names: list[str], cells: list[str]) -> dict[str, float | int | None]:
    values: dict[str, float | int | None] = dict.fromkeys(_MEASURED)
    for name, cell in zip(names, cells, strict=True):
        if name == "wrong":
            number = to_float(cell)
            values["wrong"] = None if number is None else round(number)
        elif name == "time":
            values["time_us"] = to_float(cell)
        elif name in ("algbw", "busbw", "error", "i_min_us", "i_max_us", "i_p99_us",
                      "i_cv_pct"):
            values[name] = to_float(cell)
    return values


_MEASURED = ("time_us", "algbw", "busbw", "wrong", "error", "i_min_us", "i_max_us", "i_p99_us",
             "i_cv_pct")


def _measurement_model(values: dict[str, float | int | None]) -> NcclTestsMeasurement:
    return NcclTestsMeasurement(time_us=values["time_us"], algbw=values["algbw"],
                                busbw=values["busbw"], wrong=values["wrong"],
                                error=values["error"], i_min_us=values["i_min_us"],
                                i_max_us=values["i_max_us"], i_p99_us=values["i_p99_us"],
                                i_cv_pct=values["i_cv_pct"])


def _int(cell: str) -> int | None:
    if cell.isascii() and (cell.isdigit() or (cell[:1] == "-" and cell[1:].isdigit())):
        return int(cell)
    text = cell.replace(",", "").replace("_", "")
    if is_missing(text):
        return None
    if not re.fullmatch(r"[-+]?\d+", text):
        raise ValueError(cell)
    return int(text)


def _failure_line(state: _State, number: int, line: str) -> bool:
    match = _FAILURE.match(line)
    if match:
        cat = match.group("cat")
        msg = match.group("msg")
        category: _Category = ("nccl" if cat == "NCCL" else "cuda" if cat == "CUDA"
                               else "timeout" if msg.startswith("Test timeout") else "test")
        failure = _add_failure(state, number, match.group("host"), category, msg)
        where = _FAILURE_SOURCE.search(msg)
        failure.source = where.group(1) if where else None
        reason = _FAILURE_REASON.search(msg) if cat else None
        failure.reason = reason.group(1).strip(" /") or None if reason else None
        failure.nccl_result = nccl_log.nccl_result_of(failure.reason or "") \
            if category == "nccl" else None
        failure.pid = int(match.group("pid")) if match.group("pid") else None
        return True
    wrong = _WRONG_LINE.search(line)
    if wrong:
        _add_failure(state, number, None, "wrong", line)
        return True
    launcher = _LAUNCHER.search(line)
    if launcher:
        _add_failure(state, number, None, "launcher", launcher.group(0))
        return True
    return False


def _add_failure(state: _State, number: int, host: str | None, category: _Category,
                 message: str) -> NcclTestsFailure:
    state.evidence = True
    failure = NcclTestsFailure(line=number, host=host, category=category, message=message)
    state.failures.append(failure)
    return failure


def _other_line(state: _State, number: int, line: str) -> None:
    """Command lines (binary name) and anything else; unknown lines are tolerated."""
    if state.binary is None and "_perf" in line:
        match = _BINARY.search(line)
        if match:
            state.binary = _collective_name(match.group(1))
            state.command = re.sub(r"^\s*(?:\$|#|\+)\s+", "", line)[:500]


def _collective_name(binary: str) -> str:
    name = binary.rsplit("/", 1)[-1]
    name = re.sub(r"_perf(?:_mpi)?$", "", name)
    return name


def _result(state: _State, events: list[NcclLogEvent]) -> NcclTestsOutput:
    fields = dict(state.fields)
    collective, source = _collective(state)
    code = fields.get("nccl_library_code")
    if "nccl_version" not in fields and isinstance(code, int):
        fields["nccl_version"] = _decode_version(code)
    layout = state.layout
    errors = [f.message for f in state.failures]
    if state.header_row_unknown:
        state.warnings.append(f"{state.header_row_unknown} numeric line(s) before any table "
                              "header were not recognised as result rows")
    if state.rows.count and not state.footer:
        state.warnings.append("no `# Out of bounds values` / `# Avg bus bandwidth` footer: the "
                              "capture is truncated or the run had not finished")
    fields.update(
        collective=collective, collective_source=source, command=state.command,
        cputime=bool(layout and "cputime" in [c.lower() for c in layout.printed]),
        per_iteration_columns=bool(layout and "i_min_us" in layout.halves[0]),
        columns=layout.printed if layout else [], ranks=state.ranks, rows=[],
        rows_elided=state.elided, peak_busbw=state.rows.peak_busbw, errors=errors,
        failures=state.failures, nccl_warnings=state.nccl_warnings, events=events,
        status="ok",
        warnings=state.warnings)
    result = NcclTestsOutput.model_validate(fields)
    result.status = _status(result, state.rows, state.footer)
    return result


def _decode_version(code: int) -> str:
    """NCCL_VERSION_CODE -> "major.minor.patch" (codes below 10000 use the pre-2.9 scheme)."""
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def _collective(state: _State) -> tuple[str | None, str | None]:
    if state.marker:
        return state.marker, "marker"
    if state.binary:
        return state.binary, "command"
    if state.prompt_binary:
        state.command = state.prompt_binary[1]
        return state.prompt_binary[0], "command"
    inferred = _infer_collective(state)
    return (inferred, "inferred") if inferred else (None, None)


def _infer_collective(state: _State) -> str | None:
    """The collective from the table: reduction or not, root, and size / (count x type size).

    all_gather, alltoall, gather, scatter and reduce_scatter move count x nranks elements per
    rank (ratio > 1); all_reduce, reduce, broadcast and sendrecv move count (ratio 1). Old
    nccl-tests left out the redop column only for all_gather, and left it blank for alltoall.
    """
    if not state.rows.count or state.layout is None:
        return None
    reduction, rooted, ratio = state.rows.reduction, state.rows.rooted, state.rows.ratio
    if reduction:
        if rooted:
            return "reduce"
        return None if ratio is None else "reduce_scatter" if ratio > 1 else "all_reduce"
    if ratio is None:
        return None
    if rooted:
        return "broadcast" if ratio == 1 else None
    if ratio == 1:
        return "sendrecv"
    params = state.layout.params
    if "redop" not in params and "root" not in params:
        return "all_gather"
    if "redop" in params and "root" not in params:
        return "alltoall"
    return None


def _size_ratio(dtype: str, count: int, size_bytes: int) -> int | None:
    """size / (count x type size) of one row, when its type is known and the sizes divide."""
    width = _TYPE_SIZES.get(dtype.lower())
    if width and count > 0 and size_bytes % (count * width) == 0:
        return size_bytes // (count * width)
    return None


_Status = Literal["ok", "wrong_data", "below_min_bw", "failed", "did_not_run", "incomplete"]


def _status(result: NcclTestsOutput, rows: _Rows, footer: bool) -> _Status:
    if not rows.count:
        broke = any(e.type in _FAILURE_EVENTS for e in result.events)
        return "did_not_run" if result.errors or footer or broke else "incomplete"
    if rows.wrong or (result.out_of_bounds or 0) > 0 or result.out_of_bounds_ok is False:
        return "wrong_data"
    if result.errors:
        return "failed"
    if result.avg_busbw_ok is False:
        return "below_min_bw"
    return "ok" if footer else "incomplete"


def tables(result: NcclTestsOutput) -> list[Table]:
    """The run summary, then the result table (when the run printed one)."""
    head = [f"collective: {result.collective or '?'}   status: {result.status}   "
            f"ranks: {len(result.ranks) or '?'}   avg busbw: {_fmt(result.avg_busbw)} GB/s   "
            f"out of bounds: {_fmt(result.out_of_bounds)}"]
    head.extend(f"error: {message}" for message in result.errors)
    out = [Table.build([], title=head)]
    if result.events:
        out.append(nccl_log.events_table(result.events))
    if not result.rows:
        return out
    columns = [right("size_bytes", "size(B)"), right("count"), right("type"), right("redop"),
               right("root"), right("oop_us", "oop us"), right("oop_algbw", "oop algbw"),
               right("oop_busbw", "oop busbw"), right("oop_wrong", "oop wrong"),
               right("ip_us", "ip us"), right("ip_algbw", "ip algbw"),
               right("ip_busbw", "ip busbw"), right("ip_wrong", "ip wrong")]
    rows = [(row.size_bytes, row.count, row.dtype, row.redop, row.root,
             row.out_of_place.time_us, row.out_of_place.algbw, row.out_of_place.busbw,
             _check(row.out_of_place), row.in_place.time_us, row.in_place.algbw,
             row.in_place.busbw, _check(row.in_place)) for row in result.rows]
    return [*out, Table.build(columns, rows)]


def _check(half: NcclTestsMeasurement) -> str:
    if half.wrong is not None:
        return str(half.wrong)
    return f"err {half.error:g}" if half.error is not None else "N/A"


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)
