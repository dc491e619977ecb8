"""A report as markdown that reads well on a code-hosting site: headings, tables, and each
figure's session / block beside it. Pure text; no plots (HTML embeds those).

Recorded text is shown as text, never read as markup: a title, a check message, an operator's
answer, an input value or a cluster name is escaped (`_cell`, or a code span `_code` cannot
leave), and a case's prose (its sections, which are markdown) keeps its paragraphs, lists,
tables and code but loses raw HTML, images and links (`_prose`). So neither a markdown viewer
nor the HTML report (fabtui/reports/html.py) runs a recorded `<script>` or fetches a recorded
image.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import Any

from fabtui.model.report import Criterion, Curve, Problem, Report, ReportKind, Source
from fabtui.model.verdict import Verdict

BADGE = {Verdict.OK: "PASS", Verdict.WARN: "WARN", Verdict.FAIL: "FAIL",
         Verdict.ERROR: "ERROR", Verdict.SKIPPED: "SKIPPED", Verdict.ABORTED: "ABORTED",
         Verdict.CANCELLED: "CANCELLED", Verdict.PENDING: "PENDING", Verdict.RUNNING: "RUNNING"}


def headline(report: Report) -> str:
    """The one word the report comes to: PASS / WARN / FAIL / ..., RESOLVED or OPEN for an
    incident review."""
    if report.kind is ReportKind.INCIDENT:
        return "RESOLVED" if report.verdict is Verdict.OK else "OPEN"
    return BADGE[report.verdict]


Images = dict[str, list[tuple[str, str]]]
"""Section (`nccl`, `rdma`) -> (alt text, image URL) to show at its head (the HTML's plots)."""


def render_markdown(report: Report, *, links: bool = False, images: Images | None = None) -> str:
    """The report as one markdown document (ends with a newline). With `links`, each "recorded
    in" cell links to the report's source list (`#s-<session>-<block>`), which is appended."""
    token = _LINKS.set(links)
    alone = _ONE_SESSION.set(links and len(report.sessions) == 1)
    try:
        return _render(report, images or {})
    finally:
        _ONE_SESSION.reset(alone)
        _LINKS.reset(token)


_LINKS: ContextVar[bool] = ContextVar("report_links", default=False)
"""Whether source cells link to the source list (set for one render; safe across threads)."""
_ONE_SESSION: ContextVar[bool] = ContextVar("report_one_session", default=False)
"""A linked report of one session: a source cell names only the block (the session is in the
method table, and the source list the link leads to names it)."""


def _render(report: Report, images: Images) -> str:
    out: list[str] = [f"# {_cell(report.title)}", "",
                      f"**Result: {headline(report)}** — {_cell(report.conclusion)}", "",
                      f"Generated {report.generated} by fabtui from {_made_from(report)}.", ""]
    if report.summary:
        out += ["## Summary", ""] + [f"- {_cell(line)}" for line in report.summary] + [""]
    if report.missing:
        out += ["> **Not in this report** (the sessions do not hold it):", ">"]
        out += [f"> - {_cell(m)}" for m in report.missing] + [""]
    if report.kind in (ReportKind.INCIDENT, ReportKind.SLOW_JOB):
        out += _incident(report)
    if report.kind is not ReportKind.SLOW_JOB:
        out += _environment(report)
    out += _method(report)
    if report.kind not in (ReportKind.INCIDENT, ReportKind.SLOW_JOB) or not report.sections:
        out += _results(report, images)
    if report.faults:
        out += ["## Injected faults", ""]
        out += _table(["scenario", "planted", "detected", "by", "degradation", "recovered"],
                      [[f.scenario, "; ".join(f.planted), "yes" if f.detected else "NO",
                        ", ".join(f.detected_by) or "-", "; ".join(f.degradation) or "-",
                        {None: "not verified", True: "yes", False: "NO"}[f.recovered]]
                       for f in report.faults])
    if report.risks:
        out += ["## Risks", ""] + [f"- {_cell(r)}" for r in report.risks] + [""]
    out += ["## Conclusion", "", f"**{headline(report)}**: {_cell(report.conclusion)}", ""]
    if report.recommendations:
        out += ["## Recommendations", ""] + [f"- {_cell(r)}" for r in report.recommendations]
        out += [""]
    if _LINKS.get():
        out += _sources(report)
    return "\n".join(out).rstrip() + "\n"


def _made_from(report: Report) -> str:
    """What the report was built from: `2 session(s)`, `case ID`, or both; a slow-job
    report, the analysis it lays out."""
    if report.kind is ReportKind.SLOW_JOB:
        return f"the slow-job analysis {_code(report.environment.get('analysis', '?'))}"
    made = [f"{len(report.sessions)} session(s)"] if report.sessions or not report.case else []
    if report.case:
        made.append(f"case {_code(report.case)}")
    return " and ".join(made)


def _sources(report: Report) -> list[str]:
    """Every session and block a figure links to, each with its anchor marker (the HTML
    renderer turns `[[anchor:ID]]` into an element with that id)."""
    out = ["## Sources", "", "Each figure above links here: the session and block that recorded "
           "it. `fabtui runbook journal SESSION` prints every recorded event of a session.", ""]
    seen: dict[str, Source] = {}
    for source in _all_sources(report):
        seen.setdefault(_anchor(source), source)
    if not seen:
        return []  # nothing recorded here to link to (a review of a case alone)
    for anchor, source in seen.items():
        where = f"step {_code(source.step or '')}, block {_code(source.block)}" \
            if source.block else "session"
        out.append(f"- [[anchor:{anchor}]] session {_code(source.session)}: {where}")
    return [*out, ""]


def _all_sources(report: Report) -> Iterable[Source]:
    for s in report.sessions:
        yield Source(session=s.id)
    for group in (report.criteria, report.other_criteria, report.checks, report.curves,
                  report.pairs, report.failures, report.faults):
        for item in group:
            yield item.source
    for series in report.series:
        for point in series.points:
            yield point.source
    for entry in report.timeline:
        if entry.source is not None:
            yield entry.source


def _incident(report: Report) -> list[str]:
    out: list[str] = []
    for name, text in report.sections.items():
        out += [f"## {_cell(name)}", "", _prose(text), ""]
    if report.timeline:
        out += ["## Timeline", ""]
        out += [f"- {_code(t.at)} {_cell(t.what)}" + (f" ({_ref(t.source)})" if t.source else "")
                for t in report.timeline] + [""]
    if report.action_items:
        out += ["## Action items", ""] + [f"- [ ] {_cell(a)}" for a in report.action_items]
        out += [""]
    if report.symptoms:
        out += ["## What the job's logs said", ""]
        out += [f"- {_cell(line)}" for line in report.symptoms] + [""]
    if report.problems and report.sections:
        out += ["## Evidence", ""]
        out += _problems(report.problems)
    return out


def _problems(problems: Sequence[Problem]) -> list[str]:
    """One row per failing element, everything wrong with it folded into one cell."""
    return _table(["element", "what is wrong", "result", "recorded in"],
                  [[p.element + (f" (optic {p.optic})" if p.optic else ""), "; ".join(p.what),
                    BADGE[p.verdict], _ref(p.source)] for p in problems])


def _environment(report: Report) -> list[str]:
    incident = report.kind is ReportKind.INCIDENT
    out = ["## Environment" if incident else "## Test environment", ""]
    inv = report.inventory
    if inv is not None:
        out += [f"Cluster **{_cell(inv.cluster)}** ({_cell(inv.fabric)}): {inv.nodes} nodes, "
                f"{inv.links} "
                f"links, {inv.optics} optics recorded in the topology.", ""]
        rows = [["GPU", model, str(count)] for model, count in inv.gpus.items()]
        rows += [["NIC", model, str(count)] for model, count in inv.nics.items()]
        rows += [["NIC port speed", speed, str(count)] for speed, count in inv.speeds.items()]
        rows += [["switch", model, str(count)] for model, count in inv.switches.items()]
        out += ["### Hardware", "", *_table(["kind", "model", "count"], rows)]
    if report.environment and (inv is None or not report.sessions):
        out += [f"As case {_code(report.case or '')} records it:", ""]
        out += _table(["component", "as recorded"],
                      [[k.upper() if k in ("gpu", "nic", "os", "nccl", "cuda", "ofed")
                        else k.capitalize(), v] for k, v in report.environment.items()])
    if report.software:
        out += ["### Software", ""]
        out += _table(["component", "version(s) read"],
                      [[k, ", ".join(v)] for k, v in report.software.items()])
    scenarios = {s.scenario for s in report.sessions if s.scenario}
    if scenarios:
        out += [f"Ran on the **demo fabric** (scenario {_cell(', '.join(sorted(scenarios)))}): "
                "simulated figures.", ""]
    return out


def _method(report: Report) -> list[str]:
    if not report.sessions:
        return []
    out = ["## Method", ""]
    out += _table(["session", "runbook", "operator", "started", "finished", "status", "probes"],
                  [[s.id, s.title or s.runbook, s.operator or "-", s.started,
                    s.finished or "not finished", s.status, ", ".join(s.probes) or "-"]
                   for s in report.sessions])
    inputs = [(s.id, k, v) for s in report.sessions for k, v in s.inputs.items()]
    if inputs:
        several = len(report.sessions) > 1
        out += ["Parameters:", ""] + [
            f"- {_code(sid) + ' ' if several else ''}{_cell(k)} = "
            + (_code(str(v)) if str(v).strip() else "(not given)")
            for sid, k, v in inputs] + [""]
    return out


def _results(report: Report, images: Images) -> list[str]:
    out: list[str] = []
    if report.criteria:
        repaired = report.kind is ReportKind.REPAIR and \
            any(c.before is not None for c in report.criteria)
        heading = RESULTS.get(report.kind, "Results against the criteria") if repaired or \
            report.kind is not ReportKind.REPAIR else "Results as found (no repair made)"
        out += [f"## {heading}", ""]
        if repaired:
            out += _table(["criterion", "threshold (source)", "before the repair",
                           "after the repair", "result", "recorded in"],
                          [[c.name, _threshold(c), c.before or "-", c.measured,
                            BADGE[c.verdict], _ref(c.source)] for c in report.criteria])
        else:
            out += _table(["criterion", "threshold (source)", "measured", "result",
                           "recorded in"],
                          [[c.name, _threshold(c), c.measured, BADGE[c.verdict],
                            _ref(c.source)] for c in report.criteria])
    if report.other_criteria:
        out += ["## Other ports read by the same probes (not part of this repair)", "",
                "A probe read the whole device (every port of the leaf); these rows are its "
                "other ports. They do not decide this repair's result: a port failing here "
                "is a separate problem to follow up.", ""]
        out += _table(["criterion", "threshold (source)", "measured", "result",
                       "recorded in"],
                      [[c.name, _threshold(c), c.measured, BADGE[c.verdict], _ref(c.source)]
                       for c in report.other_criteria])
    if report.checks:
        out += ["## Runbook checks", ""]
        out += _table(["step", "check", "result", "statement", "recorded in"],
                      [[c.step, c.id, BADGE[c.verdict], c.statement, _ref(c.source)]
                       for c in report.checks])
    if report.curves:
        out += ["## NCCL collectives", ""]
        out += [_image(alt, url) for alt, url in images.get("nccl", [])]
        out += _table(["collective", "on", "ranks", "peak busbw (GB/s)", "expected (GB/s)",
                       "result", "recorded in"],
                      [[c.collective, c.target, str(c.ranks or "-"), _num(c.peak_busbw),
                        _num(c.expected_busbw), BADGE[c.verdict], _ref(c.source)]
                       for c in report.curves])
        out += _size_tables(report)
    if report.pairs:
        out += ["## RDMA pairs", ""]
        out += [_image(alt, url) for alt, url in images.get("rdma", [])]
        out += _table(["client", "server", "avg (Gb/s)", "peak (Gb/s)", "message (B)",
                       "result", "recorded in"],
                      [[p.client, p.server, _num(p.bandwidth_gbps), _num(p.peak_gbps),
                        str(p.message_bytes or "-"), BADGE[p.verdict], _ref(p.source)]
                       for p in report.pairs])
    if report.series:
        out += ["## Counters over time", ""]
        out += [_image(alt, url) for alt, url in images.get("series", [])]
        for series in report.series:
            out += [f"### {_cell(series.metric)} on {_cell(series.component)}", ""]
            out += _table(["time", f"value{' (' + series.unit + ')' if series.unit else ''}",
                           "recorded in"],
                          [[p.at, f"{p.value:g}", _ref(p.source)] for p in series.points])
    if report.before_problems:
        out += ["## Before the repair", ""]
        out += _problems(report.before_problems)
    if report.problems:
        out += ["## " + ("Still failing after the repair" if report.before_problems
                         else "Failures and warnings"), ""]
        out += _problems(report.problems)
    return out


RESULTS = {
    ReportKind.ACCEPTANCE: "Results against the acceptance criteria",
    ReportKind.REPAIR: "Results after the repair, with the readings before it",
    ReportKind.INCIDENT: "Readings against their thresholds",
}


def _threshold(criterion: Criterion) -> str:
    """The threshold cell: the limits and rule, then where they come from."""
    source = f" (source: {criterion.reference})" if criterion.reference else ""
    return criterion.requirement + source


SIZE_COLUMNS = 8
"""Runs side by side in one busbw-by-size table; more runs get further tables."""


def _size_tables(report: Report) -> list[str]:
    """busbw by message size, one table per collective and rank count, a column per run."""
    groups: dict[tuple[str, int | None], list[Curve]] = {}
    for curve in report.curves:
        if len(curve.points) > 1:
            groups.setdefault((curve.collective, curve.ranks), []).append(curve)
    out: list[str] = []
    for (collective, ranks), curves in groups.items():
        for start in range(0, len(curves), SIZE_COLUMNS):
            chunk = curves[start:start + SIZE_COLUMNS]
            sizes = sorted({p.size_bytes for c in chunk for p in c.points})
            values = [{p.size_bytes: p.busbw for p in c.points} for c in chunk]
            out += [f"### {_cell(collective)}" + (f", {ranks} ranks" if ranks else "") +
                    ": busbw (GB/s) by message size", ""]
            out += _table(["size (B)", *(c.target for c in chunk)],
                          [[str(size), *(_num(v.get(size)) for v in values)]
                           for size in sizes])
    return out


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c if isinstance(c, _Markup) else _cell(c) for c in row) + " |"
              for row in rows]
    return [*lines, ""]


def _cell(text: str) -> str:
    """One line of table-safe text: `|` escaped, and `<` too, so that a recorded value such
    as `10.0.5.12<48213>` is never read as HTML."""
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|") \
        .replace("<", "\\<").replace("[", "\\[")


class _Markup(str):
    """Markdown this module wrote itself (a link): put in a table as it is."""


def _code(text: str) -> str:
    """`text` as one code span it cannot leave: on one line, fenced by more backticks than any
    run it holds (a backtick in a recorded value does not end the span early)."""
    text = " ".join(str(text).split())
    if not text:
        return "` `"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _anchor(source: Source) -> str:
    """The source's anchor id, with only the characters an id and a `#` link carry as is."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", source.anchor())


def _ref(source: Source) -> str:
    # Session and block each in a code span of its own (the cell breaks between them).
    if source.block and _ONE_SESSION.get():
        label = _code(source.block)
    else:
        label = _code(source.session) + (f" / {_code(source.block)}" if source.block else "")
    return _Markup(f"[{label}](#{_anchor(source)})" if _LINKS.get() else label)


def _image(alt: str, url: str) -> str:
    """A figure the report drew itself (`url` is its data); the alt text names recorded things
    (a collective), so it is escaped, `]` too, which would end it."""
    return f"![{_cell(alt).replace(']', chr(92) + ']')}]({url})\n"


_BACKTICKS = re.compile(r"`+")
_INLINE_ESCAPE = re.compile(r"[\\<\[\]`]")


def _prose(text: str) -> str:
    """A case's markdown prose with its structure kept (paragraphs, lists, tables, code) and
    nothing that reaches outside the report: outside code, `\\`, `<`, `[`, `]` and unpaired
    backticks are escaped, so no raw HTML, image, link, autolink or link definition survives;
    code blocks and code spans are left as written (markdown shows them literally). A line is
    left as written only if it is code in the text as escaped too (escaping an HTML block can
    make the indented line after it a paragraph's). A fence left open is closed, so it does
    not swallow the rest of the report."""
    lines = text.strip().split("\n")
    code = _code_lines(lines)
    while True:
        out = [line if n in code else _escape_line(line) for n, line in enumerate(lines)]
        kept = code & _code_lines(out)
        if kept == code:
            return "\n".join(out + _open_fence(out))
        code = kept


def _parse(text: str) -> list[Any]:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").parse(text)


def _code_lines(lines: list[str]) -> set[int]:
    """The lines markdown reads as code (fenced or indented blocks, fence lines included)."""
    code: set[int] = set()
    for token in _parse("\n".join(lines)):
        if token.type in ("fence", "code_block") and token.map is not None:
            code.update(range(*token.map))
    return code


_END = "fabtui-end-of-recorded-prose"


def _open_fence(lines: list[str]) -> list[str]:
    """The line that closes a fence `lines` leave open (it would run on over the report)."""
    for token in _parse("\n".join([*lines, "", _END])):
        if token.type == "fence" and _END in token.content:
            return [token.markup]
    return []


def _escape_line(line: str) -> str:
    """One line of prose escaped outside its code spans, cell by cell: a table splits a row at
    every `|`, even inside a code span, so each cell stands on its own."""
    return "|".join(_escape_inline(cell) for cell in line.split("|"))


def _escape_inline(line: str) -> str:
    """One line of prose with everything outside its code spans escaped (see `_prose`)."""
    out: list[str] = []
    runs = list(_BACKTICKS.finditer(line))
    at = 0
    i = 0
    while i < len(runs):
        opener = runs[i]
        closer = next((j for j in range(i + 1, len(runs))
                       if len(runs[j].group()) == len(opener.group())), None)
        if closer is None:  # unpaired on this line: a literal backtick run
            i += 1
            continue
        out.append(_INLINE_ESCAPE.sub(lambda m: "\\" + m.group(), line[at:opener.start()]))
        out.append(line[opener.start():runs[closer].end()])
        at = runs[closer].end()
        i = closer + 1
    out.append(_INLINE_ESCAPE.sub(lambda m: "\\" + m.group(), line[at:]))
    return "".join(out)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"
