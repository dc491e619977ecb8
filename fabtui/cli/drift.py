"""`fabtui drift`: the running configuration of every node and switch against the rendered
intent (configs/), one line per difference with its fix. The logic is `Workspace.drift`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click

from fabtui.cli.context import EXIT_FINDINGS, UserError, job_file_option, workspace


@click.command("drift")
@click.option("--intent", "scenario", metavar="SCENARIO",
              help="Configuration scenario to compare with (`fabtui config scenarios`; "
                   "default: roce-lossless on RoCE, infiniband on InfiniBand).")
@click.option("--device", "devices", multiple=True, metavar="NAME",
              help="Only this node or switch (repeat for more).")
@click.option("--baseline", "baseline_name", metavar="NAME",
              help="Instead: what changed since baseline NAME (`fabtui baseline list`).")
@click.option("--since-good", is_flag=True,
              help="Instead: what changed since the newest good baseline.")
@click.option("--job", "job_id", metavar="JOBID",
              help="With --baseline/--since-good: only what Slurm job JOBID uses (its nodes, "
                   "their NICs and the switch ports they are cabled to).")
@job_file_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def drift(ctx: click.Context, scenario: str | None, devices: tuple[str, ...],
          baseline_name: str | None, since_good: bool, job_id: str | None,
          job_file: Path | None, as_json: bool) -> None:
    """Compare the running configuration with the intent: each difference per device, with
    the command that fixes it (exit 1 when there is one). With --since-good or --baseline:
    what changed since that recorded state, per node, port and job."""
    from fabtui.errors import RequestError

    if baseline_name is not None or since_good:
        if baseline_name is not None and since_good:
            raise UserError("--baseline NAME and --since-good: give one")
        _since(ctx, baseline_name, job_id, job_file, list(devices), as_json)
        return
    if job_id is not None or job_file is not None:
        raise UserError("--job compares with a baseline: add --since-good or --baseline NAME")
    try:
        report = asyncio.run(workspace(ctx).drift(scenario, devices))
    except RequestError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        click.echo(json.dumps({"scenario": report.scenario, "devices": report.devices,
                               "drift": [line.__dict__ for line in report.lines],
                               "not_read": [{"what": w, "why": y} for w, y in report.unread]},
                              indent=2))
    else:
        for device, lines in report.by_device().items():
            click.echo(f"{device}: {len(lines)} difference(s) from {report.scenario}")
            for line in lines:
                click.echo(f"  {line.component}  {line.setting}: {line.running} -> "
                           f"{line.intended}   [{line.why}]")
                click.echo(f"      fix: {line.fix}")
        for what, why in report.unread:
            click.echo(f"not compared: {what}: {why}", err=True)
        unread = {what.split(":")[0] for what, _ in report.unread}
        clean = report.devices - len(set(report.by_device()) | unread)
        click.echo(f"{len(report.lines)} difference(s) on {len(report.by_device())} of "
                   f"{report.devices} device(s); {clean} match {report.scenario}"
                   + (f"; {len(report.unread)} reading(s) not compared" if report.unread
                      else "") + (". Fix in a maintenance window; on SONiC then "
                                  "`sudo config save -y`" if report.lines else ""))
    if report.lines:
        ctx.exit(EXIT_FINDINGS)


def _since(ctx: click.Context, name: str | None, job_id: str | None, job_file: Path | None,
           devices: list[str], as_json: bool) -> None:
    """Print what changed since the baseline, grouped by device and component."""
    from fabtui.errors import RequestError
    from fabtui.workspace.slurm import job_placement

    ws = workspace(ctx)
    try:
        nodes = devices
        if job_id is not None or job_file is not None:
            placement = job_placement(ws, job_id or "", source=job_file) if job_id else None
            if placement is None:
                raise UserError("--job-file needs --job JOBID (the job to read from it)")
            nodes = placement.nodes
        saved, found = asyncio.run(ws.since_baseline(name, nodes))
    except RequestError as exc:
        raise UserError(str(exc)) from None
    scope = f" for job {job_id} ({len(nodes)} nodes)" if job_id else ""
    if as_json:
        click.echo(json.dumps({"baseline": saved.name, "recorded_at": saved.recorded_at,
                               "good": saved.good, "job": job_id,
                               "changes": [c.__dict__ for c in found]}, indent=2))
    else:
        by_device: dict[str, list[str]] = {}
        for change in found:
            by_device.setdefault(change.device, []).append(change.text())
        for device, lines in by_device.items():
            click.echo(f"{device}: {len(lines)} change(s)")
            for line in lines:
                click.echo(f"  {line}")
        state = "good" if saved.good else "not good"
        click.echo(f"{len(found)} change(s) on {len(by_device)} device(s){scope} since "
                   f"{saved.name} ({state}, {saved.recorded_at})")
    if found:
        ctx.exit(EXIT_FINDINGS)
