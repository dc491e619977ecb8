"""The Slurm side of a simulated node: the one training job the demo fabric carries (on every
node that has ranks), which `scontrol_job.py` (`scontrol`), `squeue_json.py` (`squeue`) and
`sacct.py` (`sacct`) describe as Slurm does, each in the real tool's layout so that the Slurm
parsers read them back. Nothing is remembered between calls: the simulated scheduler accepts the
request and the fabric's physics does not change (a drained node's ranks keep running until the
job is requeued, as in Slurm).
"""

from __future__ import annotations

from fabtui.sim.core import Sim

JOB_ID = "4242"
"""The demo training job's Slurm id."""
JOB_NAME = "llm-pretrain"
JOB_USER = "mlops"
JOB_PARTITION = "gpu"
JOB_START = "2026-12-01T06:00:00"


def job_nodes(sim: Sim) -> list[str]:
    """The demo job's nodes: every node its ranks run on, in rank order."""
    return list(dict.fromkeys(slot.node for slot in sim.graph.ranks))


def job_id_arg(args: list[str]) -> str | None:
    """The job id a command names (`show job 4242`, `-j 4242`, `--jobs=4242`)."""
    for index, arg in enumerate(args):
        if arg in ("-j", "--jobs", "job") and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--jobs="):
            return arg.split("=", 1)[1]
    return None
