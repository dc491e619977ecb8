"""A Slurm job's rank placement: which node and local slot each task (rank) gets.

From what Slurm reports about a job (`fabtui.model.parsed._slurm_common.SlurmJob`): its nodes in
host-list order, its task count and `--ntasks-per-node`, the distribution when the record names
one. Tasks per node are `--ntasks-per-node` when set, else the task count spread evenly with the
first nodes taking one more (what Slurm does for `-n` over `-N` nodes). Under `block` ranks fill
a node before the next (`0..7` on the first node); under `cyclic` they go round the nodes
(`0, N, 2N, ...` on the first). A rank's GPU is the allocated GPU at its local slot when the
job's `-d` detail lists them (`GRES=gpu:8(IDX:0-7)`), else the local slot itself.
Pure: no I/O.
"""

from __future__ import annotations

from fabtui.model.parsed._slurm_common import SlurmJob
from fabtui.topology.ranks import RankSlot

DISTRIBUTIONS = ("block", "cyclic")


class PlacementError(ValueError):
    """A job whose placement cannot be derived (no nodes yet, no task count)."""


def tasks_per_node(job: SlurmJob) -> list[int]:
    """How many tasks each of the job's nodes runs, in node order."""
    nodes = job.nodes
    if not nodes:
        state = f" (it is {job.state})" if job.state else ""
        raise PlacementError(f"job {job.job_id} holds no nodes{state}")
    total = job.num_tasks or (job.tasks_per_node or 0) * len(nodes)
    if total <= 0:
        raise PlacementError(f"job {job.job_id}: Slurm reports no task count")
    if job.tasks_per_node:
        counts = []
        left = total
        for _ in nodes:
            counts.append(min(job.tasks_per_node, left))
            left -= counts[-1]
        return counts
    base, extra = divmod(total, len(nodes))
    return [base + (1 if index < extra else 0) for index in range(len(nodes))]


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
        for local in range(max(counts)):
            order += [(node, local) for node, count in zip(job.nodes, counts, strict=True)
                      if local < count]
    slots = []
    for rank, (node, local) in enumerate(order):
        held = gpus.get(node, [])
        slots.append(RankSlot(rank=rank, node=node,
                              gpu=held[local] if local < len(held) else local))
    return slots
