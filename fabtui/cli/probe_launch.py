"""`fabtui probe launch`: nccl-tests across nodes through srun or mpirun, the line shown first."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click

from fabtui.cli.context import EXIT_FINDINGS, UserError, job_file_option, key_values, workspace


def register(group: click.Group) -> None:
    """Add `launch` to the `probe` group."""
    group.add_command(launch_command)


@click.command("launch")
@click.option("--nodes", metavar="SET", help="Nodes to run on: node[001-004], a,b,c, rail:N.")
@click.option("--job", "job_id", metavar="JOBID", help="Run on Slurm job JOBID's nodes.")
@job_file_option
@click.option("--launcher", type=click.Choice(["srun", "mpirun"]),
              help="Launcher (default: the config's [slurm] launcher, else mpirun).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="collective, bindir, min_bytes, max_bytes, iters (repeatable).")
@click.option("--dry-run", is_flag=True, help="Print the command line and run nothing.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: host, argv, command and (unless --dry-run) the nccl-tests parse.")
@click.pass_context
def launch_command(ctx: click.Context, nodes: str | None, job_id: str | None,
                   job_file: Path | None, launcher: str | None, params: tuple[str, ...],
                   dry_run: bool, as_json: bool) -> None:
    """Run nccl-tests across nodes the site's way (srun or mpirun). The full command line is
    printed before anything runs. Exits 1 when the test fails or moves wrong data."""
    from fabtui.errors import RequestError
    from fabtui.workspace.launching import plan_launch, run_launch

    given = key_values(params, "--param")
    ws = workspace(ctx)
    try:
        plan = plan_launch(ws, nodes=nodes, job_id=job_id, job_file=job_file,
                           launcher=launcher, params=given)
    except RequestError as exc:
        raise UserError(str(exc)) from None
    shown = {"host": plan.host, "ranks": plan.ranks, "argv": list(plan.argv),
             "command": plan.shown}
    if as_json and dry_run:
        click.echo(json.dumps(shown, indent=2))
        return
    if not as_json:
        click.echo(f"command (on {plan.host}, {plan.ranks} ranks): {plan.shown}")
    if dry_run:
        return
    result, parsed = asyncio.run(run_launch(ws, plan))
    if as_json:
        click.echo(json.dumps({**shown, "exit_status": result.exit_status,
                               "error": result.error_message,
                               "nccl_tests": parsed.model_dump(mode="json") if parsed else None},
                              indent=2))
        ctx.exit(0 if parsed is not None and parsed.status == "ok" else EXIT_FINDINGS)
    if parsed is None:
        reason = result.error_message or (result.stderr.strip().splitlines() or
                                          [f"exit status {result.exit_status}"])[-1]
        raise UserError(f"{plan.host}: no nccl-tests output: {reason}")
    peak = "-" if parsed.peak_busbw is None else f"{parsed.peak_busbw:.1f}"
    average = "-" if parsed.avg_busbw is None else f"{parsed.avg_busbw:.1f}"
    click.echo(f"{parsed.collective or 'nccl-tests'}: {parsed.status}; busbw peak {peak} "
               f"GB/s, average {average} GB/s, {len(parsed.ranks)} ranks")
    if parsed.status != "ok":
        ctx.exit(EXIT_FINDINGS)
