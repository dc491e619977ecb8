"""A report as one self-contained HTML file: no network (styles inline, plots embedded as PNG
data), printable to PDF from a browser. The body is the markdown report (which escapes recorded
text) rendered with raw HTML disabled and only the report's own anchors and plots allowed as
links and images, so nothing recorded in a session or a case can inject markup or make the
page fetch anything; figures link to the source list."""

from __future__ import annotations

import base64
import html
import re
from collections import defaultdict

from fabtui.model.report import Curve, Report, Series
from fabtui.model.verdict import Verdict
from fabtui.reports.markdown import Images, headline, render_markdown

SERIES_PLOTS = 2
"""Counter timelines drawn (the rest are tables): each plot costs ~0.2 s."""
_ANCHOR = re.compile(r"\[\[anchor:([A-Za-z0-9_.-]+)\]\]")
_BADGE_CELL = re.compile(r"<td>(PASS|WARN|FAIL|ERROR|SKIPPED|ABORTED|CANCELLED)</td>")

FONTS = ('system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", '
         '"Source Han Sans SC", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", '
         '"WenQuanYi Zen Hei", "Noto Sans CJK TC", "PingFang TC", "Microsoft JhengHei", '
         'sans-serif')
"""The report's fonts: the platform's UI font, then fonts that carry Chinese (Simplified and
Traditional: cases and symptoms are written in both) on Linux, macOS and Windows, so a Chinese
case never shows as empty boxes where one of them is installed (Debian: fonts-noto-cjk)."""

STYLE = """
body { font: 14px/1.45 FONTS; color: #1b1f24;
       max-width: 1100px; margin: 2em auto; padding: 0 1.5em; }
h1 { font-size: 1.7em; border-bottom: 2px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 12.5px; width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
code { font: 12px ui-monospace, "SFMono-Regular", Menlo, monospace, "Noto Sans Mono CJK SC",
       "Noto Sans CJK SC"; background: #f6f8fa;
       padding: 0 3px; border-radius: 3px; }
blockquote { border-left: 4px solid #d4a72c; background: #fff8c5; margin: 1em 0;
             padding: .4em 1em; }
img { max-width: 100%; }
td.v-ok { color: #1a7f37; font-weight: 600; } td.v-warn { color: #9a6700; font-weight: 600; }
td.v-fail, td.v-error, td.v-aborted, td.v-cancelled { color: #cf222e; font-weight: 700; }
.verdict { display: inline-block; padding: .2em .8em; border-radius: 4px; color: white;
           font-weight: 700; }
.verdict.ok { background: #1a7f37; } .verdict.warn { background: #9a6700; }
.verdict.fail, .verdict.error { background: #cf222e; }
footer { margin-top: 3em; color: #57606a; font-size: 12px; }
@media print { body { max-width: none; margin: 0; } h2 { page-break-after: avoid; }
               table, img { page-break-inside: avoid; } a { color: inherit; } }
""".replace("FONTS", FONTS)


def _footer_from(report: Report) -> str:
    made = [f"sessions {', '.join(s.id for s in report.sessions)}"] if report.sessions else []
    return " and ".join([*made, *([f"case {report.case}"] if report.case else [])]) or \
        "no session"


def render_html(report: Report, *, plots: bool = True) -> str:
    """The report as a complete HTML document; `plots` draws the busbw and RDMA figures."""
    from markdown_it import MarkdownIt

    images = _images(report) if plots else {}
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    renderer.validateLink = _own_link  # type: ignore[method-assign]
    body = renderer.render(render_markdown(report, links=True, images=images))
    body = _ANCHOR.sub(lambda m: f'<a id="{m.group(1)}"></a>', body)
    body = _BADGE_CELL.sub(lambda m: f'<td class="v-{_css(m.group(1))}">{m.group(1)}</td>',
                           body)
    # The headline's result as a coloured badge (markdown has no colour).
    verdict = report.verdict if report.verdict in (Verdict.OK, Verdict.WARN) else Verdict.FAIL
    word = headline(report)
    body = body.replace(f"<strong>Result: {word}</strong>",
                        f'<span class="verdict {verdict.value}">{word}</span>', 1)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(report.title)}</title>\n"
            "<meta name=\"generator\" content=\"fabtui\">\n"
            f"<style>{STYLE}</style>\n</head>\n<body>\n{body}"
            f"<footer>Generated {html.escape(report.generated)} by fabtui from "
            f"{html.escape(_footer_from(report))}.</footer>\n"
            "</body>\n</html>\n")


def _own_link(url: str) -> bool:
    """Whether a link or image may stay one: only the report's own anchors and embedded SVG
    plots (written by `plots`, shown through `<img>`: no script runs, nothing is fetched).
    Recorded text cannot write either (markdown.py escapes it); this keeps any that slipped
    through from linking out or fetching anything: it is shown as text instead."""
    return url.startswith("#") or url.startswith(PLOT_URL_PREFIX)


def _images(report: Report) -> Images:
    from fabtui.reports.plots import busbw_plot, pair_heatmap, series_plot

    images: Images = {}
    by_collective: dict[str, list[Curve]] = defaultdict(list)
    for curve in report.curves:
        if len(curve.points) > 1:
            by_collective[curve.collective].append(curve)
    for collective, curves in by_collective.items():
        images.setdefault("nccl", []).append(
            (f"{collective} busbw by message size", _data_url(busbw_plot(collective, curves))))
    if len(report.pairs) > 1:
        images["rdma"] = [("RDMA bandwidth per pair", _data_url(pair_heatmap(report.pairs)))]
    by_metric: dict[str, list[Series]] = defaultdict(list)
    for series in report.series:
        by_metric[series.metric].append(series)
    images["series"] = [(f"{metric} over time", _data_url(series_plot(metric, group)))
                        for metric, group in list(by_metric.items())[:SERIES_PLOTS]]
    return images


PLOT_URL_PREFIX = "data:image/svg+xml;base64,"


def _data_url(svg: str) -> str:
    return PLOT_URL_PREFIX + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def _css(badge: str) -> str:
    return {"PASS": "ok"}.get(badge, badge.lower())
