"""A report as markdown that reads well on a code-hosting site: headings, tables, and each
figure's session / block beside it. Pure text; no plots (HTML embeds those)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextvars import ContextVar

from fabtui.model.report import Curve, Report, ReportKind, Source
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
    try:
        return _render(report, images or {})
    finally:
        _LINKS.reset(token)


_LINKS: ContextVar[bool] = ContextVar("report_links", default=False)
"""Whether source cells link to the source list (set for one render; safe across threads)."""


def _render(report: Report, images: Images) -> str:
    out: list[str] = [f"# {report.title}", "",
                      f"**Result: {headline(report)}** — {_cell(report.conclusion)}", "",
                      f"Generated {report.generated} by fabtui from "
                      f"{len(report.sessions)} session(s).", ""]
    if report.missing:
        out += ["> **Not in this report** (the sessions do not hold it):", ">"]
        out += [f"> - {m}" for m in report.missing] + [""]
    if report.kind is ReportKind.INCIDENT:
        out += _incident(report)
    out += _environment(report)
    out += _method(report)
    if report.kind is not ReportKind.INCIDENT:
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


def _sources(report: Report) -> list[str]:
    """Every session and block a figure links to, each with its anchor marker (the HTML
    renderer turns `[[anchor:ID]]` into an element with that id)."""
    out = ["## Sources", "", "Each figure above links here: the session and block that recorded "
           "it. `fabtui runbook journal SESSION` prints every recorded event of a session.", ""]
    seen: dict[str, Source] = {}
    for source in _all_sources(report):
        seen.setdefault(source.anchor(), source)
    for anchor, source in seen.items():
        where = f"step `{source.step}`, block `{source.block}`" if source.block else "session"
        out.append(f"- [[anchor:{anchor}]] session `{source.session}`: {where}")
    return [*out, ""]


def _all_sources(report: Report) -> Iterable[Source]:
    for s in report.sessions:
        yield Source(session=s.id)
    for group in (report.criteria, report.checks, report.curves, report.pairs, report.failures,
                  report.faults):
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
        out += [f"## {name}", "", text.strip(), ""]
    if report.timeline:
        out += ["## Timeline", ""]
        out += [f"- `{t.at}` {t.what}" + (f" ({_ref(t.source)})" if t.source else "")
                for t in report.timeline] + [""]
    if report.action_items:
        out += ["## Action items", ""] + [f"- [ ] {a}" for a in report.action_items] + [""]
    if report.failures:
        out += ["## Evidence", ""]
        out += _table(["what", "component", "verdict", "recorded in"],
                      [[f.what, f.component or "-", BADGE[f.verdict], _ref(f.source)]
                       for f in report.failures])
    return out


def _environment(report: Report) -> list[str]:
    out = ["## Test environment", ""]
    inv = report.inventory
    if inv is not None:
        out += [f"Cluster **{inv.cluster}** ({inv.fabric}): {inv.nodes} nodes, {inv.links} "
                f"links, {inv.optics} optics recorded in the topology.", ""]
        rows = [["GPU", model, str(count)] for model, count in inv.gpus.items()]
        rows += [["NIC", model, str(count)] for model, count in inv.nics.items()]
        rows += [["NIC port speed", speed, str(count)] for speed, count in inv.speeds.items()]
        rows += [["switch", model, str(count)] for model, count in inv.switches.items()]
        out += ["### Hardware", "", *_table(["kind", "model", "count"], rows)]
    if report.software:
        out += ["### Software", ""]
        out += _table(["component", "version(s) read"],
                      [[k, ", ".join(v)] for k, v in report.software.items()])
    scenarios = {s.scenario for s in report.sessions if s.scenario}
    if scenarios:
        out += [f"Ran on the **demo fabric** (scenario {', '.join(sorted(scenarios))}): "
                "simulated figures.", ""]
    return out


def _method(report: Report) -> list[str]:
    out = ["## Method", ""]
    out += _table(["session", "runbook", "operator", "started", "finished", "status", "probes"],
                  [[s.id, s.title or s.runbook, s.operator or "-", s.started,
                    s.finished or "not finished", s.status, ", ".join(s.probes) or "-"]
                   for s in report.sessions])
    inputs = [(s.id, k, v) for s in report.sessions for k, v in s.inputs.items()]
    if inputs:
        out += ["Parameters:", ""] + [f"- `{sid}` {k} = `{v}`" for sid, k, v in inputs] + [""]
    return out


def _results(report: Report, images: Images) -> list[str]:
    out: list[str] = []
    if report.criteria:
        out += ["## Results against the acceptance criteria", ""]
        out += _table(["criterion", "threshold", "measured", "result", "recorded in"],
                      [[c.name, c.requirement, c.measured, BADGE[c.verdict], _ref(c.source)]
                       for c in report.criteria])
    if report.checks:
        out += ["## Runbook checks", ""]
        out += _table(["step", "check", "result", "statement", "recorded in"],
                      [[c.step, c.id, BADGE[c.verdict], c.statement, _ref(c.source)]
                       for c in report.checks])
    if report.curves:
        out += ["## NCCL collectives", ""]
        out += [f"![{alt}]({url})\n" for alt, url in images.get("nccl", [])]
        out += _table(["collective", "on", "ranks", "peak busbw (GB/s)", "expected (GB/s)",
                       "result", "recorded in"],
                      [[c.collective, c.target, str(c.ranks or "-"), _num(c.peak_busbw),
                        _num(c.expected_busbw), BADGE[c.verdict], _ref(c.source)]
                       for c in report.curves])
        out += _size_tables(report)
    if report.pairs:
        out += ["## RDMA pairs", ""]
        out += [f"![{alt}]({url})\n" for alt, url in images.get("rdma", [])]
        out += _table(["client", "server", "avg (Gb/s)", "peak (Gb/s)", "message (B)",
                       "result", "recorded in"],
                      [[p.client, p.server, _num(p.bandwidth_gbps), _num(p.peak_gbps),
                        str(p.message_bytes or "-"), BADGE[p.verdict], _ref(p.source)]
                       for p in report.pairs])
    if report.series:
        out += ["## Counters over time", ""]
        out += [f"![{alt}]({url})\n" for alt, url in images.get("series", [])]
        for series in report.series:
            out += [f"### {_cell(series.metric)} on {_cell(series.component)}", ""]
            out += _table(["time", f"value{' (' + series.unit + ')' if series.unit else ''}",
                           "recorded in"],
                          [[p.at, f"{p.value:g}", _ref(p.source)] for p in series.points])
    if report.failures:
        out += ["## Failures and warnings", ""]
        out += _table(["what", "component", "result", "recorded in"],
                      [[f.what, f.component or "-", BADGE[f.verdict], _ref(f.source)]
                       for f in report.failures])
    return out


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


def _ref(source: Source) -> str:
    label = f"`{source.label()}`"
    return _Markup(f"[{label}](#{source.anchor()})" if _LINKS.get() else label)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"
