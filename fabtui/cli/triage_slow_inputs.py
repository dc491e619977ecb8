"""`fabtui triage slow-inputs`: a real job's training logs and NCCL Inspector files as the
inputs file `fabtui triage slow --inputs` reads (docs/triage-slow.md). Thin: the workspace
(`fabtui.workspace.slowfiles`) reads and converts."""

from __future__ import annotations

from pathlib import Path

import click

from fabtui.cli.context import UserError


@click.command("slow-inputs")
@click.option("--job", "job_id", default="job", show_default=True, metavar="JOBID",
              help="The job's name or Slurm id, as the inputs and the report name it.")
@click.option("--log", "logs", multiple=True, metavar="PATH",
              type=click.Path(path_type=Path, exists=True),
              help="A training log (Megatron-LM, TorchTitan, DeepSpeed, HF Trainer), or a "
                   "folder of per-rank logs; repeatable.")
@click.option("--inspector", multiple=True, metavar="PATH",
              type=click.Path(path_type=Path, exists=True),
              help="An NCCL Inspector log (<host>-pid<pid>.log) or its folder; repeatable.")
@click.option("--utc-offset", default=0.0, show_default=True, metavar="HOURS",
              help="The time zone the logs' timestamps are in, as hours from UTC (they do "
                   "not say).")
@click.option("--world-size", type=int, default=None, metavar="N",
              help="The job's rank count: an Inspector communicator of this size numbers its "
                   "ranks as the job does.")
@click.option("--job-log", metavar="PATH",
              help="The job's log as a path on its nodes (Slurm's StdOut, or NCCL_DEBUG_FILE), "
                   "kept in the inputs for the logs.nccl check a chain prints.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Write the inputs here.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the inputs (JSON) on standard output.")
def slow_inputs(job_id: str, logs: tuple[Path, ...], inspector: tuple[Path, ...],
                utc_offset: float, world_size: int | None, job_log: str | None,
                output: Path | None, as_json: bool) -> None:
    """Turn a job's training logs and NCCL Inspector files into the inputs of `fabtui
    triage slow --inputs FILE`: per-rank step times (one rank's log is the job's step time) and
    per-communicator busbw, with a warning for everything that could not be placed."""
    from fabtui.paths import write_output
    from fabtui.workspace.slowfiles import inputs_from_files

    if not logs and not inspector:
        raise UserError("fabtui triage slow-inputs: give --log and/or --inspector")
    inputs = inputs_from_files(job_id, logs, inspector, utc_offset_s=utc_offset * 3600,
                               world_size=world_size, job_log=job_log)
    text = inputs.model_dump_json(indent=2)
    if output is not None:
        write_output(output, text + "\n")
    if as_json:
        click.echo(text)
    else:
        click.echo(f"job {inputs.job}: step times of {len(inputs.steps)} rank(s), busbw of "
                   f"{len(inputs.busbw)} rank(s) in {len(inputs.communicators)} "
                   f"communicator(s)" + (f"; wrote {output}" if output is not None else
                                         " (--json prints them, -o FILE writes them)"))
    for warning in inputs.warnings:
        click.echo(f"warning: {warning}", err=True)


def register(group: click.Group) -> None:
    """Add `slow-inputs` to the `fabtui triage` group."""
    group.add_command(slow_inputs)
