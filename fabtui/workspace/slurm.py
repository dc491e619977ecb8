"""Jobs from Slurm: a job id -> its nodes and rank placement, for the Fabric view and triage.

`job_placement(ws, JOBID)` asks Slurm through the workspace's transports: `scontrol show job -d
JOBID` on the configured `[slurm] host` (over ssh; this machine when none is set; on the demo
fabric, a simulated node), then `squeue --json --jobs JOBID`, then `sacct` (for a job the
controller has forgotten), and lays the job's tasks out with `fabtui.topology.jobplace` (the
job's own distribution where its record names one, else the configured one). `source=FILE`
reads a saved output of any of the three instead. `follow_job(ws, placement)` makes that
placement the workspace's: `ws.graph()` then places ranks by it, so `rank:N` targets, the Fabric
screen's `job` filter and triage all see the same job. `running_jobs(ws)` lists every running
job that way (`squeue --json --states=RUNNING`), for the incidents' job impact (issue 40).

Side effects: runs read-only Slurm commands (never `scontrol update`), or reads one file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from fabtui.errors import RequestError

if TYPE_CHECKING:
    from fabtui.config import Settings
    from fabtui.model.parsed._slurm_common import SlurmJob
    from fabtui.model.transport import TransportResult
    from fabtui.probes.runner import Transports
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.loader import LoadedTopology
    from fabtui.topology.ranks import RankSlot


class Workspace(Protocol):
    """What this module uses of `fabtui.workspace.core.Workspace` (named here, not imported:
    the workspace's alerting, which the workspace imports, asks for the running jobs)."""

    settings: Settings
    job_slots: tuple[RankSlot, ...] | None

    def topology(self) -> LoadedTopology: ...

    def graph(self) -> FabricGraph: ...

    def simulated(self) -> bool: ...

    def transports(self) -> Transports: ...

JOB_ID = re.compile(r"^\d+(?:_\d+)?$")
"""A job id as fabtui accepts it: `4242`, or an array task `4242_7`."""
TIMEOUT_S = 30.0


@dataclass(frozen=True)
class JobPlacement:
    """Where a Slurm job's ranks run."""

    job: SlurmJob
    slots: tuple[RankSlot, ...]
    """Rank -> node and GPU, in rank order."""
    distribution: str
    """`block` or `cyclic`."""
    distribution_known: bool
    """True when the job's record named it; False when the configured default was assumed."""
    source: str
    """Where the job came from: the command and host that printed it, or the file."""

    @property
    def nodes(self) -> list[str]:
        """The job's nodes, in Slurm's order."""
        return list(self.job.nodes)

    def ranks_on(self, node: str) -> list[int]:
        """The ranks placed on `node`."""
        return [slot.rank for slot in self.slots if slot.node == node]


def _queries(job_id: str) -> list[tuple[list[str], str]]:
    from fabtui.parsers.sacct import FIELDS

    return [(["scontrol", "show", "job", "-d", job_id], "scontrol-job"),
            (["squeue", "--json", "--jobs", job_id], "squeue-json"),
            (["sacct", "-X", "-n", "-P", "-o", ",".join(FIELDS), "-j", job_id], "sacct")]


def _jobs_of(kind: str, text: str) -> list[SlurmJob]:
    """The jobs `text` (an output of `kind`) describes; sacct rows become jobs."""
    from fabtui.model.parsed._slurm_common import SlurmJob
    from fabtui.parsers import registry

    parsed = registry.get(kind).parse(text)
    if kind != "sacct":
        return list(getattr(parsed, "jobs", []))
    jobs = []
    for row in getattr(parsed, "rows", []):
        if row.step is None:
            count = row.fields.get("NNodes", "")
            tasks = row.fields.get("NTasks", "")
            jobs.append(SlurmJob(job_id=row.job_id, name=row.name, state=row.state,
                                 nodelist=row.nodelist, nodes=row.nodes,
                                 num_nodes=int(count) if count.isdigit() else None,
                                 num_tasks=int(tasks) if tasks.isdigit() else None))
    return jobs


def _pick(jobs: Sequence[SlurmJob], job_id: str) -> SlurmJob:
    for job in jobs:
        if job.job_id == job_id or f"{job.array_job_id}_{job.array_task_id}" == job_id:
            return job
    raise RequestError(f"no job {job_id}")


async def _ask(ws: Workspace, job_id: str) -> tuple[SlurmJob, str]:
    """Run the Slurm queries in turn until one describes the job."""
    from fabtui.parsers.errors import ParseError
    from fabtui.transports.ssh import SshTarget

    transports = ws.transports()
    host = ws.settings.slurm.host
    if host is None and ws.simulated():
        host = next(iter(ws.graph().nodes), None)
    failures: list[str] = []
    try:
        for argv, kind in _queries(job_id):
            result: TransportResult
            if host is not None:
                result = await transports.ssh.run(SshTarget(name=host, host=host), argv,
                                                  timeout=TIMEOUT_S)
            else:
                result = await transports.local.run(argv, timeout=TIMEOUT_S)
            where = f"`{result.command}`" + (f" on {host}" if host else "")
            if not result.ok:
                reason = result.error_message or (result.stderr.strip().splitlines() or
                                                  [f"exit status {result.exit_status}"])[-1]
                failures.append(f"{where}: {reason}")
                continue
            if not result.output.strip():
                failures.append(f"{where}: no job {job_id}")
                continue
            try:
                return _pick(_jobs_of(kind, result.output), job_id), where
            except (ParseError, RequestError) as exc:
                failures.append(f"{where}: {exc}")
    finally:
        await transports.ssh.close()
    raise RequestError(f"Slurm does not describe job {job_id}: " + "; ".join(failures))


def _read(path: Path, job_id: str) -> tuple[SlurmJob, str]:
    """The job from a saved `scontrol` / `squeue --json` / `sacct -P` output."""
    from fabtui.parsers import registry
    from fabtui.parsers.errors import ParseError
    from fabtui.paths import display_path

    label = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestError(f"{label}: cannot read: {getattr(exc, 'strerror', None) or exc}") \
            from None
    guesses = [k for k, _ in registry.detect(text) if k in ("scontrol-job", "squeue-json",
                                                            "sacct")]
    if not guesses:
        raise RequestError(f"{label}: not scontrol show job, squeue --json or sacct -P output")
    try:
        return _pick(_jobs_of(guesses[0], text), job_id), label
    except ParseError as exc:
        where = f":{exc.line}" if exc.line is not None else ""
        raise RequestError(f"{label}{where}: {exc.message}") from None
    except RequestError as exc:
        raise RequestError(f"{label}: {exc}") from None


def job_placement(ws: Workspace, job_id: str, *, source: Path | None = None) -> JobPlacement:
    """Job `job_id`'s nodes and rank placement (see the module docstring). Raises
    `RequestError` with one line saying what Slurm (or the file) said."""
    from fabtui.topology.jobplace import PlacementError, distribution_of, job_slots

    job_id = job_id.strip()
    if not JOB_ID.match(job_id):
        raise RequestError(f"{job_id!r} is not a Slurm job id (digits, or JOBID_TASK)")
    job, where = _read(source, job_id) if source is not None else asyncio.run(_ask(ws, job_id))
    distribution, known = distribution_of(job, ws.settings.slurm.distribution)
    if not job.num_tasks and not job.tasks_per_node and job.nodes:
        job = _one_rank_per_gpu(ws, job)
    try:
        slots = job_slots(job, distribution)
    except PlacementError as exc:
        # A saved output names the line the job's record starts on (scontrol's have one).
        line = f":{job.line}" if source is not None and job.line is not None else ""
        raise RequestError(f"{where}{line}: {exc}") from None
    names = {node.hostname for node in ws.topology().topology.nodes}
    missing = [n for n in job.nodes if n not in names]
    if missing:
        raise RequestError(f"{where}: job {job_id} runs on nodes the topology does not have: "
                           + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""))
    return JobPlacement(job=job, slots=tuple(slots), distribution=distribution,
                        distribution_known=known, source=where)


def _one_rank_per_gpu(ws: Workspace, job: SlurmJob) -> SlurmJob:
    """A job Slurm gives no task count for (sacct of an old job): one rank per GPU of each
    node, as nccl jobs run."""
    topology = ws.topology().topology
    gpus = {node.hostname: len(node.gpus) for node in topology.nodes}
    per_node = max((gpus.get(n, 0) for n in job.nodes), default=0)
    return job.model_copy(update={"tasks_per_node": per_node or None})


@dataclass(frozen=True)
class RunningJobs:
    """The jobs running now and their ranks on each node (Slurm's `squeue --json`)."""

    ranks: dict[str, dict[str, tuple[int, ...]]]
    """Job id -> node -> the ranks it runs there (every node of the job, in Slurm's order)."""
    names: dict[str, str]
    """Job id -> its name."""
    source: str
    """The command and host that listed them."""


async def _ask_running(ws: Workspace) -> tuple[list[SlurmJob], str]:
    """`squeue --json --states=RUNNING` on the Slurm host (as `_ask`)."""
    from fabtui.transports.ssh import SshTarget

    transports = ws.transports()
    host = ws.settings.slurm.host
    if host is None and ws.simulated():
        host = next(iter(ws.graph().nodes), None)
    argv = ["squeue", "--json", "--states=RUNNING"]
    try:
        if host is not None:
            result = await transports.ssh.run(SshTarget(name=host, host=host), argv,
                                              timeout=TIMEOUT_S)
        else:
            result = await transports.local.run(argv, timeout=TIMEOUT_S)
    finally:
        await transports.ssh.close()
    where = f"`{result.command}`" + (f" on {host}" if host else "")
    if not result.ok:
        reason = result.error_message or (result.stderr.strip().splitlines() or
                                          [f"exit status {result.exit_status}"])[-1]
        raise RequestError(f"{where}: {reason}")
    return _jobs_of("squeue-json", result.output), where


def running_jobs(ws: Workspace) -> RunningJobs:
    """The running jobs on this fabric's nodes, each laid out as `job_placement` lays one out
    (jobs on nodes the topology lacks, or that Slurm does not describe enough to place, are
    left out). Raises `RequestError` when Slurm cannot be asked."""
    from fabtui.parsers.errors import ParseError
    from fabtui.topology.jobplace import PlacementError, distribution_of, job_slots

    try:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the usual case: a receiver's thread, the CLI
            jobs, where = asyncio.run(_ask_running(ws))
        else:  # called from a coroutine (an app's handler): not on its loop
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                jobs, where = pool.submit(asyncio.run, _ask_running(ws)).result()
    except ParseError as exc:
        raise RequestError(f"squeue --json: {exc}") from None
    names = {node.hostname for node in ws.topology().topology.nodes}
    ranks: dict[str, dict[str, tuple[int, ...]]] = {}
    titles: dict[str, str] = {}
    for job in jobs:
        if (job.state or "RUNNING") != "RUNNING" or not job.nodes or \
                not set(job.nodes) <= names:
            continue
        if not job.num_tasks and not job.tasks_per_node:
            job = _one_rank_per_gpu(ws, job)
        distribution, _ = distribution_of(job, ws.settings.slurm.distribution)
        try:
            slots = job_slots(job, distribution)
        except PlacementError:
            continue
        by_node: dict[str, list[int]] = {node: [] for node in job.nodes}
        for slot in slots:
            by_node.setdefault(slot.node, []).append(slot.rank)
        ranks[job.job_id] = {node: tuple(found) for node, found in by_node.items()}
        titles[job.job_id] = job.name or ""
    return RunningJobs(ranks, titles, where)


def follow_job(ws: Workspace, placement: JobPlacement) -> None:
    """Make `placement` the workspace's rank placement (what `ws.graph()` places by)."""
    ws.job_slots = placement.slots
