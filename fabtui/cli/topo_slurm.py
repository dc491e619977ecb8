"""`fabtui topo slurm ...`: the scheduler's topology generated from the fabric, a live one
audited, a job's placement checked for rail locality (logic: `fabtui.workspace.scheduler`)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import click

from fabtui.cli.context import EXIT_FINDINGS, UserError, job_file_option, workspace
from fabtui.errors import printable
from fabtui.model.scheduler import SchedulerAudit

_topology = click.option(
    "-t", "--topology", "path", type=click.Path(path_type=Path, dir_okay=False),
    help="Topology file (default: the configured one, else the demo fabric).")
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
_cabling = click.option("--cabling", is_flag=True,
                        help="Also read the cabling (LLDP / ibnetdiscover) and judge against "
                             "the plant, not only the design.")


@click.group()
def slurm() -> None:
    """Slurm's topology: generate topology.conf / topology.yaml, audit a live one, check a
    job's rail locality."""


@slurm.command()
@click.option("--yaml", "as_yaml", is_flag=True,
              help="topology.yaml (Slurm 25.05 and later) instead of topology.conf.")
@click.option("--as-cabled", is_flag=True,
              help="From the cabling as LLDP / ibnetdiscover read it, not the design.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write to this file instead of standard output.")
@_topology
@_json
@click.pass_context
def generate(ctx: click.Context, as_yaml: bool, as_cabled: bool, output: Path | None,
             path: Path | None, as_json: bool) -> None:
    """Write Slurm's tree for the fabric (topology/tree plugin)."""
    fmt = "yaml" if as_yaml else "conf"
    text = asyncio.run(workspace(ctx).scheduler_topology(fmt, cabled=as_cabled, topology=path))
    if as_json:
        text = json.dumps({"format": f"topology.{fmt}", "as_cabled": as_cabled,
                           "text": text}, indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    from fabtui.paths import write_output

    write_output(output, text)
    click.echo(f"wrote {output}", err=True)


def _report(ctx: click.Context, result: SchedulerAudit, as_json: bool,
            job: bool = False) -> None:
    if as_json:
        click.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        if job:
            verdict = "flagged" if result.findings else "nothing flagged"
        else:
            verdict = "agrees with the fabric" if result.agrees else \
                "differs from the fabric" if result.findings else "cannot tell (see the notes)"
        lines = [f"{result.source}: {verdict}"]
        for finding in result.findings:  # names from a live file: shown escaped
            lines += [f"{finding.rule}: {printable(finding.message)}",
                      f"  fix: {printable(finding.fix)}"]
        lines += [f"note: {printable(note)}" for note in result.notes]
        click.echo("\n".join(lines))
    if not result.agrees:
        ctx.exit(EXIT_FINDINGS)


@slurm.command()
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True))
@_cabling
@_topology
@_json
@click.pass_context
def audit(ctx: click.Context, file: Path, cabling: bool, path: Path | None,
          as_json: bool) -> None:
    """Audit a live Slurm tree against the design (and the cabling with --cabling).

    FILE is a topology.conf or saved `scontrol show topology` output; `-` reads standard input
    (`scontrol show topology | fabtui topo slurm audit -`). Exit 1 on findings."""
    if str(file) == "-":
        text, source = sys.stdin.read(), "<stdin>"
    else:
        try:
            text, source = file.read_text(encoding="utf-8"), str(file)
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{file}: cannot read: {exc}") from None
    _report(ctx, asyncio.run(workspace(ctx).scheduler_audit(text, source, cabled=cabling,
                                                            topology=path)), as_json)


@slurm.command()
@click.option("--ranks", type=click.Path(path_type=Path, dir_okay=False),
              help="A rank file (Open MPI rankfile, table or hostfile).")
@click.option("--job", "job_id", metavar="JOBID", help="A Slurm job's placement.")
@job_file_option
@_cabling
@_topology
@_json
@click.pass_context
def job(ctx: click.Context, ranks: Path | None, job_id: str | None, job_file: Path | None,
        cabling: bool, path: Path | None, as_json: bool) -> None:
    """Flag a job whose rank placement assumes rail locality but whose rail peers sit behind
    different leaves (placed across leaf groups, or a NIC cabled to another rail's leaf with
    --cabling). Exit 1 when flagged."""
    if (ranks is None) == (job_id is None):
        raise UserError("give --ranks FILE or --job JOBID")
    ws = workspace(ctx)
    slots, source = None, ""
    if job_id is not None:
        from fabtui.workspace.slurm import job_placement

        placement = job_placement(ws, job_id, source=job_file)
        slots, source = list(placement.slots), f"job {job_id} ({placement.source})"
    _report(ctx, asyncio.run(ws.scheduler_job(slots, source, ranks=ranks, cabled=cabling,
                                              topology=path)), as_json, job=True)
