"""`fabtui triage nccl PATH...`: from a hung job's logs to the ranks, NICs and ports to chase."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import click

from fabtui.cli import triage_slow, triage_slow_inputs, triage_stragglers
from fabtui.cli.context import EXIT_FINDINGS, UserError, job_file_option, workspace


@click.group()
def triage() -> None:
    """Hang triage: read a hung job's logs and say which rank, NIC or link it waits for.

    A slow or jittery job: `triage slow`, from its step time to the port and the optic."""


triage_stragglers.register(triage)
triage_slow.register(triage)
triage_slow_inputs.register(triage)


@triage.command("nccl")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--ranks", type=click.Path(path_type=Path, dir_okay=False),
              help="Rank file placing ranks on nodes and GPUs (default: the configured one; "
                   "without one, the host names in the logs place ranks).")
@click.option("--job", "job_id", metavar="JOBID",
              help="Place ranks as Slurm job JOBID ran them (scontrol / squeue / sacct on the "
                   "configured [slurm] host), instead of a rank file.")
@job_file_option
@click.option("--world-size", type=click.IntRange(min=1), metavar="N",
              help="Ranks in the job, when the logs do not say (the launcher's command line): "
                   "ranks of the job that never timed out while the others wait are then "
                   "named.")
@click.option("-t", "--topology", type=click.Path(path_type=Path, dir_okay=False),
              help="Topology file (default: the configured one, else the demo fabric).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts (docs/triage.md).")
@click.option("--format", "fmt", type=click.Choice(["text", "md"]), default="text",
              show_default=True, help="Report format.")
@click.option("--full", is_flag=True,
              help="Keep every evidence line, rank and warning in the text or markdown report "
                   "(by default long lists are cut, each saying how many lines it left out).")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the report to FILE instead of standard output.")
@click.option("--chain", is_flag=True,
              help="Also probe the fabric along the first suspect's path: job, busbw, rail, "
                   "PFC, FEC, optic, each confirmed, contradicted or unknown.")
@click.option("--no-similar", is_flag=True, help="Do not look up similar past cases.")
@click.option("--open", "open_app", is_flag=True,
              help="Show the result in the app's Triage screen (suspects, evidence chain, keys "
                   "to run the runbook on a suspect and to see it on the Fabric screen).")
@click.pass_context
def nccl(ctx: click.Context, paths: tuple[Path, ...], ranks: Path | None,
         job_id: str | None, job_file: Path | None, world_size: int | None,
         topology: Path | None, as_json: bool, fmt: str, full: bool, output: Path | None,
         chain: bool, no_similar: bool, open_app: bool) -> None:
    """Triage per-rank or combined NCCL / PyTorch logs, Flight Recorder dumps (pickle or JSON)
    or reports, and NCCL RAS output (files or folders). Exits 1 when it names suspects."""
    from fabtui.triage.report import markdown, tables

    if open_app:
        from fabtui.cli.tui import need_terminal

        if as_json or output is not None or fmt != "text" or full:
            raise UserError("--open shows the report in the app: it takes no --json, "
                            "--format, --full or --output")
        need_terminal()
    if job_id is not None and ranks is not None:
        raise UserError("--job and --ranks both place ranks: give one")
    if job_file is not None and job_id is None:
        raise UserError("--job-file needs --job JOBID (which job of the file to use)")
    if job_id is not None:
        from fabtui.cli.tui import follow

        follow(ctx, job_id, job_file)
    ws = workspace(ctx)
    report = ws.triage(paths, ranks=ranks, topology=topology, similar=not no_similar,
                       world_size=world_size)
    if chain:
        import asyncio

        report.chain = asyncio.run(ws.evidence_chain(report))
    if open_app:
        from fabtui.cli.tui import open_app as run_app

        run_app(ctx, triage=(paths, report))
        return
    if as_json:
        text = json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "md":
        text = markdown(report, full=full)
    else:
        from fabtui.render.table import render_tables

        width = shutil.get_terminal_size().columns if sys.stdout.isatty() and not output \
            else None
        text = render_tables(tables(report, full=full), width) + "\n"
    if output is not None:
        try:
            from fabtui.paths import write_file

            write_file(output, text)
        except OSError as exc:
            raise UserError(f"{output}: cannot write: {exc.strerror}") from None
    else:
        click.echo(text, nl=False)
    if report.suspects:
        ctx.exit(EXIT_FINDINGS)
