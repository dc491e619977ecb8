"""The Slurm commands of a simulated node: what runbooks use to drain, resume and requeue.

`scontrol update nodename=N state=drain|resume|down reason=...` (a reason is mandatory for
drain and down, as Slurm requires), `scontrol requeue JOBID`, `scontrol show node N`, and
`squeue -h -w NODES -o FORMAT` listing the one training job the demo fabric carries (on every
node that has ranks). That job is also described as Slurm describes it: `scontrol show job [-d]
JOBID`, `squeue --json [-j JOBID]` (the 24.05 schema) and `sacct -P [-n] -o FIELDS -j JOBID`,
each in the real tool's layout so that the Slurm parsers read them back. Nothing is
remembered between calls: the simulated scheduler accepts the request and the fabric's physics
does not change (a drained node's ranks keep running until the job is requeued, as in Slurm).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from fabtui.hostlist import fold
from fabtui.model.topology import Node
from fabtui.sim.core import Sim

Result = tuple[str, str, int]
JOB_ID = "4242"
"""The demo training job's Slurm id."""
JOB_NAME = "llm-pretrain"
JOB_USER = "mlops"
JOB_PARTITION = "gpu"
JOB_START = "2026-12-01T06:00:00"


def job_nodes(sim: Sim) -> list[str]:
    """The demo job's nodes: every node its ranks run on, in rank order."""
    return list(dict.fromkeys(slot.node for slot in sim.graph.ranks))


def _job_id_arg(args: list[str]) -> str | None:
    """The job id a command names (`show job 4242`, `-j 4242`, `--jobs=4242`)."""
    for index, arg in enumerate(args):
        if arg in ("-j", "--jobs", "job") and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--jobs="):
            return arg.split("=", 1)[1]
    return None


def _scontrol_job(sim: Sim, job_id: str | None, detail: bool) -> Result:
    if job_id is not None and job_id != JOB_ID:
        return "", "slurm_load_jobs error: Invalid job id specified\n", 1
    nodes = job_nodes(sim)
    if not nodes:
        return "No jobs in the system\n", "", 0
    tasks = len(sim.graph.ranks)
    per_node = tasks // len(nodes)
    nodelist = fold(nodes)
    gpus = len(sim.graph.nodes[nodes[0]].gpus)
    lines = [f"JobId={JOB_ID} JobName={JOB_NAME}",
             f"   UserId={JOB_USER}(1500) GroupId={JOB_USER}(1500) MCS_label=N/A",
             "   Priority=1000 Nice=0 Account=ml QOS=normal",
             "   JobState=RUNNING Reason=None Dependency=(null)",
             "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
             f"   StartTime={JOB_START} EndTime=Unknown Deadline=N/A",
             f"   Partition={JOB_PARTITION} AllocNode:Sid=login01:4242",
             "   ReqNodeList=(null) ExcNodeList=(null)",
             f"   NodeList={nodelist}",
             f"   BatchHost={nodes[0]}",
             f"   NumNodes={len(nodes)} NumCPUs={tasks * 4} NumTasks={tasks} CPUs/Task=4 "
             "ReqB:S:C:T=0:0:*:*",
             f"   TRES=cpu={tasks * 4},node={len(nodes)},billing={tasks * 4},gres/gpu={tasks}",
             f"   Socks/Node=* NtasksPerN:B:S:C={per_node}:0:*:* CoreSpec=*",
             f"   JOB_GRES=gpu:{gpus * len(nodes)}"]
    if detail:
        lines.append(f"     Nodes={nodelist} CPU_IDs=0-{per_node * 4 - 1} Mem=0 "
                     f"GRES=gpu:{gpus}(IDX:0-{gpus - 1})")
    lines += ["   MinCPUsNode=4 MinMemoryNode=0 MinTmpDiskNode=0",
              "   OverSubscribe=NO Contiguous=0 Licenses=(null) Network=(null)",
              "   Command=/shared/jobs/llm-pretrain.sbatch",
              "   WorkDir=/shared/jobs", ""]
    return "\n".join(lines) + "\n", "", 0


def _squeue_json(sim: Sim, args: list[str]) -> Result:
    """`squeue --json`: the demo job in Slurm 24.05's schema (data_parser v0.0.41)."""
    wanted = _job_id_arg(args)
    nodes = job_nodes(sim)
    jobs: list[dict[str, object]] = []
    if nodes and wanted in (None, JOB_ID):
        tasks = len(sim.graph.ranks)
        gpus = len(sim.graph.nodes[nodes[0]].gpus)

        def number(value: int) -> dict[str, object]:
            return {"set": True, "infinite": False, "number": value}

        jobs.append({
            "job_id": int(JOB_ID), "name": JOB_NAME, "user_name": JOB_USER,
            "partition": JOB_PARTITION, "job_state": ["RUNNING"], "state_reason": "None",
            "nodes": fold(nodes), "batch_host": nodes[0], "node_count": number(len(nodes)),
            "tasks": number(tasks), "cpus_per_task": number(4),
            "tasks_per_node": number(tasks // len(nodes)),
            "gres_detail": [f"gpu:{gpus}(IDX:0-{gpus - 1})"] * len(nodes),
            "job_resources": {"nodes": {"count": len(nodes), "list": fold(nodes),
                                        "allocation": [
                {"index": i, "name": n, "cpus": {"count": 4 * tasks // len(nodes), "used": 0},
                 "memory": {"used": 0, "allocated": 0}} for i, n in enumerate(nodes)]}}})
    payload = {"jobs": jobs, "meta": {"plugin": {"data_parser": "data_parser/v0.0.41"},
                                      "slurm": {"release": "24.05.3"}},
               "errors": [], "warnings": []}
    return json.dumps(payload, indent=2) + "\n", "", 0


def _sacct(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`sacct -P [-n] [-X] -o FIELDS -j JOBID`: the demo job (and its batch step unless -X)."""
    if "-P" not in args and "--parsable2" not in args:
        return "", "sacct: sim: only --parsable2 (-P) output is simulated\n", 2
    fields: list[str] = ["JobID", "JobName", "State", "NodeList"]
    for index, arg in enumerate(args):
        if arg in ("-o", "--format") and index + 1 < len(args):
            fields = args[index + 1].split(",")
        elif arg.startswith(("--format=", "-o=")):
            fields = arg.split("=", 1)[1].split(",")
    wanted = _job_id_arg(args)
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


def _scontrol(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if args[:1] == ["update"]:
        fields = dict(a.split("=", 1) for a in args[1:] if "=" in a)
        names = {k.lower(): v for k, v in fields.items()}
        target = names.get("nodename", "")
        state = names.get("state", "").lower()
        if target not in sim.graph.nodes:
            return "", f"scontrol: error: Invalid node name specified: {target}\n", 1
        if state not in ("drain", "resume", "down", "undrain"):
            return "", f"scontrol: error: Invalid node state specified: {state}\n", 1
        if state in ("drain", "down") and not names.get("reason"):
            return "", "scontrol: error: You must specify a reason when DOWNING or " \
                       "DRAINING a node. Request denied\n", 1
        return "", "", 0
    if args[:1] == ["requeue"] and len(args) > 1:
        if not args[1].isdigit():
            return "", f"scontrol: error: Invalid job id specified: {args[1]}\n", 1
        return "", "", 0
    detail = "-d" in args or "--details" in args
    shown = [a for a in args if a not in ("-d", "--details")]
    if shown[:2] == ["show", "job"]:
        return _scontrol_job(sim, shown[2] if len(shown) > 2 else None, detail)
    if args[:2] == ["show", "node"] and len(args) > 2:
        name = args[2]
        if name not in sim.graph.nodes:
            return "", f"Node {name} not found\n", 1
        gpus = len(sim.graph.nodes[name].gpus)
        return (f"NodeName={name} Arch=x86_64 CoresPerSocket=56\n"
                f"   Gres=gpu:{gpus} State=ALLOCATED ThreadsPerCore=2\n"), "", 0
    return "", ("scontrol: sim: only `update`, `requeue`, `show job` and `show node` are "
                "simulated\n"), 2


def _squeue(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if "--json" in args:
        return _squeue_json(sim, args)
    wanted: set[str] | None = None
    if "-w" in args and args.index("-w") + 1 < len(args):
        wanted = {w for w in args[args.index("-w") + 1].split(",") if w}
    nodes = job_nodes(sim)
    header = "-h" not in args
    lines = ["JOBID NAME USER NODELIST"] if header else []
    if nodes and (wanted is None or wanted & set(nodes)):
        lines.append(f"{JOB_ID} {JOB_NAME} {JOB_USER} {fold(nodes)}")
    return "".join(line + "\n" for line in lines), "", 0


COMMANDS: dict[str, Callable[[Sim, Node, list[str], float], Result]] = {
    "scontrol": _scontrol, "squeue": _squeue, "sacct": _sacct,
}
