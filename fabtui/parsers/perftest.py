"""linux-rdma perftest: `ib_{write,read,send,atomic}_{bw,lat}` and `raw_ethernet_*`.

One side of a run prints::

    ************************************          (server only)
    * Waiting for client to connect... *
    ************************************
    ---------------------------------------------------------------------------------------
                        RDMA_Write BW Test
     Dual-port       : OFF          Device         : mlx5_0
     Number of qps   : 1            Transport type : IB
     ...
     Mtu             : 4096[B]
     Link type       : IB
     Data ex. method : Ethernet
    ---------------------------------------------------------------------------------------
     local address: LID 0x6e QPN 0x0027 PSN 0x172f5a
     remote address: LID 0x74 QPN 0x0027 PSN 0x18941
    ---------------------------------------------------------------------------------------
     #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
     65536      5000             4508.97            4508.79             0.072141
    ---------------------------------------------------------------------------------------

Columns are mapped by their header names, so old (no MsgRate, 5 latency columns) and new
(percentiles, `MiB/sec`, `Gb/sec`, per-port, CPU util, duration mode) layouts all read.

A capture may hold several blocks: two runs pasted together, or both sides of a loopback run,
sometimes interleaved line by line (`run_perftest_loopback`). Blocks whose headers are still open
when another banner arrives are filled side by side: a header name goes to the first open block
that lacks it (`TX depth` prefers the client, `RX depth` the server), address lines fill each
block up to its QP count, and a result row goes to the client first unless its size does not
grow (with `-a` each side's sizes only grow). This is the best order-based guess; a warning says
when it was needed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

from fabtui.model.parsed.perftest import (
    Perftest,
    PerftestAddress,
    PerftestResult,
    PerftestRow,
)
from fabtui.model.table import Cell, Table, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import LazyList, Streamed, row_defaults
from fabtui.parsers.text import clean_line_stream, split_lines, to_float, to_int

KIND = "perftest"
MODEL = Perftest
DESCRIPTION = ("linux-rdma perftest ib_{write,read,send,atomic}_{bw,lat} / raw_ethernet_* "
               "output (client or server side)")

_TOOL = (r"ib_(?:write|read|send|atomic)_(?:bw|lat)"
         r"|raw_ethernet_(?:bw|lat|burst_lat|fs_rate)")
_COMMAND = re.compile(rf"(?:^|[\s/$#>])(?P<tool>{_TOOL})(?=\s|$)")
_BANNER = re.compile(r"^(?P<verb>Send|RDMA_Write|RDMA_Read|Atomic)\s+(?P<pre>.*?)\b"
                     r"(?P<type>BW|Latency)\b(?P<post>.*?)\bTest\s*$")
_BANNER_ANYWHERE = re.compile(r"(?m)(?:^|[\s:>])(?:Send|RDMA_Write|RDMA_Read|Atomic)"
                              r"(?: [A-Za-z_]+)* (?:BW|Latency)(?: [A-Za-z]+)* Test\s*$")
_OLD_INLINE = re.compile(r"^Inline data is used up to (\d+) bytes message", re.I)
_OLD_QPS = re.compile(r"^Number of qp'?s running\s+(\d+)\s*$", re.I)
_NOT_HEADER = re.compile(r"^(?:Connected|Completed|Total run time|Perftest)\b", re.I)
_RULE = re.compile(r"^-{10,}\s*$")
_STARS = re.compile(r"^\*+\s*$")
_WAITING = re.compile(r"Waiting for client to connect", re.I)
# What a perftest client prints when it cannot reach its server (perftest_communication.c).
_CONNECT_FAILURE = re.compile(r"Couldn't connect to \S+:\d+|Unable to init the socket connection"
                              r"|Failed to (?:exchange data between server and clients"
                              r"|create QP|modify QP)|Couldn't get (?:device|context)", re.I)
_WAITING_CM = re.compile(r"Waiting for client rdma_cm QP to connect", re.I)
_ADDRESS = re.compile(r"^(?P<which>local|remote)\s+address\s*:\s*(?P<rest>.*)$", re.I)
_ADDRESS_FIELD = re.compile(r"\b(LID|QPN|PSN|RKey|VAddr|OUT)\s*[:=]?\s*([0-9A-Fa-fx]+)", re.I)
_GID = re.compile(r"^GID\s*:\s*(?P<gid>\S+)\s*$")
_TABLE = re.compile(r"^#\s*bytes\b")
_ELISION = re.compile(r"^(?:\.{2,}|…)\s*$")
_QUOTE = re.compile(r"^(?:>[ \t]?)+")
_NUMERIC = re.compile(r"[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?")
_DIGITS = re.compile(r"\d+")
_HOST = re.compile(r"^([A-Za-z][\w.-]*): ")
_FENCE = re.compile(r"^(?:```|~~~)")
_GPU_FLAG = re.compile(r"--use_(cuda|rocm|neuron|hl|mlu|opencl|musa|supa)\b", re.I)
_GPU_INIT = re.compile(r"^initializing (\w+)\s*$", re.I)
_GPU_NAME = re.compile(r"device name = \[(?P<name>[^\]]*)\]")
_ROCM = re.compile(r"^Using ROCm Device with ID:\s*\d+,\s*Name:\s*(?P<name>[^,]+)", re.I)
_GPU_ALLOC = re.compile(r"cuMemAlloc|allocated (?:\d+ bytes of )?GPU buffer|GPU buffer address",
                        re.I)
_NOTICE = re.compile(r"^(?:warning\b|conflicting cpu frequency|requested mtu|changing to active"
                     r"|disabling dynamic polling|using sampled cpu speed|perftest doesn't"
                     r"|max msg size|changing msg size|min msg size)", re.I)
_ERROR = re.compile(r"\b(?:couldn't|could not|can't|cannot|failed|failure|unable to|error|"
                    r"problems? with|syndrome?|refused|timed out|scnt=|exiting)\b", re.I)

_API_NAMES = {"cuda": "CUDA", "rocm": "ROCm", "neuron": "Neuron", "hl": "Habana", "mlu": "MLU",
              "opencl": "OpenCL", "musa": "MUSA", "supa": "SUPA"}

# Column header names -> row field; unit-bearing columns capture their unit.
_COLUMNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"#\s*bytes"), "bytes"),
    (re.compile(r"#\s*sl\b"), "sl"),
    (re.compile(r"#\s*iterations"), "iterations"),
    (re.compile(r"BW\s+peak\s*\[([^\]]+)\]", re.I), "bw_peak"),
    (re.compile(r"BW\s+average\s*\[([^\]]+)\]", re.I), "bw_avg"),
    (re.compile(r"BW\s+Port1\s*\[([^\]]+)\]", re.I), "bw_port1"),
    (re.compile(r"BW\s+Port2\s*\[([^\]]+)\]", re.I), "bw_port2"),
    (re.compile(r"MsgRate\s+Port1\s*\[[^\]]*\]", re.I), "msg_rate_port1"),
    (re.compile(r"MsgRate\s+Port2\s*\[[^\]]*\]", re.I), "msg_rate_port2"),
    (re.compile(r"MsgRate\s*\[[^\]]*\]", re.I), "msg_rate"),
    (re.compile(r"CPU_Util\s*\[[^\]]*\]", re.I), "cpu_util_pct"),
    (re.compile(r"t_min\s*\[([^\]]+)\]"), "t_min_usec"),
    (re.compile(r"t_max\s*\[([^\]]+)\]"), "t_max_usec"),
    (re.compile(r"t_typical\s*\[([^\]]+)\]"), "t_typical_usec"),
    (re.compile(r"t_avg\s*\[([^\]]+)\]"), "t_avg_usec"),
    (re.compile(r"t_stdev\s*\[([^\]]+)\]"), "t_stdev_usec"),
    (re.compile(r"99\.9\s*%+\s*percentile\s*\[([^\]]+)\]"), "p99_9_usec"),
    (re.compile(r"99\s*%+\s*percentile\s*\[([^\]]+)\]"), "p99_usec"),
    (re.compile(r"tps\s+average", re.I), "tps_avg"),
]
_COLUMN_ANY = re.compile("|".join(f"(?:{p.pattern})" for p, _ in _COLUMNS), re.I)
_ROW = row_defaults(PerftestRow)
_INT_COLUMNS = frozenset({"bytes", "iterations", "sl"})

# Header names (lower case, single spaces) -> (field, conversion).
_HEADER_FIELDS: dict[str, tuple[str, str]] = {
    "dual-port": ("dual_port", "bool"),
    "device": ("device", "str"),
    "number of qps": ("num_qps", "int"),
    "transport type": ("transport_type", "str"),
    "connection type": ("connection_type", "str"),
    "using srq": ("using_srq", "bool"),
    "pcie relax order": ("pcie_relax_order", "bool"),
    "ibv_wr* api": ("ibv_wr_api", "bool"),
    "tx depth": ("tx_depth", "int"),
    "rx depth": ("rx_depth", "int"),
    "cq moderation": ("cq_moderation", "int"),
    "mtu": ("mtu", "int"),
    "link type": ("link_type", "str"),
    "max inline data": ("max_inline_data", "int"),
    "outstand reads": ("outstand_reads", "int"),
    "rdma_cm qps": ("rdma_cm_qps", "bool"),
    "data ex. method": ("data_ex_method", "str"),
    "gid index": ("gid_index", "int"),
}
_OTHER_HEADER_NAMES = frozenset({
    "lock-free", "using enhanced reorder", "using ddp", "cqe poll batch", "cpu freq", "tos",
    "post list", "buffer size", "gid index2", "atomic type", "size", "iterations",
})
_HEADER_NAME = re.compile(r"^[A-Za-z][\w .*/()\-]{0,30}$")


@dataclass
class _Pending:
    """What was printed before the next block's banner: command line, server banner, GPU."""

    command: str | None = None
    tool: str | None = None
    server: bool = False
    gpu_api: str | None = None
    gpu_name: str | None = None
    gpudirect: bool = False


@dataclass
class _Block:
    """One result block while it is being read."""

    test: str | None = None
    test_type: str | None = None
    bidirectional: bool = False
    atomic_type: str | None = None
    server: bool = False
    command: str | None = None
    tool: str | None = None
    gpudirect: bool = False
    gpu_api: str | None = None
    gpu_name: str | None = None
    header: dict[str, str] = field(default_factory=dict)
    local: list[PerftestAddress] = field(default_factory=list)
    remote: list[PerftestAddress] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    unit: str | None = None
    rows: list[str] = field(default_factory=list)
    """Each row's line, read again into a row when the result is written: a long sweep's
    rows cost their text, not a model each."""
    row_columns: list[tuple[int, list[str]]] = field(default_factory=list)
    """(index of the first row, columns) of each run of rows read under the same columns."""
    last_bytes: int = -1
    """Message size of the last row (-1 before the first)."""
    peak_zero: bool = False
    """Whether a row printed BW peak 0.00."""
    header_done: bool = False
    table_ended: bool = False
    closed: bool = False

    def has_key(self, name: str) -> bool:
        """Whether the header already holds `name` (compared case- and space-insensitively)."""
        return any(_key(k) == name for k in self.header)

    def num_qps(self) -> int | None:
        """The block's QP count, when its header printed one."""
        for name, value in self.header.items():
            if _key(name) == "number of qps":
                return _safe_int(value)
        return None


@dataclass
class _State:
    """Parser state across lines."""

    blocks: list[_Block] = field(default_factory=list)
    pending: _Pending = field(default_factory=_Pending)
    errors: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    last_address: PerftestAddress | None = None
    last_row_block: _Block | None = None
    interleaved: bool = False
    elided: bool = False
    live: list[_Block] = field(default_factory=list)
    """The blocks not yet seen closed: a block never reopens, so `open_blocks` filters this
    short list instead of every block of a long capture (which made parsing quadratic)."""

    def open_blocks(self) -> list[_Block]:
        """Blocks still taking header, address, table or row lines, oldest first."""
        self.live = [b for b in self.live if not b.closed]
        return list(self.live)

    def new_block(self) -> _Block:
        """A block that takes over what was printed before its banner."""
        pending = self.pending
        block = _Block(server=pending.server, command=pending.command, tool=pending.tool,
                       gpudirect=pending.gpudirect, gpu_api=pending.gpu_api,
                       gpu_name=pending.gpu_name)
        self.pending = _Pending()
        self.blocks.append(block)
        self.live.append(block)
        return block


@lru_cache(maxsize=4096)  # a few dozen header names, asked about on every header line
def _key(name: str) -> str:
    return re.sub(r"\s+", " ", name.strip().lower())


def _safe_int(value: str) -> int | None:
    match = re.match(r"\s*(-?\d+)", value)
    return int(match.group(1)) if match else None


def detect(text: str) -> float:
    """How sure we are that `text` is perftest output (0..1)."""
    head = text[:40000]
    banner = _BANNER_ANYWHERE.search(head) is not None
    table = bool(re.search(r"#bytes\s+(?:#sl\s+)?#iterations", head))
    columns = bool(re.search(r"BW (?:peak|average)\[|t_typical\[|t_avg\[", head))
    keys = len(re.findall(r"(?m)(?:Number of qps|Connection type|Data ex\. method|"
                          r"Transport type|Max inline data|Outstand reads)\s*:", head))
    address = "local address:" in head and re.search(r"QPN\s+0x", head) is not None
    score = 0.0
    if banner:
        score += 0.6
    if table or columns:
        score += 0.35 if banner else 0.85
    if keys >= 2:
        score += 0.25
    if address:
        score += 0.1
    if score == 0.0 and _COMMAND.search(head) and (_WAITING.search(head)
                                                    or _CONNECT_FAILURE.search(head)):
        score = 0.5
    return min(score, 0.98)


def parse(text: str) -> Perftest:
    """Parse perftest output; raises `ParseError` when no perftest block is in it."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[Perftest]:
    """Parse normalised lines (`fabtui parse` reads files this way, never holding them); each
    block's result is built when it is written."""
    state = _State()
    for number, line in enumerate(clean_line_stream(lines), start=1):
        _read_line(state, number, line.strip())
    if not state.blocks:
        if state.pending.server or (state.pending.tool and state.errors):
            state.new_block()
        else:
            raise ParseError(KIND, None, "no perftest test banner, header or result table found")
    return _result(state)


def _read_line(state: _State, number: int, line: str) -> None:
    """Dispatch one cleaned line to the reader it belongs to."""
    if not line or _FENCE.match(line) or _STARS.match(line):
        return
    for reader in (_read_rule, _read_waiting, _read_banner, _read_address, _read_table_header,
                   _read_row, _read_message, _read_gpu, _read_command, _read_header):
        if reader(state, number, line):
            return


def _read_rule(state: _State, number: int, line: str) -> bool:
    """A dashed rule; after result rows it ends that block's table."""
    if not _RULE.match(line):
        return False
    block = state.last_row_block
    if block is not None and not block.table_ended:
        block.table_ended = True
        block.closed = True
    state.last_row_block = None
    return True


def _read_waiting(state: _State, number: int, line: str) -> bool:
    """`* Waiting for client to connect... *`: the next block is a server's."""
    if _WAITING_CM.search(line):
        open_blocks = state.open_blocks()
        if open_blocks:
            open_blocks[-1].server = True
        else:
            state.pending.server = True
        return True
    if not _WAITING.search(line):
        return False
    for block in state.open_blocks():
        if block.columns or block.local or block.remote:
            block.closed = True
    state.pending.server = True
    return True


def _read_banner(state: _State, number: int, line: str) -> bool:
    """`RDMA_Write BW Test`, `Atomic FETCH_AND_ADD Bidirectional BW Test`, ..."""
    match = _BANNER.match(line)
    if not match:
        return False
    for block in state.open_blocks():
        if block.header_done or block.columns or block.local or block.remote:
            block.closed = True
    still_open = state.open_blocks()
    block = state.new_block()
    if still_open:
        # Both sides of one loopback command share its command line.
        state.interleaved = True
        if block.command is None:
            block.command, block.tool = still_open[-1].command, still_open[-1].tool
    block.test = match.group("verb")
    block.test_type = "bw" if match.group("type") == "BW" else "lat"
    words = (match.group("pre") + " " + match.group("post")).split()
    block.bidirectional = "Bidirectional" in words
    block.atomic_type = next((w for w in words if w in ("FETCH_AND_ADD", "CMP_AND_SWAP")), None)
    return True


def _read_address(state: _State, number: int, line: str) -> bool:
    """`local address: LID ... QPN ...`, `remote address: ...` and the `GID:` line under one."""
    gid = _GID.match(line)
    if gid:
        if state.last_address is not None and state.last_address.gid is None:
            state.last_address.gid = gid.group("gid")
        return True
    match = _ADDRESS.match(line)
    if not match:
        return False
    fields = {name.lower(): value for name, value in _ADDRESS_FIELD.findall(match.group("rest"))}
    address = PerftestAddress(lid=fields.get("lid"), qpn=fields.get("qpn"),
                              psn=fields.get("psn"), rkey=fields.get("rkey"),
                              vaddr=fields.get("vaddr"), out=fields.get("out"))
    which = match.group("which").lower()
    block = _address_block(state, which)
    (block.local if which == "local" else block.remote).append(address)
    block.header_done = True
    state.last_address = address
    return True


def _address_block(state: _State, which: str) -> _Block:
    """The first open block still short of address lines of this kind, else the newest."""
    open_blocks = state.open_blocks()
    for block in open_blocks:
        limit = block.num_qps()
        have = len(block.local if which == "local" else block.remote)
        if limit is not None and have < limit and not block.columns:
            return block
    return open_blocks[-1] if open_blocks else state.new_block()


def _read_table_header(state: _State, number: int, line: str) -> bool:
    """`#bytes #iterations BW peak[MB/sec] ...`: the columns of the rows that follow."""
    if not _TABLE.match(line):
        return False
    columns: list[str] = []
    unit = None
    for match in _COLUMN_ANY.finditer(line):
        for pattern, name in _COLUMNS:
            named = pattern.fullmatch(match.group(0))
            if named:
                columns.append(name)
                if unit is None and named.groups():
                    unit = named.group(1).strip()
                break
    if "bytes" not in columns or len(columns) < 2:
        state.warnings.append(f"line {number}: result table header not understood")
        return True
    open_blocks = state.open_blocks()
    block = next((b for b in open_blocks if not b.columns), None)
    if block is None:
        block = open_blocks[-1] if open_blocks else state.new_block()
        block.table_ended = False
    block.columns = columns
    block.unit = unit
    block.header_done = True
    if block.test_type is None:
        block.test_type = "lat" if any(c.startswith("t_") for c in columns) else "bw"
    return True


def _read_row(state: _State, number: int, line: str) -> bool:
    """A result row: whitespace-separated numbers under a table header."""
    values = line.split()
    if _ELISION.match(line):
        state.elided = True
        return True
    if not _DIGITS.fullmatch(values[0]) or not all(_NUMERIC.fullmatch(v) for v in values):
        return False
    if len(values) < 3:
        if not any(b.columns and not b.table_ended for b in state.open_blocks()):
            return False
        state.warnings.append(f"line {number}: incomplete result row skipped")
        return True
    block = _row_block(state, int(values[0]))
    if block is None:
        state.warnings.append(f"line {number}: result row without a column header skipped")
        return True
    row = _row_data(block.columns, values)
    if row is None:
        state.warnings.append(f"line {number}: incomplete result row skipped "
                              f"({len(values)} of {len(block.columns)} columns)")
        return True
    if len(values) > len(block.columns):
        state.warnings.append(f"line {number}: {len(values) - len(block.columns)} value(s) "
                              "beyond the printed columns ignored")
    if not block.row_columns or block.row_columns[-1][1] is not block.columns:
        block.row_columns.append((len(block.rows), block.columns))
    block.rows.append(line)
    block.last_bytes = row["bytes"]  # type: ignore[assignment]  # an int: checked by _row_data
    block.peak_zero = block.peak_zero or row.get("bw_peak") == 0.0
    state.last_row_block = block
    return True


def _row_block(state: _State, size: int) -> _Block | None:
    """The block a row belongs to: clients first, and a block whose sizes keep growing."""
    candidates = [b for b in state.open_blocks() if b.columns and not b.table_ended]
    if not candidates:
        return None
    candidates.sort(key=lambda b: b.server)
    for block in candidates:
        if not block.rows or block.last_bytes < size:
            return block
    return candidates[0]


def _row_data(columns: list[str], values: list[str]) -> dict[str, int | float | None] | None:
    """A row's fields from its values; None when fewer values than columns (a cut line)."""
    if len(values) < len(columns):
        return None
    data: dict[str, int | float | None] = {}
    try:
        for name, value in zip(columns, values, strict=False):
            data[name] = to_int(value) if name in _INT_COLUMNS else to_float(value)
    except ValueError:
        return None
    if data.get("bytes") is None:
        return None
    return data


def _row_dicts(block: _Block) -> Iterator[dict[str, object]]:
    """The block's rows, read again from their lines, as `model_dump(mode="json")` gives
    them (each column's value is already of its field's type)."""
    runs = [*block.row_columns, (len(block.rows), [])]
    for (start, columns), (end, _) in pairwise(runs):
        for line in block.rows[start:end]:
            data = _row_data(columns, line.split())
            assert data is not None  # it was read from this very line
            yield {**_ROW, **data}


def _rows(block: _Block) -> Iterator[PerftestRow]:
    """The block's rows as models."""
    return (PerftestRow.model_validate(row) for row in _row_dicts(block))


def _dumped_result(block: _Block) -> dict[str, object]:
    """`_block_result(block).model_dump(mode="json")`, its rows written as they are read."""
    data = _block_result(block, with_rows=False).model_dump(mode="json")
    data["rows"] = LazyList(lambda: _row_dicts(block))
    return data


def _read_message(state: _State, number: int, line: str) -> bool:
    """Warnings and failures the tool prints (kept in `notices` / `errors`)."""
    if _NOTICE.match(line):
        state.notices.append(line)
        return True
    if _ERROR.search(line) and not _COMMAND.search(line):
        state.errors.append(line)
        return True
    return False


def _read_gpu(state: _State, number: int, line: str) -> bool:
    """CUDA / ROCm set-up lines printed before a block's banner."""
    pending = state.pending
    init = _GPU_INIT.match(line)
    rocm = _ROCM.match(line)
    name = _GPU_NAME.search(line)
    if init:
        pending.gpu_api = _API_NAMES.get(init.group(1).lower(), init.group(1))
    elif rocm:
        pending.gpu_api = "ROCm"
        pending.gpu_name = rocm.group("name").strip()
    elif name:
        pending.gpu_name = name.group("name").strip()
    elif not _GPU_ALLOC.search(line):
        return False
    pending.gpudirect = True
    return True


def _read_command(state: _State, number: int, line: str) -> bool:
    """A command line naming a perftest tool (prompt and `sudo` removed)."""
    match = _COMMAND.search(line)
    if not match:
        return False
    start = line.rfind(" ", 0, match.start("tool")) + 1
    pending = state.pending
    pending.command = line[start:].strip()
    pending.tool = match.group("tool")
    flag = _GPU_FLAG.search(line)
    if flag:
        pending.gpudirect = True
        pending.gpu_api = _API_NAMES[flag.group(1).lower()]
    return True


def _read_header(state: _State, number: int, line: str) -> bool:
    """`Name : value` header lines, one or two pairs per line."""
    old_inline = _OLD_INLINE.match(line)
    old_qps = _OLD_QPS.match(line)
    pairs = [("Max inline data", old_inline.group(1))] if old_inline else \
        [("Number of qps", old_qps.group(1))] if old_qps else \
        [] if _NOT_HEADER.match(line) else _pairs(line)
    if not pairs:
        return False
    first = _key(pairs[0][0])
    known = first in _HEADER_FIELDS or first in _OTHER_HEADER_NAMES
    open_blocks = state.open_blocks()
    if not known and not any(not b.header_done for b in open_blocks):
        return False
    if not known and not _HEADER_NAME.match(pairs[0][0]):
        return False
    block = _header_block(state, first)
    for name, value in pairs:
        if not block.has_key(_key(name)):
            block.header[name] = value
        if _key(name) == "data ex. method":
            block.header_done = True
    return True


def _header_block(state: _State, name: str) -> _Block:
    """The open block a header name belongs to (see the module docstring)."""
    open_blocks = [b for b in state.open_blocks() if not b.header_done]
    lacking = [b for b in open_blocks if not b.has_key(name)]
    if name == "tx depth":
        lacking.sort(key=lambda b: b.server)
    elif name == "rx depth":
        lacking.sort(key=lambda b: not b.server)
    if lacking:
        return lacking[0]
    if open_blocks:
        return open_blocks[-1]
    # Old perftest (1.x/2.x) prints `Mtu : 2048` after the address lines, before the table.
    late = [b for b in state.open_blocks() if not b.columns and not b.has_key(name)]
    if late:
        return late[-1]
    return state.new_block()


def _pairs(line: str) -> list[tuple[str, str]]:
    """`Dual-port : OFF<tabs>Device : mlx5_0` -> [("Dual-port", "OFF"), ("Device", "mlx5_0")]."""
    parts = [p.strip() for p in re.split(r"\t+|\s{2,}", line.strip()) if p.strip()]
    pairs: list[tuple[str, str]] = []
    name: str | None = None
    for part in parts:
        if part.startswith(":"):
            if name is None:
                return []
            pairs.append((name, part[1:].strip()))
            name = None
        elif ":" in part:
            if name is not None:
                return []
            left, right = part.split(":", 1)
            if right.strip():
                pairs.append((left.strip(), right.strip()))
            else:
                name = left.strip()
        elif name is None:
            name = part
        else:
            return []
    return [(n, v) for n, v in pairs if n and v]


def _result(state: _State) -> Streamed[Perftest]:
    """The model: every block (each built when written), and the main one repeated at the
    top level."""
    warnings = list(state.warnings)
    blocks = state.blocks
    if state.interleaved:
        warnings.append("server and client output are interleaved in one stream; header lines, "
                        "addresses and rows were given to the sides by order of appearance")
    if state.elided:
        warnings.append("rows elided with `...` in the capture")
    for index, block in enumerate(blocks):
        if block.peak_zero and _side(block) == "server":
            warnings.append(f"results[{index}]: the server side prints BW peak 0.00 (the "
                            "receiver cannot measure the peak); use bw_avg")
    if any("peak won't be measured" in n for n in state.notices):
        warnings.append("the tool did not measure BW peak in this run (-F/-N/duration); "
                        "its 0.00 is not a measurement")
    main = _main_index(blocks)
    top = _block_result(blocks[main], with_rows=False).model_dump() if main is not None else {}
    head = Perftest(**top, results=[], main_index=main, errors=state.errors,
                    notices=state.notices, warnings=warnings)
    # The main block's rows (at the top level) and every block are written as they are
    # read again: a long sweep holds its rows' lines, never a model or a dict per row.
    return Streamed(
        head,
        {"rows": lambda: _rows(blocks[main]) if main is not None else iter(()),
         "results": lambda: (_block_result(block) for block in blocks)},
        {"rows": lambda: _row_dicts(blocks[main]) if main is not None else iter(()),
         "results": lambda: (_dumped_result(block) for block in blocks)})


def _main_index(blocks: list[_Block]) -> int | None:
    """The first client block with rows, else the first block with rows, else the first."""
    with_rows = [i for i, block in enumerate(blocks) if block.rows]
    clients = [i for i in with_rows if _side(blocks[i]) == "client"]
    if clients:
        return clients[0]
    if with_rows:
        return with_rows[0]
    return 0 if blocks else None


def _block_result(block: _Block, with_rows: bool = True) -> PerftestResult:
    """A finished block as a result model (its rows left empty unless `with_rows`)."""
    values: dict[str, object] = {
        "test": block.test, "test_type": block.test_type, "tool": block.tool,
        "command": block.command, "side": _side(block), "bidirectional": block.bidirectional,
        "atomic_type": block.atomic_type, "unit": block.unit, "header": block.header,
        "local_addresses": block.local, "remote_addresses": block.remote,
        "gpudirect": block.gpudirect, "gpu_api": block.gpu_api, "gpu_name": block.gpu_name,
        "rows": list(_rows(block)) if with_rows else [],
    }
    for name, value in block.header.items():
        target = _HEADER_FIELDS.get(_key(name))
        if target is None:
            continue
        converted = _convert(value, target[1])
        if converted is not None:
            values[target[0]] = converted
    if block.unit is None and block.test_type == "lat":
        cycles = block.command is not None and re.search(r"\s(?:-C|--report-cycles)\b",
                                                         block.command) is not None
        values["unit"] = "cycles" if cycles else "usec"
    return PerftestResult.model_validate(values)


def _side(block: _Block) -> str:
    """`server` after the waiting banner, with `--server`/`-Z`, or when only the receive queue
    depth is printed."""
    if block.server:
        return "server"
    # raw_ethernet_* pick their side with flags rather than a host argument.
    command = block.command or ""
    if re.search(r"\s(?:--server|-Z)(?:\s|$)", command):
        return "server"
    if re.search(r"\s(?:--client|-P)(?:\s|$)", command):
        return "client"
    if not block.bidirectional and block.has_key("rx depth") and not block.has_key("tx depth"):
        return "server"
    return "client"


def _convert(value: str, kind: str) -> str | int | bool | None:
    """A header value as its field wants it; None when it cannot be read."""
    if kind == "int":
        return _safe_int(value)
    if kind == "bool":
        word = value.strip().upper()
        return True if word == "ON" else False if word == "OFF" else None
    return value.strip() or None


def tables(result: Perftest) -> list[Table]:
    """The main result table, titled with the tool, side, device, link and unit."""
    title = " ".join(str(x) for x in (result.tool or result.test, result.side, result.device,
                                      result.link_type, f"MTU {result.mtu}") if x)
    rows: list[tuple[Cell, ...]]
    if result.test_type == "lat":
        columns = [right(n) for n in ("bytes", "iterations", "t_min", "t_typical", "t_avg",
                                      "t_max", "p99", "p99.9")]
        rows = [(r.bytes, r.iterations, r.t_min_usec, r.t_typical_usec, r.t_avg_usec,
                 r.t_max_usec, r.p99_usec, r.p99_9_usec) for r in result.rows]
    else:
        columns = [right(n) for n in ("bytes", "iterations", "bw_peak", "bw_avg",
                                      "msg_rate[Mpps]")]
        rows = [(r.bytes, r.iterations, r.bw_peak, r.bw_avg, r.msg_rate) for r in result.rows]
    return [Table.build(columns, rows, title=[f"{title} ({result.unit or '?'})"])]
