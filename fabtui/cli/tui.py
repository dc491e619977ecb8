"""`fabtui tui`: open the Textual app (bare `fabtui` on a terminal does the same)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from fabtui.cli.context import UserError, workspace

if TYPE_CHECKING:
    from fabtui.model.triage import TriageReport


@click.command("tui")
@click.option("--ascii", "ascii_only", is_flag=True,
              help="ASCII glyphs only (+ ok, ! warn, X fail, ? unknown, ~ stale, # unreachable).")
@click.option("--triage", "triage_paths", multiple=True, type=click.Path(path_type=Path),
              metavar="PATH", help="Open on the Triage screen, triaging a hung job's logs "
                                   "(a folder or files; repeat for several).")
@click.pass_context
def tui(ctx: click.Context, ascii_only: bool, triage_paths: tuple[Path, ...]) -> None:
    """Open the live fabric view (the configured fabric; the demo fabric by default)."""
    for path in triage_paths:
        if not path.exists():
            raise UserError(f"{path}: no such file or folder (--triage takes the hung job's "
                            "logs)")
    need_terminal()
    open_app(ctx, ascii_only=ascii_only, triage=(triage_paths, None) if triage_paths else None)


def need_terminal() -> None:
    """Raise `UserError` unless standard input and output are a terminal."""
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("the app needs a terminal (standard input and output); without one, "
                        "`fabtui` prints the fabric's summary")


def open_app(ctx: click.Context, *, ascii_only: bool = False,
             triage: tuple[tuple[Path, ...], TriageReport | None] | None = None) -> None:
    """Open the app on this invocation's workspace (on the Triage screen of `triage`'s logs,
    with its report when already triaged). Textual is imported only here."""
    import sys

    from fabtui.tui.app import run_app

    ws = workspace(ctx)
    ws.notice = None  # the header says what the demo plays; nothing may print under the app
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    run_app(ws, ascii_only=ascii_only or "utf" not in encoding, triage=triage)
