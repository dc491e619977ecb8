"""`fabtui triage slow`: why is the job slow? From step-time jitter to the port and the optic.

A separate module so the `fabtui triage` group (its own module) takes it with `register(group)`.
Thin: the workspace (`Workspace.slow_job`) reads or plays the inputs and runs the engine.
"""

from __future__ import annotations

from pathlib import Path

import click

from fabtui.cli.context import EXIT_FINDINGS, UserError, job_file_option, workspace


def _seconds(text: str) -> float:
    from fabtui.durations import parse_duration

    try:
        value = parse_duration(text)
    except ValueError:
        value = None
    if not isinstance(value, int | float) or value <= 0:
        raise UserError(f"--since: {text!r} is not a duration (90s, 15m, 1h)")
    return float(value)


@click.command("slow")
@click.option("--job", "job_id", metavar="JOBID",
              help="The Slurm job: with --inputs, its rank placement places the inputs' "
                   "ranks; on the demo fabric its job is 4242 (the default).")
@job_file_option
@click.option("--since", default="1h", show_default=True, metavar="DURATION",
              help="The window: this long back from now (15m, 1h, 90s); with --inputs, the "
                   "file's own `start` and `end`.")
@click.option("--inputs", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="Read the job's step times, Inspector busbw and fabric series from a JSON "
                   "file (docs/triage-slow.md) instead of the sources.")
@click.option("--job-log", metavar="PATH",
              help="The job's log as a path on its nodes (Slurm's StdOut, or NCCL_DEBUG_FILE): "
                   "the logs.nccl check a chain prints reads it (default: the inputs' "
                   "job_log; unknown: printed as ‹job-log› to fill in).")
@click.option("-t", "--topology", type=click.Path(path_type=Path, dir_okay=False),
              help="Topology file (default: the configured one, else the demo fabric).")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON (schema: docs/triage-slow.md).")
@click.pass_context
def slow(ctx: click.Context, job_id: str | None, job_file: Path | None, since: str,
         inputs: Path | None, job_log: str | None, topology: Path | None,
         as_json: bool) -> None:
    """Find the slow or jittery stretches of a job's step time and walk each down the fabric
    (communicator, ranks, rail against its siblings, ports, optic), or say it is not the fabric
    (host, GPU, application, input pipeline), or that the evidence cannot tell. Exit 1 when a
    slow or jittery stretch is found, the job stopped stepping, or its path shows a fault."""
    from fabtui.triage.slowjob.note import note

    if job_file is not None and job_id is None:
        raise UserError("--job-file needs --job JOBID (which job of the file to use)")
    if job_id is not None and inputs is not None:
        from fabtui.cli.tui import follow

        follow(ctx, job_id, job_file)  # the job's placement places the inputs' ranks
    from fabtui.workspace.slowprom import slow_job

    report = slow_job(workspace(ctx), inputs=inputs, job=job_id, since=_seconds(since),
                      topology=topology, job_log=job_log)
    click.echo(report.model_dump_json(indent=2, by_alias=True) if as_json else note(report))
    # a job that stopped stepping, or a fault on its path, is a finding even with no episode
    if report.episodes or report.stopped_at is not None or report.path_faults:
        ctx.exit(EXIT_FINDINGS)


def register(group: click.Group) -> None:
    """Add `slow` to the `fabtui triage` group."""
    group.add_command(slow)
