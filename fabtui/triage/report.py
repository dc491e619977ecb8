"""A triage report as tables (the terminal renders them) and as markdown.

Both forms keep long lists short by default, and every list they cut ends with a line saying how
much it left out and that `--full` (`full=True` here) shows it all: a reader must never take a
cut list for the whole evidence. The JSON form (`--json`) is always whole."""

from __future__ import annotations

from fabtui.model.table import Cell, Table, left, right
from fabtui.model.triage import Evidence, Suspect, TriageReport
from fabtui.topology.ranks import compact_ranges

_WARN_ROWS = 20
_RANK_ROWS = 64
_TEXT_EVIDENCE = (10, 2)
"""The text report's evidence: the first 10 suspects', 2 lines each."""
_MD_EVIDENCE = (20, 3)
"""The markdown report's evidence: the first 20 suspects', 3 lines each."""
FULL_HINT = "rerun `fabtui triage nccl` with --full to see them all"
"""How to see a cut list whole, said after each cut (the CLI's `fabtui triage nccl --full`)."""


def _more(left_out: int, total: int, what: str) -> str:
    """The line that closes a cut list: how many of how many were left out, and how to see them."""
    return f"+{left_out} more {what} not shown ({total - left_out} of {total}): {FULL_HINT}"


def _where(suspect: Suspect) -> str:
    if suspect.rank is not None:
        return str(suspect.rank)
    if suspect.ranks:
        return compact_ranges(suspect.ranks)
    if suspect.pg_rank is not None:
        return f"pg rank {suspect.pg_rank}"
    return "-"


def _header(report: TriageReport) -> list[str]:
    lines = [f"verdict: {report.verdict}", report.summary]
    if report.collective is not None:
        c = report.collective
        lines.append(f"collective: {c.op or '?'} seq {c.seq if c.seq is not None else '?'}"
                     f"{' in process group ' + c.pg if c.pg else ''}"
                     + (f" (last enqueued {c.last_enqueued})"
                        if c.last_enqueued is not None and c.last_enqueued != c.seq else ""))
    seen = compact_ranges(report.ranks_seen) if report.ranks_seen else "none"
    world = f" of {report.world_size} ({report.world_size_source})" if report.world_size \
        else f" of at least {report.world_size_at_least}" if report.world_size_at_least else ""
    lines.append(f"ranks with evidence: {seen}{world}")
    if report.rank_numbering == "group-local":
        lines.append("rank numbering: group-local only (no global rank could be read)")
    return lines


def tables(report: TriageReport, *, full: bool = False) -> list[Table]:
    """Header, suspects, rank states (the unusual ones), warnings, notes and next steps.

    By default the evidence, ranks and warnings lists are cut, each cut saying what it left
    out; `full` keeps every line."""
    out = [Table.build([], title=_header(report))]
    if report.suspects:
        rows: list[list[Cell]] = []
        for s in report.suspects:
            rows.append([s.fault, s.kind, _where(s), s.confidence, s.node, s.gpu, s.nic,
                         s.port or s.switch, s.optic, s.peer_node or s.peer, s.reason])
        out.append(Table.build(
            [right("fault"), left("kind"), left("rank"), left("sure"), left("node"),
             right("gpu"), left("nic"), left("port"), left("optic"), left("peer"),
             left("reason")], rows,
            title=["suspects (most likely first)"],
            notes=_evidence_lines(report, full=full)))
    unusual = [r for r in report.ranks
               if r.state not in ("in wavefront", "completed", "stopped")]
    stopped = [r.rank for r in report.ranks if r.state == "stopped"]
    if stopped:
        out.append(Table.build([], title=[
            f"{len(stopped)} rank(s) stopped inside the collective (waiting): "
            f"{compact_ranges(sorted(set(stopped)))}"]))
    if unusual:
        shown = unusual if full else unusual[:_RANK_ROWS]
        out.append(Table.build(
            [left("pg"), right("rank"), left("state"), right("enqueued"), right("completed"),
             right("timed out"), left("op"), right("numel")],
            [[r.pg, r.rank, r.state, r.last_enqueued, r.last_completed, r.timed_out, r.op,
              r.numel_in] for r in shown],
            title=["ranks (lagging, ahead, unknown)"],
            notes=[_more(len(unusual) - len(shown), len(unusual), "ranks")]
            if len(shown) < len(unusual) else []))
    if report.warnings:
        warnings = report.warnings if full else report.warnings[:_WARN_ROWS]
        out.append(Table.build(
            [left("where"), left("rank"), left("node"), left("type"), left("status"),
             left("role"), left("peer"), left("meaning")],
            [[f"{w.evidence.file}:{w.evidence.line}", w.rank, w.node, w.type,
              w.status_name or w.status, w.role, w.peer, w.meaning]
             for w in warnings],
            title=[f"NCCL warnings ({len(report.warnings)})"],
            notes=[_more(len(report.warnings) - len(warnings), len(report.warnings),
                         "warnings")] if len(warnings) < len(report.warnings) else []))
    tail = [f"note: {n}" for n in report.notes]
    tail += [f"collect: {item}" for item in report.collect]
    tail += [f"next: fabtui runbook run {n.runbook}"
             + "".join(f" --input {k}={v}" for k, v in n.inputs.items()) + f"   # {n.why}"
             for n in report.next]
    tail += [f"seen before: fabtui cases show {case}" for case in report.similar_cases]
    if tail:
        out.append(Table.build([], title=tail))
    if report.chain is not None:
        out.append(Table.build(
            [left("layer"), left("status"), left("probe"), left("on"), left("why")],
            [[link.layer, link.status, link.probe, link.target, link.reason]
             for link in report.chain.links],
            title=[f"evidence chain for {report.chain.node}"
                   + (f" {report.chain.nic}" if report.chain.nic else "")
                   + (f" -> {report.chain.port}" if report.chain.port else "")]))
    return out


def _cut_evidence(report: TriageReport, cut: tuple[int, int] | None
                  ) -> tuple[list[tuple[Suspect, Evidence]], list[tuple[Suspect, Evidence]]]:
    """Every suspect's evidence, in order, split into the lines `cut` (first suspects, lines
    each) keeps and those it leaves out; `None` keeps them all."""
    kept: list[tuple[Suspect, Evidence]] = []
    left_out: list[tuple[Suspect, Evidence]] = []
    for index, s in enumerate(report.suspects):
        for line, e in enumerate(s.evidence):
            keep = cut is None or (index < cut[0] and line < cut[1])
            (kept if keep else left_out).append((s, e))
    return kept, left_out


def _evidence_lines(report: TriageReport, *, full: bool) -> list[str]:
    """The suspects' evidence as lines under the suspects table, each line once (suspects that
    share a line, as a link's two ends do, show it under the first)."""
    kept, left_out = _cut_evidence(report, None if full else _TEXT_EVIDENCE)
    seen: set[str] = set()
    lines = []
    for s, e in kept:
        if str(e) not in seen:
            seen.add(str(e))
            lines.append(f"  {s.fault}/{_where(s)}: {e}")
    missing = {str(e) for _, e in left_out} - seen
    if missing:
        lines.append("  " + _more(len(missing), len(missing) + len(seen), "evidence lines"))
    return lines


def _md(value: object) -> str:
    text = "-" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: TriageReport, *, full: bool = False) -> str:
    """The report as a markdown document; as `tables`, long lists are cut (saying so) unless
    `full`."""
    lines = ["# NCCL hang triage", "", f"**Verdict: {report.verdict}.** {report.summary}", ""]
    for line in _header(report)[2:]:
        lines.append(f"- {line}")
    if report.suspects:
        lines += ["", "## Suspects (most likely first)", "",
                  "| fault | kind | rank | sure | node | gpu | nic | port | optic | peer "
                  "| reason |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for s in report.suspects:
            lines.append("| " + " | ".join(_md(v) for v in (
                s.fault, s.kind, _where(s), s.confidence, s.node, s.gpu, s.nic,
                s.port or s.switch, s.optic, s.peer_node or s.peer, s.reason)) + " |")
        lines += ["", "### Evidence", ""]
        kept, left_out = _cut_evidence(report, None if full else _MD_EVIDENCE)
        for s, e in kept:
            lines.append(f"- fault {s.fault}, rank {_where(s)}: `{e.file}:{e.line}` "
                         f"`{e.text.replace('`', chr(39))}`")
        if left_out:
            more = _more(len(left_out), len(kept) + len(left_out), "evidence lines")
            lines += ["", f"*{more}.*"]
    if report.warnings:
        lines += ["", f"## NCCL warnings ({len(report.warnings)})", ""]
        warnings = report.warnings if full else report.warnings[:_WARN_ROWS]
        for w in warnings:
            lines.append(f"- `{w.evidence.file}:{w.evidence.line}` rank {_md(w.rank)} "
                         f"{w.type} {_md(w.status_name or w.status)} ({w.role})"
                         f"{': ' + w.meaning if w.meaning else ''}")
        if len(warnings) < len(report.warnings):
            more = _more(len(report.warnings) - len(warnings), len(report.warnings), "warnings")
            lines += ["", f"*{more}.*"]
    if report.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    if report.collect:
        lines += ["", "## Collect next", ""] + [f"- {item}" for item in report.collect]
    if report.next:
        lines += ["", "## Next", ""]
        for n in report.next:
            inputs = "".join(f" --input {k}={v}" for k, v in n.inputs.items())
            lines.append(f"- `fabtui runbook run {n.runbook}{inputs}`: {n.why}")
    if report.similar_cases:
        lines += ["", "## Seen before", ""]
        lines += [f"- `fabtui cases show {case}`" for case in report.similar_cases]
    if report.chain is not None:
        lines += ["", f"## Evidence chain ({report.chain.node}"
                  + (f" {report.chain.nic}" if report.chain.nic else "")
                  + (f" -> {report.chain.port}" if report.chain.port else "") + ")", "",
                  "| layer | status | probe | on | why |", "|---|---|---|---|---|"]
        lines += ["| " + " | ".join(_md(v) for v in (link.layer, link.status, link.probe,
                                                     link.target, link.reason)) + " |"
                  for link in report.chain.links]
    return "\n".join(lines) + "\n"
