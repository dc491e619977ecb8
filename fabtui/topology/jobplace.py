"""A Slurm job's rank placement: which node and local slot each task (rank) gets.

From what Slurm reports about a job (`fabtui.model.parsed._slurm_common.SlurmJob`): its nodes in
host-list order, its task count and `--ntasks-per-node`, the distribution when the record names
one. Tasks per node are `--ntasks-per-node` when set, else the task count spread evenly with the
first nodes taking one more (what Slurm does for `-n` over `-N` nodes). Under `block` ranks fill
a node before the next (`0..7` on the first node); under `cyclic` they go round the nodes
(`0, N, 2N, ...` on the first). A rank's GPU is the allocated GPU at its local slot when the
job's `-d` detail lists them (`GRES=gpu:8(IDX:0-7)`), else the local slot itself.
A job of more than `MAX_TASKS` tasks is refused before any is laid out (`NumTasks=99999999999`
is a line of output, and would be a hundred billion slots).
Pure: no I/O.
"""

from __future__ import annotations

from fabtui.hostlist import HostlistError, expand
from fabtui.model.parsed._slurm_common import SlurmJob
from fabtui.topology.ranks import RankSlot

DISTRIBUTIONS = ("block", "cyclic")
MAX_TASKS = 1_000_000
"""Most tasks (ranks) one job may be laid out with: about 100 MB of slots. The largest AI
training jobs run 100,000-200,000 GPUs, a rank each; a whole-machine MPI job on Frontier, the
largest Slurm system (9,408 nodes of 56 usable cores), runs 526,848 ranks."""


class PlacementError(ValueError):
    """A job whose placement cannot be derived (no nodes yet, no task count)."""


def tasks_per_node(job: SlurmJob) -> list[int]:
    """How many tasks each of the job's nodes runs, in node order."""
    nodes = job.nodes
    if not nodes:
        if job.nodelist:
            raise PlacementError(f"job {job.job_id}: its node list is not read: "
                                 f"{_unread(job.nodelist)}")
        state = f" (it is {job.state})" if job.state else ""
        raise PlacementError(f"job {job.job_id} holds no nodes{state}")
    total = job.num_tasks or (job.tasks_per_node or 0) * len(nodes)
    if total <= 0:
        raise PlacementError(f"job {job.job_id}: Slurm reports no task count")
    if total > MAX_TASKS:
        said = f"{total:,} tasks" if job.num_tasks else \
            f"{job.tasks_per_node:,} tasks per node on {len(nodes):,} nodes ({total:,} tasks)"
        raise PlacementError(f"job {job.job_id} runs {said}: more than any job runs (fabtui "
                             f"lays out at most {MAX_TASKS:,})")
    if job.tasks_per_node:
        counts = []
        left = total
        for _ in nodes:
            counts.append(min(job.tasks_per_node, left))
            left -= counts[-1]
        return counts
    base, extra = divmod(total, len(nodes))
    return [base + (1 if index < extra else 0) for index in range(len(nodes))]


def _unread(nodelist: str) -> str:
    """Why a job's node list gave no nodes: the host list's own fault, or the reader's cap."""
    try:
        expand(nodelist)
    except HostlistError as exc:
        reason = str(exc)
        return reason if len(reason) <= 200 else reason[:199] + "…"
    return f"{nodelist[:80]!r} was not expanded (the output's node lists stand for too many " \
        "hosts together; `fabtui parse` lists the warning)"


def distribution_of(job: SlurmJob, default: str = "block") -> tuple[str, bool]:
    """(distribution, known): the job's node-level distribution (`block:cyclic` -> block) when
    it is block or cyclic, else `default` and False."""
    named = (job.distribution or "").split(":", 1)[0].split(",", 1)[0].strip().lower()
    if named in DISTRIBUTIONS:
        return named, True
    return default, False


def job_slots(job: SlurmJob, distribution: str = "block") -> list[RankSlot]:
    """Rank -> (node, GPU) for every task of `job` laid out by `distribution` (block|cyclic).
    Raises `PlacementError` when Slurm's record does not say enough."""
    if distribution not in DISTRIBUTIONS:
        raise PlacementError(f"distribution {distribution!r}: fabtui places block or cyclic")
    counts = tasks_per_node(job)
    gpus = {host: alloc.gpu_ids for alloc in job.allocations for host in alloc.hosts}
    order: list[tuple[str, int]] = []
    if distribution == "block":
        order = [(node, local) for node, count in zip(job.nodes, counts, strict=True)
                 for local in range(count)]
    else:
        # Round by round over the nodes that still have a task: each slot is visited once,
        # however uneven the counts (one node of a million tasks among 100,000 nodes).
        active = [(node, count) for node, count in zip(job.nodes, counts, strict=True)
                  if count > 0]
        local = 0
        while active:
            order += [(node, local) for node, _ in active]
            local += 1
            active = [(node, count) for node, count in active if count > local]
    slots = []
    for rank, (node, local) in enumerate(order):
        held = gpus.get(node, [])
        slots.append(RankSlot(rank=rank, node=node,
                              gpu=held[local] if local < len(held) else local))
    return slots
