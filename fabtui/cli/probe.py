"""`fabtui probe list` and `fabtui probe run NAME --target T [--param k=v] [--json]`.

Exit status of `probe run`: 0 when the probe measured and found nothing failing (ok or warn), or
when the target has nothing to measure (no NVIDIA driver); 1 when the verdict is fail; 2 for a bad
request (unknown probe, target or parameter); 3 when the probe could not measure (unreachable,
timeout, authentication, unreadable output).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click

from fabtui.cli import probe_launch, render
from fabtui.cli.context import EXIT_FINDINGS, key_values, workspace
from fabtui.cli.danger import require_confirmation
from fabtui.cli.sweep import run_sweep
from fabtui.model.probe import ProbeResult, Verdict
from fabtui.model.transport import ErrorKind
from fabtui.probes.runner import DEFAULT_FANOUT

EXIT_NOT_MEASURED = 3
_NOT_APPLICABLE = (ErrorKind.NO_DRIVER, ErrorKind.UNSUPPORTED)


@click.group()
def probe() -> None:
    """Probes: commands and API calls that measure the fabric and judge what they find."""


probe_launch.register(probe)


@probe.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def list_probes(ctx: click.Context, as_json: bool) -> None:
    """List the probe catalog."""
    catalog = workspace(ctx).catalog
    if as_json:
        click.echo(json.dumps([p.model_dump(mode="json", by_alias=True)
                               for p in catalog.values()], indent=2))
        return
    rows = [(p.name, p.target, p.transport, p.parser or "-", p.description)
            for p in sorted(catalog.values(), key=lambda p: p.name)]
    click.echo(render.table(("probe", "target", "transport", "parser", "what"), rows))


@probe.command("run")
@click.argument("name")
@click.option("--target", "target_text", metavar="T",
              help="node, node:mlx5_0, node:gpu0, switch, switch:port, optic, or nodeA,nodeB; "
                   "or a set to sweep: 'node*:mlx5_*', 'node[001-004]', rail:3, "
                   "leaf:leaf-g00-r3, a,b,c.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Probe parameter (repeatable).")
@click.option("-t", "--topology", "path", type=click.Path(path_type=Path, dir_okay=False),
              help="Topology file (default: the configured one, else the demo fabric).")
@click.option("--all", "show_all", is_flag=True, help="List every metric, ok ones too.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.option("--fanout", type=click.IntRange(1, 1024), default=DEFAULT_FANOUT, show_default=True,
              help="Sweeps: targets probed at once.")
@click.option("--target-timeout", type=click.FloatRange(0.1, 86400), default=None,
              metavar="SECONDS", help="Sweeps: give up on a target after this long "
                                      "(default: the probe's timeouts plus a margin).")
@click.option("--confirm", "confirmation", metavar="TEXT",
              help="Dangerous probes: the typed confirmation (the target) for scripts.")
@click.pass_context
def run_probe(ctx: click.Context, name: str, target_text: str | None, params: tuple[str, ...],
              path: Path | None, show_all: bool, as_json: bool, fanout: int,
              target_timeout: float | None, confirmation: str | None) -> None:
    """Run probe NAME against a target and print what it measured and concluded."""
    given = key_values(params, "--param")
    ws = workspace(ctx)
    definition = ws.probe(name)
    targets = ws.sweep_targets(name, target_text, path)
    confirmed = require_confirmation(definition, target_text, confirmation)
    if targets is not None:
        ctx.exit(run_sweep(ws, definition, targets, given, path, as_json=as_json,
                           limit=fanout, target_timeout=target_timeout, exit_code=_exit_code,
                           confirmed=confirmed, named=target_text))
    result = asyncio.run(ws.run_probe(name, target_text, given, path, confirmed=confirmed))
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    else:
        click.echo(_describe(result, show_all))
    ctx.exit(_exit_code(result))


def _exit_code(result: ProbeResult) -> int:
    if result.verdict is Verdict.FAIL:
        return EXIT_FINDINGS
    if result.verdict is Verdict.ERROR:
        not_applicable = result.raw and all(r.error in _NOT_APPLICABLE for r in result.raw)
        return 0 if not_applicable else EXIT_NOT_MEASURED
    return 0


SHOW_ALL_UP_TO = 24
"""Up to this many metrics are all shown; beyond, the ok ones are counted, not listed."""


def _describe(result: ProbeResult, show_all: bool = False) -> str:
    seconds = (result.ended_at - result.started_at).total_seconds()
    lines = [f"{result.probe} on {result.target}: {result.verdict.value.upper()} "
             f"({seconds:.1f}s)", f"  command: {result.command}"]
    if result.error:
        lines.append(f"  {result.error}")
    shown = result.metrics
    if not show_all and len(shown) > SHOW_ALL_UP_TO:
        shown = [m for m in result.metrics if m.verdict is not Verdict.OK]
    if shown:
        # The limit carries the value's unit: `-5.9 dBm` beside `-9.35 dBm`, never a bare number.
        rows = [(m.component, m.name, _value(m.value, m.unit),
                 "" if m.limit is None else f"{m.limit:g} {m.unit}".strip(), m.verdict.value)
                for m in shown]
        lines += ["", render.table(("component", "metric", "value", "limit", "verdict"), rows)]
    hidden = len(result.metrics) - len(shown)
    if hidden:
        lines.append(f"  ({hidden} more metrics are ok: --all lists them)")
    if result.findings:
        lines += ["", "findings:"] + [f"  {f.severity.value}: {f.message}"
                                      for f in result.findings]
    return "\n".join(lines)


def _value(value: object, unit: str) -> str:
    if isinstance(value, float):
        text = f"{value:.3g}" if abs(value) < 1e-3 and value else f"{value:.4g}"
    else:
        text = str(value)
    return f"{text} {unit}".strip()
