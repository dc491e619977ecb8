"""`fabtui topo ...`: check, show, path, blast, ports, generate and templates."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from fabtui import __version__
from fabtui.cli import render
from fabtui.cli.context import EXIT_FINDINGS, UserError, settings, workspace
from fabtui.errors import InputError, Problem
from fabtui.model.fielddocs import field_docs
from fabtui.model.findings import Severity
from fabtui.topology.export import dump_yaml, port_rows, ports_csv, ports_markdown, summarize
from fabtui.topology.generate import GENERATORS, RailOptimizedParams
from fabtui.topology.graph import FabricGraph, UnknownRank
from fabtui.topology.loader import LoadedTopology, load_topology, topology_from_doc
from fabtui.topology.validate import validate
from fabtui.yamldoc import parse_yaml

_JSON_HELP = "Print JSON for scripts."
topology_option = click.option(
    "-t", "--topology", "path", type=click.Path(path_type=Path, dir_okay=False),
    help="Topology file (default: the configured one, else the demo fabric).")
ranks_option = click.option(
    "--ranks", type=click.Path(path_type=Path, dir_okay=False),
    help="Rank file placing ranks on nodes and GPUs (default: 8 per node).")
json_option = click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)


def _display(path: Path) -> str:
    """How to name `path` in messages: relative to the working folder when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _load(ctx: click.Context, path: Path | None) -> LoadedTopology:
    return workspace(ctx).topology(path)


def _graph(ctx: click.Context, path: Path | None, ranks: Path | None = None) -> FabricGraph:
    """The workspace's graph: the one rank placement (the `--ranks` file, else the config's)."""
    return workspace(ctx).graph(path, ranks)


def _emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


@click.group()
def topo() -> None:
    """The fabric model: validate it, query it, generate it."""


@topo.command()
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False), required=False)
@json_option
@click.pass_context
def check(ctx: click.Context, file: Path | None, as_json: bool) -> None:
    """Validate a topology FILE (default: the configured one, else the demo fabric): exit 0
    clean, 1 on findings of severity error, 2 unreadable."""
    loaded = _load(ctx, file)
    findings = validate(loaded)
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    if as_json:
        _emit_json({"source": loaded.source, "template": loaded.template, "ok": errors == 0,
                    "findings": [f.model_dump(mode="json") for f in findings],
                    "counts": {s.value: sum(1 for f in findings if f.severity is s)
                               for s in Severity}})
    else:
        click.echo(render.findings_report(loaded.source, findings))
    if errors:
        ctx.exit(EXIT_FINDINGS)


@topo.command()
@topology_option
@json_option
@click.pass_context
def show(ctx: click.Context, path: Path | None, as_json: bool) -> None:
    """Summarise the fabric: nodes, GPUs, NICs, rails, switches, leaf ratios."""
    loaded = _load(ctx, path)
    graph = _graph(ctx, path)
    result = summarize(graph, loaded.source, loaded.template, validate(loaded, graph))
    if as_json:
        _emit_json(result.model_dump(mode="json"))
    else:
        click.echo(render.summary(result, check=shlex.join(
            ["fabtui", "topo", "check", *([str(path)] if path else [])])))


def print_overview(ctx: click.Context) -> None:
    """What bare `fabtui` prints until the TUI lands: the fabric summary and where to go next."""
    s = settings(ctx)
    loaded = _load(ctx, None)
    graph = _graph(ctx, None)
    result = summarize(graph, loaded.source, loaded.template, validate(loaded, graph))
    if s.topology_is_default:
        click.echo("fabtui - no fabric configured, showing the built-in demo fabric\n")
    click.echo(render.summary(result, with_leaves=False))
    leaf = next((leaf.name for leaf in result.leaves), None)
    click.echo("\nnext steps:")
    click.echo("  fabtui topo show                 leaves, ratios, speeds")
    click.echo("  fabtui topo path 0 9             ranks 0 and 9: NICs, leaf ports, ECMP paths")
    if leaf:
        click.echo(f"  fabtui topo blast {leaf:<14} who loses what if that leaf fails")
    click.echo("  fabtui topo ports --format md    the port table")
    if s.simulated:
        from fabtui.cli.sim import sim_state

        _, state = sim_state(s)
        click.echo(f"  fabtui sim status                the simulated fabric: scenario "
                   f"{state.scenario.stem}")
        click.echo("  fabtui sim list                  fault scenarios to chase "
                   "(fabtui --scenario NAME ...)")
        click.echo("  fabtui probe run switch.pfc --target leaf-g00-r4   probe it")
    click.echo("  fabtui --help                    everything else")


@topo.command()
@click.argument("rank_a", type=int)
@click.argument("rank_b", type=int)
@topology_option
@ranks_option
@json_option
@click.pass_context
def path(ctx: click.Context, rank_a: int, rank_b: int, path: Path | None, ranks: Path | None,
         as_json: bool) -> None:
    """Where two ranks run and every path between them, ECMP set included."""
    from fabtui.topology.routes import routes

    graph = _graph(ctx, path, ranks)
    try:
        result = routes(graph, rank_a, rank_b)
    except UnknownRank as exc:
        raise UserError(str(exc)) from None
    if as_json:
        _emit_json(result.model_dump(mode="json"))
    else:
        click.echo(render.routes(result))


@topo.command()
@click.argument("component")
@topology_option
@ranks_option
@json_option
@click.pass_context
def blast(ctx: click.Context, component: str, path: Path | None, ranks: Path | None,
          as_json: bool) -> None:
    """Who loses what if COMPONENT fails.

    COMPONENT is a switch, a node, a NIC port (node:mlx5_0), a switch port (leaf:Ethernet8; an
    uplink when it faces a spine), an optic id or a link id.
    """
    from fabtui.topology.blast import UnknownComponent, blast_radius

    graph = _graph(ctx, path, ranks)
    try:
        result = blast_radius(graph, component)
    except UnknownComponent as exc:
        raise UserError(str(exc)) from None
    if as_json:
        _emit_json(result.model_dump(mode="json"))
    else:
        click.echo(render.blast(result))


@topo.command()
@click.argument("endpoint")
@topology_option
@json_option
@click.pass_context
def peer(ctx: click.Context, endpoint: str, path: Path | None, as_json: bool) -> None:
    """What is at the other end of the cable in ENDPOINT (node:mlx5_0 or leaf:Ethernet8)."""
    graph = _graph(ctx, path)
    far = graph.far_end(endpoint)
    if far is None:
        raise UserError(f"no cable is plugged into {endpoint} in {_load(ctx, path).source}")
    index = graph.port_links.get(endpoint, graph.port_links.get(far))
    link = graph.link_ref(index) if index is not None else None
    if as_json:
        _emit_json({"endpoint": endpoint, "peer": far,
                    "link": link.model_dump(mode="json") if link else None})
    else:
        details = f" ({link.speed}G, optic {link.optic or 'unknown'})" if link else ""
        click.echo(f"{endpoint} <-> {far}{details}")


@topo.command()
@topology_option
@click.option("--format", "fmt", type=click.Choice(["csv", "md"]), default="md",
              show_default=True, help="Table format.")
@json_option
@click.pass_context
def ports(ctx: click.Context, path: Path | None, fmt: str, as_json: bool) -> None:
    """The port table: node, NIC, rail, leaf, port, speed, optic - for cabling and tickets."""
    rows = port_rows(_graph(ctx, path))
    if as_json:
        _emit_json(rows)
    elif fmt == "csv":
        click.echo(ports_csv(rows), nl=False)
    else:
        click.echo(ports_markdown(rows), nl=False)


def _parse_param(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise InputError([Problem("--param", None, f"{text!r}: expected key=value")])
    raw = raw.strip()
    value: Any = raw
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        for kind in (int, float):
            try:
                value = kind(raw)
                break
            except ValueError:
                continue
    return key.strip(), value


@topo.command()
@click.argument("template")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Template parameter (repeatable), e.g. --param nodes=64.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write to this file instead of standard output.")
@click.option("--json", "as_json", is_flag=True, help="Write JSON instead of YAML.")
@click.pass_context
def generate(ctx: click.Context, template: str, params: tuple[str, ...], output: Path | None,
             as_json: bool) -> None:
    """Write the explicit topology a template describes.

    TEMPLATE is a shipped or configured template name (see `fabtui topo templates`), a template
    file, or the bare generator `rail-optimized` (then --param nodes=N is required).
    """
    s = settings(ctx)
    overrides = dict(_parse_param(p) for p in params)
    if template in GENERATORS:
        doc = parse_yaml(f"template: {template}\n", f"generator {template}")
        loaded = topology_from_doc(doc, find_template=s.find_template, param_overrides=overrides)
    else:
        candidate = Path(template)
        found = candidate if candidate.is_file() else s.find_template(template)
        if found is None:
            names = ", ".join([*GENERATORS, *(p.stem for p in s.templates())])
            raise UserError(f"no template {template!r}; known: {names}")
        loaded = load_topology(found, label=_display(found), find_template=s.find_template,
                               param_overrides=overrides)
    command = " ".join(["fabtui topo generate", shlex.quote(template),
                        *(f"--param {shlex.quote(p)}" for p in params)])
    if as_json:
        text = json.dumps(loaded.topology.model_dump(mode="json", exclude_defaults=True),
                          indent=1, ensure_ascii=False) + "\n"
    else:
        header = (f"Generated by fabtui {__version__}: {command}\n"
                  f"Template: {loaded.template}\n"
                  f"Parameters: {json.dumps(loaded.params, sort_keys=True)}\n"
                  "This file is explicit: edit it freely, then run `fabtui topo check` on it.")
        text = dump_yaml(loaded.topology, header)
    if output is None:
        sys.stdout.write(text)
    else:
        from fabtui.paths import write_output

        write_output(output, text)
        topology = loaded.topology
        click.echo(f"wrote {output}: {len(topology.nodes)} nodes, {len(topology.switches)} "
                   f"switches, {len(topology.links)} links", err=True)


@topo.command()
@json_option
@click.pass_context
def templates(ctx: click.Context, as_json: bool) -> None:
    """List the topology templates and the generator's parameters."""
    s = settings(ctx)
    found = []
    for file in s.templates():
        try:
            doc = parse_yaml(file.read_text(encoding="utf-8"), str(file))
            description = str(doc.data.get("description", "")) if isinstance(doc.data, dict) else ""
        except (InputError, OSError):
            description = "(unreadable)"
        found.append({"name": file.stem, "file": str(file), "description": description})
    docs = field_docs(RailOptimizedParams)
    parameters = {
        name: {"default": None if field.is_required() else field.default,
               "description": field.description or docs.get(name, "")}
        for name, field in RailOptimizedParams.model_fields.items()
    }
    if as_json:
        _emit_json({"generators": list(GENERATORS), "templates": found,
                    "parameters": parameters})
        return
    click.echo(render.table(("template", "description"),
                            [(t["name"], t["description"]) for t in found]))
    click.echo(f"\ngenerator parameters ({', '.join(GENERATORS)}):")
    rows = [(name, "required" if info["default"] is None and name == "nodes"
             else json.dumps(info["default"], default=str), info["description"])
            for name, info in parameters.items()]
    click.echo(render.table(("parameter", "default", "meaning"), rows))


@topo.command()
@click.option("--node", "nodes", multiple=True, metavar="NODE",
              help="Only this node's cabling (repeatable); default: every node.")
@click.option("--no-affinity", is_flag=True,
              help="Do not read nvidia-smi topo -m (GPU-NIC placement) on the nodes.")
@topology_option
@json_option
@click.pass_context
def cabling(ctx: click.Context, nodes: tuple[str, ...], no_affinity: bool, path: Path | None,
            as_json: bool) -> None:
    """The design against the cabling: what the switches hear (LLDP; ibnetdiscover on
    InfiniBand) and where each node's NICs sit (nvidia-smi topo -m), compared with the
    topology, each difference with the exact fix. Exit 1 when anything differs or could not
    be read."""
    import asyncio

    report = asyncio.run(workspace(ctx).cabling(nodes, affinity=not no_affinity,
                                                topology=path))
    if as_json:
        _emit_json({"ok": report.ok, **report.model_dump(mode="json")})
    else:
        click.echo(render.cabling(report))
    if not report.ok:
        ctx.exit(EXIT_FINDINGS)


def _register() -> None:
    from fabtui.cli.topo_netbox import netbox
    from fabtui.cli.topo_slurm import slurm

    topo.add_command(netbox)
    topo.add_command(slurm)


_register()
