"""Multi-node launch lines: nccl-tests across nodes through `srun` or `mpirun`, as a site runs it.

A launcher is an argv template, one element per item (`[slurm] launcher_template` in the config,
else `TEMPLATES[launcher]`). Values are substituted inside elements (`--nodelist={nodelist}`)
by `fabtui.probes.render.render_argv`, never through a shell string, so a value is always one
argument whatever it holds; `{program}`, an element of its own, becomes the program's argv.
`shown(argv)` is the line an operator would type (shell-quoted), what fabtui prints before it
runs anything. Pure: no I/O.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fabtui.hostlist import fold
from fabtui.probes.render import RenderError, parse_size, render_argv

TEMPLATES: dict[str, tuple[str, ...]] = {
    "srun": ("srun", "-l", "-N", "{nodes}", "--ntasks-per-node={tasks_per_node}",
             "--gpus-per-node={tasks_per_node}", "--nodelist={nodelist}", "{program}"),
    "mpirun": ("mpirun", "--allow-run-as-root", "--tag-output", "-np", "{ranks}", "-H",
               "{hosts}", "--bind-to", "none", "-x", "NCCL_DEBUG=WARN", "{program}"),
}
"""fabtui's own launch lines (the `nccl.srun` / `nccl.mpirun` probes' forms)."""
PLACEHOLDERS = frozenset({"nodes", "nodelist", "hosts", "ranks", "tasks_per_node", "program"})
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv")
PROGRAM = ("{bindir}/{collective}_perf", "-b", "{min_bytes}", "-e", "{max_bytes}", "-f", "2",
           "-g", "1", "-c", "1", "-n", "{iters}")
"""nccl-tests, one rank per GPU (`-g 1`), correctness checked (`-c 1`)."""
PROGRAM_DEFAULTS = {"bindir": "/opt/nccl-tests/build", "collective": "all_reduce",
                    "min_bytes": "8", "max_bytes": "16G", "iters": "20"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class LaunchError(ValueError):
    """A launch that cannot be built (a bad template, node name or parameter), in one line."""


@dataclass(frozen=True)
class Launch:
    """One multi-node run: the argv and where it starts (the first node)."""

    argv: tuple[str, ...]
    host: str
    nodes: tuple[str, ...]
    ranks: int

    @property
    def shown(self) -> str:
        """The command line as an operator would type it (shell-quoted)."""
        return shown(self.argv)


def shown(argv: Sequence[str]) -> str:
    """`argv` as one shell-quoted line."""
    return shlex.join(argv)


def template_problem(template: Sequence[str]) -> str | None:
    """What is wrong with a launcher template, or None."""
    if not template or _PLACEHOLDER.search(template[0]) or template[0].startswith("-"):
        return "the first element must be the launcher program (srun, mpirun, ...)"
    if template.count("{program}") != 1:
        return "needs `{program}` exactly once, as an element of its own"
    for element in template:
        unknown = set(_PLACEHOLDER.findall(element)) - PLACEHOLDERS
        if unknown:
            return (f"{element!r}: unknown placeholder {{{sorted(unknown)[0]}}} "
                    f"(known: {', '.join(sorted(PLACEHOLDERS))})")
        if "{program}" in element and element != "{program}":
            return f"{element!r}: `{{program}}` must be an element of its own"
    return None


def program_argv(params: Mapping[str, str]) -> list[str]:
    """The nccl-tests argv from `params` over `PROGRAM_DEFAULTS` (each one checked)."""
    unknown = set(params) - set(PROGRAM_DEFAULTS)
    if unknown:
        raise LaunchError(f"unknown parameter {sorted(unknown)[0]!r} (known: "
                          f"{', '.join(sorted(PROGRAM_DEFAULTS))})")
    values = {**PROGRAM_DEFAULTS, **params}
    if values["collective"] not in COLLECTIVES:
        raise LaunchError(f"collective={values['collective']!r}: one of {', '.join(COLLECTIVES)}")
    for name in ("min_bytes", "max_bytes"):
        try:
            parse_size(values[name])
        except (ValueError, RenderError):
            raise LaunchError(f"{name}={values[name]!r}: a size such as 8, 64K, 16G") from None
    if not values["iters"].isdigit() or int(values["iters"]) < 1:
        raise LaunchError(f"iters={values['iters']!r}: a whole number of at least 1")
    return render_argv(list(PROGRAM), values)


def launch(template: Sequence[str], nodes: Sequence[str], tasks_per_node: int,
           program: Sequence[str]) -> Launch:
    """The launch of `program` on `nodes`, `tasks_per_node` ranks each, by `template`.
    Raises `LaunchError`."""
    problem = template_problem(template)
    if problem:
        raise LaunchError(f"launcher template: {problem}")
    if len(nodes) < 2:
        raise LaunchError("a multi-node launch needs at least two nodes")
    bad = next((n for n in nodes if not _NODE.match(n)), None)
    if bad is not None:
        raise LaunchError(f"{bad!r} is not a node name")
    if tasks_per_node < 1:
        raise LaunchError("tasks per node must be at least 1")
    values = {"nodes": str(len(nodes)), "nodelist": fold(nodes),
              "hosts": ",".join(f"{n}:{tasks_per_node}" for n in nodes),
              "ranks": str(len(nodes) * tasks_per_node), "tasks_per_node": str(tasks_per_node)}
    argv: list[str] = []
    for element in template:
        if element == "{program}":
            argv += list(program)
        else:
            argv += render_argv([element], values)
    return Launch(argv=tuple(argv), host=nodes[0], nodes=tuple(nodes),
                  ranks=len(nodes) * tasks_per_node)
