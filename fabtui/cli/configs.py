"""`fabtui config render|scenarios`: the fabric's intended configuration, rendered from the
topology by scenario (configs/). The logic is `Workspace.render_configs`; this prints it."""

from __future__ import annotations

import json
from pathlib import Path

import click

from fabtui.cli.context import EXIT_BAD_INPUT, UserError, workspace


@click.command("render")
@click.argument("scenario")
@click.option("--device", "devices", multiple=True, metavar="NAME",
              help="Only this node or switch (repeat for more). Default: every device.")
@click.option("-o", "--output", type=click.Path(path_type=Path, file_okay=False),
              help="Write DIR/DEVICE/FILE instead of printing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def render(ctx: click.Context, scenario: str, devices: tuple[str, ...], output: Path | None,
           as_json: bool) -> None:
    """Render configuration SCENARIO (see `fabtui config scenarios`) for the fabric's devices:
    switch QoS/PFC/ECN/buffers (SONiC config_db, NVUE, EOS), host NIC settings and the NCCL
    environment, every value from the topology and the reviewed intent."""
    from fabtui.errors import RequestError
    from fabtui.paths import write_file

    try:
        files = workspace(ctx).render_configs(scenario, devices)
    except RequestError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        click.echo(json.dumps([{"device": f.device, "kind": f.kind, "file": f.name,
                                "template": f.template, "text": f.text} for f in files],
                              indent=2))
        return
    if not files:
        click.echo(f"{scenario} renders nothing for {', '.join(devices) or 'this fabric'} "
                   "(no template for its kind)", err=True)
        ctx.exit(EXIT_BAD_INPUT)
    if output is not None:
        for f in files:
            folder = output / f.device
            folder.mkdir(parents=True, exist_ok=True)
            write_file(folder / f.name, f.text)
        devices_written = len({f.device for f in files})
        click.echo(f"wrote {len(files)} file(s) for {devices_written} device(s) under {output}")
        return
    single = len(files) == 1
    for f in files:
        if not single:
            click.echo(f"==> {f.device}/{f.name} <==")
        click.echo(f.text, nl=not f.text.endswith("\n"))


@click.command("scenarios")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def scenarios(as_json: bool) -> None:
    """List the configuration scenarios (configs/scenarios/) and what each renders."""
    from fabtui.intent.scenario import load_scenario, scenario_names

    loaded = [load_scenario(name) for name in scenario_names()]
    if as_json:
        click.echo(json.dumps([{"name": s.name, "description": s.description,
                                "fabric": s.fabric, "templates": s.templates}
                               for s in loaded], indent=2))
        return
    for s in loaded:
        kinds = ", ".join(f"{kind}: {' '.join(names)}" for kind, names in s.templates.items())
        click.echo(f"{s.name:<16}{s.description}\n{'':<16}{kinds}")
