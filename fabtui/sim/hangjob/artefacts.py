"""What a simulated hung job leaves beside its logs: Flight Recorder dumps, `ncclras` output and
each node agent's torchrun failure summary.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from fabtui.sim.hangjob.lines import mgmt_ip
from fabtui.sim.hangjob.spec import HISTORY, TIMEOUT_MS, Job, Rank


def torchrun_summary(job: Job, node_ranks: list[Rank]) -> list[str]:
    """A node agent's failure summary: the root cause is the first failure *with a traceback
    file or signal*, which is how torchrun names a victim when the culprit hangs silently."""
    # Workers the agent stopped itself (SIGTERM) are not failures in its summary.
    failed = [r for r in node_ranks if r.exit is not None and r.has_log and r.exit[1] != -15]
    if not failed:
        return []
    failed.sort(key=lambda r: (r.exit[0] if r.exit else 0.0, r.rank))
    root, others = failed[0], failed[1:]

    def block(index: int, r: Rank) -> list[str]:
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


def fr_dump(job: Job, r: Rank) -> dict[str, Any]:
    """A Flight Recorder dump as `_dump_nccl_trace` builds it (version 2.5 schema)."""
    in_group = not job.pg_members or r.rank in job.pg_members
    pg, desc = (job.pg, job.pg_desc) if in_group else ("0", "default_pg")
    members = (job.pg_members if in_group else []) or [x.rank for x in job.ranks]
    entries = []
    top = r.enqueued
    base_ns = int(job.epoch * 1e9)
    for record, seq in enumerate(range(max(1, top - HISTORY + 1), top + 1)):
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
            "retired": done, "timeout_ms": TIMEOUT_MS, "is_p2p": False})
    return {"version": "2.5", "rank": r.rank,
            "pg_config": {pg: {"name": pg, "desc": desc, "ranks": str(members)}},
            "pg_status": {pg: {"last_enqueued_collective": r.enqueued,
                               "last_started_collective": r.enqueued,
                               "last_completed_collective": r.completed}},
            "entries": entries}


def ras_report(job: Job) -> str:
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
        out += [f"  Process {r.pid} on node {mgmt_ip(r)} managing GPU {r.gpu}" for r in dead]
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
                            f"{r.pid} on node {mgmt_ip(r)}" for r in group]
            elif outlier:
                r = group[0]
                out.append(f"  Rank {comm.members.index(r)} has launched up to operation {value}"
                           f" -- GPU {r.gpu} managed by process {r.pid} on node {mgmt_ip(r)}")
        out.append("")
    return "\n".join(out) + "\n"


@dataclass
class _Comm:
    """One RAS row: `count` communicators alike (members, op counts of the one shown)."""

    hash: int
    members: list[Rank]
    counts: dict[int, int]
    op: str
    count: int = 1

    def groups(self) -> list[tuple[int, list[Rank]]]:
        """Ranks by launched-operation count, the most common count first."""
        by: dict[int, list[Rank]] = {}
        for r in self.members:
            if r.has_log:
                by.setdefault(self.counts[r.rank], []).append(r)
        return sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))

    @property
    def errors(self) -> str:
        if any(not r.has_log for r in self.members):
            return "INCOMPLETE"
        return "MISMATCH" if len(self.groups()) > 1 else "OK"


def _ras_comms(job: Job) -> list[_Comm]:
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
