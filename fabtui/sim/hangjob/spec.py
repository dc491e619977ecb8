"""What a simulated hung job is: the spec asked for, the cases, and the job as played.

`JobSpec` (case, size, NCCL and PyTorch releases, extras) and `SpecError`; `CASES`, the scenarios
and what each plants; the releases the line formats follow; the job's timing constants; `Job` and
`Rank`, the job as its case plays it (what each rank enqueued and completed, the lines of its
failure, how it exited), and `ring`, a rank's neighbour over its rail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CASES: dict[str, str] = {
    "optic": "the optic of the demo nccl-hang scenario dies: its rank and the rail peer report "
             "status 12, every other rank times out",
    "victim-first-watchdog": "one rank never enqueues the collective; the watchdog of another "
                             "rank fires first and torchrun names that one",
    "culprit-rank0": "rank 0 never enqueues the collective (the desync report moves to rank 1)",
    "missing-log": "the culprit's node died: no log, no Flight Recorder dump from it",
    "ras-minority": "a few ranks are ahead; RAS names them, the many behind are the culprits",
    "status12-cascade": "one status 12 (retry exceeded), then status 5 (flushed) from every rank "
                        "tearing down",
    "connection-closed-cascade": "one process crashes; 'Connection closed by localRank' from its "
                                 "node, then from every node as the job is torn down",
    "stale-pg-rank": "the hang is in a sub-group: 'Rank M' in the messages is the group rank, "
                     "the [rankN] prefix the global one",
    "all-launched-none-completed": "every rank launched, none completed, RAS healthy, no WARN: "
                                   "the network between the ranks, no culprit rank",
    "desync-size": "one rank issued the all_reduce with another size at the same sequence number",
    "desync-threads": "two threads issued collectives on one communicator in different orders",
    "two-faults": "two links died on different nodes and rails at once",
}


NCCL_RELEASES = {18: "2.18.5", 19: "2.19.3", 20: "2.20.5", 21: "2.21.5", 22: "2.22.3",
                 23: "2.23.4", 24: "2.24.3", 25: "2.25.1", 26: "2.26.2", 27: "2.27.5"}
TORCH_RELEASES = ("2.1.2", "2.4.1", "2.6.0")
MIN_RANKS, MAX_RANKS = 8, 1024
EPOCH = 1_796_094_000
"""2026-12-01 03:00 UTC: when the simulated job's story starts (plus a seed-dependent shift)."""
TIMEOUT_MS = 600_000
RETRY_S = 31.0
"""A dead link to the first completion error: 7 retries of a 4.3 s ACK timeout."""
HISTORY = 16
"""Collectives kept per rank in a Flight Recorder dump."""


class SpecError(ValueError):
    """A job spec that cannot be generated (the message says what to change)."""


@dataclass(frozen=True)
class JobSpec:
    """What to generate: the case, the job size, the software versions and the extras."""

    case: str
    ranks: int
    nccl: str = "2.21"
    torch: str | None = None
    """PyTorch release (`2.1`, `2.4`, `2.6`); default: the one that shipped with `nccl`."""
    seed: int = 0
    flight_recorder: bool = True
    ras: bool | None = None
    """Write `ncclras` output; default: when the NCCL release has RAS (2.24+)."""
    bytes_per_rank: int = 0
    """Pad each rank's log with training iterations up to about this size (0: a short log)."""
    combined: bool = True
    """Write `job.log` beside the per-rank files."""


@dataclass
class Rank:
    rank: int
    node: str
    node_index: int
    local: int
    gpu: int
    bus: str
    nic: str | None
    ip: str
    leaf_port: str | None
    optic: str | None
    pid: int
    enqueued: int
    completed: int
    started: bool = True
    op_at_seq: dict[int, str] = field(default_factory=dict)
    numel_at_seq: dict[int, int] = field(default_factory=dict)
    events: list[tuple[float, str]] = field(default_factory=list)
    """(time, line) of the failure, in time order once sorted."""
    exit: tuple[float, int, str] | None = None
    """(time, exit code, torchrun traceback text) if the process ended."""
    has_log: bool = True


@dataclass
class Job:
    spec: JobSpec
    minor: int
    nccl: str
    torch: str
    ranks: list[Rank]
    epoch: float
    seq: int
    op: str
    numel: int
    pg: str = "0"
    pg_desc: str = "default_pg"
    pg_members: list[int] = field(default_factory=list)
    truth: dict[str, Any] = field(default_factory=dict)
    comm_hash: int = 0
    by_slot: dict[tuple[int, int], Rank] = field(default_factory=dict)
    step_heads: dict[int, tuple[str, str]] = field(default_factory=dict)
    """Iteration line parts shared by every rank (formatted once)."""

    def pg_rank(self, rank: int) -> int:
        return self.pg_members.index(rank) if self.pg_members else rank


def nccl_release(text: str) -> tuple[int, str]:
    """`2.21` or `2.21.5` -> (21, the full release). Raises `SpecError` outside 2.18-2.27."""
    parts = text.strip().split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise SpecError(f"--nccl {text!r}: expected a release such as 2.21 or 2.21.5") from None
    if major != 2 or minor not in NCCL_RELEASES:
        raise SpecError(f"--nccl {text}: the simulation writes NCCL 2.18 to 2.27")
    return minor, text.strip() if len(parts) > 2 else NCCL_RELEASES[minor]


def torch_release(text: str | None, minor: int) -> str:
    if text is None:
        return "2.1.2" if minor < 20 else "2.4.1" if minor < 22 else "2.6.0"
    for release in TORCH_RELEASES:
        if release == text or release.startswith(text.strip() + "."):
            return release
    raise SpecError(f"--torch {text}: the simulation writes PyTorch {', '.join(TORCH_RELEASES)}")


def ring(job: Job, rank: int, offset: int) -> Rank:
    """The rank's ring neighbour over its rail: the same GPU on the next (`offset` > 0) or
    previous node of the job, whatever the rank file's numbering."""
    if not job.by_slot:
        job.by_slot = {(r.node_index, r.gpu): r for r in job.ranks}
    me = job.ranks[rank]
    nodes = len({r.node for r in job.ranks}) or 1
    step = 1 if offset > 0 else -1
    peer = job.by_slot.get(((me.node_index + step) % nodes, me.gpu))
    return peer if peer is not None else job.ranks[(rank + offset) % len(job.ranks)]
