"""`fabtui report SESSION...`: a report a customer can read, from journaled sessions.

Thin: the workspace gathers the evidence and the reports package builds and renders it. Exit
status 0 when the report was written (whatever it concludes), 2 for bad input.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from fabtui.cli.context import workspace
from fabtui.model.report import ReportKind
from fabtui.workspace.reporting import FORMATS

SUFFIXES = {"md": (".md", ".markdown", ".txt"), "html": (".html", ".htm")}
"""The file names each format is written under: a report is never written as something it
is not (markdown in a `.pdf`)."""


def _wrong_suffix(output: Path, fmt: str, chosen: bool) -> str:
    """Why `output` is refused for format `fmt`, and what to name it instead."""
    what = "markdown" if fmt == "md" else "HTML"
    said = f"--format {fmt} writes {what}" if chosen else \
        "fabtui writes reports as markdown (.md) or HTML (.html)"
    kind = f"a {output.suffix} file" if output.suffix else "a file without a suffix"
    hint = " (for a PDF, write .html and print it from a browser)" \
        if output.suffix.lower() == ".pdf" else ""
    names = f"{output.stem}{SUFFIXES[fmt][0]}" if chosen else \
        f"{output.stem}.md or {output.stem}.html"
    return f"{output}: {said}, not {kind}: name it {names}{hint}"


@click.command("report")
@click.argument("sessions", nargs=-1, metavar="SESSION...")
@click.option("--case", "case", default=None, metavar="ID",
              help="An incident review from this case of the library (and the sessions it "
                   "names, unless SESSIONs are given).")
@click.option("--slow", "slow", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE", help="A slow-job report from this analysis (the JSON of "
                                   "`fabtui triage slow --json`).")
@click.option("--kind", type=click.Choice([k.value for k in ReportKind]), default=None,
              help="What to report (default: from the sessions' runbooks).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="md or html (default: from -o's suffix, .md or .html; another suffix is "
                   "refused).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report here (default: standard output).")
@click.option("--json", "as_json", is_flag=True,
              help="The report as data (its model as JSON) on standard output.")
@click.pass_context
def report(ctx: click.Context, sessions: tuple[str, ...], case: str | None,
           slow: Path | None, kind: str | None, fmt: str | None, output: Path | None,
           as_json: bool) -> None:
    """Reports a customer can read, from journaled sessions.

    One or more SESSIONs (`last` is the newest) become an acceptance, RDMA, NCCL,
    fault-injection or incident report, as markdown or one self-contained HTML file."""
    from fabtui.cli.context import UserError
    from fabtui.workspace import reporting

    if not sessions and not case and slow is None:
        raise UserError("fabtui report: give a SESSION (`last` is the newest), --case ID or "
                        "--slow FILE")
    if slow is not None and (sessions or case):
        raise UserError("fabtui report --slow FILE: a slow-job report is made from the "
                        "analysis alone; give no SESSION or --case with it")
    started = time.perf_counter()
    chosen = fmt or ("html" if output is not None and output.suffix.lower() in SUFFIXES["html"]
                     else "md")
    if output is not None and output.suffix.lower() not in SUFFIXES[chosen]:
        raise UserError(_wrong_suffix(output, chosen, fmt is not None))
    if slow is not None:
        built = reporting.build_slow(workspace(ctx), reporting.read_slow(slow), slow.name)
    else:
        built = reporting.build(workspace(ctx), sessions, kind, case)
    if as_json:
        click.echo(built.model_dump_json(indent=2))
        return
    if output is None:
        click.echo(reporting.render(built, chosen), nl=False)
        return
    reporting.write(built, chosen, output)
    print(f"{built.kind.value} report: {built.verdict.value} — {built.conclusion}\n"
          f"wrote {output} ({chosen}, {time.perf_counter() - started:.2f} s)", file=sys.stderr)
