"""The simulated hung job built from its spec, and each case (`_case_*`) played on it.

`build` places the ranks by the fabric graph and lets the case decide who hangs, who times out,
which links die and how each process ends, and what the ground truth (`Job.truth`) is.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from fabtui.sim.hangjob.lines import desync_report, ib_error, info, network_abort, watchdog
from fabtui.sim.hangjob.spec import (
    CASES,
    EPOCH,
    MAX_RANKS,
    MIN_RANKS,
    RETRY_S,
    TIMEOUT_MS,
    Job,
    JobSpec,
    Rank,
    SpecError,
    nccl_release,
    ring,
    torch_release,
)
from fabtui.topology.graph import FabricGraph


def build(spec: JobSpec, graph: FabricGraph) -> Job:
    """The job `spec` describes, its ranks placed by `graph`, with its case played; raises
    `SpecError` for a spec the topology or the case cannot honour."""
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
    ranks: list[Rank] = []
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
        ranks.append(Rank(
            rank=slot.rank, node=slot.node, node_index=node_index, local=local, gpu=slot.gpu,
            bus=bus.split(".")[0] + "0", nic=nic.nic if nic else None,
            ip=(found.ip if found and found.ip else f"10.250.{node_index // 250}."
                f"{node_index % 250 + 1}"),
            leaf_port=f"{nic.leaf}:{nic.leaf_port}" if nic and nic.leaf else None,
            optic=nic.optic if nic else None, pid=40_000 + 97 * node_index + 11 * local,
            enqueued=seq, completed=seq - 1))
    job = Job(spec=spec, minor=minor, nccl=nccl, torch=torch_release(spec.torch, minor),
              ranks=ranks, epoch=float(EPOCH + 60 * (spec.seed % 1000)), seq=seq,
              op="ALLREDUCE", numel=rng.choice([262_144_000, 131_072_000, 50_331_648]),
              comm_hash=rng.getrandbits(64))
    for r in ranks:
        r.op_at_seq[seq] = job.op
        r.numel_at_seq[seq] = job.numel
    _CASE_BUILDERS[spec.case](job, rng, graph)
    for r in ranks:
        r.events.sort()
    return job


def _need_nodes(job: Job, count: int) -> None:
    if len({r.node for r in job.ranks}) < count:
        raise SpecError(f"case {job.spec.case} needs at least {count} nodes "
                        f"({8 * count} ranks): it crosses the network")


def _pick(rng: random.Random, job: Job, *, avoid: Iterable[int] = (), not_zero: bool = True,
          other_node_than: Iterable[int] = ()) -> int:
    avoid = set(avoid)
    nodes = {job.ranks[r].node for r in other_node_than}
    choices = [r.rank for r in job.ranks if r.rank not in avoid and r.node not in nodes
               and (r.rank != 0 or not not_zero)]
    return rng.choice(choices)


def _suspect(job: Job, rank: int, **extra: Any) -> dict[str, Any]:
    r = job.ranks[rank]
    return {"rank": rank, "node": r.node, "gpu": r.gpu, "nic": r.nic, "ip": r.ip,
            "leaf_port": r.leaf_port, "optic": r.optic, **extra}


def _truth(job: Job, verdict: str, culprits: list[int] | None, lead: int | None = None,
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


def _start(job: Job, rng: random.Random, rank: int, first: int | None) -> float:
    """When rank `rank` enqueued the hung collective (seconds); `first` enqueued earliest."""
    if rank == first:
        return 0.0
    return 0.05 + rng.random() * 0.4


def _time_out_stuck(job: Job, rng: random.Random, *, first: int | None = None,
                    skip: Iterable[int] = ()) -> None:
    """Every rank that enqueued the collective and did not complete it times out."""
    skip = set(skip)
    for r in job.ranks:
        if r.rank in skip or not r.has_log or r.enqueued < job.seq or r.completed >= job.seq:
            continue
        watchdog(job, r, _start(job, rng, r.rank, first) + TIMEOUT_MS / 1000, job.seq)


def _link_dies(job: Job, rng: random.Random, culprit: int, at: float) -> int:
    """The culprit's NIC link dies at `at`: it and its rail sender report status 12 on each
    other, both abort. Returns the sender's rank."""
    victim = job.ranks[culprit]
    sender = ring(job, culprit, -8)
    receiver = ring(job, culprit, 8)
    when = at + RETRY_S
    victim.events += ib_error(job, victim, receiver, when, 12, "Send")
    sender.events += ib_error(job, sender, victim, when + 0.4, 12, "Send")
    for r, t in ((victim, when + 1.2), (sender, when + 1.6)):
        network_abort(job, r, t)
    return sender.rank


def _flushes(job: Job, rng: random.Random, ranks: Iterable[Rank], per_rank: int) -> int:
    """Teardown: ncclCommAbort flushes the QPs of each rank (status 5, one per queue pair)."""
    count = 0
    for r in ranks:
        if r.exit is None:
            continue
        t = r.exit[0] - 0.3
        for i in range(per_rank):
            peer = ring(job, r.rank, 8 if i % 2 else -8)
            r.events += ib_error(job, r, peer, t + 0.001 * i, 5, "Recv" if i % 2 else "Send")
            count += 1
    return count


def _missing_rank(job: Job, rng: random.Random, culprit: int, *, first: int | None) -> None:
    """`culprit` never enqueues the collective (stuck in host code); everyone else times out;
    the culprit is killed by its node's agent once its neighbours failed."""
    c = job.ranks[culprit]
    c.enqueued = c.completed = job.seq - 1
    _time_out_stuck(job, rng, first=first)
    c.exit = (TIMEOUT_MS / 1000 + 1.5, -15, f"Signal 15 (SIGTERM) received by PID {c.pid}")
    reporter = next(r for r in job.ranks if r.rank != culprit)
    desync_report(job, reporter, TIMEOUT_MS / 1000 + 0.2,
                  [f"     [{job.pg_rank(culprit)}] finished collective #{job.seq - 1}, but "
                   f"didn't join collective #{job.seq} (count from 1)"])


def _case_optic(job: Job, rng: random.Random, graph: FabricGraph) -> None:
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
    desync_report(job, reporter, TIMEOUT_MS / 1000,
                  [f"     [{c}] joined but didn't finish collective #{job.seq} (count from 1)"
                   for c in sorted((culprit, sender))])
    _truth(job, "culprit found", [culprit], peer=_suspect(job, sender),
           scenario="nccl-hang", scenario_expect=scenario.expect)


def _case_victim_first(job: Job, rng: random.Random, graph: FabricGraph) -> None:
    culprit = _pick(rng, job)
    first = _pick(rng, job, avoid=(culprit,))
    _missing_rank(job, rng, culprit, first=first)
    _truth(job, "culprit found", [culprit], first_watchdog_rank=first,
           torchrun_root_cause_rank=first)


def _case_rank0(job: Job, rng: random.Random, graph: FabricGraph) -> None:
    first = _pick(rng, job)
    _missing_rank(job, rng, 0, first=first)
    _truth(job, "culprit found", [0], first_watchdog_rank=first)


def _case_missing_log(job: Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    culprit = _pick(rng, job)
    c = job.ranks[culprit]
    # Its GPU fell off the bus: the process hangs in teardown and never writes its log or
    # dump; the peers sending to it over the rail see their queue pair stop answering.
    c.has_log = False
    c.completed = job.seq - 1
    sender = ring(job, culprit, -8)
    sender.events += ib_error(job, sender, c, RETRY_S, 12, "Send")
    network_abort(job, sender, RETRY_S + 1.2)
    _time_out_stuck(job, rng, skip=(sender.rank,))
    _truth(job, "culprit found", [culprit], missing_logs=[culprit], peer=_suspect(job, sender.rank))


def _case_ras_minority(job: Job, rng: random.Random, graph: FabricGraph) -> None:
    n = len(job.ranks)
    ahead = sorted(rng.sample([r.rank for r in job.ranks], max(1, min(10, n // 16, n // 4))))
    for r in job.ranks:
        if r.rank not in ahead:
            r.enqueued = r.completed = job.seq - 1
    _time_out_stuck(job, rng)
    behind = [r.rank for r in job.ranks if r.rank not in ahead]
    _truth(job, "culprit found", behind, ras_named=ahead)


def _case_status12(job: Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    culprit = _pick(rng, job)
    sender = _link_dies(job, rng, culprit, 0.0)
    _time_out_stuck(job, rng, skip=(culprit, sender))
    flushed = _flushes(job, rng, job.ranks, 4)
    _truth(job, "culprit found", [culprit], peer=_suspect(job, sender), status5_lines=flushed)


def _case_connection_closed(job: Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    culprit = _pick(rng, job)
    c = job.ranks[culprit]
    crash = 40.0 + rng.random() * 20
    c.events.append(info(c, crash - 0.002, "[Service thread] Error encountered progressing "
                                           "operation=Connect, res=3, closing connection", 3))
    c.exit = (crash, -11, f"Signal 11 (SIGSEGV) received by PID {c.pid}")
    c.completed = job.seq - 1
    # The crashed process's local peers see its proxy connections close at once; then the
    # agents stop every worker (the culprit's node first, the others when the rendezvous
    # closes), one after the other, and each survivor sees each local peer go.
    for node in sorted({r.node_index for r in job.ranks}):
        workers = sorted((r for r in job.ranks if r.node_index == node), key=lambda r: r.local)
        start = crash + (1.0 if node == c.node_index else 5.0 + 0.01 * node)
        gone: list[tuple[float, Rank]] = [(crash, c)] if node == c.node_index else []
        for i, r in enumerate(w for w in workers if w.rank != culprit):
            r.completed = job.seq - 1
            at = start + 0.01 * i
            for when, peer in gone:
                r.events.append(info(r, max(when, crash) + 0.005 + 0.0001 * peer.local,
                                     f"[Service thread] Connection closed by localRank "
                                     f"{peer.local}", 3))
            r.exit = (at, -15, f"Signal 15 (SIGTERM) received by PID {r.pid}")
            gone.append((at, r))
    _truth(job, "culprit found", [culprit], first_closed_local_rank=c.local,
           torchrun_root_cause_rank=culprit, crash_s=round(crash, 3))


def _case_stale_pg(job: Job, rng: random.Random, graph: FabricGraph) -> None:
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
        watchdog(job, r, 0.2 + rng.random() + TIMEOUT_MS / 1000, default_seq, pg="0",
                 desc="default_pg")
    c = job.ranks[culprit]
    c.enqueued = c.completed = job.seq - 1
    for rank in members:
        r = job.ranks[rank]
        if rank != culprit:
            watchdog(job, r, rng.random() * 0.1 + TIMEOUT_MS / 1000, job.seq)
    c.exit = (TIMEOUT_MS / 1000 + 2, -15, f"Signal 15 (SIGTERM) received by PID {c.pid}")
    _truth(job, "culprit found", [culprit], pg_rank_of_culprit=members.index(culprit),
           default_pg_seq=default_seq, pg_ranks=members)


def _case_none_completed(job: Job, rng: random.Random, graph: FabricGraph) -> None:
    _need_nodes(job, 2)
    if job.minor < 24:
        raise SpecError("case all-launched-none-completed needs NCCL 2.24 or later (RAS)")
    _time_out_stuck(job, rng)
    _truth(job, "network path", None,
           ranks_involved=[r.rank for r in job.ranks], nodes=sorted({r.node for r in job.ranks}))


def _case_desync_size(job: Job, rng: random.Random, graph: FabricGraph) -> None:
    culprit = _pick(rng, job)
    job.ranks[culprit].numel_at_seq[job.seq] = job.numel // 2
    _time_out_stuck(job, rng)
    reporter = next(r for r in job.ranks if r.rank != culprit)
    desync_report(job, reporter, TIMEOUT_MS / 1000,
                  [f"     [{culprit}] joined but didn't finish collective #{job.seq} (count "
                   "from 1)"])
    _truth(job, "application desync", [culprit], mismatch="size",
           numel={"expected": job.numel, "culprit": job.numel // 2})


def _case_desync_threads(job: Job, rng: random.Random, graph: FabricGraph) -> None:
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


def _case_two_faults(job: Job, rng: random.Random, graph: FabricGraph) -> None:
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
