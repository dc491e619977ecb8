"""The report's SVG plots: well-formed, self-contained, recorded text escaped, the data drawn
inside the axes (the expected line too)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from fabtui.model.report import Curve, CurvePoint, PairResult, Series, SeriesPoint, Source
from fabtui.model.verdict import Verdict
from fabtui.reports.plots import busbw_plot, pair_heatmap, series_plot

SOURCE = Source(session="s1")
HOSTILE = 'rail 4 <script>alert(1)</script> & "x"'


def _parsed(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # raises on anything not well-formed
    assert "href" not in svg and "<script" not in svg  # nothing fetched, nothing run
    return root


def _texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]


def test_busbw_plot_draws_every_curve_and_the_expected_line_inside_the_axes() -> None:
    points = [CurvePoint(size_bytes=2 ** k, busbw=min(370.0, 2 ** (k - 13) * 3.0))
              for k in range(10, 34)]
    curves = [Curve(collective="all_reduce", target="node001-node008", ranks=64, points=points,
                    expected_busbw=360, verdict=Verdict.OK, source=SOURCE),
              Curve(collective="all_reduce", target=HOSTILE, points=points[:5],
                    verdict=Verdict.FAIL, source=SOURCE)]
    root = _parsed(busbw_plot("all_reduce", curves))
    texts = _texts(root)
    assert HOSTILE in texts and "node001-node008 (64 ranks)" in texts
    assert "expected 360" in texts
    lines = list(root.iter("{http://www.w3.org/2000/svg}polyline"))
    assert len(lines) == 2
    height = float(root.get("height", "0"))
    ys = [float(p.split(",")[1]) for line in lines for p in line.get("points", "").split()]
    assert min(ys) >= 30 and max(ys) <= height - 50  # the peak is not drawn off the plot
    # The y axis reaches the highest figure: a tick label at or above 370.
    assert max(float(t) for t in texts if re.fullmatch(r"\d+(\.\d+)?", t)) >= 370


def test_pair_heatmap_writes_each_figure_and_marks_a_missing_one() -> None:
    pairs = [PairResult(client=f"node00{a}", server=f"node00{b}",
                        bandwidth_gbps=None if a == b else (120.0 if a == 3 else 390.0),
                        verdict=Verdict.OK, source=SOURCE)
             for a in range(1, 4) for b in range(1, 4)]
    texts = _texts(_parsed(pair_heatmap(pairs)))
    assert texts.count("n/a") == 3 and texts.count("120") == 2 and texts.count("390") == 4


def test_series_plot_reads_times_with_and_without_a_zone() -> None:
    series = [Series(metric="rx_power", component="node003:mlx5_3 光模块", unit="dBm",
                     points=[SeriesPoint(at="2026-12-05T03:00:00Z", value=-40.0, source=SOURCE),
                             SeriesPoint(at="2026-12-05T03:25:00", value=-1.3, source=SOURCE)])]
    texts = _texts(_parsed(series_plot("rx_power", series)))
    assert "node003:mlx5_3 光模块" in texts and "rx_power (dBm)" in texts
    assert "03:00:00" in texts and "03:25:00" in texts
