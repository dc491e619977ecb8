"""The slow-job chain's inputs from what real jobs leave: training logs, NCCL Inspector files and
their Prometheus series, turned into `fabtui.model.slowjob` series (issue 39).

Pure: parses in, series out, with a warning for everything that could not be placed. What each
input can say is kept honest here:

- a training log of one rank (Megatron, TorchTitan, DeepSpeed and the HF Trainer print from one
  rank by default) is the *job's* step time, reported under that rank; per-rank series need
  every rank's lines with a prefix naming the rank (or one log per rank);
- log timestamps carry no time zone: the caller says which (`utc_offset_s`, default UTC);
- an Inspector JSON record names the rank *within its communicator*: it becomes a global rank
  only through `global_rank` (the job's map), or directly when the communicator spans the whole
  job (its size is the job's world size, where NCCL numbers ranks as the job does);
- an Inspector Prometheus sample names a node and a GPU, never a rank: the job's placement maps
  them (`rank_at`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta, timezone

from fabtui.model.parsed.nccl_inspector import InspectorOperation, NcclInspector
from fabtui.model.parsed.training_log import TrainingLog
from fabtui.model.slowjob import BusbwSeries, Communicator, StepSeries

GlobalRank = Callable[[str, int], int | None]
"""(communicator id or name, rank in it) -> the job's global rank, or None when unknown."""
RankAt = Callable[[str, int], int | None]
"""(host, CUDA device index) -> the job's global rank placed there, or None."""


def log_step_series(log: TrainingLog, *, origin: str, rank: int | None = None,
                    utc_offset_s: float = 0.0) -> tuple[list[StepSeries], list[str]]:
    """Per-rank step-time series of a parsed training log, from its `step_time_format` lines.

    Lines whose prefix names no rank are reported under `rank` (default 0, the rank these
    frameworks print from) and the source says it is the job's step time. Lines without a
    timestamp cannot be placed in a window and are left out, with a warning.
    """
    warnings: list[str] = []
    fmt = log.step_time_format
    if fmt is None:
        return [], [f"{origin}: no step time in the log (step lines without times)"]
    zone = timezone(timedelta(seconds=utc_offset_s))
    points: dict[int, list[tuple[float, float]]] = defaultdict(list)
    untimed = 0
    for step in log.steps:
        if step.format != fmt or step.step_time_ms is None:
            continue
        if step.timestamp is None:
            untimed += 1
            continue
        named = step.rank if step.rank is not None else step.local_rank
        when = datetime.fromisoformat(step.timestamp).replace(tzinfo=zone).timestamp()
        points[named if named is not None else (rank or 0)].append(
            (when, step.step_time_ms / 1000.0))
    if untimed:
        warnings.append(f"{origin}: {untimed} step times without a timestamp cannot be placed "
                        "in the window (the log prints none on its step lines)")
    what = (f"{fmt} log, per rank" if log.per_rank else
            f"{fmt} log of one rank: the job's step time, not a per-rank series")
    series = [StepSeries(rank=r, t=[t for t, _ in sorted(p)], step_s=[s for _, s in sorted(p)],
                         source=f"{origin} ({what})")
              for r, p in sorted(points.items())]
    return series, warnings


def _followed(ops: Iterable[InspectorOperation]) -> tuple[str, int]:
    """The (collective, message size) a communicator runs most: its busbw is comparable."""
    counts = Counter((op.operation, op.message_bytes or 0) for op in ops)
    return max(counts, key=lambda k: (counts[k], k[1]))


def inspector_busbw(result: NcclInspector, *, origin: str, world_size: int | None = None,
                    global_rank: GlobalRank | None = None,
                    ) -> tuple[list[Communicator], list[BusbwSeries], list[str]]:
    """Communicators and per-rank busbw series of an Inspector JSON log (collectives only).

    Each communicator follows its most frequent (collective, message size), so the samples of
    a series compare like with like. A sample's time is the collective's stop when the log is
    verbose, else the plugin's dump time (as coarse as its dump interval).
    """
    warnings: list[str] = []
    by_comm: dict[str, list[InspectorOperation]] = defaultdict(list)
    for op in result.operations:
        if op.kind == "collective":
            by_comm[op.comm_id].append(op)
    communicators: list[Communicator] = []
    series: list[BusbwSeries] = []
    for comm, ops in by_comm.items():
        collective, size = _followed(ops)
        first = ops[0]
        whole_job = world_size is not None and first.n_ranks == world_size
        points: dict[int, list[tuple[float, float]]] = defaultdict(list)
        unplaced = 0
        for op in ops:
            if (op.operation, op.message_bytes or 0) != (collective, size) or \
                    op.busbw_gbs is None:
                continue
            rank = global_rank(comm, op.rank) if global_rank is not None else None
            if rank is None and whole_job:
                rank = op.rank
            when = op.stop_us if op.stop_us is not None else op.dump_timestamp_us
            if rank is None or when is None:
                unplaced += 1
                continue
            points[rank].append((when / 1e6, op.busbw_gbs))
        if unplaced:
            warnings.append(f"{origin}: communicator {first.comm_name or comm} ({first.n_ranks} "
                            f"ranks): {unplaced} samples name only a rank within the "
                            "communicator; without the job's rank map they are not placed")
        communicators.append(Communicator(
            id=comm, nranks=first.n_ranks, collective=collective, msg_bytes=size,
            ranks=sorted(points), label=first.comm_name or ""))
        series += [BusbwSeries(comm=comm, rank=r, t=[t for t, _ in sorted(p)],
                               busbw_gbs=[v for _, v in sorted(p)])
                   for r, p in sorted(points.items())]
    if not by_comm:
        warnings.append(f"{origin}: no collective in the Inspector log")
    return communicators, series, warnings


def prom_busbw(series: Iterable[tuple[Mapping[str, str], Iterable[tuple[float, float]]]],
               *, rank_at: RankAt, host_of: Callable[[str], str] = lambda v: v,
               ) -> tuple[list[Communicator], list[BusbwSeries], list[str]]:
    """Communicators and busbw series from `nccl_bus_bandwidth_gbs` range series (labels
    `node`, `gpu` `GPUn`, `comm_name`, `collective`, `message_size`, `nranks`): the rank is
    where the job's placement puts that node's GPU. Each communicator (by name: the textfile
    carries no id) follows its most sampled (collective, message size bucket)."""
    warnings: list[str] = []
    grouped: dict[str, list[tuple[Mapping[str, str], list[tuple[float, float]]]]] = \
        defaultdict(list)
    for labels, samples in series:
        grouped[labels.get("comm_name", "unknown")].append((labels, list(samples)))
    communicators: list[Communicator] = []
    found: list[BusbwSeries] = []
    for comm, items in grouped.items():
        counts = Counter((lb.get("collective", ""), lb.get("message_size", ""))
                         for lb, pts in items for _ in pts)
        collective, bucket = max(counts, key=lambda k: (counts[k], k))
        by_rank: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for labels, pts in items:
            if (labels.get("collective", ""), labels.get("message_size", "")) != \
                    (collective, bucket):
                continue
            gpu = labels.get("gpu", "").removeprefix("GPU")
            host = host_of(labels.get("node", ""))
            rank = rank_at(host, int(gpu)) if gpu.isdigit() else None
            if rank is None:
                warnings.append(f"busbw of {comm} on {host or '?'} {labels.get('gpu', '?')}: "
                                "no rank of the job is placed there")
                continue
            by_rank[rank].extend(pts)
        nranks = next((int(lb["nranks"]) for lb, _ in items
                       if lb.get("nranks", "").isdigit()), len(by_rank) or 1)
        communicators.append(Communicator(id=comm, nranks=max(nranks, 1), collective=collective,
                                          ranks=sorted(by_rank), label=comm))
        found += [BusbwSeries(comm=comm, rank=r, t=[t for t, _ in sorted(p)],
                              busbw_gbs=[v for _, v in sorted(p)])
                  for r, p in sorted(by_rank.items())]
    return communicators, found, warnings


def prom_steps(series: Iterable[tuple[Mapping[str, str], Iterable[tuple[float, float]]]],
               *, metric: str, rank_label: str = "rank",
               rank_at: RankAt | None = None, host_of: Callable[[str], str] = lambda v: v,
               ) -> tuple[list[StepSeries], list[str]]:
    """Step-time series from a step-time gauge (seconds) read over a window: the rank from its
    `rank_label` label, else from `node`/`instance` and `gpu` through the placement."""
    warnings: list[str] = []
    points: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for labels, pts in series:
        value = labels.get(rank_label, "")
        rank = int(value) if value.isdigit() else None
        if rank is None and rank_at is not None:
            gpu = labels.get("gpu", "").removeprefix("GPU")
            host = host_of(labels.get("node") or labels.get("instance", ""))
            rank = rank_at(host, int(gpu)) if gpu.isdigit() else None
        if rank is None:
            warnings.append(f"{metric}{dict(labels)}: names no rank (label {rank_label!r}) "
                            "and no placed GPU; left out")
            continue
        points[rank].extend(pts)
    return [StepSeries(rank=r, t=[t for t, _ in sorted(p)], step_s=[s for _, s in sorted(p)],
                       source=f"Prometheus {metric}")
            for r, p in sorted(points.items())], warnings
