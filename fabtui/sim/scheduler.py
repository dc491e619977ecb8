"""The Slurm commands of a simulated node: what runbooks use to drain, resume and requeue.

`scontrol update nodename=N state=drain|resume|down reason=...` (a reason is mandatory for
drain and down, as Slurm requires), `scontrol requeue JOBID`, `scontrol show node N`, and
`squeue -h -w NODES -o FORMAT` listing the one training job the demo fabric carries (on every
node that has ranks). Nothing is remembered between calls: the simulated scheduler accepts the
request and the fabric's physics does not change (a drained node's ranks keep running until the
job is requeued, as in Slurm).
"""

from __future__ import annotations

from collections.abc import Callable

from fabtui.hostlist import fold
from fabtui.model.topology import Node
from fabtui.sim.core import Sim

Result = tuple[str, str, int]
JOB_ID = "4242"
"""The demo training job's Slurm id."""
JOB_NAME = "llm-pretrain"
JOB_USER = "mlops"


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
    if args[:2] == ["show", "node"] and len(args) > 2:
        name = args[2]
        if name not in sim.graph.nodes:
            return "", f"Node {name} not found\n", 1
        gpus = len(sim.graph.nodes[name].gpus)
        return (f"NodeName={name} Arch=x86_64 CoresPerSocket=56\n"
                f"   Gres=gpu:{gpus} State=ALLOCATED ThreadsPerCore=2\n"), "", 0
    return "", "scontrol: sim: only `update`, `requeue` and `show node` are simulated\n", 2


def _squeue(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    wanted: set[str] | None = None
    if "-w" in args and args.index("-w") + 1 < len(args):
        wanted = {w for w in args[args.index("-w") + 1].split(",") if w}
    job_nodes = sorted({slot.node for slot in sim.graph.ranks})
    header = "-h" not in args
    lines = ["JOBID NAME USER NODELIST"] if header else []
    if job_nodes and (wanted is None or wanted & set(job_nodes)):
        lines.append(f"{JOB_ID} {JOB_NAME} {JOB_USER} {fold(job_nodes)}")
    return "".join(line + "\n" for line in lines), "", 0


COMMANDS: dict[str, Callable[[Sim, Node, list[str], float], Result]] = {
    "scontrol": _scontrol, "squeue": _squeue,
}
