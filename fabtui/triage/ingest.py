"""Read a hung job's inputs into facts: which rank said what, on which line.

Inputs: per-rank log files or folders of them, combined torchrun / srun / mpirun logs (each line's
`[rankN]:`, `[1,N]<stdout>:` or `N: ` prefix is read on its own), Flight Recorder dumps (pickle,
read by `frpickle` without running code, or JSON) and the analyzer's text report, NCCL RAS status
output. Logs are read in binary chunks; only lines holding a key pattern (a cheap byte search,
no regular expression) are decoded and handed to the NCCL log parser, so memory stays bounded
and a gigabyte of logs reads at close to the speed of `grep`.

Ranks: a `[rankN]:` / mpirun prefix, the rank NCCL reported at init for the same process, a
torchrun failure report and a `rank N` file name give global ranks. PyTorch's `[PG x Rank M]`
is the rank in that process group: it counts as global only for the default group and only when
nothing else names the rank, and it is kept apart (`pg_rank`) otherwise.
"""

from __future__ import annotations

import os
import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from fabtui.errors import InputError
from fabtui.model.parsed.flight_recorder import FlightRecorder, FrMismatch
from fabtui.model.parsed.nccl_log import NcclLogEvent
from fabtui.model.triage import Evidence, SourceFile
from fabtui.parsers import flight_recorder, nccl_log
from fabtui.parsers.errors import ParseError
from fabtui.triage import frpickle, mismatch, ras

CHUNK = 1 << 20
COLL_TAIL = 4096
"""NCCL `COLL` call lines (`opCount`) kept per file: the last ones, where the hang is; they do
not count against `MAX_KEPT_PER_FILE` (a COLL log holds one per call)."""
MAX_KEPT_PER_FILE = 20000
"""Key lines kept per file: a log that repeats one failure a million times still triages."""
MAX_EVENTS_PER_TYPE = 4
"""Events of one type (other than the hang's own: watchdog, status, desync, torchrun) kept per
file; the rest are counted in `Facts.dropped`. Bounds memory on a thousand ranks' logs."""
PARALLEL_FROM = 32
"""Files from which the logs are read by one worker process per CPU."""
_ALWAYS = ("watchdog_timeout", "pg_status", "desync", "child_failed", "heartbeat_timeout")
TEXT_MAX = 300

# Lines that can matter to a hang, searched as bytes over whole chunks: each key costs one pass
# over the chunk, so keys that other keys imply are left out: every `WorkNCCL(` line of interest
# also says `atchdog` (so does the `what():` line after a watchdog's `terminate called`),
# `Init COMPLETE` lines carry the rank, size and device of `nRanks` lines, torchrun's report
# (its `rank :` and `exitcode :` lines) follows `ChildFailedError`, and a PyTorch NCCL error
# that tells an IB completion error says `NCCL error`.
_KEYS = (b"NCCL WARN", b"; OOB", b"atchdog", b"NCCL work", b"Init COMPLETE", b"didn't ",
         b"NCCL error", b"onnection ", b"ChildFailedError", b"Detected mismatch",
         b"entire process down", b": opCount ", b"Abort COMPLETE", b"global_world_sizes=")
KEY_PATTERNS = tuple(key.decode() for key in _KEYS)
"""The key patterns as text (benchmarks/triage_scale.py greps for the same)."""
_FOLLOW = {b"NCCL WARN": (b"Got completion from peer", b"vendor", 1),
           b"atchdog": (b"atchdog caught", b"timing out", 2),
           b"ChildFailedError": (b"ChildFailedError:", b"", 40)}
"""Key -> (what a line must hold, what it must lack, lines after it that belong to the same
message): a completion error wrapped onto the next line, torchrun's report, `what():`."""

_RANK_PREFIX = re.compile(r"^\s*(?:\[\d+\]\s+|(?:\[\d{1,3}m)?\([^()]{1,80}?pid=\d+[^()]*\)\s+`?"
                          r"|[\w.\-]+ \[(?:stdout|stderr)\]\s+|`)?\[rank(\d+)\]:\s?")
"""`[rankN]:` as torchrun prints it, after what a collector put before it: a line number
(`[80746] `), a Ray worker (`(WorkerDict pid=835, ip=10.0.0.1) `, `(MegatronPolicyWorker[rank=31]
pid=.., ip=..) `, after the rest of a colour code a paste kept: `[36m(RayWorkerWrapper pid=..) `),
a runner's `host [stderr] `, or a markdown backtick."""
_RDZV_WORLD = re.compile(r"\bglobal_world_sizes=\[(\d+)")
"""torchrun's rendezvous result (`Rendezvous complete for workers. Result:` ...
`global_world_sizes=[8, 8, 8, 8]`): the job's size, as each worker of this agent sees it."""
_ABORT = re.compile(r"([A-Za-z0-9_.\-]+):\d+:\d+ \[(\d+)\] NCCL INFO comm \S+ rank (\d+) "
                    r"nranks \d+ cudaDev \d+\b.*Abort COMPLETE")
"""NCCL's `comm 0x.. rank R nranks N cudaDev D ... - Abort COMPLETE`: the process on that host
and device aborted its communicator (a watchdog or the application did)."""
_MPI_PREFIX = re.compile(r"^\[\d+,(\d+)\]<(?:stdout|stderr)>:\s?")
_SRUN_PREFIX = re.compile(r"^\s*(\d+): ")
_FILE_RANK = re.compile(r"(?:^|[^a-z])(?:rank|trace|dump)[_\-.]?(\d+)(?:\D|$)", re.IGNORECASE)
_NCCL_HEAD = re.compile(r"([A-Za-z0-9_.\-]+):(\d+):\d+ \[(\d+)\] NCCL INFO")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_MD_LINK = re.compile(r"\[([^\[\]\s]+)\]\((?:https?://)?[^()\s]*\)")
"""A markdown link an issue tracker made of an address or file name (`[10.1.3.201](http://
10.1.3.201/)`): the text is what the log printed."""
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_ISO_STAMP = re.compile(r"^\s*\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?Z?"
                        r"(?:\s*[+-]\d\d:?\d\d)?:?\s+(?=\[)")
"""A collector's time stamp before a launcher prefix (`2019-06-02T16:13:44.884Z: [1,12]<stdout>:`,
`2025-11-09 15:39:31.043 +08:00 [...]`, to the minute: ` 2025-02-18 12:54 [rank13]:`)."""
_DEFAULT_PGS = (None, "0", "0 (default_pg)", "default_pg", "0(default_pg)")
DEFAULT_PG = "0 (default_pg)"


@dataclass
class LineEvent:
    """A parsed event of one log line, with the global rank it belongs to."""

    event: NcclLogEvent
    rank: int | None
    """Global rank (see the module docstring), or None."""
    pg_rank: int | None
    """Rank the message printed (`[PG x Rank M]`, desync report), a process-group rank."""
    pg: str
    """Process group (`default` when not printed)."""
    host: str | None
    evidence: Evidence
    rank_from_message: bool = False
    """`rank` is the `[Rank M]` a PyTorch message printed in a stream no prefix or file names:
    a process-group rank taken as global for want of anything better (see `Facts.named_ranks`)."""


@dataclass
class InitRank:
    """A rank NCCL reported at communicator init."""

    rank: int
    nranks: int
    host: str | None
    device: int | None
    local_rank: int | None


@dataclass
class Facts:
    """Everything read from the inputs."""

    events: list[LineEvent] = field(default_factory=list)
    inits: list[InitRank] = field(default_factory=list)
    dumps: list[tuple[FlightRecorder, int | None, Evidence]] = field(default_factory=list)
    """Flight Recorder dumps and listings with the rank they belong to."""
    fr_findings: list[tuple[FrMismatch, Evidence]] = field(default_factory=list)
    ras: list[tuple[ras.RasReport, str]] = field(default_factory=list)
    sources: list[SourceFile] = field(default_factory=list)
    hosts: dict[int, str] = field(default_factory=dict)
    """Global rank -> host, where a log line tells."""
    devices: dict[int, int] = field(default_factory=dict)
    """Global rank -> CUDA device, where a log line tells."""
    files_by_rank: dict[int, str] = field(default_factory=dict)
    named_ranks: set[int] = field(default_factory=set)
    """Ranks a file name or a `[rankN]:` prefix names: a message's `[Rank M]` is not taken as
    one of these global ranks."""
    ip_hosts: dict[str, str] = field(default_factory=dict)
    """IP -> host, from NCCL's OOB / bootstrap interface lines."""
    addresses: dict[str, str] = field(default_factory=dict)
    """IP -> host from the topology (NIC and management addresses), set by the caller."""
    dropped: Counter[tuple[str, int | None]] = field(default_factory=Counter)
    """(event type, status) -> events past the per-file cap, and repeated identical lines."""
    mismatches: list[mismatch.MismatchReport] = field(default_factory=list)
    """PyTorch `Detected mismatch between collectives` reports."""
    coll_calls: list[tuple[mismatch.CollCall, Evidence]] = field(default_factory=list)
    """NCCL COLL call lines: the last few of each process and communicator size."""
    aborted: dict[tuple[str, int], Evidence] = field(default_factory=dict)
    """(host, CUDA device) -> NCCL's `Abort COMPLETE` line of the process there: that process
    tore its communicator down itself, so its `Connection closed by localRank` is teardown."""
    gave_up: dict[int, Evidence] = field(default_factory=dict)
    """Global ranks whose PyTorch watchdog took the process down (`To avoid data inconsistency,
    we are taking the entire process down`): they timed out, even where the watchdog line
    itself is not among the inputs."""
    launcher_world: int | None = None
    """The job's size torchrun's rendezvous printed (`global_world_sizes=[N, ...]`), the last
    rendezvous read (an elastic restart rendezvous again)."""
    job_world: tuple[int, str] | None = None
    """The job's size and where it came from (the rank file or Slurm job placing ranks, or the
    user), set by the caller."""

    def merge(self, other: Facts) -> None:
        """Add `other`'s facts (one file's, read by a worker) to these."""
        self.events += other.events
        self.inits += other.inits
        self.dumps += other.dumps
        self.fr_findings += other.fr_findings
        self.ras += other.ras
        self.sources += other.sources
        for rank, host in other.hosts.items():
            self.hosts.setdefault(rank, host)
        for rank, device in other.devices.items():
            self.devices.setdefault(rank, device)
        for rank, label in other.files_by_rank.items():
            self.files_by_rank.setdefault(rank, label)
        for ip, host in other.ip_hosts.items():
            self.ip_hosts.setdefault(ip, host)
        self.named_ranks |= other.named_ranks
        self.dropped.update(other.dropped)
        self.mismatches += other.mismatches
        self.coll_calls += other.coll_calls
        for rank, evidence in other.gave_up.items():
            self.gave_up.setdefault(rank, evidence)
        for where, evidence in other.aborted.items():
            self.aborted.setdefault(where, evidence)
        self.launcher_world = other.launcher_world or self.launcher_world


def expand(paths: Iterable[Path]) -> list[tuple[Path, str]]:
    """The files to read, each with its display name: folders give their files (recursively,
    hidden ones skipped, in name order). Raises `InputError` for a path that does not exist."""
    found: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if not name.startswith("."):
                        full = Path(root) / name
                        found.append((full, str(full)))
        elif path.exists():
            found.append((path, str(path)))
        else:
            raise InputError.single(str(path), None, "no such file or folder")
    if not found:
        raise InputError.single(" ".join(str(p) for p in paths), None, "no files to read")
    return found


def read_all(paths: Iterable[Path], workers: int | None = None) -> Facts:
    """Read every input into one `Facts`; many files are read by `workers` processes (default:
    one per CPU), each file's facts merged in input order."""
    files = expand(paths)
    workers = workers or os.cpu_count() or 1
    facts = Facts()
    if workers > 1 and len(files) >= PARALLEL_FROM:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for part in pool.map(_read_one, files, chunksize=8):
                facts.merge(part)
    else:
        for path, label in files:
            read_file(path, label, facts)
    for item in facts.events:
        # PyTorch 2.1 prints `[Rank M]` without the process group: in a combined log it may be
        # a sub-group's rank. Where a file or prefix speaks for global rank M, it is not M.
        if item.rank_from_message and item.rank in facts.named_ranks:
            item.rank, item.pg_rank = None, item.rank
    return facts


def _read_one(item: tuple[Path, str]) -> Facts:
    facts = Facts()
    read_file(item[0], item[1], facts)
    return facts


def file_rank(name: str) -> int | None:
    """The rank a file name states (`rank12.log`, `trace_3`, `nccl_dump.rank-7.pkl`)."""
    found = _FILE_RANK.search(Path(name).name)
    return int(found.group(1)) if found else None


def read_file(path: Path, label: str, facts: Facts) -> None:
    """Read one input file into `facts`, by what its first bytes say it is."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError as exc:
        facts.sources.append(SourceFile(file=label, kind="unreadable", note=exc.strerror))
        return
    rank = file_rank(label)
    if frpickle.is_pickle(head):
        _read_pickle(path, label, rank, facts)
        return
    unusable = unusable_reason(head, path)
    if unusable is not None:
        facts.sources.append(SourceFile(file=label, kind="unreadable", note=unusable))
        return
    text_head = head.decode("utf-8", errors="replace")
    if ras.detect(text_head):
        report = ras.parse(_text_lines(path, label))
        facts.ras.append((report, label))
        facts.sources.append(SourceFile(file=label, kind="ras"))
        return
    if flight_recorder.detect(text_head) >= 0.8 and "NCCL INFO" not in text_head:
        _read_fr_text(path, label, rank, facts)
        return
    _read_log(path, label, rank, facts)


def unusable_reason(head: bytes, path: Path) -> str | None:
    """Why a file whose first bytes are `head` holds nothing to triage (None: it may): empty,
    or not text at all (a NUL byte: an executable, a core file, a compressed log). A log that
    merely says nothing about a hang is usable: it gets a verdict."""
    if not head.strip():
        try:
            whole = path.stat().st_size <= len(head)
        except OSError:
            whole = True
        if whole:
            return "the input is empty"
    if b"\x00" in head:
        compressed = next((name for magic, name in _COMPRESSED if head.startswith(magic)), None)
        return f"not a text log: {compressed} data (decompress it first)" if compressed \
            else "not a text log (binary data)"
    return None


_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"),
               (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bzip2"))
"""Magic numbers of the compressed files a log collection holds most often."""


def _whole_text_allowed(path: Path, label: str, what: str) -> None:
    """RAS output and Flight Recorder dumps and reports are read whole (their formats nest):
    refuse one too large to hold rather than run out of memory."""
    if path.stat().st_size > frpickle.MAX_BYTES:
        raise InputError.single(label, None, f"larger than {frpickle.MAX_BYTES >> 20} MiB: too "
                                             f"large for {what}")


def _text_lines(path: Path, label: str) -> list[str]:
    _whole_text_allowed(path, label, "NCCL RAS output")
    with open(path, encoding="utf-8", errors="replace") as handle:
        return [line.rstrip("\r\n") for line in handle]


def _read_pickle(path: Path, label: str, rank: int | None, facts: Facts) -> None:
    try:
        dump = frpickle.read_dump(path.read_bytes())
    except (frpickle.UnsafePickle, ParseError) as exc:
        raise InputError.single(label, None, str(exc)) from None
    _add_dump(dump, label, rank, facts, "flight-recorder")


def _read_fr_text(path: Path, label: str, rank: int | None, facts: Facts) -> None:
    _whole_text_allowed(path, label, "a Flight Recorder dump or report")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        dump = flight_recorder.parse(text)
    except ParseError as exc:
        raise InputError.single(label, exc.line, exc.message) from None
    _add_dump(dump, label, rank, facts, "fr-analyzer" if dump.format == "fr_trace"
              else "flight-recorder")


def _add_dump(dump: FlightRecorder, label: str, rank: int | None, facts: Facts,
              kind: str) -> None:
    owner = dump.rank if dump.rank is not None else rank
    for found in dump.mismatches:
        facts.fr_findings.append((found, Evidence(file=label, line=None,
                                                  text=found.message[:TEXT_MAX])))
    if dump.format != "fr_trace":
        facts.dumps.append((dump, owner, Evidence(file=label, line=None,
                                                  text=f"Flight Recorder {dump.format}")))
    facts.sources.append(SourceFile(
        file=label, kind="fr-analyzer" if kind == "fr-analyzer" else "flight-recorder",
        ranks=[owner] if owner is not None else []))


# ---- logs -----------------------------------------------------------------------------------

def key_lines(handle: object, chunk: int = CHUNK,
              total: list[int] | None = None) -> Iterator[tuple[int, bytes, bool]]:
    """(1-based line number, raw line, continues the line before) of every line of a binary file
    holding a key pattern, and of the lines that continue them, in order; reads `chunk` bytes at
    a time. At the end, the file's line count is appended to `total`."""
    read = handle.read  # type: ignore[attr-defined]
    base = 0  # lines before the current block
    carry = b""
    follow = 0  # lines still to keep at the start of the next block
    while True:
        data = read(chunk)
        if data:
            block = carry + data
            cut = block.rfind(b"\n")
            if cut < 0:
                carry = block
                continue
            carry = block[cut + 1:]
            block = block[:cut + 1]
        else:
            block, carry = carry, b""
            if not block:
                if total is not None:
                    total.append(base)
                return
        starts: dict[int, bool] = {}
        position = 0
        while follow and position < len(block):
            starts[position] = True
            follow -= 1
            position = block.find(b"\n", position) + 1 or len(block)
        for key in _KEYS:
            rule = _FOLLOW.get(key)
            found = block.find(key)
            while found >= 0:
                start = block.rfind(b"\n", 0, found) + 1
                starts.setdefault(start, False)
                if start > 1 and _LINE_START_B.match(block, start) is None:
                    # Perhaps the wrapped rest of a c10d line before (`... detected` / `by
                    # watchdog at work: 2070`): that line is read too, `_wrapped` decides.
                    before = block.rfind(b"\n", 0, start - 1) + 1
                    previous_line = block[before:start - 1].rstrip()
                    if b"ProcessGroupNCCL" in previous_line and previous_line[-1:] not in b".)]":
                        starts.setdefault(before, False)
                end = block.find(b"\n", found)
                if rule is not None and rule[0] in block[start:end] \
                        and not (rule[1] and rule[1] in block[start:end]):
                    position = end
                    for _ in range(rule[2]):
                        if position < 0 or position + 1 >= len(block):
                            follow = max(follow, rule[2])
                            break
                        starts[position + 1] = True
                        position = block.find(b"\n", position + 1)
                if end < 0:
                    break
                found = block.find(key, end)
        previous, number = 0, base
        for start in sorted(starts):
            number += block.count(b"\n", previous, start)
            previous = start
            end = block.find(b"\n", start)
            yield number + 1, block[start:end if end >= 0 else len(block)], starts[start]
        base += block.count(b"\n")
        if not data:
            if total is not None:
                total.append(base + (0 if block.endswith(b"\n") else 1))
            return


@dataclass
class _Stream:
    """Kept lines of one process (one global rank, launcher task or file)."""

    rank: int | None
    numbers: list[int] = field(default_factory=list)
    raws: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


def _decode(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").rstrip("\r")
    return _ANSI.sub("", text) if "\x1b" in text else text


def unpaste(line: str) -> str:
    """The log line as the program printed it, from the line as pasted into an issue or chat:
    a quote marker (`> `), markdown links around addresses and file names, and a collector's
    time stamp before the launcher prefix are taken off."""
    if line.lstrip().startswith(">"):
        line = _QUOTE.sub("", line, count=1)
    if "](" in line:
        line = _MD_LINK.sub(r"\1", line)
    if line[:1].isdigit() or line[:2].strip().isdigit():
        line = _ISO_STAMP.sub("", line, count=1)
    return line


def _split_prefix(line: str) -> tuple[int | None, str | None, str]:
    """(global rank from `[rankN]:` / mpirun prefix, srun task, text without the prefixes)."""
    line = unpaste(line)
    task = None
    found = _MPI_PREFIX.match(line)
    if found:
        return int(found.group(1)), None, line[found.end():]
    found = _SRUN_PREFIX.match(line)
    if found:
        task, line = found.group(1), line[found.end():]
    found = _RANK_PREFIX.match(line)
    if found:
        return int(found.group(1)), task, line[found.end():]
    return None, task, line


def _read_log(path: Path, label: str, rank: int | None, facts: Facts) -> None:
    streams: dict[object, _Stream] = {}
    kept = 0
    seen: set[bytes] = set()
    repeats: Counter[str] = Counter()
    repeated = False
    total: list[int] = []
    coll: deque[tuple[int, bytes]] = deque(maxlen=COLL_TAIL)
    previous: tuple[int, object] | None = None
    """(line number, stream) of the line kept last: a wrapped line continues it."""
    with open(path, "rb") as handle:
        for number, raw, follows in key_lines(handle, total=total):
            if b": opCount " in raw:
                coll.append((number, raw))
                continue
            if not follows:
                # A line said again word for word adds nothing but its count (nor do the lines
                # that continue it).
                repeated = raw in seen
                if repeated:
                    repeats[_decode(raw)] += 1
                    continue
                if kept < MAX_KEPT_PER_FILE:
                    seen.add(raw)
            elif repeated:
                continue
            if kept >= MAX_KEPT_PER_FILE:
                # Past the cap nothing more is held (not even to tell repeats apart).
                facts.dropped[("key line", None)] += 1
                continue
            kept += 1
            line = _decode(raw)
            prefix_rank, task, text = _split_prefix(line)
            key: object = ("rank", prefix_rank) if prefix_rank is not None else \
                ("task", task) if task is not None else ("file", None)
            if previous is not None and key == ("file", None) and number == previous[0] + 1 \
                    and _wrapped(streams[previous[1]].texts[-1], text):
                # A line a terminal or issue tracker wrapped: the rest of the line before.
                before = streams[previous[1]]
                before.texts[-1] += text
                before.raws[-1] += line
                previous = (number, previous[1])
                continue
            previous = (number, key)
            stream = streams.get(key)
            if stream is None:
                stream = streams[key] = _Stream(rank=prefix_rank if prefix_rank is not None
                                                else None if task is not None else rank)
            stream.numbers.append(number)
            stream.raws.append(line)
            stream.texts.append(text)
    _coll_calls(coll, label, facts)
    ranks: set[int] = set()
    first = len(facts.events)
    for stream in streams.values():
        _scan_stream(stream, label, facts, ranks, repeats)
    # Streams are scanned one after the other; the file's order is the order things happened.
    facts.events[first:] = sorted(facts.events[first:], key=lambda e: e.evidence.line or 0)
    if rank is not None:
        ranks.add(rank)
        facts.files_by_rank.setdefault(rank, label)
        facts.named_ranks.add(rank)
    facts.named_ranks.update(s.rank for s in streams.values() if s.rank is not None)
    for one in ranks:
        facts.files_by_rank.setdefault(one, label)
    facts.sources.append(SourceFile(file=label, kind="log", ranks=sorted(ranks),
                                    lines=total[0] if total else 0))


_LINE_START = re.compile(r"^\s*(?:\[|[\w.\-]+:\d+:\d+ \[|\d{4}-\d\d-\d\d|[EWIF]\d{4} )")
"""How a log line of its own starts: a bracket (`[rank3]:`, `[E ...]`), an NCCL host prefix, a
date, a glog stamp."""
_LINE_START_B = re.compile(rb"\s*(?:\[|\(|`|[\w.\-]+:\d+:\d+ \[|\d{4}-\d\d-\d\d|[EWIF]\d{4} "
                           rb"|[\w.\-]+ \[(?:stdout|stderr)\])")
"""`_LINE_START` on the raw bytes `key_lines` reads (with a Ray worker's `(`, a backtick and a
runner's `host [stderr]`)."""


_WRAPPABLE = ("ProcessGroupNCCL", "WorkNCCL", "NCCL WARN", "watchdog")
"""Messages whose wrapped rest is joined back: PyTorch's c10d and NCCL's own lines (a
torchrun report's lines are lines of their own)."""


def _wrapped(before: str, text: str) -> bool:
    """Whether `text` (a line with no prefix) is the wrapped rest of `before`: `before` is a
    c10d or NCCL message that stops mid-message (not after `.`, `)` or `]`) and `text` does not
    start a line of its own."""
    end = before.rstrip()
    return bool(end) and end[-1] not in ".)]" and bool(text.strip()) \
        and any(key in before for key in _WRAPPABLE) and _LINE_START.match(text) is None


def _coll_calls(lines: Iterable[tuple[int, bytes]], label: str, facts: Facts) -> None:
    """The last few NCCL COLL call lines of each process and communicator size."""
    last: dict[tuple[str, int, int, int], deque[tuple[mismatch.CollCall, Evidence]]] = {}
    for number, raw in lines:
        line = _decode(raw)
        call = mismatch.coll_call(unpaste(line))
        if call is None:
            continue
        key = (call.host, call.pid, call.device, call.nranks)
        last.setdefault(key, deque(maxlen=mismatch.MAX_COLL_PER_PROCESS)).append(
            (call, Evidence(file=label, line=number, text=line[:TEXT_MAX])))
    for calls in last.values():
        facts.coll_calls.extend(calls)


def _pytorch_lines(stream: _Stream, label: str, facts: Facts) -> None:
    """PyTorch lines the NCCL log parser does not turn into events: collective-mismatch reports
    and the watchdog's `taking the entire process down`."""
    for index, text in enumerate(stream.texts):
        evidence = Evidence(file=label, line=stream.numbers[index],
                            text=stream.raws[index][:TEXT_MAX])
        if "Detected mismatch between collectives" in text:
            sides = mismatch.fingerprints(text)
            if len(sides) >= 2:
                facts.mismatches.append(mismatch.MismatchReport(sides=sides, reporter=stream.rank,
                                                                evidence=evidence))
        elif "entire process down" in text and stream.rank is not None:
            facts.gave_up.setdefault(stream.rank, evidence)


def _aborts(stream: _Stream, label: str, facts: Facts) -> None:
    """NCCL's `Abort COMPLETE` lines, by the host and device of the process that printed them;
    and torchrun's rendezvous result's world size."""
    for index, text in enumerate(stream.texts):
        if "global_world_sizes=" in text and (world := _RDZV_WORLD.search(text)) is not None:
            facts.launcher_world = int(world.group(1))
        if "Abort COMPLETE" in text and (found := _ABORT.search(text)) is not None:
            facts.aborted.setdefault((found.group(1), int(found.group(2))), Evidence(
                file=label, line=stream.numbers[index], text=stream.raws[index][:TEXT_MAX]))


def _closed_by_local_rank(stream: _Stream) -> list[NcclLogEvent]:
    """`[Service thread] Connection closed by localRank N`: NCCL prints it as INFO (the NCCL log
    parser only tallies INFO lines), yet it names the local process that went away."""
    found: list[NcclLogEvent] = []
    for index, text in enumerate(stream.texts):
        if "Connection closed by localRank" not in text or "NCCL INFO" not in text:
            continue
        head = _NCCL_HEAD.search(text)
        found.append(NcclLogEvent(
            type="connection_closed", rank=None, host=head.group(1) if head else None,
            seq=None, op=None, timeout_ms=None, peer=None, status=None, line=index + 1,
            message=text.split("NCCL INFO", 1)[1].strip()[:500],
            pid=int(head.group(2)) if head else None,
            device=int(head.group(3)) if head else None))
    return found


def _scan_stream(stream: _Stream, label: str, facts: Facts, ranks: set[int],
                 repeats: Counter[str]) -> None:
    """Parse one stream's key lines into `facts`; a line that `repeats` counts again is counted
    in `facts.dropped` by its event's type and status."""
    if not stream.texts:
        return
    _pytorch_lines(stream, label, facts)
    _aborts(stream, label, facts)
    result = nccl_log.scan(stream.texts)
    if result is None:
        return
    result.events.extend(_closed_by_local_rank(stream))
    kept: Counter[str] = Counter()
    for interface in [*result.oob_interfaces, *result.bootstrap_interfaces]:
        for host in interface.hosts[:1]:
            facts.ip_hosts.setdefault(interface.address, host)
    for init in result.ranks:
        facts.inits.append(InitRank(rank=init.rank, nranks=init.nranks, host=init.host,
                                    device=init.device, local_rank=None))
    for event in result.events:
        index = event.line - 1
        if not 0 <= index < len(stream.numbers):
            continue
        evidence = Evidence(file=label, line=stream.numbers[index],
                            text=stream.raws[index][:TEXT_MAX])
        if event.type == "init_complete":
            if event.rank is not None and event.nranks:
                facts.inits.append(InitRank(rank=event.rank, nranks=event.nranks,
                                            host=event.host, device=event.device,
                                            local_rank=event.local_rank))
            continue
        again = repeats.get(stream.raws[index], 0)
        if again:
            facts.dropped[(event.type, event.status)] += again
        if event.type not in _ALWAYS:
            kept[event.type] += 1
            if kept[event.type] > MAX_EVENTS_PER_TYPE:
                facts.dropped[(event.type, event.status)] += 1
                if "by localRank" in event.message:
                    facts.dropped[("closed by localRank", None)] += 1 + again
                continue
        global_rank, pg_rank = _global_rank(stream, event)
        guessed = stream.rank is None and event.rank_source == "pytorch" \
            and global_rank is not None
        if global_rank is not None:
            ranks.add(global_rank)
            if event.host:
                facts.hosts.setdefault(global_rank, event.host)
            if event.device is not None:
                facts.devices.setdefault(global_rank, event.device)
        facts.events.append(LineEvent(event=event, rank=global_rank, pg_rank=pg_rank,
                                      pg=_pg_name(event.pg), host=event.host,
                                      evidence=evidence, rank_from_message=guessed))
    if stream.rank is not None:
        ranks.add(stream.rank)


def _pg_name(pg: str | None) -> str:
    """One name per process group: PyTorch prints the default group as `0 (default_pg)`,
    `ID 0 PG GUID 0(default_pg)`, or (older watchdog lines) not at all."""
    if pg is None or pg in _DEFAULT_PGS or "(default_pg)" in pg:
        return DEFAULT_PG
    return pg


def _global_rank(stream: _Stream, event: NcclLogEvent) -> tuple[int | None, int | None]:
    """(global rank, process-group rank) of an event of `stream`; see the module docstring."""
    said = event.rank
    source = event.rank_source
    if source == "desync":
        # The desync report names the *lagging* rank, in the reporting rank's process group.
        return None, said
    pg_rank = said if source == "pytorch" else None
    if stream.rank is not None:
        return stream.rank, pg_rank
    if source in ("init", "torchrun"):
        return said, None
    if source == "pytorch" and _pg_name(event.pg) == DEFAULT_PG:
        return said, said
    return None, pg_rank
