"""`scontrol show job [-d] [JOBID]` (also `--oneliner`): Slurm's record of each job.

::

    JobId=2120436 JobName=MPI_PMV
       UserId=tabernera(4224) GroupId=ocre(3000) MCS_label=cont001
       JobState=RUNNING Reason=None Dependency=(null)
       NodeList=node-[63-65]
       NumNodes=3 NumCPUs=8 NumTasks=8 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
         Nodes=node-63 CPU_IDs=22-23 Mem=1000 GRES=gpu:1(IDX:0)      <- -d detail lines
       Command=/location/with/command.sh

A record starts at `JobId=`; fields are `Key=Value` separated by blanks. Values may hold blanks
(`JobName=REX REST JOB`), so a value runs to the next blank-separated `Key=`; the path fields
(`Command=`, `WorkDir=`, `StdOut=`, ...) run to the end of their line. Lines without a `Key=`
inside a record (`NtasksPerTRES:0`, a blank line) carry nothing fabtui uses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from fabtui.model.parsed._slurm_common import SlurmJob, SlurmNodeAlloc
from fabtui.model.parsed.scontrol_job import ScontrolJobOutput
from fabtui.parsers._slurm_common import (
    HostBudget,
    TooLarge,
    count_ids,
    gpu_ids,
    hosts,
    missing,
    quoted,
    text_or_none,
)
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Encoded, Streamed
from fabtui.parsers.text import split_lines

KIND = "scontrol-job"
MODEL = ScontrolJobOutput
DESCRIPTION = "scontrol show job [-d]: each job's state, nodes, tasks and per-node CPUs / GRES"

_RECORD = re.compile(r"^\s*JobId=(\S+)")
_KEY = re.compile(r"(?<!\S)([A-Za-z][A-Za-z0-9_:/]*)=")
_TO_EOL = frozenset({"Command", "WorkDir", "StdErr", "StdIn", "StdOut", "Comment",
                     "AdminComment", "SystemComment", "BurstBuffer", "Reason"})
_SLURM_ERROR = re.compile(r"^(?:slurm_load_jobs error|scontrol: error|No jobs in the system)")
_RANGE_INT = re.compile(r"^(\d+)(?:-\d+)?$")


def detect(text: str) -> float:
    """How sure we are that `text` is `scontrol show job` output (0..1)."""
    head = text[:65536]
    if re.search(r"(?m)^\s*JobId=\d", head):
        if re.search(r"(?m)(?:JobState=|NumNodes=|UserId=)", head):
            return 0.95
        return 0.5
    return 0.0


def _fields(line: str) -> list[tuple[str, str]]:
    """The `Key=Value` pairs of one line (see the module docstring)."""
    starts = list(_KEY.finditer(line))
    pairs: list[tuple[str, str]] = []
    for index, match in enumerate(starts):
        key = match.group(1)
        if key in _TO_EOL and index == 0:
            pairs.append((key, line[match.end():].strip()))
            return pairs
        end = starts[index + 1].start() if index + 1 < len(starts) else len(line)
        pairs.append((key, line[match.end():end].strip()))
    return pairs


def _int(value: str, key: str, line: int) -> int | None:
    """An integer field (`NumNodes=2-2` -> 2); `N/A` -> None; other text refused."""
    if missing(value) or value in ("*", ""):
        return None
    match = _RANGE_INT.match(value)
    if match is None:
        raise ParseError(KIND, line, f"{key}={value}: not a number")
    return int(match.group(1))


def _detail(pairs: list[tuple[str, str]], warnings: list[str], line: int,
            budget: HostBudget) -> SlurmNodeAlloc:
    """One `-d` line: `Nodes=... CPU_IDs=... Mem=... GRES=...` (or old `GRES_IDX=`)."""
    values = dict(pairs)
    nodelist, names = hosts(values["Nodes"], warnings, f"line {line}", budget)
    cpu_ids = text_or_none(values.get("CPU_IDs"))
    cpus = count_ids(cpu_ids)
    if cpu_ids is not None and cpus is None:
        warnings.append(f"line {line}: CPU_IDs={cpu_ids} cut short; CPUs not counted")
    gres = values.get("GRES", values.get("GRES_IDX", "")).strip() or None
    try:
        gpus = gpu_ids(gres)
    except TooLarge as exc:
        raise ParseError(KIND, line, f"GRES={quoted(gres or '')}: {exc}") from None
    return SlurmNodeAlloc(nodes=nodelist or values["Nodes"], hosts=names, cpu_ids=cpu_ids,
                          cpus=cpus, mem_mb=_int(values.get("Mem", ""), "Mem", line),
                          gres=gres, gpu_ids=gpus)


def _apply(job: SlurmJob, key: str, value: str, line: int, warnings: list[str],
           budget: HostBudget) -> None:
    """Store one job-level field (unknown keys are ignored: Slurm adds fields every release)."""
    if key == "JobName":
        job.name = value or None
    elif key == "ArrayJobId":
        job.array_job_id = text_or_none(value)
    elif key == "ArrayTaskId":
        job.array_task_id = text_or_none(value)
    elif key == "UserId":
        job.user = text_or_none(value.split("(", 1)[0])
    elif key == "JobState":
        job.state = text_or_none(value)
    elif key == "Reason":
        job.reason = text_or_none(value)
    elif key == "Partition":
        job.partition = text_or_none(value)
    elif key == "NodeList":
        job.nodelist, job.nodes = hosts(value, warnings, f"line {line}", budget)
    elif key == "BatchHost":
        job.batch_host = text_or_none(value)
    elif key == "NumNodes":
        job.num_nodes = _int(value, key, line)
    elif key == "NumTasks":
        job.num_tasks = _int(value, key, line)
    elif key == "CPUs/Task":
        job.cpus_per_task = _int(value, key, line)
    elif key == "NtasksPerN:B:S:C":
        per_node = _int(value.split(":", 1)[0], key, line)
        job.tasks_per_node = per_node or None
    elif key in ("Distribution", "Dist"):
        job.distribution = text_or_none(value.lower())


def parse(text: str) -> ScontrolJobOutput:
    """Parse `scontrol show job` output; raises `ParseError` at the line it cannot read."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[ScontrolJobOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way): each job is kept as the
    JSON it is written as, not as a model (a listing of thousands of jobs costs its output's
    text), and validated into one again only when the whole result is asked for."""
    warnings: list[str] = []
    jobs = [Encoded.of(job.model_dump(mode="json"))
            for job in _jobs(enumerate(lines, start=1), warnings)]
    if not jobs:
        raise ParseError(KIND, None, "no job record (JobId=...) in the input")

    def models() -> Iterator[SlurmJob]:
        # json.loads, not model_validate_json: a lone surrogate in a name must read back too.
        return (SlurmJob.model_validate(json.loads(job)) for job in jobs)

    return Streamed(ScontrolJobOutput(jobs=[], warnings=warnings), {"jobs": models},
                    {"jobs": lambda: jobs})


def _jobs(numbered: Iterable[tuple[int, str]], warnings: list[str]) -> Iterator[SlurmJob]:
    """The job records of numbered lines, each once its last line is read."""
    job: SlurmJob | None = None
    budget = HostBudget()
    for number, raw in numbered:
        line = raw.rstrip()
        if not line.strip():
            continue
        record = _RECORD.match(line)
        if record:
            if job is not None:
                yield job
            job = SlurmJob(job_id=record.group(1), line=number)
        elif job is None:
            if _SLURM_ERROR.match(line.strip()):
                raise ParseError(KIND, number, f"scontrol says: {line.strip()}")
            raise ParseError(KIND, number, "expected a job record starting with JobId=")
        pairs = _fields(line)
        if not pairs:
            continue
        if pairs[0][0] == "Nodes" and record is None:
            job.allocations.append(_detail(pairs, warnings, number, budget))
            continue
        for key, value in pairs:
            _apply(job, key, value, number, warnings, budget)
    if job is not None:
        yield job
