"""`fabtui prom ...`: the Prometheus source — which topology elements have no series, and the
PromQL it reads them with."""

from __future__ import annotations

import json
from pathlib import Path

import click

from fabtui.cli.context import EXIT_BAD_INPUT, EXIT_FINDINGS, UserError, workspace


@click.group("prom")
def prom() -> None:
    """Read the fabric from Prometheus: check the label mapping, show the PromQL."""


def _source(ctx: click.Context):  # type: ignore[no-untyped-def]
    import dataclasses

    from fabtui.errors import RequestError
    from fabtui.workspace.promsource import live_source

    ws = workspace(ctx)
    if ws.settings.prometheus is None:
        raise UserError("no [prometheus] table in the config (url = \"http://...\"); see "
                        "docs/prometheus.md")
    ws.settings = dataclasses.replace(ws.settings, live_source="prometheus")
    try:
        return live_source(ws)
    except RequestError as exc:
        raise UserError(str(exc)) from None


@prom.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.option("--limit", type=click.IntRange(1), default=40, show_default=True,
              help="Elements listed at most (the count is always complete).")
@click.pass_context
def check(ctx: click.Context, as_json: bool, limit: int) -> None:
    """List the topology elements no Prometheus series names (exit 1 when there are some)."""
    from fabtui.prom.client import PromError

    source = _source(ctx)
    try:
        missing = source.check()
    except PromError as exc:
        click.echo(f"fabtui: prometheus {exc.kind}: {exc}", err=True)
        ctx.exit(EXIT_BAD_INPUT)
    if as_json:
        click.echo(json.dumps([{"element": m.element, "exporter": m.exporter,
                                "metrics": list(m.metrics)} for m in missing], indent=2))
    elif not missing:
        click.echo(f"every GPU, NIC and switch port of {source.graph.topology.cluster.name} "
                   f"has series in {source.client.shown_url}")
    else:
        for item in missing[:limit]:
            what = f"no {item.exporter} series" if item.metrics == ("everything",) else \
                f"no {', '.join(item.metrics)} ({item.exporter})"
            click.echo(f"{item.element}: {what}")
        if len(missing) > limit:
            click.echo(f"... and {len(missing) - limit} more (--limit, --json)")
        elements = len({m.element for m in missing})
        click.echo(f"{elements} element(s) without some series; the label mapping is "
                   "[prometheus.labels], the names [prometheus.metrics]", err=True)
    if missing:
        ctx.exit(EXIT_FINDINGS)


@prom.command("queries")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def queries(ctx: click.Context, as_json: bool) -> None:
    """Print the PromQL each mapped metric is read with (paste into Prometheus's UI)."""
    source = _source(ctx)
    if as_json:
        click.echo(json.dumps(source.queries, indent=2))
        return
    for key, text in source.queries.items():
        click.echo(f"{key}\t{text}")


@prom.command("rules")
@click.option("--json", "as_json", is_flag=True,
              help="Print the rule file as JSON (Prometheus reads it as YAML too).")
@click.option("--interval", default=None, metavar="DURATION",
              help="The rule group's evaluation interval (`1m`); default Prometheus's global "
                   "evaluation_interval. Use the exporters' scrape interval.")
@click.option("--alerting/--no-alerting", default=True, show_default=True,
              help="Add the fabric's alerting rules (group fabtui-alerts) beside the recording "
                   "rules.")
@click.option("--flap-window", default="15m", show_default=True, metavar="DURATION",
              help="How far back a link's down-and-up counts as a flap.")
@click.pass_context
def rules(ctx: click.Context, as_json: bool, interval: str | None, alerting: bool,
          flap_window: str) -> None:
    """Print the recording rules `mode = "recorded"` reads (a Prometheus rule file for
    `rule_files`): the sieve and the per-element clocks, evaluated once per interval by
    Prometheus instead of once per refresh. `mode = "auto"` (the default) notices them once
    Prometheus evaluates them and reads them too. Beside them, the fabric's alerting rules
    (PFC storms, pause spreading, links down and flapping, FEC, optics, RDMA loss, GPU Xids,
    exporters down), each citing its threshold's source, for an Alertmanager to route to
    `fabtui alerts serve` (docs/alerts.md). Re-generate it when thresholds, labels or the
    topology change."""
    import re

    from fabtui.prom.alerting import MissingThreshold

    for name, value in (("--interval", interval), ("--flap-window", flap_window)):
        if value is not None and not re.fullmatch(r"[0-9]+[smh]", value):
            raise UserError(f"{name} {value!r}: a duration like 30s, 1m or 2h")
    try:
        text = _source(ctx).rules(interval, as_json=as_json, alerting=alerting,
                                  flap_window=flap_window)
    except MissingThreshold as exc:
        raise UserError(str(exc)) from None
    click.echo(text, nl=False)


@prom.command("dashboards")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="Print the files written as JSON (name, uid, title, path, panels).")
@click.pass_context
def dashboards(ctx: click.Context, outdir: Path, as_json: bool) -> None:
    """Write Grafana dashboards for this fabric to OUTDIR, one JSON file each (GPU, NIC/RDMA,
    switch, NCCL, job, fabric symmetry; Grafana 11: import them or provision the folder, see
    docs/dashboards.md). Uses [prometheus] labels and metrics when configured; asks no
    Prometheus."""
    from fabtui.errors import RequestError
    from fabtui.workspace import dashboards as boards

    try:
        written = boards.write(workspace(ctx), outdir)
    except RequestError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        click.echo(json.dumps([{"name": w.board.name, "uid": w.board.dashboard.uid,
                                "title": w.board.dashboard.title, "path": str(w.path),
                                "panels": w.panels} for w in written], indent=2))
        return
    for item in written:
        click.echo(str(item.path))
