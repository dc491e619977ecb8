"""`sacct -P [-n] [-X] -o FIELDS -j JOBID` on a simulated node: the demo's job and its batch
step."""

from __future__ import annotations

from fabtui.hostlist import fold
from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result
from fabtui.sim.programs._slurm_job import (
    JOB_ID,
    JOB_NAME,
    JOB_PARTITION,
    JOB_START,
    JOB_USER,
    job_id_arg,
    job_nodes,
)


def sacct(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`sacct -P [-n] [-X] -o FIELDS -j JOBID`: the demo job (and its batch step unless -X)."""
    if "-P" not in args and "--parsable2" not in args:
        return "", "sacct: sim: only --parsable2 (-P) output is simulated\n", 2
    fields: list[str] = ["JobID", "JobName", "State", "NodeList"]
    for index, arg in enumerate(args):
        if arg in ("-o", "--format") and index + 1 < len(args):
            fields = args[index + 1].split(",")
        elif arg.startswith(("--format=", "-o=")):
            fields = arg.split("=", 1)[1].split(",")
    wanted = job_id_arg(args)
    nodes = job_nodes(sim)
    rows: list[dict[str, str]] = []
    if nodes and wanted in (None, JOB_ID):
        tasks = len(sim.graph.ranks)
        job = {"jobid": JOB_ID, "jobname": JOB_NAME, "state": "RUNNING",
               "nodelist": fold(nodes), "nnodes": str(len(nodes)), "ntasks": "",
               "alloccpus": str(tasks * 4), "partition": JOB_PARTITION, "start": JOB_START,
               "end": "Unknown", "user": JOB_USER}
        rows.append(job)
        if "-X" not in args and "--allocations" not in args:
            rows.append({**job, "jobid": f"{JOB_ID}.batch", "jobname": "batch",
                         "nodelist": nodes[0], "nnodes": "1", "ntasks": "1",
                         "partition": "", "user": ""})
    out = [] if "-n" in args or "--noheader" in args else ["|".join(fields)]
    out += ["|".join(row.get(f.lower(), "") for f in fields) for row in rows]
    return "".join(line + "\n" for line in out), "", 0
