"""What the probe console shows of a result, headless: its tables, its verdict counts, and the
busbw-vs-size series of an nccl-tests run with the expected figure for the hardware.

The tables are the parser's own (`tables(result)`, the columns `fabtui parse --table` prints)
followed by the metrics table (verdict, component, metric, value, unit), so a probe whose parser
describes no table still reads as one. Pure functions over a `ProbeResult`; no I/O.
"""

from __future__ import annotations

import shlex
from collections import Counter
from dataclasses import dataclass

from pydantic import ValidationError

from fabtui.model.probe import ProbeDef, ProbeResult
from fabtui.model.table import Table, left, right
from fabtui.model.verdict import Verdict

METRICS_COLUMNS = (left("verdict"), left("component"), left("metric"), right("value"),
                   left("unit"))
"""The verdict first: on a narrow terminal it stays in view."""


def parse_request(text: str) -> tuple[str, dict[str, str]]:
    """What the console's target field says: a target (or target set) and `name=value`
    parameters, shell-quoted when a value has spaces (`node001 path='/var/log/my job.log'`).
    Raises ValueError with a one-line reason (two targets, unbalanced quotes, `=value`)."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"cannot read {text!r}: {exc}") from None
    targets = [w for w in words if "=" not in w]
    if len(targets) > 1:
        raise ValueError(f"one target or target set, not {len(targets)} ({' '.join(targets)}): "
                         "a list is written node001,node002")
    params: dict[str, str] = {}
    for word in words:
        if "=" in word:
            name, _, value = word.partition("=")
            if not name:
                raise ValueError(f"{word!r}: a parameter is name=value")
            params[name] = value
    return (targets[0] if targets else ""), params


def result_tables(result: ProbeResult, definition: ProbeDef | None) -> list[Table]:
    """The parser's tables of `result` (none when it has no parse or describes none), then the
    metrics table. A parse the model no longer reads gives a note instead of a crash."""
    tables: list[Table] = []
    if result.parsed is not None and definition is not None and definition.parser:
        from fabtui.parsers import registry

        try:
            parser = registry.get(definition.parser)
            own = parser.tables(parser.model.model_validate(result.parsed))
        except (KeyError, ValidationError) as exc:
            own = [Table.build((), title=[f"cannot tabulate the parse: {exc}".splitlines()[0]])]
        tables += own or []
    tables.append(Table.build(METRICS_COLUMNS, [
        (m.verdict.value, m.component, m.name,
         m.value if not isinstance(m.value, bool) else str(m.value), m.unit)
        for m in result.metrics], title=["metrics"]))
    return tables


def sweep_why(result: ProbeResult) -> str:
    """A sweep row's reason, in one line: the error's first line, else the first finding's,
    saying how much more there is (`(+2 lines)`, `(+3 more findings)`): the result panel
    under the sweep shows all of it, whole."""
    reasons = [result.error] if result.error else [f.message for f in result.findings]
    if not reasons:
        return ""
    lines = reasons[0].splitlines() or [""]
    more = [f"+{len(lines) - 1} line{'s' if len(lines) > 2 else ''}"] if len(lines) > 1 else []
    if len(reasons) > 1:
        more.append(f"+{len(reasons) - 1} more finding{'s' if len(reasons) > 2 else ''}")
    return lines[0] + (f" ({', '.join(more)})" if more else "")


def verdict_counts(results: list[ProbeResult]) -> dict[Verdict, int]:
    """How many results of each verdict, worst first (for the badges line)."""
    return worst_first(Counter(r.verdict for r in results))


def worst_first(counts: Counter[Verdict]) -> dict[Verdict, int]:
    """`counts` ordered worst verdict first (a sweep keeps its tally as results arrive)."""
    return {v: counts[v] for v in sorted(counts, key=lambda v: -v.rank)}


@dataclass(frozen=True)
class BusbwSeries:
    """busbw (GB/s, out of place) per message size (bytes) of one nccl-tests run."""

    collective: str
    points: tuple[tuple[int, float], ...]
    """(size in bytes, busbw in GB/s), sizes ascending."""
    expected: float | None
    """The healthy figure for this hardware (metric `busbw_expected`), None when unknown."""
    basis: str = ""


def busbw_series(result: ProbeResult) -> BusbwSeries | None:
    """The series of an nccl-tests result; None for any other result or an empty run."""
    parsed = result.parsed or {}
    if parsed.get("kind") != "nccl-tests":
        return None
    points = []
    for row in parsed.get("rows") or ():
        busbw = (row.get("out_of_place") or {}).get("busbw")
        size = row.get("size_bytes")
        if isinstance(busbw, int | float) and isinstance(size, int) and size > 0:
            points.append((size, float(busbw)))
    if not points:
        return None
    expected = next((m for m in result.metrics if m.name == "busbw_expected"), None)
    value = expected.value if expected is not None else None
    return BusbwSeries(str(parsed.get("collective") or "?"), tuple(sorted(points)),
                       float(value) if isinstance(value, int | float) else None,
                       expected.source or "" if expected is not None else "")
