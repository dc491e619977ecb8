"""The slow-job analysis as a face shows it (issue 39), without Textual: the step-time timeline
as a sparkline with the episodes marked under it, the chains as rows (an episode, its hops, its
verdict), a hop's evidence as text, the elements to mark on the Fabric view and the runbook
for the deepest element the evidence confirms.

Nothing is cut silently: the sparkline folds samples into columns by their maximum (a one-sample
spike stays visible) and the legend gives the full range and the fold; a long element name is
kept whole (rows wrap in the face, they are not truncated here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabtui.model.slowjob import Hop, SlowChain, SlowJobReport
from fabtui.runbooks.library import Library
from fabtui.views.crosslinks import Place, RunbookChoice, fill_inputs
from fabtui.views.fabricmap import FabricMap

BARS, ASCII_BARS = "▁▂▃▄▅▆▇█", "_.-=+*#@"
CONFIRMED = 0.6
"""A hop at or above this confidence counts as confirmed by the evidence (the engine's 0-1
scale); below it, it is a lead, not a finding."""


@dataclass(frozen=True)
class Timeline:
    """The job's step time drawn in `width` columns."""

    spark: str
    marks: str
    """Under each column: the number of the episode it falls in (1-9, `+` past 9), else a
    blank."""
    low: float
    high: float
    per_column: int
    """Samples folded into one column (their maximum is drawn)."""
    samples: int

    def legend(self, baseline: float | None) -> str:
        fold = f"{self.per_column} samples a column (their max)" if self.per_column > 1 \
            else "one sample a column"
        base = f", baseline {baseline:.3g} s" if baseline is not None else ""
        return (f"step time {self.low:.3g}-{self.high:.3g} s{base}; {self.samples} samples, "
                f"{fold}; digits: episodes")


def headline(report: SlowJobReport) -> str:
    """One line on what the analysis found (the engine's full summary is the episode's
    detail): the job, the episodes, the first verdict."""
    if not report.chains:
        return f"job {report.job}: {report.summary}"
    first = report.chains[0].verdict
    where = f" {first.layer} {first.element}" if first.element and first.layer else ""
    more = f" (+{len(report.chains) - 1} more)" if len(report.chains) > 1 else ""
    return (f"job {report.job}: {len(report.chains)} episode(s), baseline "
            f"{report.baseline_s:.3g} s; episode 1 → {first.kind}{where}{more}"
            if report.baseline_s is not None else f"job {report.job}: {report.summary}")


def timeline(report: SlowJobReport, width: int, *, ascii_only: bool = False) -> Timeline | None:
    """The sparkline of the report's step time in at most `width` columns (None: no step
    time)."""
    series = report.timeline
    if series is None or not series.v or width < 1:
        return None
    values = [v for v in series.v if math.isfinite(v)]
    if not values:
        return None
    per = max(1, math.ceil(len(series.v) / width))
    low, high = min(values), max(values)
    bars = ASCII_BARS if ascii_only else BARS
    spark, marks = [], []
    for start in range(0, len(series.v), per):
        chunk = [v for v in series.v[start:start + per] if math.isfinite(v)]
        if not chunk:
            spark.append(" ")
        else:
            level = 0 if high <= low else round((max(chunk) - low) / (high - low) * (len(bars) - 1))
            spark.append(bars[level])
        t0, t1 = series.t[start], series.t[min(start + per, len(series.t)) - 1]
        found = next((n for n, c in enumerate(report.chains, 1)
                      if c.episode.start <= t1 and c.episode.end >= t0), None)
        marks.append(" " if found is None else (str(found) if found < 10 else "+"))
    return Timeline("".join(spark), "".join(marks), low, high, per, len(values))


@dataclass(frozen=True)
class Row:
    """One row of the chain list: an episode's head, one of its hops, or its verdict."""

    episode: int
    """0-based index into `report.chains`."""
    hop: int | None
    """Index into the chain's hops; None for the head and verdict rows."""
    text: str
    kind: str
    """`episode`, `hop` or `verdict`."""


def _clock(t: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).strftime("%H:%M")


def _size(chain: SlowChain) -> str:
    e = chain.episode
    return f"+{e.magnitude:.0%}" if e.kind == "slow" else f"jitter {e.magnitude:.0%}"


def rows(report: SlowJobReport, *, ascii_only: bool = False) -> list[Row]:
    """The chains top to bottom: per episode its head, its hops (● confirmed, ○ a lead), its
    verdict."""
    out: list[Row] = []
    sure, lead, arrow = ("*", "o", "->") if ascii_only else ("●", "○", "→")
    for n, chain in enumerate(report.chains):
        e = chain.episode
        out.append(Row(n, None, f"{n + 1} {e.kind} {_clock(e.start)}-{_clock(e.end)} UTC "
                                f"{_size(chain)}", "episode"))
        for i, hop in enumerate(chain.hops):
            glyph = sure if hop.confidence >= CONFIRMED else lead
            name = hop.element if hop.element.startswith(hop.layer) else \
                f"{hop.layer} {hop.element}"
            out.append(Row(n, i, f"  {glyph} {name} {hop.confidence:.0%}", "hop"))
        v = chain.verdict
        where = f" {v.layer} {v.element}" if v.element and v.layer else ""
        cause = f" ({v.cause})" if v.cause else ""
        out.append(Row(n, None, f"  {arrow} {v.kind}{cause}:{where or ' -'}", "verdict"))
    return out


def detail(report: SlowJobReport, row: Row) -> str:
    """What the selected row stands on: a hop's claim, evidence, counter-evidence and the
    check that confirms it; an episode's numbers; a verdict's summary."""
    chain = report.chains[row.episode]
    if row.kind == "episode":
        e = chain.episode
        return (f"episode {row.episode + 1}: {e.kind}, median {e.median_s:.3g} s against a "
                f"baseline of {e.baseline_s:.3g} s ({_size(chain)}), {e.samples} samples\n"
                f"{report.summary}")
    if row.kind == "verdict" or row.hop is None:
        v = chain.verdict
        return f"{v.kind}: {v.summary} (confidence {v.confidence:.0%})"
    hop = chain.hops[row.hop]
    name = hop.element if hop.element.startswith(hop.layer) else f"{hop.layer} {hop.element}"
    lines = [f"{name}: {hop.claim} (confidence {hop.confidence:.0%})"]
    lines += [f"+ {e}" for e in hop.evidence]
    lines += [f"- {c}" for c in hop.counter_evidence]
    if hop.probe is not None:
        lines.append(f"check: {hop.probe.command}")
        if hop.probe.runbook:
            lines.append(f"runbook: {hop.probe.runbook}")
    return "\n".join(lines)


def deepest_confirmed(report: SlowJobReport, episode: int = 0) -> Hop | None:
    """The deepest hop of an episode's chain the evidence confirms (`CONFIRMED`), or None."""
    if not 0 <= episode < len(report.chains):
        return None
    return next((h for h in reversed(report.chains[episode].hops)
                 if h.confidence >= CONFIRMED), None)


def runbook_name(report: SlowJobReport, episode: int = 0) -> str | None:
    """The runbook for an episode's deepest confirmed element: its hop's own, else the nearest
    one above it that names one (None: no confirmed hop names a runbook)."""
    deepest = deepest_confirmed(report, episode)
    if deepest is None:
        return None
    hops = report.chains[episode].hops
    for hop in reversed(hops[:hops.index(deepest) + 1]):
        if hop.probe is not None and hop.probe.runbook:
            return hop.probe.runbook
    return None


def mark_keys(fabric: FabricMap, report: SlowJobReport, limit: int = 32) -> list[str]:
    """The fabric-map elements the chains name (verdict elements first, then hops deepest
    first); names the map does not know (`rail 3`, a communicator) are skipped."""
    keys: list[str] = []
    for chain in report.chains:
        for element in (chain.verdict.element, *(h.element for h in reversed(chain.hops))):
            if element and element in fabric.kinds and element not in keys:
                keys.append(element)
    return keys[:limit]


def place_of(fabric: FabricMap, element: str) -> Place:
    """Where an element of a chain is, as runbook inputs name it. An optic on a switch-to-switch
    cable has no host cell: its place is the ports its cable plugs into (the leaf's first,
    where the optic-replacement runbook starts)."""
    place = Place.of_element(fabric, element) if element in fabric.kinds else \
        Place(element=element)
    if place.port is None:
        ports = sorted((k for k in fabric.kinds if fabric.optic_of(k) == element),
                       key=lambda k: (not k.startswith("leaf"), k))
        if ports:
            leaf = ports[0].partition(":")[0]
            return Place(node=place.node, nic=place.nic, port=ports[0],
                         leaf=leaf if fabric.kinds.get(leaf) is not None and
                         leaf.startswith("leaf") else place.leaf,
                         optic=element, element=element)
    return place


def runbook_choice(library: Library, fabric: FabricMap, report: SlowJobReport,
                   episode: int = 0) -> RunbookChoice | None:
    """The runbook for the deepest confirmed element of an episode, its inputs filled from
    where that element is (None: no confirmed hop names a runbook the library has)."""
    name = runbook_name(report, episode)
    deepest = deepest_confirmed(report, episode)
    book = library.get(name) if name else None
    if book is None or deepest is None:
        return None
    place = place_of(fabric, deepest.element)
    return RunbookChoice(name or "", book.title, fill_inputs(book, place),
                         f"slow job {report.job}: {deepest.layer} {deepest.element} — "
                         f"{deepest.claim}")
