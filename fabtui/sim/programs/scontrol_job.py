"""`scontrol` on a simulated node: `scontrol show job [-d] JOBID` (this kind) and what runbooks
use to drain, resume and requeue: `scontrol update nodename=N state=drain|resume|down reason=...`
(a reason is mandatory for drain and down, as Slurm requires), `scontrol requeue JOBID`,
`scontrol show node N`.
"""

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
    job_nodes,
)


def scontrol_job(sim: Sim, job_id: str | None, detail: bool) -> Result:
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


def scontrol(sim: Sim, node: Node, args: list[str], t: float) -> Result:
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
        return scontrol_job(sim, shown[2] if len(shown) > 2 else None, detail)
    if args[:2] == ["show", "node"] and len(args) > 2:
        name = args[2]
        if name not in sim.graph.nodes:
            return "", f"Node {name} not found\n", 1
        gpus = len(sim.graph.nodes[name].gpus)
        return (f"NodeName={name} Arch=x86_64 CoresPerSocket=56\n"
                f"   Gres=gpu:{gpus} State=ALLOCATED ThreadsPerCore=2\n"), "", 0
    return "", ("scontrol: sim: only `update`, `requeue`, `show job` and `show node` are "
                "simulated\n"), 2
