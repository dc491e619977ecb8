"""`fabtui fleet check`: what every node and switch runs against the selection database
(configs/selection/), each combination outside the matrix with its source. The logic is
`Workspace.fleet_check`; this prints it."""

from __future__ import annotations

import asyncio
import json

import click

from fabtui.cli.context import EXIT_FINDINGS, UserError, workspace


@click.group("fleet")
def fleet() -> None:
    """The selection database: what the fleet runs against validated combinations."""


@fleet.command("check")
@click.option("--device", "devices", multiple=True, metavar="NAME",
              help="Only this node or switch (repeat for more).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def check(ctx: click.Context, devices: tuple[str, ...], as_json: bool) -> None:
    """Read what every node and switch runs (NIC firmware and driver, GPU driver and CUDA,
    switch OS, optics) and name each combination outside the selection database, with the
    source that says so (exit 1 when there is one)."""
    from fabtui.errors import RequestError

    try:
        report = asyncio.run(workspace(ctx).fleet_check(devices))
    except RequestError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        def rows(lines: list) -> list[dict[str, str]]:  # type: ignore[type-arg]
            return [{"component": x.component, "class": x.cls, "combination": x.combination,
                     "verdict": x.verdict, "source": x.source, "fix": x.fix} for x in lines]

        click.echo(json.dumps({"checked": report.checked, "findings": rows(report.findings),
                               "notes": rows(report.notes),
                               "not_read": [{"what": w, "why": y} for w, y in report.unread]},
                              indent=2))
    else:
        for line in report.findings:
            click.echo(f"{line.component}  {line.combination}: {line.verdict} ({line.cls})")
            click.echo(f"    source: {line.source}")
            click.echo(f"    fix: {line.fix}")
        grouped: dict[tuple[str, str, str, str], list[str]] = {}
        for note in report.notes:
            grouped.setdefault((note.cls, note.combination, note.verdict, note.source),
                               []).append(note.component)
        for (cls, combination, verdict, source), where in grouped.items():
            shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3
                                            else "")
            click.echo(f"note: {combination} is {verdict} ({cls}) on {shown}: {source}",
                       err=True)
        for what, why in report.unread:
            click.echo(f"not read: {what}: {why}", err=True)
        devices_hit = len({line.device for line in report.findings})
        click.echo(f"{report.checked} combination(s) checked: {len(report.findings)} outside "
                   f"the validated matrix on {devices_hit} device(s), {len(report.notes)} "
                   "note(s)")
    if report.findings:
        ctx.exit(EXIT_FINDINGS)
