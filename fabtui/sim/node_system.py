"""The system commands of a simulated node: the job's logs and the config files (`cat`, `tail`),
`dmesg`, `lsmod`, and the commands with a fixed answer (`hostname`, `true`, `echo`, `uptime`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.scenario import FaultKind

Result = tuple[str, str, int]
"""(stdout, stderr, exit status), as a process would end."""


LOG_DIR = "/var/log/fabtui-sim"
"""Where the simulated job writes its logs (`job.log`; `rank-N.log` on the rank's node)."""


def read_file(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    paths = [a for a in args if not a.startswith("-") and not a.isdigit()
             and not re.fullmatch(r"\d+[KMG]?", a)]
    if not paths:
        return "", "usage: cat FILE\n", 1
    path = paths[-1]
    from fabtui.sim.logs import job_log, rank_log

    if path == f"{LOG_DIR}/job.log":
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


def dmesg(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    from fabtui.sim.logs import kernel_log

    human = any(a in ("-T", "--ctime") for a in args)
    return kernel_log(sim, node.hostname, t, human=human), "", 0


def lsmod(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    loaded = not any(f.host == node.hostname for f in sim.active(FaultKind.GDR_OFF, t))
    users = "nvidia_peermem," if loaded else ""
    modules = ["Module                  Size  Used by", "mlx5_ib               462848  0",
               f"ib_uverbs             184320  {2 if loaded else 1} {users}mlx5_ib",
               "mlx5_core            2134016  1 mlx5_ib",
               f"nvidia              56729600  {312 if loaded else 311} nvidia_uvm,{users}"
               "nvidia_modeset"]
    if loaded:
        modules.insert(1, "nvidia_peermem         16384  0")
    return "\n".join(modules) + "\n", "", 0


def simple(output: str, status: int = 0) -> Callable[[Sim, Node, list[str], float], Result]:
    def answer(sim: Sim, node: Node, args: list[str], t: float) -> Result:
        return output.format(host=node.hostname, args=" ".join(args)), "", status

    return answer


def echo(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    return " ".join(args) + "\n", "", 0
