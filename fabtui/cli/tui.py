"""`fabtui tui`: open the Textual app (bare `fabtui` on a terminal does the same)."""

from __future__ import annotations

import click

from fabtui.cli.context import UserError, workspace


@click.command("tui")
@click.option("--ascii", "ascii_only", is_flag=True,
              help="ASCII glyphs only (+ ok, ! warn, X fail, ? unknown, ~ stale, # unreachable).")
@click.pass_context
def tui(ctx: click.Context, ascii_only: bool) -> None:
    """Open the live fabric view (the configured fabric; the demo fabric by default)."""
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("the app needs a terminal (standard input and output); without one, "
                        "`fabtui` prints the fabric's summary")
    open_app(ctx, ascii_only=ascii_only)


def open_app(ctx: click.Context, *, ascii_only: bool = False) -> None:
    """Open the app on this invocation's workspace. Textual is imported only here."""
    import sys

    from fabtui.tui.app import run_app

    ws = workspace(ctx)
    ws.notice = None  # the header says what the demo plays; nothing may print under the app
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    run_app(ws, ascii_only=ascii_only or "utf" not in encoding)
