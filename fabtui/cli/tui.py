"""`fabtui tui`: open the Textual app (bare `fabtui` on a terminal does the same)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from fabtui.cli.context import UserError, job_file_option, workspace

if TYPE_CHECKING:
    from fabtui.model.triage import TriageReport
    from fabtui.views.updates import StatusSource


@click.command("tui")
@click.option("--ascii", "ascii_only", is_flag=True,
              help="ASCII glyphs only (+ ok, ! warn, X fail, ? unknown, ~ stale, # unreachable).")
@click.option("--triage", "triage_paths", multiple=True, type=click.Path(path_type=Path),
              metavar="PATH", help="Open on the Triage screen, triaging a hung job's logs "
                                   "(a folder or files; repeat for several).")
@click.option("--job", "job_id", metavar="JOBID",
              help="Follow Slurm job JOBID: its rank placement, and the Fabric screen filtered "
                   "to its nodes (asked on the configured [slurm] host).")
@job_file_option
@click.option("--source", type=click.Choice(["probes", "prometheus"]), default=None,
              help="Where the live view reads: polling probes, or the configured "
                   "[prometheus] (default: the config's `source`).")
@click.pass_context
def tui(ctx: click.Context, ascii_only: bool, triage_paths: tuple[Path, ...],
        job_id: str | None, job_file: Path | None, source: str | None) -> None:
    """Open the live fabric view (the configured fabric; the demo fabric by default)."""
    for path in triage_paths:
        if not path.exists():
            raise UserError(f"{path}: no such file or folder (--triage takes the hung job's "
                            "logs)")
    if job_file is not None and job_id is None:
        raise UserError("--job-file needs --job JOBID (which job of the file to follow)")
    if job_id is not None:
        follow(ctx, job_id, job_file)  # before the terminal check: a bad job id says so first
    status_source = _status_source(ctx, source)  # a bad source says so before anything else
    need_terminal()
    open_app(ctx, ascii_only=ascii_only, triage=(triage_paths, None) if triage_paths else None,
             view="job" if job_id is not None else "", status_source=status_source)


def need_terminal() -> None:
    """Raise `UserError` unless standard input and output are a terminal."""
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("the app needs a terminal (standard input and output); without one, "
                        "`fabtui` prints the fabric's summary")


def follow(ctx: click.Context, job_id: str, job_file: Path | None) -> None:
    """Make Slurm job `job_id` this invocation's rank placement (UserError when it cannot)."""
    from fabtui.errors import RequestError
    from fabtui.workspace.slurm import follow_job, job_placement

    try:
        placement = job_placement(workspace(ctx), job_id, source=job_file)
    except RequestError as exc:
        raise UserError(str(exc)) from None
    follow_job(workspace(ctx), placement)


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
             triage: tuple[tuple[Path, ...], TriageReport | None] | None = None,
             view: str = "", status_source: StatusSource | None = None) -> None:
    """Open the app on this invocation's workspace: on the Triage screen of `triage`'s logs
    (with its report when already triaged), `view` the Fabric screen's first filter, the live
    view reading `status_source` (None: what the settings choose). Textual is imported only
    here."""
    import sys

    from fabtui.tui.app import run_app

    ws = workspace(ctx)
    ws.notice = None  # the header says what the demo plays; nothing may print under the app
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    run_app(ws, ascii_only=ascii_only or "utf" not in encoding, triage=triage, view=view,
            source=status_source)
