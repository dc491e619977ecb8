"""Slurm's view of a job, shared by the `scontrol-job` and `squeue-json` results
(`scontrol_job.py`, `squeue_json.py`); `sacct.py` holds sacct's rows."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SlurmNodeAlloc(BaseModel):
    """What a job holds on some of its nodes: one `-d` detail line of `scontrol show job -d`
    (`Nodes=gpu[01-02] CPU_IDs=0-47 Mem=0 GRES=gpu:8(IDX:0-7)`) or one allocated node of
    `squeue --json`."""

    model_config = ConfigDict(extra="forbid")

    nodes: str
    """The host list as printed (one name or a range such as `gpu[01-02]`)."""
    hosts: list[str] = []
    """`nodes` expanded to host names."""
    cpu_ids: str | None = None
    """The CPU ids held on each of those nodes, as printed (`0-3,16-19`)."""
    cpus: int | None = None
    """How many CPUs that is per node."""
    mem_mb: int | None = None
    """Memory held per node, MB (`Mem=`)."""
    gres: str | None = None
    """Generic resources held per node, as printed (`gpu:a100:2(IDX:0-1)`; old Slurm prints
    `GRES_IDX=gpu(IDX:0,2)`)."""
    gpu_ids: list[int] = []
    """The GPU indexes (`IDX:`) of the `gpu` resources in `gres`."""


class SlurmJob(BaseModel):
    """One job as Slurm describes it."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    """The job id (`JobId=`, `job_id`)."""
    array_job_id: str | None = None
    """The array's job id when this is an array task."""
    array_task_id: str | None = None
    """The array task index when this is an array task."""
    name: str | None = None
    """The job name."""
    user: str | None = None
    """The user name (without the uid `scontrol` prints in parentheses)."""
    state: str | None = None
    """The base job state: `RUNNING`, `PENDING`, `COMPLETED`, ..."""
    state_flags: list[str] = []
    """Further state flags Slurm 23.11+ lists after the base state (`COMPLETING`,
    `CONFIGURING`, ...)."""
    reason: str | None = None
    """Why it waits or ended (`Reason=`, `state_reason`), `None` printed as null."""
    partition: str | None = None
    """The partition(s) as printed."""
    nodelist: str | None = None
    """The allocated nodes as a host list (`NodeList=node-[63-65]`); null while pending."""
    nodes: list[str] = []
    """`nodelist` expanded to host names, in host-list order."""
    batch_host: str | None = None
    """The node running the batch script (rank 0's node under `srun`)."""
    num_nodes: int | None = None
    """How many nodes it holds (the lower bound of a pending job's `NumNodes=1-2`)."""
    num_tasks: int | None = None
    """How many tasks (ranks) it runs."""
    cpus_per_task: int | None = None
    """CPUs per task, when set."""
    tasks_per_node: int | None = None
    """`--ntasks-per-node`, when set."""
    distribution: str | None = None
    """The task distribution across nodes when the output says it (`block`, `cyclic`, ...)."""
    allocations: list[SlurmNodeAlloc] = []
    """Per-node CPU / memory / GRES detail (`scontrol show job -d`, `squeue --json`)."""
    line: int | None = None
    """The line the job's record starts on (scontrol only)."""
