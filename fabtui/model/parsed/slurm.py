"""Slurm's view of jobs: `scontrol show job [-d]`, `squeue --json` and `sacct --parsable2`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


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


class ScontrolJobOutput(ParsedOutput):
    """`scontrol show job [-d] [JOBID]`: one record per job, key=value fields."""

    kind: Literal["scontrol-job"] = "scontrol-job"
    jobs: list[SlurmJob] = Field(default_factory=list)
    """The jobs, in the order printed."""


class SqueueJsonOutput(ParsedOutput):
    """`squeue --json` (Slurm 21.08 to 24.x; also slurmrestd's `/slurm/vX/jobs` answer)."""

    kind: Literal["squeue-json"] = "squeue-json"
    slurm_release: str | None = None
    """The Slurm release that printed it (`meta.Slurm.release`), e.g. `23.02.6`."""
    data_parser: str | None = None
    """The JSON schema plugin (`data_parser/v0.0.39`), when the output names it."""
    jobs: list[SlurmJob] = Field(default_factory=list)
    """The jobs, in the order printed."""


class SacctRow(BaseModel):
    """One `sacct` row: a job or one of its steps (`123.batch`, `123.0`)."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    """`JobID` as printed, step suffix included (`278952.batch`)."""
    step: str | None = None
    """The step part of `JobID` (`batch`, `extern`, `0`), null for the job itself."""
    name: str | None = None
    """`JobName`."""
    state: str | None = None
    """`State`, its first word (`CANCELLED by 1000` -> `CANCELLED`)."""
    nodelist: str | None = None
    """`NodeList` as a host list; null for `None assigned`."""
    nodes: list[str] = []
    """`nodelist` expanded to host names."""
    fields: dict[str, str] = {}
    """Every column by its header name, as printed."""


class SacctOutput(ParsedOutput):
    """`sacct --parsable2` (`-P`), with its header line or with fabtui's own `-o` field list."""

    kind: Literal["sacct"] = "sacct"
    columns: list[str] = Field(default_factory=list)
    """The column names, from the header (or fabtui's field list for headerless rows)."""
    rows: list[SacctRow] = Field(default_factory=list)
    """The rows, in the order printed."""
