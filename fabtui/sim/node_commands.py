"""What the commands on a simulated node print, in each real tool's own layout.

Every renderer prints the simulation's values in the layout the real tool uses, so the real
parsers read them back exactly (tests check each command). `run(sim, host, argv, t)` is the whole
node: it returns (stdout, stderr, exit status) like a process would.

This module dispatches by program name (`_COMMANDS`, with misconfig's and the scheduler's commands;
`sh -c` runs its commands through `run`). The commands are in their families: `node_nic.py` (NIC
and RDMA tools), `node_gpu.py` (nvidia-smi, dcgmi), `node_perf.py` (nccl-tests, perftest) and
`node_system.py` (logs and files, dmesg, lsmod, the shell basics).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

from fabtui.model.topology import Node
from fabtui.sim import misconfig, scheduler
from fabtui.sim.core import Sim
from fabtui.sim.node_gpu import dcgmi, nvidia_smi
from fabtui.sim.node_nic import (
    ethtool,
    ethtool_counters,
    ibdev2netdev,
    ibstat,
    ibv_devinfo,
    mlxlink,
    perfquery,
    rdma,
    rdma_counters,
    show_counters,
    show_gids,
    stalled_drops,
    storm_events,
)
from fabtui.sim.node_perf import PERFTEST, nccl_tests, perftest
from fabtui.sim.node_perf import pair_rate as _pair_rate
from fabtui.sim.node_system import LOG_DIR, dmesg, echo, lsmod, read_file, simple

__all__ = ["LOG_DIR", "Result", "_pair_rate", "ethtool_counters", "rdma_counters", "run",
           "stalled_drops", "storm_events"]
"""What callers import from here (`_pair_rate` too, for the tests)."""

Result = tuple[str, str, int]
"""(stdout, stderr, exit status), as a process would end."""


def run(sim: Sim, host: str, argv: Sequence[str], t: float) -> Result:
    """Run `argv` on simulated node `host` at time `t`."""
    if not argv:
        return "", "", 0
    node = sim.graph.nodes.get(host)
    if node is None:
        return "", f"ssh: Could not resolve hostname {host}: Name or service not known\n", 255
    program = argv[0].rsplit("/", 1)[-1]
    if program in ("mpirun", "srun") or program.endswith("_perf"):
        return nccl_tests(sim, node, list(argv), t)
    handler = _COMMANDS.get(program)
    if handler is None:
        return "", f"bash: {argv[0]}: command not found\n", 127
    return handler(sim, node, list(argv[1:]), t)


def _sh(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`sh -c 'a; b'`: the commands of a simple script, one after another (no pipes; `;`,
    `&&` and newlines separate commands)."""
    if len(args) < 2 or args[0] != "-c":
        return "", "sh: only `sh -c SCRIPT` is simulated\n", 2
    out, err, status = [], [], 0
    for part in re.split(r"\s*(?:;|&&|\n)\s*", args[1]):
        if not part.strip():
            continue
        o, e, status = run(sim, node.hostname, shlex.split(part), t)
        out.append(o)
        err.append(e)
    return "".join(out), "".join(err), status


_COMMANDS: dict[str, Callable[[Sim, Node, list[str], float], Result]] = {
    "ethtool": ethtool, "rdma": rdma, "show_counters": show_counters, "ibstat": ibstat,
    "ibv_devinfo": ibv_devinfo, "show_gids": show_gids, "ibdev2netdev": ibdev2netdev,
    "mlxlink": mlxlink, "nvidia-smi": nvidia_smi, "tail": read_file, "cat": read_file,
    "dmesg": dmesg, "dcgmi": dcgmi, "perfquery": perfquery,
    "lsmod": lsmod, "hostname": simple("{host}\n"), "true": simple(""),
    "false": simple("", 1), "echo": echo, "sh": _sh, "pkill": simple("", 1),
    "uptime": simple(" 10:00:00 up 42 days,  3:12,  0 users,  load average: 12.1, 12.3, 12.2\n"),
    **{tool: perftest(tool) for tool in PERFTEST},
    **misconfig.COMMANDS,
    **scheduler.COMMANDS,
}
