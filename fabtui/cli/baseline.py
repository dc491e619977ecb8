"""`fabtui baseline record|list`: each device's versions and settings at a known-good moment
(what `fabtui drift --since-good` compares with). The logic is `Workspace.record_baseline`."""

from __future__ import annotations

import asyncio
import json

import click

from fabtui.cli.context import UserError, workspace


@click.group("baseline")
def baseline() -> None:
    """Known-good states: record one, list them (`fabtui drift --since-good` compares)."""


@baseline.command("record")
@click.argument("name")
@click.option("--intent", "scenario", metavar="SCENARIO",
              help="Configuration scenario the state is judged against (default: the fabric's).")
@click.option("--replace", is_flag=True,
              help="Overwrite a good baseline NAME even with a state that is not good.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def record(ctx: click.Context, name: str, scenario: str | None, replace: bool,
           as_json: bool) -> None:
    """Read every node and switch and record its versions and settings as NAME; it is a good
    state when drift and the fleet check find nothing (said either way). A good NAME is kept
    (exit 2, nothing recorded) when this state is not good, unless --replace."""
    from fabtui.errors import RequestError
    from fabtui.intent.baseline import NOT_JUDGED

    try:
        saved, judged = asyncio.run(workspace(ctx).record_baseline(name, scenario, replace))
    except RequestError as exc:
        raise UserError(str(exc)) from None
    devices = len({key.split("\t")[0].split(":")[0] for key in saved.facts})
    if as_json:
        click.echo(json.dumps({"name": saved.name, "recorded_at": saved.recorded_at,
                               "good": saved.good, "findings": saved.findings,
                               "drift": len(judged.drift.lines),
                               "fleet": len(judged.fleet.findings), "links": judged.links,
                               "unreadable": judged.unreadable, "not_taken": judged.not_taken,
                               "not_judged": NOT_JUDGED,
                               "facts": len(saved.facts), "devices": devices}, indent=2))
        return
    click.echo(f"recorded {saved.name} at {saved.recorded_at}: {len(saved.facts)} versions and "
               f"settings of {devices} devices")
    if saved.good:
        click.echo(f"a good state: {judged.judged()}")
        click.echo(f"not judged: {judged.not_judged()}; `fabtui drift --since-good` compares "
                   "with it")
    else:
        click.echo(f"NOT a good state: {judged.problems()}; recorded, but `--since-good` skips "
                   f"it and `--baseline {saved.name}` compares with it (details: `fabtui "
                   "drift`, `fabtui fleet check`, `fabtui probe run`)", err=True)


@baseline.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def list_baselines(ctx: click.Context, as_json: bool) -> None:
    """The recorded baselines, oldest first."""
    from fabtui.intent.baseline import STORE_NAME, BaselineStore

    store = BaselineStore(workspace(ctx).settings.data_dir / STORE_NAME)
    try:
        found = store.all()
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps([{"name": b.name, "recorded_at": b.recorded_at, "good": b.good,
                                "findings": b.findings, "scenario": b.scenario,
                                "topology": b.topology, "facts": len(b.facts)} for b in found],
                              indent=2))
        return
    if not found:
        click.echo("no baseline recorded: `fabtui baseline record NAME`")
    for b in found:
        state = "good" if b.good else f"{b.findings} finding(s)"
        click.echo(f"{b.name:<20}{b.recorded_at}  {state:<14}{b.topology}, {len(b.facts)} facts")
