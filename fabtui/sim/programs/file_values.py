"""`grep -H . FILE...` on a simulated node: the configuration files misconfig serves (mlx5
DCQCN sysfs, /etc/nccl.conf, ...), each line prefixed with its file."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result


def grep(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`grep -H . FILE...`: each non-empty line of the configuration files this module serves,
    prefixed with its file (GNU grep's `FILE:LINE`); a file not served is missing (`grep: F:
    No such file or directory`, exit 2, as grep exits when any file could not be read)."""
    flags = [a for a in args if a.startswith("-")]
    rest = [a for a in args if not a.startswith("-")]
    if not rest or rest[0] != "." or not ({"-H", "-s", "-Hs", "-sH"} >= set(flags)):
        return "", "grep: only `grep -H . FILE...` is simulated\n", 2
    out, err, status = [], [], 1
    for path in rest[1:]:
        text = misconfig.read_file(sim, node, path, t)
        if text is None:
            if "-s" not in flags and "-Hs" not in flags and "-sH" not in flags:
                err.append(f"grep: {path}: No such file or directory\n")
            status = 2
            continue
        lines = [line for line in text.splitlines() if line]
        out += [f"{path}:{line}\n" for line in lines]
        if lines and status != 2:
            status = 0
    return "".join(out), "".join(err), status
