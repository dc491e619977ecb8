"""`fabtui topo netbox ...`: the design exported to NetBox and imported back (logic:
`fabtui.workspace.netbox`, mapping `fabtui.topology.netbox`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from fabtui.cli.context import workspace

_url = click.option("--url", required=True, metavar="URL",
                    help="NetBox's address, e.g. https://netbox.example.com")
_token = click.option("--token", metavar="REF",
                      help="The API token as a reference: env:VAR, file:PATH, keyring:NAME, "
                           "pass:NAME (never the token itself).")
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


@click.group()
def netbox() -> None:
    """The design in NetBox 4.x: export a topology as a site, import a site as a topology."""


@netbox.command()
@_url
@_token
@click.option("-t", "--topology", "path", type=click.Path(path_type=Path, dir_okay=False),
              help="Topology file (default: the configured one, else the demo fabric).")
@_json
@click.pass_context
def export(ctx: click.Context, url: str, token: str | None, path: Path | None,
           as_json: bool) -> None:
    """Create the fabric's design in NetBox: a site with its devices, GPU inventory items,
    interfaces, IP addresses and cables (a site that already holds devices is refused)."""
    result = workspace(ctx).netbox_export(url, token, topology=path)
    if as_json:
        click.echo(json.dumps({"site": result.site, "created": result.counts}, indent=2))
    else:
        made = ", ".join(f"{count} {kind.replace('_', ' ')}"
                         for kind, count in result.counts.items())
        click.echo(f"NetBox site {result.site}: created {made}")


@netbox.command(name="import")
@click.argument("site")
@_url
@_token
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the topology here instead of standard output.")
@_json
@click.pass_context
def import_(ctx: click.Context, site: str, url: str, token: str | None, output: Path | None,
            as_json: bool) -> None:
    """Read NetBox site SITE (its slug) back as an explicit topology file."""
    from fabtui.topology.export import dump_yaml

    topology = workspace(ctx).netbox_import(url, token, site)
    text = json.dumps(topology.model_dump(mode="json", exclude_defaults=True), indent=1) + \
        "\n" if as_json else dump_yaml(topology, f"Imported by fabtui from NetBox {url} site "
                                                 f"{site}.")
    if output is None:
        sys.stdout.write(text)
        return
    from fabtui.paths import write_output

    write_output(output, text)
    click.echo(f"wrote {output}: {len(topology.nodes)} nodes, {len(topology.switches)} "
               f"switches, {len(topology.links)} links", err=True)
