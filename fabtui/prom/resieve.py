"""Which devices a refresh sieves: only those scraped since their last sieve.

Prometheus's samples change only when their target is scraped (every 15-60 s) while the live view
refreshes every second, so evaluating the sieve (`fabtui.prom.sieve`) over every series at every
refresh (~770,000 at 1,024 nodes: most of a refresh's cost, Prometheus's) reads the same samples
again and again. A refresh sieves instead the devices whose device clock (newest sample time)
moved since their last sieve, by the labels of their scrape targets, and keeps every other
device's last answer: a gauge's value is its last sample, and a counter's `rate()` over the same
samples changes only by Prometheus's extrapolation to the window's moving end (bounded by 1.1
scrape intervals; it can rise only for a series younger than the window or a counter that began
at zero inside it), so a device's verdict is re-decided when it has new samples to judge, within
one scrape interval. An element kind is sieved whole (its old answers dropped) on the first
refresh and every `WHOLE_EVERY` refreshes (a device without clock series, a device gone); where
most of its devices moved at once (one target serving a whole family) they are sieved a slice
a refresh (`SLICES`), judged up to 3 s after their scrape instead of at once.
The full read of the elements named stays fresh every refresh (`fabtui.workspace.promsource`).

With a `budget` (elements a refresh sieves of devices never sieved), the first sieve is spread
instead: each refresh sieves the next devices in a stable hash order, all of a device's kinds
together, until the budget is spent (one device at least); the devices not sieved yet are
`unsieved`, not judged (the source shows them so, never ok), and are sieved before any kind is
sieved whole again. Evaluating every series once is most of a first refresh at 1,024 nodes
(~5 CPU-s of Prometheus's): spread, no refresh waits for all of it.

With a budget every refresh's sieve is bounded by it (elements, one device at least of each of
these that waits), in this order: the devices scraped since their last sieve (a family scraped
at once is sieved over ceil(its elements / budget) refreshes instead of `SLICES`; while devices
never sieved wait, half the budget at most: at a slow Prometheus's paced budget of 500 they
took all of it and no device was judged for the first time but one a refresh, 101 refreshes
not enough); the devices never sieved; the devices waiting for their kind's turn (below). A
device scraped since and not sieved again yet keeps its last answer, and the source dates its
quiet marks by the clock that answer was taken at (`clocks`), not by its newer scrape.

With a budget the periodic whole sieve is spread too (a whole kind in one refresh was 1.5-2.2
CPU-s of Prometheus's at 1,024 nodes, the slowest refreshes): at a kind's turn its dated
devices are sieved again over the next refreshes (`resweep`), in the same hash order, within
what the budget leaves after that refresh's devices never sieved and devices that moved (one
device at least): a kind of E elements is swept within ceil(E / budget) refreshes when nothing
else is sieved, at most one refresh per device. A device waiting for it keeps its last answer,
which was taken at its current clock (a device scraped since is sieved at once, as always): as
fresh as between two whole sieves before. What the whole sieve alone caught is asked at the
turn itself: the series of devices no clock dates (`outside`: the source asks which targets
have series outside the dated devices' labels, one query, and sieves those targets only), and
the devices no longer dated are dropped.

No I/O and no PromQL: the source builds and asks the queries; this keeps what was answered.
Memory: one entry per device the last sieves named (the elements near a limit), bounded by the
fabric.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fabtui.model.element import device_of
from fabtui.prom.catalog import Element, Mapped
from fabtui.prom.client import Sample
from fabtui.prom.labels import Resolver

WHOLE_SHARE = 0.5
"""While at least this share of an element kind's devices moved (one scrape target serving a
whole exporter family: all its devices move at once), a refresh sieves one of `SLICES` slices
of them (by a stable hash), so that no refresh asks about the whole family."""

SLICES = 4
"""See `WHOLE_SHARE`: a family's devices are sieved over 3-4 refreshes after its scrape."""

WHOLE_EVERY = 120
"""Each element kind is sieved whole at least this often (refreshes; kinds take turns), for the
devices no clock dates."""

Plan = dict[Element, set[str] | None]
"""Per element kind, the devices this refresh sieves (None: the whole kind; empty: none)."""


def device_times(kinds: Iterable[Element], answers: list[list[Sample]],
                 resolver: Resolver) -> dict[Element, dict[str, float]]:
    """Per element kind, each device's newest sample time (the device clocks' `answers`)."""
    found: dict[Element, dict[str, float]] = {}
    for element, samples in zip(kinds, answers, strict=True):
        times = found.setdefault(element, {})
        for sample in samples:
            device = resolver.device(element, sample.labels)
            if device is not None:
                times[device] = max(times.get(device, 0.0), sample.value)
    return found


@dataclass
class SieveMemory:
    """See the module docstring: the last sieve answer of every device, refresh after refresh."""

    budget: int | None = None
    """Elements a refresh sieves of devices never sieved (None: each kind whole at once on
    the first refresh); see the module docstring."""
    round: int = 0
    clocks: dict[Element, dict[str, float]] = field(default_factory=dict)
    """Per element kind, each device's newest sample time when it was last sieved."""
    answers: dict[Element, dict[str, dict[str, list[Sample]]]] = field(default_factory=dict)
    """Per element kind, per device, per mapping key: the sieve's samples about its elements."""
    unsieved_kinds: set[Element] = field(default_factory=set)
    """The kinds with devices never sieved after the last `plan` (a spread first sieve)."""
    resweep: dict[Element, set[str]] = field(default_factory=dict)
    """With a budget: per kind, the dated devices its periodic sieve (its turn) has not sieved
    again yet (see the module docstring)."""
    turned: set[Element] = field(default_factory=set)
    """With a budget: the kinds whose turn the last `plan` was: the source asks their sieves of
    the series outside the dated devices and hands the answers to `record_outside`."""
    outside: dict[Element, dict[str, list[Sample]]] = field(default_factory=dict)
    """Per kind, per mapping key: the last turn's sieve samples of series outside the dated
    devices (a device without clock series)."""
    clockless: set[Element] = field(default_factory=set)
    """The kinds the last `plan` sieved whole because no clock dates them."""
    spent: int = 0
    """With a budget: the elements the last `plan` sieves (`sizes`; the budget's use, which
    the source's pacing, `fabtui.prom.pace`, judges a refresh by)."""

    def whole_ahead(self, kinds: Iterable[Element]) -> set[Element]:
        """The kinds of `kinds` the next `plan` sieves whole whatever the clocks say (never
        sieved, or their turn; with a `budget`, none: the first sieve and the turns are
        spread): their sieve can be asked before the clocks are answered."""
        ordered = sorted(kinds)
        upcoming = self.round + 1
        if self.budget is not None:  # spread: a kind's turn is spread too, never whole
            return set()
        return {element for turn, element in enumerate(ordered)
                if self.clocks.get(element) is None or (
                    self._due(upcoming, turn, len(ordered)))}

    @staticmethod
    def _due(round_no: int, turn: int, kinds: int) -> bool:
        """Whether refresh `round_no` is the turn (`turn` of `kinds`) of a kind to be sieved
        whole (every `WHOLE_EVERY` refreshes)."""
        return round_no > 1 and (round_no - 1) % WHOLE_EVERY == turn * WHOLE_EVERY // kinds

    def unsieved(self, element: Element, devices: Iterable[str]) -> set[str]:
        """Those of `devices` whose `element` kind this memory has never sieved."""
        seen = self.clocks.get(element, {})
        return {device for device in devices if device not in seen}

    def _take(self, waiting: Mapping[str, list[Element]], spent: int,
              sizes: Mapping[tuple[str, Element], int], limit: int | None = None
              ) -> tuple[dict[Element, set[str]], int]:
        """Per kind, the devices of `waiting` (device -> its kinds waiting) this refresh
        sieves: the next in a stable hash order, all of a device's waiting kinds together,
        while `spent` (elements this refresh sieves so far; `sizes`: per (device, kind), its
        elements) is below `limit` (default the budget), one device at least; and what is
        spent then."""
        assert self.budget is not None
        limit = self.budget if limit is None else limit
        picks: dict[Element, set[str]] = {}
        for took, device in enumerate(sorted(waiting, key=lambda d: (zlib.crc32(d.encode()),
                                                                       d))):
            if took and spent >= limit:
                break
            for element in waiting[device]:
                picks.setdefault(element, set()).add(device)
                spent += max(1, sizes.get((device, element), 1))
        return picks, spent

    def plan(self, kinds: Iterable[Element], times: Mapping[Element, Mapping[str, float]],
             sizes: Mapping[tuple[str, Element], int] | None = None) -> Plan:
        """Per element kind of `kinds` (those with a sieve), what this refresh sieves: the
        whole kind (None) when it was never sieved, is due (`WHOLE_EVERY`) or has no clock;
        else the devices whose clock moved (maybe none; a slice of them where most moved).
        With a `budget`: see `_spread`."""
        self.round += 1
        if self.budget is not None:
            return self._spread(sorted(kinds), times, sizes or {})
        plan: Plan = {}
        ordered = sorted(kinds)
        self.clockless = {element for element in ordered if times.get(element) is None}
        for turn, element in enumerate(ordered):
            seen, now = self.clocks.get(element), times.get(element)
            if now is None or seen is None or self._due(self.round, turn, len(ordered)):
                plan[element] = None
                continue
            moved = {device for device, at in now.items() if seen.get(device) != at}
            if moved and len(moved) >= WHOLE_SHARE * len(now):  # a slice of them now
                turn_now = self.round % SLICES
                moved = {d for d in moved if zlib.crc32(d.encode()) % SLICES == turn_now}
            plan[element] = moved
        return plan

    def _spread(self, ordered: list[Element], times: Mapping[Element, Mapping[str, float]],
                sizes: Mapping[tuple[str, Element], int]) -> Plan:
        """`plan` with a budget: only a kind without clocks is sieved whole (`clockless`).
        Each refresh sieves, by the budget (`_take`: elements, one device at least of each
        of these that waits): the devices scraped since their last sieve (half the budget at
        most while devices never sieved wait); then those never sieved (the others stay
        `unsieved`, their kinds in `unsieved_kinds`); then those waiting for their kind's turn
        (`resweep`; a kind's turn, once none is unsieved, starts it and puts the kind in
        `turned`). A device left waiting keeps its last answer, taken at its clock then (the
        source dates its quiet marks so)."""
        plan: Plan = {}
        unsieved_before = bool(self.unsieved_kinds)
        self.unsieved_kinds, self.turned, self.clockless = set(), set(), set()
        moved: dict[str, list[Element]] = {}
        never: dict[str, list[Element]] = {}
        for turn, element in enumerate(ordered):
            seen, now = self.clocks.get(element), times.get(element)
            if now is None:
                plan[element] = None
                self.clockless.add(element)
                continue
            plan[element] = set()
            if self._due(self.round, turn, len(ordered)) and seen and not unsieved_before:
                self.resweep[element] = set(now)  # its turn
                self.turned.add(element)
            seen = seen or {}
            for device, at in now.items():
                if device not in seen:
                    never.setdefault(device, []).append(element)
                elif seen[device] != at:
                    moved.setdefault(device, []).append(element)
        # while devices never sieved wait, those scraped since take half the budget at most:
        # a slow Prometheus's paced budget (`fabtui.prom.pace`) was all theirs (40,960
        # elements scraped a minute at 1,024 nodes), and no device was judged for the first
        # time but one a refresh
        assert self.budget is not None
        picks, spent = self._take(moved, 0, sizes, self.budget // 2 if never else None)
        first, spent = self._take(never, spent, sizes)
        for device, elements in never.items():
            for element in elements:
                if device not in first.get(element, ()):
                    self.unsieved_kinds.add(element)
        again: dict[str, list[Element]] = {}
        for element in list(self.resweep):
            now = times.get(element, {})
            left = {d for d in self.resweep[element]
                    if d in now and element not in moved.get(d, ())}
            self.resweep[element] = left
            for device in left:
                again.setdefault(device, []).append(element)
        swept, self.spent = self._take(again, spent, sizes)
        for chosen in (picks, first, swept):
            for element, devices in chosen.items():
                plan[element] = (plan[element] or set()) | devices
        for element, devices in swept.items():
            self.resweep[element] -= devices
        self.resweep = {element: left for element, left in self.resweep.items() if left}
        return plan

    def record(self, element: Element, devices: set[str] | None,
               answers: Mapping[str, list[Sample]], mapped: Iterable[Mapped],
               resolver: Resolver, times: Mapping[str, float]) -> None:
        """The sieve's `answers` (by mapping key) for `devices` of `element` (None: all of the
        kind) in place of what was kept of them; `times`: their clocks now."""
        kinds = {m.key: m.element for m in mapped}
        fresh: dict[str, dict[str, list[Sample]]] = {}
        for key, samples in answers.items():
            for sample in samples:
                name = resolver.element(kinds[key], sample.labels)
                if name is None:
                    continue
                device = device_of(name)
                if devices is None or device in devices:
                    fresh.setdefault(device, {}).setdefault(key, []).append(sample)
        kept = self.answers.setdefault(element, {})
        clocks = self.clocks.setdefault(element, {})
        if devices is None:
            kept.clear()
            clocks.clear()
            clocks.update(times)
            self.outside.pop(element, None)
            self.resweep.pop(element, None)
        else:
            for device in devices:
                kept.pop(device, None)
                if device in times:
                    clocks[device] = times[device]
        kept.update(fresh)

    def record_outside(self, element: Element, answers: Mapping[str, list[Sample]],
                       times: Mapping[str, float]) -> None:
        """At `element`'s turn (`turned`): the sieve's `answers` (by mapping key) about the
        series outside the dated devices, in place of the last turn's; and the devices no
        longer dated (not in `times`: gone, or without clock series, whose series those
        answers now cover) forgotten, as a whole sieve forgot them."""
        self.outside[element] = {key: list(samples) for key, samples in answers.items()
                                 if samples}
        kept = self.answers.get(element, {})
        clocks = self.clocks.get(element, {})
        for device in [d for d in {*kept, *clocks} if d not in times]:
            kept.pop(device, None)
            clocks.pop(device, None)

    def by_key(self) -> dict[str, list[Sample]]:
        """Every kept sieve sample, by mapping key: what the refresh reads in full."""
        merged: dict[str, list[Sample]] = {}
        for devices in self.answers.values():
            for keys in devices.values():
                for key, samples in keys.items():
                    merged.setdefault(key, []).extend(samples)
        for keys in self.outside.values():
            for key, samples in keys.items():
                merged.setdefault(key, []).extend(samples)
        return merged
