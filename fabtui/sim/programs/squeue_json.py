"""`squeue` on a simulated node: `squeue --json [-j JOBID]` (this kind, Slurm 24.05's schema)
and `squeue -h -w NODES -o FORMAT`, listing the demo's job.
"""

from __future__ import annotations

import json

from fabtui.hostlist import fold
from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result
from fabtui.sim.programs._slurm_job import (
    JOB_ID,
    JOB_NAME,
    JOB_PARTITION,
    JOB_USER,
    job_id_arg,
    job_nodes,
)


def squeue_json(sim: Sim, args: list[str]) -> Result:
    """`squeue --json`: the demo job in Slurm 24.05's schema (data_parser v0.0.41)."""
    wanted = job_id_arg(args)
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


def squeue(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if "--json" in args:
        return squeue_json(sim, args)
    wanted: set[str] | None = None
    if "-w" in args and args.index("-w") + 1 < len(args):
        wanted = {w for w in args[args.index("-w") + 1].split(",") if w}
    nodes = job_nodes(sim)
    header = "-h" not in args
    lines = ["JOBID NAME USER NODELIST"] if header else []
    if nodes and (wanted is None or wanted & set(nodes)):
        lines.append(f"{JOB_ID} {JOB_NAME} {JOB_USER} {fold(nodes)}")
    return "".join(line + "\n" for line in lines), "", 0
