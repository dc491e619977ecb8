"""NCCL RAS status output (`ncclras`, `echo verbose status | nc localhost 28028`; NCCL >= 2.24),
in its text form and its JSON form (`ncclras -f json`, NCCL >= 2.28.7).

What triage needs from it: per communicator, the groups of ranks with equal launched-operation
counts and which ranks RAS named under each (RAS prints only the outlier group, which can be the
ranks *ahead*), the missing ranks, dead processes, and whether everything is `OK`. Format:
NVIDIA/nccl docs/userguide/source/troubleshooting/ras.rst.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_COMM = re.compile(r"^\s*#(\d+-\d+)\s+\((\w+)\)\s+(MISMATCH|INCOMPLETE|DEAD|\w+)")
_COUNT = re.compile(r"^\s*(\d+) ranks? ha(?:ve|s) launched up to operation (\d+)")
_NO_DATA = re.compile(r"^\s*Missing communicator data from (\d+) ranks?\s*$")
"""NCCL 2.27+ INCOMPLETE detail: the `Rank R -- GPU ...` lines after it did not answer RAS."""
_STATUS_GROUP = re.compile(r"^\s*(\d+) ranks? ha(?:ve|s) status (\w+)")
_RANK = re.compile(r"^\s*Rank (\d+) -- GPU (\d+) managed by process (\d+) on node (\S+)")
_RANK_ALONE = re.compile(r"^\s*Rank (\d+) has (?:launched up to operation (\d+)|not launched "
                         r"any operations) -- GPU (\d+) managed by process (\d+) on node (\S+)")
"""A group of one rank, printed on one line (`src/ras/client_support.cc`)."""
_MISSING = re.compile(r"^\s*The missing ranks?: ([\d,\s\-]+)")
_PROCESS = re.compile(r"^\s*Process (\d+) on node (\S+) managing GPU (\d+)")
_JOB = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
"""The `Job summary` row: nodes, processes per node, GPUs per process, processes, GPUs."""
_TOTALS = re.compile(r"^\s*\(total\)\s+\(total\)\s+\(total\)\s*$")
"""NCCL 2.27+'s second `Job summary` table, printed when nodes differ (`Nodes Processes GPUs` /
`(total) (total) (total)`): its row is nodes, processes, GPUs of the whole job."""
_TOTALS_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s*$")
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+([\d\-]+)\s+(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s*$")


@dataclass
class RasRank:
    """A rank RAS printed: `Rank 0 -- GPU 0 managed by process 483072 on node 172.16.64.210`."""

    rank: int
    gpu: int | None
    pid: int | None
    node: str | None
    line: int | None


@dataclass
class RasGroup:
    """Ranks with one launched-operation count (`26 ranks have launched up to operation 6650`)."""

    size: int
    count: int
    named: list[RasRank] = field(default_factory=list)
    line: int | None = None
    text: str = ""


@dataclass
class RasComm:
    """One communicator RAS reported on (`#0-0 (27a079b828ff1a75) MISMATCH`)."""

    ident: str
    hash: str
    state: str
    size: int | None = None
    groups: list[RasGroup] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    no_data: list[RasRank] = field(default_factory=list)
    """Ranks listed under `Missing communicator data from N ranks` (INCOMPLETE)."""
    line: int | None = None
    text: str = ""


@dataclass
class RasReport:
    """One RAS status output."""

    comms: list[RasComm] = field(default_factory=list)
    dead: list[RasRank] = field(default_factory=list)
    rows_ok: bool | None = None
    """True when every summary row says `OK`, False when one does not, None without rows."""
    ranks_per_comm: int | None = None
    processes: int | None = None
    """Processes (total) of the `Job summary`: every process of the job, whether it logged or
    not."""
    evidence: list[tuple[int, str]] = field(default_factory=list)


def detect(head: str) -> bool:
    """True when `head` (the start of a file) is RAS status output."""
    return ("Communicators" in head and "Group" in head and "Comms" in head) or \
        ("Job summary" in head and "Processes" in head) or \
        ('"communicators"' in head and '"collective_counts"' in head)


def parse(lines: Iterable[str]) -> RasReport:
    """Parse RAS text or JSON output read as `lines`."""
    kept = list(lines)
    joined_head = "\n".join(kept[:50])
    if joined_head.lstrip().startswith("{"):
        return _parse_json("\n".join(kept))
    report = RasReport()
    comm: RasComm | None = None
    group: RasGroup | None = None
    sizes: dict[str, int] = {}
    """Summary row (group #) -> ranks per communicator of that group."""
    totals = no_data = False
    for number, line in enumerate(kept, start=1):
        if _TOTALS.match(line):
            totals = True
        elif totals and (row3 := _TOTALS_ROW.match(line)) is not None:
            report.processes, totals = int(row3.group(2)), False
        elif report.processes is None and (job := _JOB.match(line)) is not None:
            report.processes = int(job.group(4))
        elif (row := _ROW.match(line)) is not None:
            ok = row.group(8) == "OK"
            report.rows_ok = ok if report.rows_ok is None else report.rows_ok and ok
            report.ranks_per_comm = max(report.ranks_per_comm or 0, int(row.group(5)))
            sizes[row.group(1)] = int(row.group(5))
            report.evidence.append((number, line))
        elif (found := _COMM.match(line)) is not None:
            comm = RasComm(ident=found.group(1), hash=found.group(2), state=found.group(3),
                           line=number, text=line.strip())
            report.comms.append(comm)
            group, no_data = None, False
        elif comm is not None and _NO_DATA.match(line):
            group, no_data = None, True
        elif comm is not None and no_data and (quiet := _RANK.match(line)) is not None:
            comm.no_data.append(RasRank(int(quiet.group(1)), int(quiet.group(2)),
                                        int(quiet.group(3)), quiet.group(4), number))
        elif comm is not None and (count := _COUNT.match(line)) is not None:
            group = RasGroup(size=int(count.group(1)), count=int(count.group(2)), line=number,
                             text=line.strip())
            comm.groups.append(group)
        elif comm is not None and _STATUS_GROUP.match(line):
            group = None  # a status split (init / finalize), not a launch-count split
        elif comm is not None and (alone := _RANK_ALONE.match(line)) is not None:
            group = None
            comm.groups.append(RasGroup(
                size=1, count=int(alone.group(2) or 0), line=number, text=line.strip(),
                named=[RasRank(int(alone.group(1)), int(alone.group(3)), int(alone.group(4)),
                               alone.group(5), number)]))
        elif (rank := _RANK.match(line)) is not None and group is not None:
            group.named.append(RasRank(int(rank.group(1)), int(rank.group(2)),
                                       int(rank.group(3)), rank.group(4), number))
        elif (missing := _MISSING.match(line)) is not None and comm is not None:
            comm.missing.extend(_numbers(missing.group(1)))
        elif (process := _PROCESS.match(line)) is not None and "DEAD" in _section(kept, number):
            report.dead.append(RasRank(-1, int(process.group(3)), int(process.group(1)),
                                       process.group(2), number))
    for comm in report.comms:
        # `#G-C` is communicator C of summary row G: its size is that row's, not the job's.
        comm.size = sizes.get(comm.ident.split("-", 1)[0], report.ranks_per_comm)
    return report


def _section(lines: list[str], number: int) -> str:
    """The error heading (`DEAD`, `INCOMPLETE`, ...) the line at `number` is under."""
    for index in range(number - 2, max(-1, number - 12), -1):
        text = lines[index].strip()
        if text and text.isupper() and " " not in text:
            return text
    return ""


def _numbers(text: str) -> list[int]:
    found: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            low, _, high = part.partition("-")
            if low.isdigit() and high.isdigit():
                found.extend(range(int(low), int(high) + 1))
        elif part.isdigit():
            found.append(int(part))
    return found


def _parse_json(text: str) -> RasReport:
    report = RasReport()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return report
    for index, raw in enumerate(data.get("communicators", []) if isinstance(data, dict) else []):
        if not isinstance(raw, dict):
            continue
        comm = RasComm(ident=f"#{index}", hash=str(raw.get("hash", "")), state="OK",
                       size=raw.get("size") if isinstance(raw.get("size"), int) else None)
        counts: dict[int, list[RasRank]] = {}
        for rank in raw.get("ranks", []):
            if not isinstance(rank, dict) or not isinstance(rank.get("rank"), int):
                continue
            ops = rank.get("collective_counts", {})
            total = sum(v for v in ops.values() if isinstance(v, int)) \
                if isinstance(ops, dict) else 0
            counts.setdefault(total, []).append(RasRank(rank["rank"], rank.get("cuda_dev"),
                                                        rank.get("pid"), rank.get("host"), None))
        for total, ranks in sorted(counts.items(), reverse=True):
            comm.groups.append(RasGroup(size=len(ranks), count=total, named=ranks,
                                        text=f"{len(ranks)} ranks launched {total} operations"))
        for missing in raw.get("missing_ranks", []):
            if isinstance(missing, dict) and isinstance(missing.get("rank"), int):
                comm.missing.append(missing["rank"])
                status = missing.get("status", {})
                if isinstance(status, dict) and status.get("considered_dead"):
                    report.dead.append(RasRank(missing["rank"], missing.get("cuda_dev"),
                                               missing.get("pid"), missing.get("host"), None))
        if len(counts) > 1:
            comm.state = "MISMATCH"
        if comm.missing:
            comm.state = "INCOMPLETE"
        report.comms.append(comm)
    report.rows_ok = all(c.state == "OK" for c in report.comms) if report.comms else None
    return report
