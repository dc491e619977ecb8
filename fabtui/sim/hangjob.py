"""Simulated hung training jobs: per-rank logs in the real formats, with the answer beside them.

`generate(out, spec, graph)` writes the logs a hung job of 8 to 1,024 ranks leaves behind, as NCCL
2.18-2.27 and PyTorch 2.1 / 2.4 / 2.6 word them, and `expected.json`, the ground truth a triage
must find. Ranks are placed by the fabric graph (8 per node in node order, or the rank file), so
every rank's node, GPU, NIC, NIC address, leaf port and optic in the logs and in the manifest is
the topology's.

Files written under `out/`:

- `rank-N.log`: what rank N printed (NCCL_DEBUG=INFO init, training iterations, the failure);
- `job.log`: the same lines of every rank as `srun -l torchrun ...` collects them (the prefix is
  the srun task, one per node; PyTorch's own lines carry `[rankN]:`, the global rank), ending with
  each node agent's torchrun failure summary;
- `fr/nccl_trace_rank_N` (pickle) and `fr/nccl_trace_rank_N.json`: Flight Recorder dumps;
- `ras/ncclras-status.txt`: `ncclras` output (NCCL 2.24+), asked on a healthy node after the hang;
- `expected.json`: the case's ground truth (see docs/triage-sim.md).

The cases are the ones where naive reading misleads (`CASES`). Everything is a function of the
spec (the seed included): two runs write identical files. Files are written as they are produced
(per rank, then the combined log in phase order), so memory stays small at any size.
"""

from __future__ import annotations

import json
import pickle
import random
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from heapq import merge
from pathlib import Path
from typing import Any

from fabtui.topology.graph import FabricGraph

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
_IB_WARN_LINE = {18: 1295, 19: 1333, 20: 1696, 21: 1909, 22: 1984, 23: 2121, 24: 2244,
                 25: 2244, 26: 2358, 27: 2451}
"""transport/net_ib.cc line of the completion-error WARN in each release."""
_EPOCH = 1_796_094_000
"""2026-12-01 03:00 UTC: when the simulated job's story starts (plus a seed-dependent shift)."""
_TIMEOUT_MS = 600_000
_RETRY_S = 31.0
"""A dead link to the first completion error: 7 retries of a 4.3 s ACK timeout."""
_HISTORY = 16
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
class _Rank:
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
class _Job:
    spec: JobSpec
    minor: int
    nccl: str
    torch: str
    ranks: list[_Rank]
    epoch: float
    seq: int
    op: str
    numel: int
    pg: str = "0"
    pg_desc: str = "default_pg"
    pg_members: list[int] = field(default_factory=list)
    truth: dict[str, Any] = field(default_factory=dict)
    comm_hash: int = 0
    by_slot: dict[tuple[int, int], _Rank] = field(default_factory=dict)
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


def _torch_release(text: str | None, minor: int) -> str:
    if text is None:
        return "2.1.2" if minor < 20 else "2.4.1" if minor < 22 else "2.6.0"
    for release in TORCH_RELEASES:
        if release == text or release.startswith(text.strip() + "."):
            return release
    raise SpecError(f"--torch {text}: the simulation writes PyTorch {', '.join(TORCH_RELEASES)}")


# --- the job ---------------------------------------------------------------------------------

def _build(spec: JobSpec, graph: FabricGraph) -> _Job:
    if spec.case not in CASES:
        raise SpecError(f"unknown case {spec.case!r}; cases: {', '.join(CASES)}")
    if not MIN_RANKS <= spec.ranks <= MAX_RANKS or spec.ranks % 8:
        raise SpecError(f"--ranks {spec.ranks}: a multiple of 8 from {MIN_RANKS} to {MAX_RANKS}")
    if spec.ranks > len(graph.ranks):
        raise SpecError(f"--ranks {spec.ranks}: the topology places only {len(graph.ranks)} "
                        "ranks (use a bigger topology)")
    minor, nccl = nccl_release(spec.nccl)
    rng = random.Random(f"{spec.case}/{spec.ranks}/{spec.seed}")
    nodes: list[str] = []
    ranks: list[_Rank] = []
    seq = 1000 + rng.randrange(5000)
    for slot in graph.ranks[:spec.ranks]:
        if slot.node not in nodes:
            nodes.append(slot.node)
        place = graph.placement(slot.rank)
        nic = place.nics[0] if place.nics else None
        found = graph.find_nic(slot.node, nic.nic) if nic else None
        node_index = nodes.index(slot.node)
        local = sum(1 for r in ranks if r.node == slot.node)
        bus = (place.gpu_pci or "0000:00:00.0").split(":", 1)[-1].replace(":", "")
        ranks.append(_Rank(
            rank=slot.rank, node=slot.node, node_index=node_index, local=local, gpu=slot.gpu,
            bus=bus.split(".")[0] + "0", nic=nic.nic if nic else None,
            ip=(found.ip if found and found.ip else f"10.250.{node_index // 250}."
                f"{node_index % 250 + 1}"),
            leaf_port=f"{nic.leaf}:{nic.leaf_port}" if nic and nic.leaf else None,
            optic=nic.optic if nic else None, pid=40_000 + 97 * node_index + 11 * local,
            enqueued=seq, completed=seq - 1))
    job = _Job(spec=spec, minor=minor, nccl=nccl, torch=_torch_release(spec.torch, minor),
               ranks=ranks, epoch=float(_EPOCH + 60 * (spec.seed % 1000)), seq=seq,
               op="ALLREDUCE", numel=rng.choice([262_144_000, 131_072_000, 50_331_648]),
               comm_hash=rng.getrandbits(64))
    for r in ranks:
        r.op_at_seq[seq] = job.op
        r.numel_at_seq[seq] = job.numel
    _CASE_BUILDERS[spec.case](job, rng, graph)
    for r in ranks:
        r.events.sort()
    return job


def _need_nodes(job: _Job, count: int) -> None:
    if len({r.node for r in job.ranks}) < count:
        raise SpecError(f"case {job.spec.case} needs at least {count} nodes "
                        f"({8 * count} ranks): it crosses the network")


def _pick(rng: random.Random, job: _Job, *, avoid: Iterable[int] = (), not_zero: bool = True,
          other_node_than: Iterable[int] = ()) -> int:
    avoid = set(avoid)
    nodes = {job.ranks[r].node for r in other_node_than}
    choices = [r.rank for r in job.ranks if r.rank not in avoid and r.node not in nodes
               and (r.rank != 0 or not not_zero)]
    return rng.choice(choices)


def _suspect(job: _Job, rank: int, **extra: Any) -> dict[str, Any]:
    r = job.ranks[rank]
    return {"rank": rank, "node": r.node, "gpu": r.gpu, "nic": r.nic, "ip": r.ip,
            "leaf_port": r.leaf_port, "optic": r.optic, **extra}


def _truth(job: _Job, verdict: str, culprits: list[int] | None, lead: int | None = None,
           **extra: Any) -> None:
    """The manifest's answer; `lead`: of several culprits, the one whose fault came first (the
    top-level node, GPU, NIC, port and optic are its)."""
    suspects = [_suspect(job, c) for c in culprits or []] if culprits and len(culprits) <= 8 \
        else []
    first = suspects[0] if len(suspects) == 1 else \
        next((s for s in suspects if s["rank"] == lead), None)
    job.truth = {
        "verdict": verdict, "culprits": culprits,
        "node": first["node"] if first else None, "gpu": first["gpu"] if first else None,
        "nic": first["nic"] if first else None,
        "leaf_port": first["leaf_port"] if first else None,
        "optic": first["optic"] if first else None, "suspects": suspects,
        "collective": {"op": job.op, "seq": job.seq, "pg": job.pg, "pg_desc": job.pg_desc},
        **extra}


# --- failure lines ---------------------------------------------------------------------------

def _stamp(job: _Job, t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(job.epoch + t))


def _nccl_prefix(r: _Rank, tid_offset: int = 0) -> str:
    return f"{r.node}:{r.pid}:{r.pid + tid_offset}"


def _warn(job: _Job, r: _Rank, t: float, where: str, message: str) -> list[tuple[float, str]]:
    """An NCCL WARN line: a blank line before it up to 2.25, a timestamp from 2.26 on."""
    head = f"{_nccl_prefix(r, 57)} [{r.gpu}] {where} NCCL WARN {message}"
    if job.minor >= 26:
        return [(t, f"[{_stamp(job, t)}] {head}")]
    return [(t, ""), (t, head)]


def _info(r: _Rank, t: float, message: str, tid_offset: int = 0) -> tuple[float, str]:
    return (t, f"{_nccl_prefix(r, tid_offset)} [{r.gpu}] NCCL INFO {message}")


def _ib_error(job: _Job, r: _Rank, peer: _Rank, t: float, status: int, direction: str,
              ) -> list[tuple[float, str]]:
    """The completion-error WARN of `r`'s NIC naming `peer`, with its error chain."""
    vendor = 129 if status == 12 else 249
    port = 50_000 + (peer.pid * 7 + r.rank) % 15_000
    if job.minor < 20:
        text = (f"NET/IB : Got completion from peer {peer.ip}<{port}> with error {status}, "
                f"opcode 0, len 0, vendor err {vendor} ({direction}) localGid ::ffff:{r.ip} "
                f"remoteGid ::ffff:{peer.ip}")
    elif job.minor < 22:
        text = (f"NET/IB : Got completion from peer {peer.ip}<{port}> with status={status} "
                f"opcode=0 len=0 vendor err {vendor} ({direction}) localGid ::ffff:{r.ip} "
                f"remoteGids::ffff:{peer.ip}")
    else:
        text = (f"NET/IB: Got completion from peer {peer.ip}<{port}> with status={status} "
                f"opcode=0 len=0 vendor err {vendor} ({direction}) localGid ::ffff:{r.ip} "
                f"remoteGids::ffff:{peer.ip} hca {r.nic}")
    lines = _warn(job, r, t, f"transport/net_ib.cc:{_IB_WARN_LINE[job.minor]}", text)
    lines += [_info(r, t + 1e-4, "transport/net.cc:1227 -> 6", 57),
              _info(r, t + 2e-4, "proxy.cc:696 -> 6", 57),
              _info(r, t + 3e-4, "proxy.cc:874 -> 6 [Proxy Thread]", 57)]
    return lines


def _c10(job: _Job, r: _Rank, t: float, line: int, message: str, level: str = "E") -> str:
    """A PyTorch c10 log line: `[rankN]:` and nanosecond stamps from 2.2 on, `[E file:line]`
    before."""
    if job.torch < "2.2":
        return f"[{level} ProcessGroupNCCL.cpp:{line}] {message}"
    when = time.gmtime(job.epoch + t)
    nanos = int((job.epoch + t) % 1 * 1e9)
    stamp = f"{level}{when.tm_mon}{when.tm_mday:02d} {time.strftime('%H:%M:%S', when)}.{nanos:09d}"
    return f"[rank{r.rank}]:[{stamp} ProcessGroupNCCL.cpp:{line}] {message}"


def _pg_prefix(job: _Job, r: _Rank, pg: str, desc: str) -> str:
    rank = job.pg_rank(r.rank) if pg == job.pg else r.rank
    if job.torch < "2.2":
        return f"[Rank {rank}]"
    if job.torch < "2.5":
        return f"[PG {pg} ({desc}) Rank {rank}]"
    return f"[PG ID {pg} PG GUID {pg}({desc}) Rank {rank}]"


def _watchdog(job: _Job, r: _Rank, t: float, seq: int, *, pg: str | None = None,
              desc: str | None = None) -> None:
    """What a rank stuck in collective `seq` prints when its watchdog fires, and its abort."""
    pg = pg or job.pg
    desc = desc or job.pg_desc
    op = r.op_at_seq.get(seq, job.op)
    numel = r.numel_at_seq.get(seq, job.numel)
    ran = _TIMEOUT_MS + 1 + (r.rank * 37 + seq) % 90
    pg_rank = job.pg_rank(r.rank) if pg == job.pg else r.rank
    caught = (f"[Rank {pg_rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
              f"{seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)="
              f"{_TIMEOUT_MS}) ran for {ran} milliseconds before timing out.")
    prefix = _pg_prefix(job, r, pg, desc)
    lines: list[str]
    if job.torch < "2.2":
        lines = [_c10(job, r, t, 475, caught),
                 _c10(job, r, t, 489, "Some NCCL operations have failed or timed out. Due to "
                      "the asynchronous nature of CUDA kernels, subsequent GPU operations might "
                      "run on corrupted/incomplete data."),
                 _c10(job, r, t, 495, "To avoid data inconsistency, we are taking the entire "
                      "process down.")]
    elif job.torch < "2.5":
        lines = [_c10(job, r, t, 607, caught),
                 _c10(job, r, t, 1664, f"{prefix} Exception (either an error or timeout) "
                      f"detected by watchdog at work: {seq}, last enqueued NCCL work: "
                      f"{r.enqueued}, last completed NCCL work: {r.completed}."),
                 _c10(job, r, t, 1709, f"{prefix} Timeout at NCCL work: {seq}, last enqueued "
                      f"NCCL work: {r.enqueued}, last completed NCCL work: {r.completed}."),
                 _c10(job, r, t, 621, f"[Rank {pg_rank}] Some NCCL operations have failed or "
                      "timed out. Due to the asynchronous nature of CUDA kernels, subsequent "
                      "GPU operations might run on corrupted/incomplete data."),
                 _c10(job, r, t, 627, f"[Rank {pg_rank}] To avoid data inconsistency, we are "
                      "taking the entire process down."),
                 _c10(job, r, t, 1515, f"{prefix} Process group watchdog thread terminated "
                      f"with exception: {caught}")]
    else:
        lines = [_c10(job, r, t, 629, caught),
                 _c10(job, r, t, 2168, f"{prefix}  failure detected by watchdog at work "
                      f"sequence id: {seq} PG status: last enqueued work: {r.enqueued}, last "
                      f"completed work: {r.completed}"),
                 _c10(job, r, t, 667, "Stack trace of the failed collective not found, "
                      "potentially because FlightRecorder is disabled. You can enable it by "
                      "setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value."),
                 _c10(job, r, t, 1595, f"{prefix} Process group watchdog thread terminated "
                      f"with exception: {caught}")]
    r.events += [(t + i * 1e-4, line) for i, line in enumerate(lines)]
    r.exit = (t + 0.5, -6, f"Signal 6 (SIGABRT) received by PID {r.pid}")


def _network_abort(job: _Job, r: _Rank, t: float) -> None:
    """A rank whose NCCL call failed (completion error): the watchdog reports the NCCL error."""
    prefix = _pg_prefix(job, r, job.pg, job.pg_desc)
    message = (f"{prefix} Process group watchdog thread terminated with exception: NCCL error: "
               f"remote process exited or there was a network error, NCCL version {job.nccl}")
    r.events.append((t, _c10(job, r, t, 1515 if job.torch < "2.5" else 1595, message)))
    r.exit = (t + 0.5, -6, f"Signal 6 (SIGABRT) received by PID {r.pid}")


def _desync_report(job: _Job, reporter: _Rank, t: float, lines: list[str]) -> None:
    """TORCH_NCCL_DESYNC_DEBUG's report, printed by the lowest rank still reporting."""
    report = [f" - [{job.pg_rank(reporter.rank)}] Timeout at collective: {job.op}, #{job.seq}",
              " - To our best knowledge, the lagging/dead/mismatched ranks that caused the "
              "desync are:", *lines]
    prefix = f"[rank{reporter.rank}]:" if job.torch >= "2.2" else ""
    reporter.events += [(t + 0.3 + i * 1e-4, prefix + line) for i, line in enumerate(report)]


def _ring(job: _Job, rank: int, offset: int) -> _Rank:
    """The rank's ring neighbour over its rail: the same GPU on the next (`offset` > 0) or
    previous node of the job, whatever the rank file's numbering."""
    if not job.by_slot:
        job.by_slot = {(r.node_index, r.gpu): r for r in job.ranks}
    me = job.ranks[rank]
    nodes = len({r.node for r in job.ranks}) or 1
    step = 1 if offset > 0 else -1
    peer = job.by_slot.get(((me.node_index + step) % nodes, me.gpu))
    return peer if peer is not None else job.ranks[(rank + offset) % len(job.ranks)]


def _start(job: _Job, rng: random.Random, rank: int, first: int | None) -> float:
    """When rank `rank` enqueued the hung collective (seconds); `first` enqueued earliest."""
    if rank == first:
        return 0.0
    return 0.05 + rng.random() * 0.4


def _time_out_stuck(job: _Job, rng: random.Random, *, first: int | None = None,
                    skip: Iterable[int] = ()) -> None:
    """Every rank that enqueued the collective and did not complete it times out."""
    skip = set(skip)
    for r in job.ranks:
        if r.rank in skip or not r.has_log or r.enqueued < job.seq or r.completed >= job.seq:
            continue
        _watchdog(job, r, _start(job, rng, r.rank, first) + _TIMEOUT_MS / 1000, job.seq)


def _link_dies(job: _Job, rng: random.Random, culprit: int, at: float) -> int:
    """The culprit's NIC link dies at `at`: it and its rail sender report status 12 on each
    other, both abort. Returns the sender's rank."""
    victim = job.ranks[culprit]
    sender = _ring(job, culprit, -8)
    receiver = _ring(job, culprit, 8)
    when = at + _RETRY_S
    victim.events += _ib_error(job, victim, receiver, when, 12, "Send")
    sender.events += _ib_error(job, sender, victim, when + 0.4, 12, "Send")
    for r, t in ((victim, when + 1.2), (sender, when + 1.6)):
        _network_abort(job, r, t)
    return sender.rank


def _flushes(job: _Job, rng: random.Random, ranks: Iterable[_Rank], per_rank: int) -> int:
    """Teardown: ncclCommAbort flushes the QPs of each rank (status 5, one per queue pair)."""
    count = 0
    for r in ranks:
        if r.exit is None:
            continue
        t = r.exit[0] - 0.3
        for i in range(per_rank):
            peer = _ring(job, r.rank, 8 if i % 2 else -8)
            r.events += _ib_error(job, r, peer, t + 0.001 * i, 5, "Recv" if i % 2 else "Send")
            count += 1
    return count


# --- the cases -------------------------------------------------------------------------------

def _case_optic(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    from fabtui.sim.scenario import find_scenario, load_scenario

    _need_nodes(job, 3)
    scenario = load_scenario(find_scenario("nccl-hang")).scenario
    fault = next(f for f in scenario.timeline if f.fault.value == "nccl-hang")
    host, _, gpu = fault.component.partition(":gpu")
    culprit = next((r.rank for r in job.ranks if r.node == host and r.gpu == int(gpu)), None)
    if culprit is None:
        raise SpecError(f"case optic: the scenario's {fault.component} runs no rank of this "
                        "job (give more ranks)")
    sender = _link_dies(job, rng, culprit, 0.0)
    job.ranks[culprit].completed = job.ranks[sender].completed = job.seq - 1
    _time_out_stuck(job, rng, skip=(culprit, sender))
    _flushes(job, rng, (r for r in job.ranks if r.rank not in (culprit, sender)), 1)
    reporter = next(r for r in job.ranks if r.rank not in (culprit, sender))
    _desync_report(job, reporter, _TIMEOUT_MS / 1000,
                   [f"     [{c}] joined but didn't finish collective #{job.seq} (count from 1)"
                    for c in sorted((culprit, sender))])
    _truth(job, "culprit found", [culprit], peer=_suspect(job, sender),
           scenario="nccl-hang", scenario_expect=scenario.expect)


def _missing_rank(job: _Job, rng: random.Random, culprit: int, *, first: int | None) -> None:
    """`culprit` never enqueues the collective (stuck in host code); everyone else times out;
    the culprit is killed by its node's agent once its neighbours failed."""
    c = job.ranks[culprit]
    c.enqueued = c.completed = job.seq - 1
    _time_out_stuck(job, rng, first=first)
    c.exit = (_TIMEOUT_MS / 1000 + 1.5, -15, f"Signal 15 (SIGTERM) received by PID {c.pid}")
    reporter = next(r for r in job.ranks if r.rank != culprit)
    _desync_report(job, reporter, _TIMEOUT_MS / 1000 + 0.2,
                   [f"     [{job.pg_rank(culprit)}] finished collective #{job.seq - 1}, but "
                    f"didn't join collective #{job.seq} (count from 1)"])


def _case_victim_first(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    culprit = _pick(rng, job)
    first = _pick(rng, job, avoid=(culprit,))
    _missing_rank(job, rng, culprit, first=first)
    _truth(job, "culprit found", [culprit], first_watchdog_rank=first,
           torchrun_root_cause_rank=first)


def _case_rank0(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    first = _pick(rng, job)
    _missing_rank(job, rng, 0, first=first)
    _truth(job, "culprit found", [0], first_watchdog_rank=first)


def _case_missing_log(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    culprit = _pick(rng, job)
    c = job.ranks[culprit]
    # Its GPU fell off the bus: the process hangs in teardown and never writes its log or
    # dump; the peers sending to it over the rail see their queue pair stop answering.
    c.has_log = False
    c.completed = job.seq - 1
    sender = _ring(job, culprit, -8)
    sender.events += _ib_error(job, sender, c, _RETRY_S, 12, "Send")
    _network_abort(job, sender, _RETRY_S + 1.2)
    _time_out_stuck(job, rng, skip=(sender.rank,))
    _truth(job, "culprit found", [culprit], missing_logs=[culprit], peer=_suspect(job, sender.rank))


def _case_ras_minority(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    n = len(job.ranks)
    ahead = sorted(rng.sample([r.rank for r in job.ranks], max(1, min(10, n // 16, n // 4))))
    for r in job.ranks:
        if r.rank not in ahead:
            r.enqueued = r.completed = job.seq - 1
    _time_out_stuck(job, rng)
    behind = [r.rank for r in job.ranks if r.rank not in ahead]
    _truth(job, "culprit found", behind, ras_named=ahead)


def _case_status12(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    culprit = _pick(rng, job)
    sender = _link_dies(job, rng, culprit, 0.0)
    _time_out_stuck(job, rng, skip=(culprit, sender))
    flushed = _flushes(job, rng, job.ranks, 4)
    _truth(job, "culprit found", [culprit], peer=_suspect(job, sender), status5_lines=flushed)


def _case_connection_closed(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    culprit = _pick(rng, job)
    c = job.ranks[culprit]
    crash = 40.0 + rng.random() * 20
    c.events.append(_info(c, crash - 0.002, "[Service thread] Error encountered progressing "
                                            "operation=Connect, res=3, closing connection", 3))
    c.exit = (crash, -11, f"Signal 11 (SIGSEGV) received by PID {c.pid}")
    c.completed = job.seq - 1
    # The crashed process's local peers see its proxy connections close at once; then the
    # agents stop every worker (the culprit's node first, the others when the rendezvous
    # closes), one after the other, and each survivor sees each local peer go.
    for node in sorted({r.node_index for r in job.ranks}):
        workers = sorted((r for r in job.ranks if r.node_index == node), key=lambda r: r.local)
        start = crash + (1.0 if node == c.node_index else 5.0 + 0.01 * node)
        gone: list[tuple[float, _Rank]] = [(crash, c)] if node == c.node_index else []
        for i, r in enumerate(w for w in workers if w.rank != culprit):
            r.completed = job.seq - 1
            at = start + 0.01 * i
            for when, peer in gone:
                r.events.append(_info(r, max(when, crash) + 0.005 + 0.0001 * peer.local,
                                      f"[Service thread] Connection closed by localRank "
                                      f"{peer.local}", 3))
            r.exit = (at, -15, f"Signal 15 (SIGTERM) received by PID {r.pid}")
            gone.append((at, r))
    _truth(job, "culprit found", [culprit], first_closed_local_rank=c.local,
           torchrun_root_cause_rank=culprit, crash_s=round(crash, 3))


def _case_stale_pg(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    gpu = rng.randrange(8)
    members = [r.rank for r in job.ranks if r.local == gpu]
    job.pg, job.pg_desc, job.pg_members = "1", f"dp_{gpu}", members
    job.op = "REDUCE_SCATTER"
    culprit = rng.choice(members[1:])
    default_seq = job.seq + 3 + rng.randrange(50)
    for r in job.ranks:
        r.op_at_seq[job.seq] = job.op
    for r in job.ranks:
        if r.rank in members:
            continue
        # Not in the stuck group: they wait in the default group for the members, who never
        # come; their watchdog names the default group's collective.
        r.enqueued, r.completed = default_seq, default_seq - 1
        r.op_at_seq[default_seq] = "ALLREDUCE"
        _watchdog(job, r, 0.2 + rng.random() + _TIMEOUT_MS / 1000, default_seq, pg="0",
                  desc="default_pg")
    c = job.ranks[culprit]
    c.enqueued = c.completed = job.seq - 1
    for rank in members:
        r = job.ranks[rank]
        if rank != culprit:
            _watchdog(job, r, rng.random() * 0.1 + _TIMEOUT_MS / 1000, job.seq)
    c.exit = (_TIMEOUT_MS / 1000 + 2, -15, f"Signal 15 (SIGTERM) received by PID {c.pid}")
    _truth(job, "culprit found", [culprit], pg_rank_of_culprit=members.index(culprit),
           default_pg_seq=default_seq, pg_ranks=members)


def _case_none_completed(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    if job.minor < 24:
        raise SpecError("case all-launched-none-completed needs NCCL 2.24 or later (RAS)")
    _time_out_stuck(job, rng)
    _truth(job, "network path", None,
           ranks_involved=[r.rank for r in job.ranks], nodes=sorted({r.node for r in job.ranks}))


def _case_desync_size(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    culprit = _pick(rng, job)
    job.ranks[culprit].numel_at_seq[job.seq] = job.numel // 2
    _time_out_stuck(job, rng)
    reporter = next(r for r in job.ranks if r.rank != culprit)
    _desync_report(job, reporter, _TIMEOUT_MS / 1000,
                   [f"     [{culprit}] joined but didn't finish collective #{job.seq} (count "
                    "from 1)"])
    _truth(job, "application desync", [culprit], mismatch="size",
           numel={"expected": job.numel, "culprit": job.numel // 2})


def _case_desync_threads(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    swapped = sorted(rng.sample([r.rank for r in job.ranks], len(job.ranks) // 2))
    for r in job.ranks:
        first, second = ("BROADCAST", "ALLREDUCE") if r.rank in swapped else \
            ("ALLREDUCE", "BROADCAST")
        r.op_at_seq[job.seq], r.op_at_seq[job.seq + 1] = first, second
        r.numel_at_seq[job.seq + 1] = job.numel
        r.enqueued = job.seq + 1
    _time_out_stuck(job, rng)
    _truth(job, "application desync", None, mismatch="op",
           ops_at_seq={"ALLREDUCE": [r.rank for r in job.ranks if r.rank not in swapped],
                       "BROADCAST": swapped})


def _case_two_faults(job: _Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 3)
    first = _pick(rng, job)
    second = next(r for r in rng.sample(job.ranks, len(job.ranks))
                  if r.node != job.ranks[first].node and r.gpu != job.ranks[first].gpu
                  and abs(r.rank - first) != 8 and r.rank != 0).rank
    peers = [_link_dies(job, rng, first, 0.0), _link_dies(job, rng, second, 7.0)]
    _time_out_stuck(job, rng, skip=(first, second, *peers))
    _flushes(job, rng, (r for r in job.ranks if r.rank not in (first, second, *peers)), 1)
    _truth(job, "culprit found", sorted([first, second]), lead=first, first_fault_rank=first,
           peers=[_suspect(job, p) for p in peers])


_CASE_BUILDERS = {
    "optic": _case_optic, "victim-first-watchdog": _case_victim_first,
    "culprit-rank0": _case_rank0, "missing-log": _case_missing_log,
    "ras-minority": _case_ras_minority, "status12-cascade": _case_status12,
    "connection-closed-cascade": _case_connection_closed, "stale-pg-rank": _case_stale_pg,
    "all-launched-none-completed": _case_none_completed, "desync-size": _case_desync_size,
    "desync-threads": _case_desync_threads, "two-faults": _case_two_faults,
}


# --- rendering -------------------------------------------------------------------------------

def _mgmt_ip(r: _Rank) -> str:
    return f"10.40.{r.node_index // 250}.{r.node_index % 250 + 1}"


def _init_lines(job: _Job, r: _Rank, graph: FabricGraph) -> Iterator[str]:
    """NCCL_DEBUG=INFO init, as this release prints it."""
    node = graph.nodes[r.node]
    nranks = len(job.ranks)
    nnodes = len({r.node for r in job.ranks})
    pointer = f"0x55d0c{r.rank:07x}"
    p = f"{_nccl_prefix(r)} [{r.gpu}] NCCL INFO "
    sep = "Bootstrap : Using" if job.minor < 24 else "Bootstrap: Using"
    yield f"{p}{sep} bond0:{_mgmt_ip(r)}<0>"
    if r.rank == 0 or job.minor >= 24:
        yield f"{p}NCCL version {job.nccl}+cuda12.4"
    yield f"{p}NCCL_IB_GID_INDEX set by environment to 3."
    using = " ".join(f"[{i}]{n.name}:1/RoCE" for i, n in enumerate(node.nics))
    yield f"{p}NET/IB : Using {using} [RO]; OOB bond0:{_mgmt_ip(r)}<0>"
    yield f"{p}Using network IB"
    head = "ncclCommInitRank " if job.minor >= 21 else ""
    tail = (f"comm {pointer} rank {r.rank} nranks {nranks} cudaDev {r.gpu} nvmlDev {r.gpu} "
            f"busId {r.bus} commId 0x{job.comm_hash:x}")
    yield f"{p}{head}{tail} - Init START"
    if job.minor >= 20:
        yield (f"{p}comm {pointer} rank {r.rank} nRanks {nranks} nNodes {nnodes} localRanks 8 "
               f"localRank {r.local} MNNVL 0")
    if nnodes > 1 and r.nic is not None:
        index = next(i for i, n in enumerate(node.nics) if n.name == r.nic)
        prev, nxt = _ring(job, r.rank, -8), _ring(job, r.rank, 8)
        for channel in (0, 1):
            yield (f"{p}Channel {channel:02d}/0 : {prev.rank}[{prev.gpu}] -> {r.rank}[{r.gpu}] "
                   f"[receive] via NET/IB/{index}/GDRDMA")
            yield (f"{p}Channel {channel:02d}/0 : {r.rank}[{r.gpu}] -> {nxt.rank}[{nxt.gpu}] "
                   f"[send] via NET/IB/{index}/GDRDMA")
        yield f"{p}Connected all rings, use ring PXN 0 GDR 1"
    yield (f"{p}2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p "
           "channels per peer")
    yield f"{p}{head}{tail} - Init COMPLETE"


_MS = [f"{4000.0 + k * 0.5:.1f}" for k in range(97)]
"""Iteration times (ms) a rank prints: a healthy job's few-percent spread, no straggler."""


def _heads(job: _Job) -> tuple[list[str], list[str]]:
    """Each iteration line's text before and after its time, shared by every rank."""
    if not job.step_heads:
        total = _iteration_count(job)
        for step in range(1, total + 1):
            loss = 2.9 - 0.6 * step / (step + 4000)
            job.step_heads[step] = (
                f"[{_stamp(job, -4.0 * (total - step) - 30)}] iteration {step:>8d}/  500000 | "
                f"consumed samples: {step * 1024:>12d} | elapsed time per iteration (ms): ",
                f" | learning rate: 2.998E-04 | global batch size:  1024 | lm loss: "
                f"{loss:.6E} | loss scale: 1.0 | grad norm: {0.41 + (step % 13) / 100:.3f} | "
                "number of skipped iterations:   0 | number of nan iterations:   0 |")
    steps = sorted(job.step_heads)
    return [job.step_heads[s][0] for s in steps], [job.step_heads[s][1] for s in steps]


def _iteration(job: _Job, r: _Rank, step: int) -> str:
    """One Megatron-style iteration line (every rank logs them in this job)."""
    before, after = _heads(job)
    return f"{before[step - 1]}{_MS[(r.rank * 131 + step * 17) % 97]}{after[step - 1]}"


def _iteration_count(job: _Job) -> int:
    return max(4, job.spec.bytes_per_rank // 330) if job.spec.bytes_per_rank else 4


def _iterations(job: _Job, r: _Rank) -> str:
    """The iterations before the hang, as one block (several collectives each, so not numbered
    by seq); built in one comprehension: at 1 MB a rank this is most of the work."""
    before, after = _heads(job)
    base = r.rank * 131
    return "\n".join([f"{b}{_MS[(base + 17 * step) % 97]}{a}"
                      for step, (b, a) in enumerate(zip(before, after, strict=True), start=1)])


def _rank_lines(job: _Job, r: _Rank, graph: FabricGraph) -> Iterator[str]:
    yield from _init_lines(job, r, graph)
    yield _iterations(job, r)
    for _, line in r.events:
        yield line


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as out:
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) >= 4096:
                out.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            out.write("\n".join(batch) + "\n")


def _torchrun_summary(job: _Job, node_ranks: list[_Rank]) -> list[str]:
    """A node agent's failure summary: the root cause is the first failure *with a traceback
    file or signal*, which is how torchrun names a victim when the culprit hangs silently."""
    # Workers the agent stopped itself (SIGTERM) are not failures in its summary.
    failed = [r for r in node_ranks if r.exit is not None and r.has_log and r.exit[1] != -15]
    if not failed:
        return []
    failed.sort(key=lambda r: (r.exit[0] if r.exit else 0.0, r.rank))
    root, others = failed[0], failed[1:]

    def block(index: int, r: _Rank) -> list[str]:
        assert r.exit is not None
        when = time.strftime("%Y-%m-%d_%H:%M:%S", time.gmtime(job.epoch + r.exit[0]))
        return [f"[{index}]:", f"  time      : {when}", f"  host      : {r.node}",
                f"  rank      : {r.rank} (local_rank: {r.local})",
                f"  exitcode  : {r.exit[1]} (pid: {r.pid})", "  error_file: <N/A>",
                f"  traceback : {r.exit[2]}"]

    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "=" * 60, "train.py FAILED", "-" * 60, "Failures:"]
    if others:
        for i, r in enumerate(others, start=1):
            lines += block(i, r)
    else:
        lines.append("  <NO_OTHER_FAILURES>")
    lines += ["-" * 60, "Root Cause (first observed failure):", *block(0, root), "=" * 60]
    return lines


def _combined(job: _Job, graph: FabricGraph) -> Iterator[str]:
    """`job.log`: srun -l prefixes (one task per node), phases in time order."""
    logged = [r for r in job.ranks if r.has_log]
    for r in logged:
        for line in _init_lines(job, r, graph):
            yield f"{r.node_index}: {line}"
    for step in range(1, _iteration_count(job) + 1):
        for r in logged:
            yield f"{r.node_index}: {_iteration(job, r, step)}"
    streams = [[(t, r.rank, f"{r.node_index}: {line}") for t, line in r.events] for r in logged]
    for _, _, line in merge(*streams):
        yield line
    for index in sorted({r.node_index for r in logged}):
        node_ranks = [r for r in logged if r.node_index == index]
        for r in node_ranks:
            if r.exit is not None and r.exit[1] == -15:
                yield (f"{index}: W{_c10_day(job, r.exit[0])} {r.pid - 50} torch/distributed/"
                       f"elastic/multiprocessing/api.py:897] Sending process {r.pid} closing "
                       "signal SIGTERM")
        for line in _torchrun_summary(job, node_ranks):
            yield f"{index}: {line}"


def _c10_day(job: _Job, t: float) -> str:
    when = time.gmtime(job.epoch + t)
    micros = int((job.epoch + t) % 1 * 1e6)
    return f"{when.tm_mon}{when.tm_mday:02d} {time.strftime('%H:%M:%S', when)}.{micros:06d}000"


def _fr_dump(job: _Job, r: _Rank) -> dict[str, Any]:
    """A Flight Recorder dump as `_dump_nccl_trace` builds it (version 2.5 schema)."""
    in_group = not job.pg_members or r.rank in job.pg_members
    pg, desc = (job.pg, job.pg_desc) if in_group else ("0", "default_pg")
    members = (job.pg_members if in_group else []) or [x.rank for x in job.ranks]
    entries = []
    top = r.enqueued
    base_ns = int(job.epoch * 1e9)
    for record, seq in enumerate(range(max(1, top - _HISTORY + 1), top + 1)):
        done = seq <= r.completed
        op = r.op_at_seq.get(seq, job.op if seq == job.seq else "ALLREDUCE")
        numel = r.numel_at_seq.get(seq, job.numel)
        created = base_ns - (top - seq) * 4_000_000_000
        entries.append({
            "frames": [{"name": "all_reduce" if op == "ALLREDUCE" else op.lower(),
                        "filename": "torch/distributed/distributed_c10d.py", "line": 2501},
                       {"name": "train_step", "filename": "train.py", "line": 212}],
            "record_id": record, "pg_id": int(pg), "process_group": (pg, desc),
            "collective_seq_id": seq, "p2p_seq_id": 0,
            "op_id": seq, "profiling_name": f"nccl:{op.lower()}", "time_created_ns": created,
            "input_sizes": [[numel]], "input_dtypes": ["BFloat16"], "output_sizes": [[numel]],
            "output_dtypes": ["BFloat16"], "state": "completed" if done else "started",
            "time_discovered_started_ns": created + 1_000_000,
            "time_discovered_completed_ns": created + 900_000_000 if done else None,
            "retired": done, "timeout_ms": _TIMEOUT_MS, "is_p2p": False})
    return {"version": "2.5", "rank": r.rank,
            "pg_config": {pg: {"name": pg, "desc": desc, "ranks": str(members)}},
            "pg_status": {pg: {"last_enqueued_collective": r.enqueued,
                                   "last_started_collective": r.enqueued,
                                   "last_completed_collective": r.completed}},
            "entries": entries}


def _ras(job: _Job) -> str:
    """`ncclras` as asked on a healthy node after the hang, in this release's wording."""
    nranks = len(job.ranks)
    nnodes = len({r.node for r in job.ranks})
    dead = [r for r in job.ranks if not r.has_log]
    out = [f"NCCL version {job.nccl} compiled with CUDA 12.4",
           "CUDA runtime version 12040, driver version 12040", "", "Job summary", "===========",
           "", "  Nodes  Processes         GPUs  Processes     GPUs",
           "(total)   per node  per process    (total)  (total)",
           f"{nnodes:7d}  {8:9d}  {1:11d}  {nranks:9d}  {nranks:7d}", "",
           "Gathering data about the RAS network (timeout 5s)... obtained a result in 0.00s"]
    if dead:
        out.append(f" Warning: missing data from {len(dead)} process"
                   f"{'es' if len(dead) > 1 else ''} (received from {nranks - len(dead)}, "
                   f"expected {nranks})")
    out += [f" Collected data about {nranks * 2} unidirectional connections",
            " Travel times (valid only if system clocks are synchronized between nodes):",
            "  Minimum 0.000011s, maximum 0.000190s, average 0.000052s", "",
            "Gathering data about the NCCL communicators (timeout 5s)... (0.01s)",
            "=============", ""]
    comms = _ras_comms(job)
    out += ["Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
            "    #  in group  per comm  per node  per comm  in group"]
    for index, comm in enumerate(comms):
        alive = [r for r in comm.members if r.has_log]
        nodes = len({r.node for r in alive})
        per_node = {sum(1 for r in comm.members if r.node == n) for n in {r.node for r in alive}}
        alive_per_node = {sum(1 for r in alive if r.node == n) for n in {r.node for r in alive}}
        low, high = min(alive_per_node | per_node), max(alive_per_node | per_node)
        spread = str(high) if low == high else f"{low}-{high}"
        out.append(f"{index:5d}  {comm.count:8d}  {nodes:8d}  {spread:>8s}  "
                   f"{len(comm.members):8d}  {comm.count * len(alive):8d}  {'RUNNING':>8s}  "
                   f"{comm.errors:>6s}")
    out.append("")
    dead = [r for r in job.ranks if not r.has_log]
    if dead:
        out += ["Errors", "======", "", "DEAD",
                f"  {len(dead)} job process{'es are' if len(dead) > 1 else ' is'} considered "
                "dead (unreachable via the RAS network)"]
        out += [f"  Process {r.pid} on node {_mgmt_ip(r)} managing GPU {r.gpu}" for r in dead]
        out.append("")
        for index, comm in enumerate(comms):
            missing = [comm.members.index(r) for r in comm.members if not r.has_log]
            if missing and comm.count == 1:
                plural = "s" if len(missing) > 1 else ""
                out += [f"#{index}-0 ({comm.hash:016x}) INCOMPLETE",
                        f"  Missing communicator data from {len(missing)} rank{plural}",
                        f"  The missing rank{plural}: {','.join(map(str, missing))}", ""]
    mismatched = [(i, c) for i, c in enumerate(comms) if c.count == 1 and len(c.groups()) > 1]
    if mismatched:
        out += ["Warnings", "========", ""]
    for index, comm in mismatched:
        what = "collective" if job.minor < 26 else comm.op
        out += [f"#{index}-0 ({comm.hash:016x}) MISMATCH",
                f"  Communicator ranks have different {what} operation counts"]
        size = len(comm.members)
        for value, group in comm.groups():
            outlier = len(group) <= min(10, size // 4)
            if len(group) > 1:
                out.append(f"  {len(group)} ranks have launched up to operation {value}")
                if outlier:
                    out += [f"  Rank {comm.members.index(r)} -- GPU {r.gpu} managed by process "
                            f"{r.pid} on node {_mgmt_ip(r)}" for r in group]
            elif outlier:
                r = group[0]
                out.append(f"  Rank {comm.members.index(r)} has launched up to operation {value}"
                           f" -- GPU {r.gpu} managed by process {r.pid} on node {_mgmt_ip(r)}")
        out.append("")
    return "\n".join(out) + "\n"


@dataclass
class _Comm:
    """One RAS row: `count` communicators alike (members, op counts of the one shown)."""

    hash: int
    members: list[_Rank]
    counts: dict[int, int]
    op: str
    count: int = 1

    def groups(self) -> list[tuple[int, list[_Rank]]]:
        """Ranks by launched-operation count, the most common count first."""
        by: dict[int, list[_Rank]] = {}
        for r in self.members:
            if r.has_log:
                by.setdefault(self.counts[r.rank], []).append(r)
        return sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))

    @property
    def errors(self) -> str:
        if any(not r.has_log for r in self.members):
            return "INCOMPLETE"
        return "MISMATCH" if len(self.groups()) > 1 else "OK"


def _ras_comms(job: _Job) -> list[_Comm]:
    """The job's communicators as RAS sees them: the world, and for a sub-group hang the
    sub-group communicators (the stuck one, and its healthy siblings as one row)."""
    op = {"ALLREDUCE": "AllReduce", "REDUCE_SCATTER": "ReduceScatter",
          "BROADCAST": "Broadcast", "ALLGATHER": "AllGather"}
    if not job.pg_members:
        return [_Comm(job.comm_hash, job.ranks, {r.rank: r.enqueued for r in job.ranks},
                      op.get(job.op, "AllReduce"))]
    members = set(job.pg_members)
    top = max(r.enqueued for r in job.ranks if r.rank not in members)
    world = _Comm(job.comm_hash, job.ranks,
                  {r.rank: r.enqueued if r.rank not in members else top - 1 for r in job.ranks},
                  "AllReduce")
    stuck = [job.ranks[m] for m in job.pg_members]
    sub = _Comm(job.comm_hash ^ 0x5A5A, stuck, {r.rank: r.enqueued for r in stuck},
                op.get(job.op, "AllReduce"))
    siblings = _Comm(job.comm_hash ^ 0xA5A5, stuck, {r.rank: job.seq for r in stuck},
                     "AllReduce", count=7)
    return [world, siblings, sub]


def generate(out: Path, spec: JobSpec, graph: FabricGraph) -> dict[str, Any]:
    """Write the hung job `spec` describes under `out` (created) and return its manifest.

    Raises `SpecError` for a spec the topology or the case cannot honour, or an `out` that is
    not an empty folder.
    Side effects: creates `out` and writes the files listed in the module docstring.
    """
    job = _build(spec, graph)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        # Files of an earlier job left beside these would contradict expected.json.
        raise SpecError(f"{out}: not an empty folder (give a new or empty one)")
    out.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    for r in job.ranks:
        if r.has_log:
            _write_lines(out / f"rank-{r.rank}.log", _rank_lines(job, r, graph))
    files.append("rank-N.log")
    if spec.combined:
        _write_lines(out / "job.log", _combined(job, graph))
        files.append("job.log")
    if spec.flight_recorder:
        folder = out / "fr"
        folder.mkdir(exist_ok=True)
        for r in job.ranks:
            if not r.has_log:
                continue
            dump = _fr_dump(job, r)
            (folder / f"nccl_trace_rank_{r.rank}").write_bytes(pickle.dumps(dump, protocol=2))
            as_json = dict(dump, entries=[dict(e, process_group=list(e["process_group"]))
                                          for e in dump["entries"]])
            (folder / f"nccl_trace_rank_{r.rank}.json").write_text(json.dumps(as_json) + "\n",
                                                                    encoding="utf-8")
        files += ["fr/nccl_trace_rank_N", "fr/nccl_trace_rank_N.json"]
    ras = spec.ras if spec.ras is not None else job.minor >= 24
    if ras:
        if job.minor < 24:
            raise SpecError(f"--ras: NCCL {job.nccl} has no RAS (2.24 and later)")
        (out / "ras").mkdir(exist_ok=True)
        (out / "ras" / "ncclras-status.txt").write_text(_ras(job), encoding="utf-8")
        files.append("ras/ncclras-status.txt")
    manifest = {"case": spec.case, "description": CASES[spec.case], "seed": spec.seed,
                "ranks": spec.ranks, "nccl": job.nccl, "torch": job.torch,
                "topology": graph.topology.cluster.name, **job.truth, "files": files,
                "logged_ranks": sum(1 for r in job.ranks if r.has_log)}
    (out / "expected.json").write_text(json.dumps(manifest, indent=2, default=str) + "\n",
                                       encoding="utf-8")
    return manifest
