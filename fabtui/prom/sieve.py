"""Which series could cross a threshold: PromQL comparisons derived from the catalog's limits.

At cluster scale a refresh cannot pull and judge every series of every element (a 1,024-node
fabric exports ~800k). The sieve asks Prometheus only for the series that come near a limit:
for each mapped metric, its read query compared with a bound derived from the thresholds of the
probe that judges it (`probes/*.toml`), loosened by `MARGIN` so that nothing the evaluator would
flag slips through (a counter's `delta.*` limit becomes a rate over the probe interval, a
`pause_share` limit a frame rate at the fabric's slowest port, a `pause_ratio` one a pause
duration rate). The sieve gives no verdict: the devices it names are read in full and judged by
the probes' own evaluators (`fabtui.prom.results`); the others are below every limit.

Rules the evaluators apply without a catalog threshold have their own sieve here: a port not up,
an IB port not Active, a row remap pending or failed, any Xid, an optic at the 70 degC fallback.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from fabtui.model.probe import ProbeDef, Threshold
from fabtui.probes.evaluators._optics import TEMPERATURE_WARN_C
from fabtui.prom.catalog import Mapped
from fabtui.topology.expected import pause_share

MARGIN = 0.9
"""Bounds are loosened to this share (above-limits) so a value near the limit is read in full."""

ABSOLUTE = {"sonic.oper_status": "< 1", "infiniband.state_id": "!= 4",
            "dcgm.row_remap_pending": "> 0", "dcgm.row_remap_failure": "> 0",
            "dcgm.xid": "> 0", "sonic.temperature": f">= {TEMPERATURE_WARN_C * MARGIN:g}"}
"""Evaluator rules without a catalog threshold (see the module docstring)."""


def _judged_names(mapped: Mapped) -> list[tuple[str, str]]:
    """(evaluator metric name, how the mapped value relates to it)."""
    field = mapped.field
    if mapped.probe == "switch.pfc":
        return [(f"pause_share.{field}", "pause_share")]
    if field.endswith("_pause_duration"):
        direction, number = field[:2], field.split("prio")[1].split("_")[0]
        return [(f"pause_ratio.{direction}_prio{number}", "pause_ratio")]
    if mapped.counter:
        return [(f"delta.{field}", "delta"), (f"rate.{field}", "rate")]
    return [(field, "gauge")]


def _bounds(name: str, thresholds: list[Threshold]) -> list[Threshold]:
    return [t for t in thresholds if fnmatch.fnmatchcase(name, t.metric)]


def sieve(mapped: Mapped, query: str, probe: ProbeDef | None,
          slowest_gbps: float, ratio_with: str | None = None) -> str | None:
    """`query` compared with the loosest bound that could flag it, or None when nothing about
    this metric is ever judged (a traffic rate, a counter without limits)."""
    if mapped.key in ABSOLUTE:
        return f"{query} {ABSOLUTE[mapped.key]}"
    if probe is None:
        return None
    if mapped.field == "rx_corrected_bits_phy" and ratio_with is not None:
        found = _bounds("pre_fec_ber", probe.thresholds)
        lowest = min((b for t in found for b in (t.warn, t.fail) if b is not None), default=None)
        return None if lowest is None else f"({query} / {ratio_with}) >= {lowest * MARGIN:g}"
    above: list[float] = []
    below: list[float] = []
    for name, how in _judged_names(mapped):
        for threshold in _bounds(name, probe.thresholds):
            for bound in (threshold.warn, threshold.fail):
                if bound is None:
                    continue
                if threshold.direction == "below":
                    below.append(bound)
                    continue
                if how == "delta":  # an int delta over the probe interval: >= 0.5 rounds up
                    bound = max(bound - 0.5, 0.0) / probe.interval
                elif how == "pause_share":  # frames/s at the slowest port's speed
                    bound = bound / pause_share(1.0, slowest_gbps)
                elif how == "pause_ratio":  # microseconds paused per second
                    bound = bound * 1e6
                above.append(bound)
    parts = []
    if above:
        parts.append(f"{query} >= {min(above) * MARGIN:g}")
    if below:
        high = max(below)
        parts.append(f"{query} < {high + abs(high) * (1 - MARGIN):g}")
    return " or ".join(f"({p})" for p in parts) if parts else None


def sieves(mapped: tuple[Mapped, ...], queries: Mapping[str, str],
           catalog: Mapping[str, ProbeDef], slowest_gbps: float) -> dict[str, str]:
    """Mapping key -> its sieve query, for every mapped metric that is ever judged."""
    bits = next((queries[m.key] for m in mapped if m.field == "rx_bits_phy"), None)
    found = {}
    for m in mapped:
        text = sieve(m, queries[m.key], catalog.get(m.probe), slowest_gbps, bits)
        if text is not None:
            found[m.key] = text
    return found
