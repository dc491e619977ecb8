"""`fabtui cases ...`: search the case library, show, file a session, find similar cases, import,
export, complete, reindex and count. Thin: the logic lives in fabtui/cases (through the
workspace); bad input is one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from fabtui.cases.present import iso_date, summary, why
from fabtui.cli.context import EXIT_FINDINGS, UserError, workspace
from fabtui.errors import InputError
from fabtui.lexicon.spelling import no_match
from fabtui.model.case import CaseStatus, Severity


@click.group("cases")
def cases() -> None:
    """The case library: past incidents, searchable by symptom in English and Chinese."""


def _date(value: str | None, option: str) -> str | None:
    """`value` checked to be an ISO date (`--since 2026-03-02`)."""
    if value is None:
        return None
    try:
        return iso_date(value)
    except ValueError as exc:
        raise UserError(f"{option} {exc}") from None


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@cases.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--component", help="Only cases naming this component (node042:mlx5_3, ...).")
@click.option("--rail", type=click.IntRange(0, 255), help="Only cases on this rail.")
@click.option("--node", help="Only cases on this node.")
@click.option("--tag", help="Only cases with this tag.")
@click.option("--severity", type=click.Choice([s.value for s in Severity]))
@click.option("--status", type=click.Choice([s.value for s in CaseStatus]))
@click.option("--since", metavar="DATE", help="Opened on or after this date.")
@click.option("--until", metavar="DATE", help="Opened on or before this date.")
@click.option("-n", "--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def search(ctx: click.Context, query: tuple[str, ...], component: str | None, rail: int | None,
           node: str | None, tag: str | None, severity: str | None, status: str | None,
           since: str | None, until: str | None, limit: int, as_json: bool) -> None:
    """Cases matching a symptom, best first (`fabtui cases search "光模块 误码"`)."""
    text = " ".join(query).strip()
    if not text:
        raise UserError("search: give the symptom to search for")
    result = workspace(ctx).cases.search(
        text, limit=limit, component=component, rail=rail, node=node, tag=tag,
        severity=severity, status=status, since=_date(since, "--since"),
        until=_date(until, "--until"))
    if result.note:  # the index is being built: on stderr, so JSON on stdout stays a list
        click.echo(f"note: {result.note}", err=True)
    if as_json:
        _echo_json([{"id": h.id, "title": h.title, "score": round(h.score, 3),
                     "snippet": h.snippet, "matched": h.matched} for h in result.hits])
        return
    unknown = no_match(result.unknown)
    if unknown:
        click.echo(unknown)
    if not result.hits:
        click.echo("no case matches")
        ctx.exit(EXIT_FINDINGS)
    for hit in result.hits:
        matched = why(hit.matched)
        click.echo(f"{hit.id:<36}{hit.score:7.2f}  {hit.title}")
        if hit.snippet:
            click.echo(f"    {hit.snippet}")
        if matched:
            click.echo(f"    matched {matched}")


@cases.command("list")
@click.option("--status", type=click.Choice([s.value for s in CaseStatus]))
@click.option("-n", "--limit", type=click.IntRange(1), default=None, help="At most N cases.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def list_cases(ctx: click.Context, status: str | None, limit: int | None,
               as_json: bool) -> None:
    """The cases in the library, most recently changed first."""
    rows = workspace(ctx).cases.list(status=status, limit=limit)
    if as_json:
        _echo_json([{"id": r.id, "title": r.title, "status": r.status,
                     "severity": r.severity, "symptom_class": r.symptom_class,
                     "opened": r.opened, "source": r.source} for r in rows])
        return
    from fabtui.cli.render import table, terminal_width

    # Sized to the longest id, status and class (a 45-character id ran into its status).
    click.echo(table(["id", "status", "class", "title"],
                     [(r.id, r.status, r.symptom_class or "-", r.title) for r in rows],
                     terminal_width()))


@cases.command("show")
@click.argument("case_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the case file.")
@click.pass_context
def show(ctx: click.Context, case_id: str, as_json: bool, as_markdown: bool) -> None:
    """One case, as its markdown file (or JSON)."""
    from fabtui.cases.markdown import write_case

    case = workspace(ctx).cases.get(case_id)
    if as_json:
        _echo_json(case.model_dump(mode="json"))
        return
    click.echo(write_case(case), nl=False)
    if not as_markdown and case.source:
        click.echo(f"\n(from {case.source})", err=True)


@cases.command("file")
@click.argument("session", required=False)
@click.option("--slow", "slow", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE", help="File a slow-job analysis (the JSON of `fabtui triage slow "
                                   "--json`) instead of a session.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def file_command(ctx: click.Context, session: str | None, slow: Path | None,
                 as_json: bool) -> None:
    """File a session (and the sessions that handed over to it), or a slow-job analysis, as
    a draft case (then `cases complete`). A session still under way is filed as it stands,
    with a note: file it again once it has ended."""
    if (session is None) == (slow is None):
        raise UserError("fabtui cases file: give a SESSION or --slow FILE (one of them)")
    if slow is not None:
        from fabtui.workspace.reporting import read_slow
        from fabtui.workspace.slowfaces import file_slow_case

        case = file_slow_case(workspace(ctx), read_slow(slow), slow.name)
    else:
        case = workspace(ctx).file_case(str(session))
        under_way = workspace(ctx).under_way(str(session))
        if under_way is not None:
            click.echo(f"note: {under_way}", err=True)
    if as_json:
        _echo_json(case.model_dump(mode="json"))
        return
    click.echo(summary(case))
    click.echo(f"next: fabtui cases complete {case.id} --root-cause '...' --resolution '...'"
               f"\n  or: fabtui cases export -o DIR --id {case.id}, edit, fabtui cases import")


@cases.command("complete")
@click.argument("case_id", metavar="ID")
@click.option("--root-cause", help="What caused it.")
@click.option("--resolution", help="What fixed it.")
@click.option("--title", help="A better title.")
@click.option("--severity", type=click.Choice([s.value for s in Severity]))
@click.option("--status", type=click.Choice([s.value for s in CaseStatus]),
              help="Default: resolved once a root cause is written.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def complete(ctx: click.Context, case_id: str, root_cause: str | None, resolution: str | None,
             title: str | None, severity: str | None, status: str | None,
             as_json: bool) -> None:
    """Write the root cause and resolution into a (draft) case."""
    if not any((root_cause, resolution, title, severity, status)):
        raise UserError("complete: give --root-cause, --resolution or another field to set")
    case = workspace(ctx).cases.complete(
        case_id, root_cause=root_cause, resolution=resolution, title=title,
        severity=Severity(severity) if severity else None,
        status=CaseStatus(status) if status else None)
    if as_json:
        _echo_json(case.model_dump(mode="json"))
        return
    click.echo(f"{case.id}: {case.status.value}")


@cases.command("similar")
@click.argument("name", metavar="SESSION|ID")
@click.option("-n", "--limit", type=click.IntRange(1, 50), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def similar(ctx: click.Context, name: str, limit: int, as_json: bool) -> None:
    """Past cases like a session's evidence (or like a case), resolved ones first."""
    ws = workspace(ctx)
    probe = ws.case_or_session(name)
    found = ws.cases.similar(probe, limit=limit)
    if as_json:
        _echo_json({"symptom_class": found.symptom_class, "seen": found.seen,
                    "commonness": found.commonness,
                    "cases": [{"id": c.id, "title": c.title, "status": c.status,
                               "score": round(c.score, 3), "has_root_cause": c.has_root_cause,
                               "matched": c.matched} for c in found.cases]})
        return
    click.echo(f"{found.symptom_class}: {found.commonness} ({found.seen} past case"
               f"{'s' if found.seen != 1 else ''})")
    if not found.cases:
        click.echo("no similar case")
        ctx.exit(EXIT_FINDINGS)
    for case in found.cases:
        click.echo(f"{case.id:<36}{case.score:6.2f}  [{case.status}] {case.title}")
        click.echo(f"    matched {why(case.matched)}")


@cases.command("import")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(path_type=Path, exists=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def import_command(ctx: click.Context, paths: tuple[Path, ...], as_json: bool) -> None:
    """Import case files or folders (again: only what changed). A bad file is reported as
    file:line; the others are imported (exit 2 if any failed)."""
    library = workspace(ctx).cases
    report = library.import_paths(list(paths))
    if library.indexing_in_background:
        click.echo(f"the search index is being built in the background ({library.store.count():,}"
                   " cases); searches answer meanwhile and say so", err=True)
    if as_json:
        _echo_json({"added": report.added, "updated": report.updated,
                    "unchanged": report.unchanged,
                    "problems": [str(p) for p in report.problems]})
    else:
        click.echo(f"{len(report.added)} added, {len(report.updated)} updated, "
                   f"{len(report.unchanged)} unchanged")
    if report.problems:
        raise InputError(report.problems)


@cases.command("export")
@click.option("-o", "--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              default=Path("cases-export"), show_default=True, help="Folder to write into.")
@click.option("--id", "ids", multiple=True, metavar="ID", help="Only this case (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def export(ctx: click.Context, out_dir: Path, ids: tuple[str, ...], as_json: bool) -> None:
    """Write one markdown file per case: stable, diff-friendly, importable again."""
    paths, written = workspace(ctx).cases.export(out_dir, list(ids))
    if as_json:
        _echo_json({"files": [str(p) for p in paths], "written": written})
        return
    click.echo(f"{len(paths)} case file{'s' if len(paths) != 1 else ''} in {out_dir} "
               f"({written} written, {len(paths) - written} already up to date)")


@cases.command("reindex")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def reindex(ctx: click.Context, as_json: bool) -> None:
    """Rebuild the search index from the case store."""
    count = workspace(ctx).cases.reindex()
    if as_json:
        _echo_json({"indexed": count})
        return
    click.echo(f"indexed {count} case{'s' if count != 1 else ''}")


@cases.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """How many cases, by status, severity, symptom class and language."""
    figures = workspace(ctx).cases.stats()
    if as_json:
        _echo_json(figures)
        return
    click.echo(f"{figures['cases']} cases in {figures['store']}")
    for key in ("status", "severity", "symptom_class", "lang"):
        shown = ", ".join(f"{k} {n}" for k, n in figures[key].items()) or "-"
        click.echo(f"  {key:<14}{shown}")
