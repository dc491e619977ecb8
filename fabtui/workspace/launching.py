"""Multi-node probes launched the site's way: nccl-tests across nodes via `srun` or `mpirun`.

`plan_launch` builds the launch (`fabtui.probes.launcher`) for a node set of the fabric or a
Slurm job's nodes, with the launcher the config names (`[slurm] launcher`, or its
`launcher_template`); `run_launch` runs it from the first node over the workspace's ssh
transport (the simulated node on the demo fabric) and parses what nccl-tests printed. Faces show
`Launch.shown` before they call `run_launch`.

Side effects: `run_launch` runs the launch (GPU and network load on those nodes for its length).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fabtui.errors import RequestError

if TYPE_CHECKING:
    from fabtui.model.parsed.nccl_tests import NcclTestsOutput
    from fabtui.model.transport import TransportResult
    from fabtui.probes.launcher import Launch
    from fabtui.workspace.core import Workspace

TIMEOUT_S = 1200.0


def plan_launch(ws: Workspace, *, nodes: str | None = None, job_id: str | None = None,
                job_file: Path | None = None, launcher: str | None = None,
                params: Mapping[str, str] | None = None) -> Launch:
    """The launch of nccl-tests on `nodes` (a node set: `node[001-004]`, `a,b`) or on Slurm job
    `job_id`'s nodes. Raises `RequestError` with one line."""
    from fabtui.probes.launcher import TEMPLATES, LaunchError, launch, program_argv
    from fabtui.probes.targets import TargetError, resolve_set

    if (nodes is None) == (job_id is None):
        raise RequestError("name the nodes (--nodes SET) or a Slurm job (--job JOBID)")
    graph = ws.graph()
    if job_id is not None:
        from fabtui.workspace.slurm import job_placement

        placement = job_placement(ws, job_id, source=job_file)
        names = placement.nodes
        per_node = max(len(placement.ranks_on(n)) for n in names)
    else:
        try:
            targets = resolve_set(graph, nodes, "node")
        except TargetError as exc:
            raise RequestError(str(exc)) from None
        names = [t.node.hostname for t in targets if t.node is not None]
        per_node = len(graph.nodes[names[0]].gpus) if names else 0
    slurm = ws.settings.slurm
    chosen = launcher or slurm.launcher
    if chosen not in TEMPLATES:
        raise RequestError(f"launcher {chosen!r}: srun or mpirun")
    template = slurm.launcher_template if slurm.launcher_template and launcher is None \
        else TEMPLATES[chosen]
    try:
        return launch(template, names, per_node, program_argv(dict(params or {})))
    except LaunchError as exc:
        raise RequestError(str(exc)) from None


async def run_launch(ws: Workspace, plan: Launch) -> tuple[TransportResult, NcclTestsOutput | None]:
    """Run `plan` from its first node; the transport's result and the nccl-tests parse (None
    when the output is not nccl-tests output)."""
    from fabtui.parsers import nccl_tests
    from fabtui.parsers.errors import ParseError
    from fabtui.transports.ssh import SshTarget

    node = ws.graph().nodes[plan.host]
    transports = ws.transports()
    try:
        result = await transports.ssh.run(SshTarget(name=plan.host,
                                                    host=node.mgmt or plan.host),
                                          list(plan.argv), timeout=TIMEOUT_S)
    finally:
        await transports.ssh.close()
    try:
        return result, nccl_tests.parse(result.output)
    except ParseError:
        return result, None
