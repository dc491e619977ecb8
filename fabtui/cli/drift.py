"""`fabtui drift`: the running configuration of every node and switch against the rendered
intent (configs/), one line per difference with its fix. The logic is `Workspace.drift`."""

from __future__ import annotations

import asyncio
import json

import click

from fabtui.cli.context import EXIT_FINDINGS, UserError, workspace


@click.command("drift")
@click.option("--intent", "scenario", metavar="SCENARIO",
              help="Configuration scenario to compare with (`fabtui config scenarios`; "
                   "default: roce-lossless on RoCE, infiniband on InfiniBand).")
@click.option("--device", "devices", multiple=True, metavar="NAME",
              help="Only this node or switch (repeat for more).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def drift(ctx: click.Context, scenario: str | None, devices: tuple[str, ...],
          as_json: bool) -> None:
    """Compare the running configuration with the intent: each difference per device, with
    the command that fixes it (exit 1 when there is one)."""
    from fabtui.errors import RequestError

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
