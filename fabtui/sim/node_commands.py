"""What the commands on a simulated node print, in each real tool's own layout.

Every renderer prints the simulation's values in the layout the real tool uses, so the real
parsers read them back exactly (tests check each command). `run(sim, host, argv, t)` is the whole
node: it returns (stdout, stderr, exit status) like a process would.

This module dispatches by program name (`_COMMANDS`, with misconfig's commands; `sh -c` runs its
commands through `run`). The commands are in `fabtui/sim/programs/`, one module per kind they
print, named by the kind's stem (`ethtool_stats.py` for `ethtool -S`, `kernel_log.py` for
`dmesg`, `scontrol_job.py` for `scontrol`, ...), on what its private modules share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.ib import OPENSM_LOG
from fabtui.sim.programs._common import Result
from fabtui.sim.programs._nic_counters import (
    ethtool_counters,
    rdma_counters,
    stalled_drops,
    storm_events,
)
from fabtui.sim.programs._shell import echo, lsmod, sh_c, simple
from fabtui.sim.programs.dcgmi_diag import dcgmi
from fabtui.sim.programs.ethtool_stats import ethtool
from fabtui.sim.programs.file_values import grep
from fabtui.sim.programs.ibdev2netdev import ibdev2netdev
from fabtui.sim.programs.ibdiagnet import ibdiagnet
from fabtui.sim.programs.ibnetdiscover import ibnetdiscover
from fabtui.sim.programs.ibstat import ibstat
from fabtui.sim.programs.ibv_devinfo import ibv_devinfo
from fabtui.sim.programs.kernel_log import dmesg
from fabtui.sim.programs.mlnx_qos import mlnx_qos
from fabtui.sim.programs.mlxlink import cleared_nics as _mlxlink_clears
from fabtui.sim.programs.mlxlink import mlxlink
from fabtui.sim.programs.nccl_log import LOG_DIR, read_file
from fabtui.sim.programs.nccl_tests import nccl_tests
from fabtui.sim.programs.nvidia_smi import nvidia_smi
from fabtui.sim.programs.opensm_log import opensm_log, sminfo
from fabtui.sim.programs.perfquery import perfquery
from fabtui.sim.programs.perftest import PERFTEST, perftest
from fabtui.sim.programs.perftest import pair_rate as _pair_rate
from fabtui.sim.programs.rdma_hw_counters import show_counters
from fabtui.sim.programs.rdma_statistic import rdma
from fabtui.sim.programs.sacct import sacct
from fabtui.sim.programs.scontrol_job import scontrol
from fabtui.sim.programs.show_gids import show_gids
from fabtui.sim.programs.squeue_json import squeue
from fabtui.sim.state import clear_counters

__all__ = ["LOG_DIR", "Result", "_pair_rate", "answer", "cleared_nics", "ethtool_counters",
           "rdma_counters", "run", "stalled_drops", "storm_events"]
"""What callers import from here (`_pair_rate` too, for the tests)."""


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
    if program in ("cat", "tail") and OPENSM_LOG in argv[1:]:
        text = opensm_log(sim, node, t)
        if text is not None:
            return text, "", 0
    handler = _COMMANDS.get(program)
    if handler is None:
        return "", f"bash: {argv[0]}: command not found\n", 127
    return handler(sim, node, list(argv[1:]), t)


def answer(sim: Sim, state: Path, host: str, argv: Sequence[str], t: float) -> Result:
    """What node `host` answers to `argv` at `t` (`run`), as both node transports serve it
    (the sim server, and `fabtui.sim.inprocess`): a counter clear the command made
    (`mlxlink --pc`) is written to the state file `state` (`state.clear_counters`).

    Side effects: may rewrite the state file (call under the simulator's lock)."""
    result = run(sim, host, argv, t)
    if result[2] == 0:
        clear_counters(state, cleared_nics(sim, host, argv), t)
    return result


def cleared_nics(sim: Sim, host: str, argv: Sequence[str]) -> list[str]:
    """The NICs (`node:nic`) whose counters `argv` clears on node `host` (`mlxlink -d DEV
    --pc`, also inside `sh -c`): the one command here that changes the fabric's state, which
    the node transports record (`state.clear_counters`) after running it."""
    node = sim.graph.nodes.get(host)
    if node is None or not argv:
        return []
    program = argv[0].rsplit("/", 1)[-1]
    if program == "sh":
        found: list[str] = []

        def collect(words: Sequence[str]) -> Result:
            found.extend(cleared_nics(sim, host, words))
            return "", "", 0

        sh_c(list(argv[1:]), collect)
        return found
    return _mlxlink_clears(node, list(argv[1:])) if program == "mlxlink" else []


def _sh(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`sh -c 'a; b'`: each command run on this node (`programs._shell.sh_c`)."""
    return sh_c(args, lambda argv: run(sim, node.hostname, argv, t))


_COMMANDS: dict[str, Callable[[Sim, Node, list[str], float], Result]] = {
    "ethtool": ethtool, "rdma": rdma, "show_counters": show_counters, "ibstat": ibstat,
    "ibv_devinfo": ibv_devinfo, "show_gids": show_gids, "ibdev2netdev": ibdev2netdev,
    "mlxlink": mlxlink, "nvidia-smi": nvidia_smi, "tail": read_file, "cat": read_file,
    "dmesg": dmesg, "dcgmi": dcgmi, "perfquery": perfquery,
    "ibnetdiscover": ibnetdiscover, "ibdiagnet": ibdiagnet, "sminfo": sminfo,
    "lsmod": lsmod, "hostname": simple("{host}\n"), "true": simple(""),
    "false": simple("", 1), "echo": echo, "sh": _sh, "pkill": simple("", 1),
    "uptime": simple(" 10:00:00 up 42 days,  3:12,  0 users,  load average: 12.1, 12.3, 12.2\n"),
    **{tool: perftest(tool) for tool in PERFTEST},
    **misconfig.COMMANDS, "mlnx_qos": mlnx_qos, "grep": grep,
    "scontrol": scontrol, "squeue": squeue, "sacct": sacct,
}
