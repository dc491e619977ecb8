"""`cat` / `tail` on a simulated node: the job's NCCL / PyTorch logs under `LOG_DIR`
(`job.log`; `rank-N.log` on the rank's node), and the configuration files misconfig serves."""

from __future__ import annotations

import re

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result

LOG_DIR = "/var/log/fabtui-sim"
"""Where the simulated job writes its logs (`job.log`; `rank-N.log` on the rank's node)."""
JOB_LOG = f"{LOG_DIR}/job.log"
"""The simulated job's log, every rank's lines, on every node."""


def read_file(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    paths = [a for a in args if not a.startswith("-") and not a.isdigit()
             and not re.fullmatch(r"\d+[KMG]?", a)]
    if not paths:
        return "", "usage: cat FILE\n", 1
    path = paths[-1]
    from fabtui.sim.logs import job_log, rank_log

    if path == JOB_LOG:
        return job_log(sim, t), "", 0
    match = re.fullmatch(re.escape(LOG_DIR) + r"/rank-(\d+)\.log", path)
    if match:
        text = rank_log(sim, int(match.group(1)), node.hostname, t)
        if text is not None:
            return text, "", 0
    config = misconfig.read_file(sim, node, path, t)
    if config is not None:
        return config, "", 0
    return "", f"cat: {path}: No such file or directory\n", 1
