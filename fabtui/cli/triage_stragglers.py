"""`fabtui triage stragglers PATH...`: score ranks or nodes, plan (and run) the sweep.

A separate module so the `fabtui triage` group (its own module) takes it with `register(group)`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from fabtui.cli.context import EXIT_FINDINGS, UserError, workspace
from fabtui.model.stragglers import StragglerReport


@click.command("stragglers")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(path_type=Path, exists=True))
@click.option("--nodes", default=None, metavar="A,B,...",
              help="Nodes to sweep (default: those the timings name, else every node).")
@click.option("--run-plan", is_flag=True,
              help="Run the sweep on the fabric (nccl.mpirun on node pairs, in parallel).")
@click.option("--limit", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Sweep runs at once.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON (docs/triage-evidence.md).")
@click.pass_context
def stragglers(ctx: click.Context, paths: tuple[Path, ...], nodes: str | None, run_plan: bool,
               limit: int, as_json: bool) -> None:
    """Score each rank or node (fastest median / own median; below 0.75 is a straggler) from
    nccl-tests outputs, step logs or per-rank timings, and plan the pairwise sweep that isolates
    a slow node or link. Exit 1 when a straggler or a slow node or link is found."""
    from fabtui.triage.stragglers import report, run_sweep

    space = workspace(ctx)
    graph = space.graph()
    chosen = [n.strip() for n in nodes.split(",") if n.strip()] if nodes else None
    unknown = [n for n in chosen or [] if n not in graph.nodes]
    if unknown:
        raise UserError(f"--nodes: {', '.join(unknown)} not in the topology")
    result = report(list(paths), graph, chosen)
    if run_plan:
        if result.plan is None:
            raise UserError("--run-plan: no sweep plan (fewer than 2 nodes; give --nodes)")
        swept = asyncio.run(run_sweep(result.plan, space, graph, limit=limit))
        result = result.model_copy(update={"plan": swept})
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    else:
        click.echo(render(result))
    found = result.stragglers or (result.plan is not None and (
        result.plan.slow_nodes or result.plan.slow_links))
    if found:
        ctx.exit(EXIT_FINDINGS)


def render(result: StragglerReport) -> str:
    """The report for a terminal (and markdown: it is plain text with a table)."""
    lines = [f"Scores (fastest median / own median; straggler below {result.threshold}):", "",
             f"  {'unit':<28} {'metric':<6} {'median':>12} {'score':>6}  samples",]
    for s in result.scores[:40]:
        mark = "  <- straggler" if s.straggler else ""
        unit = "s" if s.metric == "time" else "GB/s"
        where = f" ({','.join(s.nodes)})" if s.rank is not None and s.nodes else ""
        lines.append(f"  {(s.name + where)[:28]:<28} {s.metric:<6} {s.median:>9.4g} "
                     f"{unit:<3}{s.score:>6.2f}  {s.samples}{mark}")
    if len(result.scores) > 40:
        lines.append(f"  ... {len(result.scores) - 40} more (fastest last; --json has all)")
    lines.append("")
    lines.append(f"Stragglers: {', '.join(s.name for s in result.stragglers) or 'none'}")
    if result.plan is not None:
        plan = result.plan
        lines += ["", "Sweep plan:", *(f"  {step}" for step in plan.steps), ""]
        for run in plan.runs:
            measured = f"{run.busbw:.1f} GB/s ({run.score:.2f})" if run.busbw is not None \
                and run.score is not None else run.error or "planned"
            flag = "  SLOW" if run.slow else ""
            lines.append(f"  round {run.round} {run.kind:<8} {'+'.join(run.nodes):<40} "
                         f"{measured}{flag}")
        if plan.executed:
            lines += ["", f"Sweep: {plan.conclusion}"]
        else:
            lines += ["", "Run it with --run-plan (later rounds depend on the first)."]
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def register(group: click.Group) -> None:
    """Add `stragglers` to the `fabtui triage` group."""
    group.add_command(stragglers)
