"""`fabtui tui`: open the Textual app (bare `fabtui` on a terminal does the same)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from fabtui.cli.context import UserError, workspace

if TYPE_CHECKING:
    from fabtui.workspace.live import StatusSource


@click.command("tui")
@click.option("--ascii", "ascii_only", is_flag=True,
              help="ASCII glyphs only (+ ok, ! warn, X fail, ? unknown, ~ stale, # unreachable).")
@click.option("--source", type=click.Choice(["probes", "prometheus"]), default=None,
              help="Where the live view reads: polling probes, or the configured "
                   "[prometheus] (default: the config's `source`).")
@click.pass_context
def tui(ctx: click.Context, ascii_only: bool, source: str | None) -> None:
    """Open the live fabric view (the configured fabric; the demo fabric by default)."""
    import sys

    status_source = _status_source(ctx, source)  # a bad source says so before anything else
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("the app needs a terminal (standard input and output); without one, "
                        "`fabtui` prints the fabric's summary")
    open_app(ctx, ascii_only=ascii_only, status_source=status_source)


def _status_source(ctx: click.Context, source: str | None) -> StatusSource | None:
    """The live view's source: `--source`, else the config's; None polls probes. A Prometheus
    source whose auth reference cannot be resolved is a user error (exit 2), not a screen."""
    import dataclasses

    from fabtui.errors import RequestError
    from fabtui.workspace.promsource import live_source

    ws = workspace(ctx)
    if source is not None:
        ws.settings = dataclasses.replace(ws.settings, live_source=source)
    try:
        return live_source(ws)
    except RequestError as exc:
        raise UserError(str(exc)) from None


def open_app(ctx: click.Context, *, ascii_only: bool = False,
             status_source: StatusSource | None = None) -> None:
    """Open the app on this invocation's workspace. Textual is imported only here."""
    import sys

    ws = workspace(ctx)
    if status_source is None:
        status_source = _status_source(ctx, None)

    from fabtui.tui.app import run_app

    ws.notice = None  # the header says what the demo plays; nothing may print under the app
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    run_app(ws, ascii_only=ascii_only or "utf" not in encoding, source=status_source)
