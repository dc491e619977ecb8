"""The operator's own machine in a simulated run (`fabtui runbook test`): what a runbook's local
`sh` block (one without `on=`) gets when nothing real may run.

It has what a login node offers the runbooks: Slurm's commands (answered by the simulated
scheduler) and the shell basics (`sh -c`, `echo`, `true`, `false`, `hostname`). Any other
program is "not found", as on a machine without it: a test of a runbook never runs anything on
the machine that tests it, whatever the runbook says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._shell import sh_c
from fabtui.sim.programs.sacct import sacct
from fabtui.sim.programs.scontrol_job import scontrol
from fabtui.sim.programs.squeue_json import squeue

Result = tuple[str, str, int]
"""(stdout, stderr, exit status), as a process would end."""
NAME = "localhost"
"""The operator's machine, as results name it."""
_HOST = Node(hostname=NAME)


def _echo(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    return " ".join(args) + "\n", "", 0


def _fixed(output: str, status: int = 0) -> Callable[[Sim, Node, list[str], float], Result]:
    def answer(sim: Sim, node: Node, args: list[str], t: float) -> Result:
        return output, "", status

    return answer


PROGRAMS: dict[str, Callable[[Sim, Node, list[str], float], Result]] = {
    "echo": _echo, "true": _fixed(""), "false": _fixed("", 1),
    "hostname": _fixed(f"{NAME}\n"), "scontrol": scontrol, "squeue": squeue, "sacct": sacct,
}
"""What the simulated operator's machine runs (anything else: not found)."""


def run(sim: Sim, argv: Sequence[str], t: float) -> Result:
    """Run `argv` on the simulated operator's machine at time `t`."""
    if not argv:
        return "", "", 0
    program = argv[0].rsplit("/", 1)[-1]
    if program == "sh":
        return sh_c(list(argv[1:]), lambda words: run(sim, words, t))
    handler = PROGRAMS.get(program)
    if handler is None:
        return "", (f"sh: 1: {argv[0]}: not found (the simulated operator's machine runs only "
                    f"{', '.join(sorted(PROGRAMS))}; nothing runs on the real one in a "
                    "test)\n"), 127
    return handler(sim, _HOST, list(argv[1:]), t)
