"""The PromQL a Prometheus source asks, built from the mapping, the label map and the configured
metric names: pure functions, no I/O and no state.

A mapped metric is read as `sum by (<element labels>) (rate(metric[window]))` (a counter) or
`max by (...) (metric)` (a gauge), of the series some matcher terms select when given (their
union). Devices are dated by `timestamp()` of one series per element kind (`CLOCK_PROBE`): per
element (the presence: which elements have series at all, `fabtui:clock:<kind>` recorded) or per
device (`fabtui:device_clock:<kind>` recorded); `mode = "recorded"` reads those recording rules'
series (`fabtui.prom.rules`) instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from fabtui.prom.catalog import Element, Mapped
from fabtui.prom.labels import LabelMap
from fabtui.prom.rules import clock_name, device_clock_name

CLOCK_PROBE: dict[Element, str] = {"gpu": "dcgm.temperature", "nic": "ethtool.rx_prio3_pause",
                                   "ibport": "infiniband.state_id", "port": "sonic.oper_status"}
"""Per element kind, the series whose `timestamp()` says when its device was last scraped."""


def alternatives(values: Iterable[str]) -> str:
    """A PromQL regex matching exactly `values` (escaped for RE2 inside a string literal)."""
    return "|".join(re.escape(v) for v in sorted(values)).replace("\\", "\\\\")


DISCOVER_SLICES = 6
"""A kind's discovery read of its clock series takes one slice of every series a turn instead of
every series (`discovery_slice`): this many slices, one of them the values never seen."""


def discovery_slice(tail: str, known: Iterable[str], turn: int) -> str | None:
    """The matcher of slice `turn` (of `DISCOVER_SLICES`, in turn) of the series by the value of
    their element label `tail`: of the `known` values (those seen so far), every
    `DISCOVER_SLICES - 1`th from the turn's (a fifth of them); at the last turn the values
    never seen (a negative matcher: its postings merge is done once in the slices' round);
    together every value. None where the slice is empty (fewer known values than slices).
    By the values seen, not by a character of the value: netdevs all end in `np0`
    (`enp12s0f0np0`), ports in an even digit."""
    values = sorted(set(known))
    groups = DISCOVER_SLICES - 1
    slot = turn % DISCOVER_SLICES
    if slot == groups:
        return f'{tail}!~"{alternatives(values)}"' if values else None
    chosen = values[slot::groups]
    return f'{tail}=~"{alternatives(chosen)}"' if chosen else None


def seconds(duration: str) -> float:
    """A PromQL duration (`1m`, `30s`, `2h`) in seconds."""
    return float(duration[:-1]) * {"s": 1, "m": 60, "h": 3600}[duration[-1]]


def selector(metric: str, mapped: Mapped, only: str = "") -> str:
    """The selector of `metric` (the name `mapped` has here), with `only` (a `label=~"..."`
    matcher) added to the mapping's matchers."""
    matchers = ", ".join(m for m in (mapped.matchers, only) if m)
    return f"{metric}{{{matchers}}}"


def query_of(metric: str, mapped: Mapped, labels: LabelMap, window: str,
             only: str | Sequence[str] = "") -> str:
    """The instant query a mapped metric is read with (a counter's rate over `window`); with
    `only`, of the series those matchers select (several terms: the union of their
    selections)."""
    by = ", ".join((*labels.grouping(mapped.element), *mapped.by))
    terms = [only] if isinstance(only, str) else list(only) or [""]
    if mapped.counter:
        read = " or ".join(f"rate({selector(metric, mapped, t)}[{window}])" for t in terms)
    else:
        read = " or ".join(selector(metric, mapped, t) for t in terms)
    return f"sum by ({by}) ({read})" if mapped.counter else f"max by ({by}) ({read})"


def count_query(metric: str, mapped: Mapped, labels: LabelMap) -> str:
    """How many series a mapped metric has per element (`fabtui prom check`)."""
    return f"count by ({', '.join((*labels.grouping(mapped.element), *mapped.by))}) " \
           f"({selector(metric, mapped)})"


def clock_stamps(mapped: Sequence[Mapped], names: Mapping[str, str]) -> dict[Element, str]:
    """Per element kind, `timestamp()` of the series that dates its devices' scrapes (`names`:
    mapping key -> the metric's name here)."""
    found: dict[Element, str] = {}
    for element, key in CLOCK_PROBE.items():
        clock = next((m for m in mapped if m.key == key), None)
        if clock is not None:
            found[element] = f"timestamp({selector(names[clock.key], clock)})"
    return found


def clock_queries(labels: LabelMap, stamps: Mapping[Element, str]) -> dict[Element, str]:
    """Per element kind: when each element's series was last scraped, i.e. which elements
    have series at all (the presence; recorded as `fabtui:clock:<kind>`)."""
    return {element: f"max by ({', '.join(labels.grouping(element))}) ({stamp})"
            for element, stamp in stamps.items()}


def presence_query(element: Element, labels: LabelMap, mapped: Sequence[Mapped],
                   names: Mapping[str, str], *, recorded: bool,
                   terms: Sequence[str] = ("",)) -> str:
    """What the presence of an element kind is read with: its clocks, or (recorded) their
    recorded series; with `terms` (matchers), of the series they select (their union)."""
    if recorded:
        return " or ".join(f"{clock_name(element)}{{{t}}}" if t else clock_name(element)
                           for t in terms)
    clock = next(m for m in mapped if m.key == CLOCK_PROBE[element])
    stamped = " or ".join(f"timestamp({selector(names[clock.key], clock, t)})" for t in terms)
    return f"max by ({', '.join(labels.grouping(element))}) ({stamped})"


def device_clocks_of(labels: LabelMap, inner: Mapping[Element, str]) -> dict[Element, str]:
    """The device clocks aggregated from per-kind `inner` clock expressions."""
    return {element: f"max by ({', '.join(labels.device_grouping(element))}) ({text})"
            for element, text in inner.items()}


def device_clock_queries(labels: LabelMap, stamps: Mapping[Element, str], *,
                         recorded: bool) -> dict[Element, str]:
    """Per element kind: each device's newest sample time, one sample per scrape target
    (~3,000 at 1,024 nodes where the per-element clocks are ~41,000). Recorded: the
    recorded device clocks, a plain selector each."""
    if recorded:
        return {element: device_clock_name(element) for element in stamps}
    return device_clocks_of(labels, stamps)


def recorded_device_clocks(labels: LabelMap, elements: Iterable[Element]) -> dict[Element, str]:
    """The device clocks aggregated from the recorded per-element clocks: the rules of
    `fabtui:device_clock:*`, and what a refresh asks when they are missing."""
    return device_clocks_of(labels, {element: clock_name(element) for element in elements})


def device_clock_query(element: Element, labels: LabelMap, mapped: Sequence[Mapped],
                       names: Mapping[str, str], terms: Sequence[str]) -> str:
    """The device clocks of `element` (`device_clock_queries`) from the clock series that
    `terms` (matchers) select only (their union): one series a device instead of each of its
    elements' (`fabtui.prom.presence.Presence.clock_terms`)."""
    clock = next(m for m in mapped if m.key == CLOCK_PROBE[element])
    stamped = " or ".join(f"timestamp({selector(names[clock.key], clock, t)})" for t in terms)
    return f"max by ({', '.join(labels.device_grouping(element))}) ({stamped})"


def outside_query(element: Element, labels: LabelMap, metrics: Sequence[str],
                  terms: Sequence[str]) -> str:
    """One sample per scrape target (its device labels) that has series of `metrics` (the
    names of `element`'s mapped metrics here) selected by `terms` (`Presence.outside`: the
    negative matchers that leave out every dated device)."""
    names = f'__name__=~"{alternatives(metrics)}"'
    selected = " or ".join(f"{{{names}, {t}}}" for t in terms)
    return f"count by ({', '.join(labels.device_grouping(element))}) ({selected})"
