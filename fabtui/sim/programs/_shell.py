"""The commands of a simulated node whose output no parser reads: `lsmod` and the fixed
answers (`hostname`, `true`, `echo`, `uptime`, ...)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result
from fabtui.sim.scenario import FaultKind


def lsmod(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """The loaded modules: nvidia_peermem unless GPUDirect RDMA is off (`gdr-off`) or the node
    does it through DMA-BUF instead (misconfig `peermem: false`: nothing else changes)."""
    loaded = not any(f.host == node.hostname for f in sim.active(FaultKind.GDR_OFF, t)) and \
        misconfig.setting(sim, node.hostname, "peermem", t) is not False
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


def sh_c(args: list[str], run_one: Callable[[Sequence[str]], Result]) -> Result:
    """`sh -c 'a; b'` on a simulated machine: the script's commands one after another, each
    through `run_one` (no pipes; `;`, `&&` and newlines separate commands; the last status is
    the script's)."""
    if len(args) < 2 or args[0] != "-c":
        return "", "sh: only `sh -c SCRIPT` is simulated\n", 2
    out: list[str] = []
    err: list[str] = []
    status = 0
    for part in re.split(r"\s*(?:;|&&|\n)\s*", args[1]):
        if not part.strip():
            continue
        try:
            words = shlex.split(part)
        except ValueError as exc:
            return "".join(out), "".join(err) + f"sh: 1: {exc}\n", 2
        o, e, status = run_one(words)
        out.append(o)
        err.append(e)
    return "".join(out), "".join(err), status
