"""What a Prometheus source keeps between refreshes: which devices are dated and which of their
elements have series at all (the presence), and what the sieve named.

Which elements have series at all (per element, ~41,000 samples at 1,024 nodes) changes rarely: it
is read in full on the first refresh only (which takes the device clocks from it, `device_clocks`,
instead of asking Prometheus to stamp every clock series twice; where the first sieve is spread,
each device's with its first sieve instead, `unread`); after that each refresh re-reads
the elements of a fixed slice of the devices (each device every `PRESENCE_EVERY` refreshes, by a
hash of its name), selected by the labels of their device-clock samples; a device that starts being
dated has its elements read at once, and one that stops has them dropped. So no refresh decodes the
whole presence again (a ~5 MB answer each minute left the heap fragmented: RSS grew at every
re-read). The elements present and not read in full are the sieve's quiet ones (below every limit).
`flagged` turns the sieve's answers into the matchers of the full read.

No I/O: the source (`fabtui.workspace.promsource`) asks the queries and hands the answers here.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from fabtui.model.element import device_of
from fabtui.prom.catalog import Element, Mapped
from fabtui.prom.client import Sample
from fabtui.prom.labels import LabelMap, Resolver
from fabtui.prom.queries import alternatives, discovery_slice
from fabtui.prom.results import Readings

PRESENCE_EVERY = 60
"""Refreshes between two reads of a device's elements that have series at all (its per-element
clocks; ~41,000 samples for the whole fabric at 1,024 nodes, read in full only on the first
refresh): each refresh re-reads a 1/PRESENCE_EVERY slice of the devices."""

Target = tuple[tuple[str, str], ...]
"""A scrape target of a device: its device labels' (`LabelMap.device_grouping`) values."""

Targets = dict[str, list[dict[str, str]]]
"""Per device, the labels of its device-clock samples (one per scrape target of the device:
what a query selects its series by)."""


@dataclass
class Presence:
    """See the module docstring: the dated devices and the presence, refresh after refresh."""

    round: int = 0
    """Refreshes so far (whose slice of the devices is due)."""
    devices: dict[Element, Targets] | None = None
    """Per element kind, the devices the last refresh dated; None before the first refresh."""
    by_device: dict[tuple[str, Element], list[str]] = field(default_factory=dict)
    """The presence per (device, element kind): the elements' keys, sorted."""
    tails: dict[Element, set[str]] = field(default_factory=dict)
    """Per element kind, every value of its element label seen in the presence (`Ethernet0`,
    `enp12s0f0np0`): what a discovery read is sliced by (`discovery_terms`)."""
    read: set[tuple[str, Element]] = field(default_factory=set)
    """The (device, element kind) pairs whose presence was read at least once (`unread`)."""
    firsts: dict[tuple[str, Element], dict[Target, str]] = field(default_factory=dict)
    """Per (device, element kind), per scrape target of it (its device labels' values), the
    first (smallest) value of the element label among its present series (`Ethernet0`,
    `mlx5_0`, `0`): the series that dates the target (`clock_terms`)."""

    def due(self, kinds: Iterable[Element], every: int, *,
            whole: bool = True) -> dict[Element, set[str] | None]:
        """Per element kind (of `kinds`, on the first refresh), the devices whose elements
        this refresh re-reads: every device (None) on the first refresh (none without
        `whole`: the source reads each device's with its first sieve, `unread`), then the
        slice of this refresh (each device once every `every` refreshes; a stable hash, so a
        device keeps its turn whichever others come and go)."""
        self.round += 1
        if self.devices is None:
            return dict.fromkeys(kinds) if whole else {}
        turn = self.round % every
        return {element: due for element, devices in self.devices.items()
                if (due := {d for d in devices if zlib.crc32(d.encode()) % every == turn})}

    def terms(self, element: Element, devices: Iterable[str]) -> list[str]:
        """Matcher terms that select (at least) every series of `devices`, from the labels of
        their device-clock samples: one term per set of label names, `label=~"a|b"` each."""
        known = (self.devices or {}).get(element, {})
        return matchers([{k: v for k, v in target.items() if k != "__name__"}
                         for device in devices for target in known[device]])

    def outside(self, element: Element) -> list[str] | None:
        """Matcher terms that together select the series of `element` outside the dated
        devices (a device without clock series), excluding every dated device's series: per
        label that every dated device's clock samples have, `label!~"<their values>"` (a series
        without the label is selected too); None when no label is common to them all, or none
        is dated (then only the whole kind covers them). Not selected: a series whose every
        such label has a dated value in a combination no device has (a GPU of node A under
        node B's `instance`)."""
        targets = [target for known in (self.devices or {}).get(element, {}).values()
                   for target in known]
        if not targets:
            return None
        common = set.intersection(*({k for k in t if k != "__name__"} for t in targets))
        return sorted(f'{label}!~"{alternatives({t[label] for t in targets})}"'
                      for label in common) or None

    def unread(self, element: Element, devices: Iterable[str]) -> set[str]:
        """Those of `devices` whose elements of `element` were never read (`record`)."""
        return {device for device in devices if (device, element) not in self.read}

    def clock_terms(self, element: Element, tail: str) -> list[str] | None:
        """Matcher terms that select, of `element`'s clock series, one series per dated
        scrape target (its `firsts` element's, `tail` being the element label: targets that
        share that value share a term), and every series of a dated target without one; None
        when no device is dated (then every series is read). The device clocks read from
        these are the ones every series gives where a target's clock series are scraped
        together (they share its timestamp); a target whose first element has no sample now is
        missing from them, and the source reads its every series
        (`PrometheusSource._clocks_of_missing`). A target not dated yet is not selected: the
        source reads every series of each kind in turn for those (`DISCOVER_EVERY`)."""
        groups: dict[str, list[dict[str, str]]] = {}
        usual = self._usual(element)
        for device, targets in (self.devices or {}).get(element, {}).items():
            values = self.firsts.get((device, element))
            for target in targets:
                labels = {k: v for k, v in target.items() if k != "__name__"}
                value = usual if values is None and (device, element) not in self.read \
                    else (values or {}).get(tuple(sorted(labels.items())), "")
                groups.setdefault(value, []).append(labels)
        terms = []
        for value, targets in sorted(groups.items()):
            for term in matchers(targets):
                one = f'{tail}=~"{alternatives({value})}"'
                terms.append((f"{term}, {one}" if term else one) if value else term)
        return terms or None

    def _usual(self, element: Element) -> str:
        """The commonest first value of `element`'s devices read so far ("" if none): what a
        device whose elements are not read yet (the first sieve reads them, spread) is dated
        by; a target without it is dated from its every series
        (`PrometheusSource._clocks_of_missing`)."""
        counts: dict[str, int] = {}
        for (_, kind), values in self.firsts.items():
            if kind == element:
                for value in values.values():
                    counts[value] = counts.get(value, 0) + 1
        return max(sorted(counts), key=counts.__getitem__, default="")

    def first_values(self, element: Element) -> set[str]:
        """The distinct `firsts` values of `element`'s devices (usually one: `Ethernet0`,
        `mlx5_0`, `0`): a new scrape target's series of them date it (`discovery_terms`)."""
        return {value for (_, kind), values in self.firsts.items() if kind == element
                for value in values.values()}

    def discovery_terms(self, element: Element, tail: str, turn: int) -> list[str]:
        """Matcher terms of a discovery read of `element`'s clock series (added to
        `clock_terms`, which date the known targets): the series of the known first values
        on every scrape target, dated or not (a new target with the usual first element is
        found at once), and slice `turn` of every series by the element label's value
        (`fabtui.prom.queries.discovery_slice`: a target whose elements are all named
        otherwise is found within as many turns as there are slices). Each discovery reads a
        fraction of the series: at 1,024 nodes the switch ports' 16,384 clock series, the
        slowest query of a refresh beside a scrape's ingestion, became ~3,300."""
        values = self.first_values(element)
        usual = [f'{tail}=~"{alternatives(values)}"'] if values else []
        sliced = discovery_slice(tail, self.tails.get(element, ()), turn)
        return [*usual, *([sliced] if sliced else [])]

    def date(self, kinds: Iterable[Element], answers: list[list[Sample]], readings: Readings,
             resolver: Resolver) -> dict[Element, Targets] | None:
        """Each device's newest sample time (the device clocks' `answers`, per element kind of
        `kinds`) onto `readings`; the devices that have one become the dated devices. Returns
        the devices dated before (None on the first refresh)."""
        dated: dict[Element, Targets] = {}
        sampled = readings.sampled
        for element, samples in zip(kinds, answers, strict=True):
            devices: Targets = {}
            dated[element] = devices
            for sample in samples:
                device = resolver.device(element, sample.labels)
                if device is not None:
                    devices.setdefault(device, []).append(sample.labels)
                    sampled[device] = max(sampled.get(device, 0.0), sample.value)
        before, self.devices = self.devices, dated
        return before

    def record(self, due: Mapping[Element, set[str] | None], answers: list[list[Sample]],
               resolver: Resolver) -> None:
        """The presence of the `due` devices' elements (None: every device's) from their
        presence queries' answers, in place of what was known of them."""
        present, firsts = self.by_device, self.firsts
        for (element, devices), samples in zip(due.items(), answers, strict=True):
            tail = resolver.labels.grouping(element)[-1]
            grouping = resolver.labels.device_grouping(element)
            for stale in [k for k in present if k[1] == element] if devices is None else \
                    [(device, element) for device in devices]:
                present.pop(stale, None)
                firsts.pop(stale, None)
            self.read.update((device, element) for device in
                             ((self.devices or {}).get(element, {}) if devices is None
                              else devices))
            keys: dict[str, set[str]] = {}
            tails: dict[str, dict[Target, str]] = {}
            seen = self.tails.setdefault(element, set())
            for sample in samples:
                key = resolver.element(element, sample.labels)
                if key is not None:
                    device = device_of(key)
                    if devices is None or device in devices:
                        keys.setdefault(device, set()).add(key)
                        value = sample.labels.get(tail)
                        if value is not None:
                            seen.add(value)
                            target = target_of(sample.labels, grouping)
                            of_device = tails.setdefault(device, {})
                            if value < of_device.get(target, value + "\x00"):
                                of_device[target] = value
            for device, found in keys.items():
                present[(device, element)] = sorted(found)
            for device, values in tails.items():
                firsts[(device, element)] = values

    def changed(self, before: Mapping[Element, Mapping[str, object]]) -> dict[Element, set[str]]:
        """Devices no longer dated (no series left) since `before`: their elements dropped.
        Returns the devices dated now and not then, whose elements are to be read at once."""
        now = self.devices or {}
        fresh = {element: new for element, devices in now.items()
                 if (new := set(devices) - set(before.get(element, {})))}
        for element, devices in before.items():
            for gone in set(devices) - set(now.get(element, {})):
                self.by_device.pop((gone, element), None)
                self.firsts.pop((gone, element), None)
                self.read.discard((gone, element))
        return fresh

    def undate(self, fresh: Mapping[Element, set[str]]) -> None:
        """Reading the elements of `fresh` devices failed: not dated yet, then (the next
        refresh reads them again)."""
        now = self.devices or {}
        for element, unread in fresh.items():
            for device in unread:
                now[element].pop(device, None)

    def quiet(self, readings: Readings) -> dict[tuple[str, Element], list[str]]:
        """Per (device, element kind), the elements present and not read in full (all of a
        device's when none of its elements was read): the sieve's ok marks."""
        read = {key for per_key in readings.values.values() for key in per_key}
        read_devices = {device_of(key) for key in read}
        quiet: dict[tuple[str, Element], list[str]] = {}
        for (device, element), members in self.by_device.items():
            if device in read_devices:
                members = [key for key in members if key not in read]
            if members:
                quiet[(device, element)] = members
        return quiet


def target_of(labels: Mapping[str, str], grouping: Iterable[str]) -> Target:
    """The scrape target (`Target`) a series with `labels` is of."""
    return tuple(sorted((label, labels[label]) for label in grouping if label in labels))


def matchers(targets: Iterable[Mapping[str, str]]) -> list[str]:
    """Matcher terms that select (at least) every series of `targets` (their labels): one term
    per set of label names, `label=~"a|b"` each."""
    values: dict[tuple[str, ...], dict[str, set[str]]] = {}
    for labels in targets:
        found = values.setdefault(tuple(sorted(labels)), {})
        for label, value in labels.items():
            found.setdefault(label, set()).add(value)
    return sorted(", ".join(f'{label}=~"{alternatives(v)}"' for label, v in sorted(by.items()))
                  for by in values.values())


def device_clocks(element: Element, samples: Iterable[Sample], labels: LabelMap) -> list[Sample]:
    """The device clocks of `element` (each scrape target's newest sample time, labelled by
    `labels.device_grouping`) from the whole presence's `samples` (each element's newest
    sample time, labelled by `labels.grouping`, a superset): `max by` the device labels of
    the per-element maxima is the `max by` of the same series, what the clock query answers
    at the same moment; so the first refresh, which reads the whole presence, need not ask
    Prometheus to select and stamp every clock series a second time."""
    by = labels.device_grouping(element)
    newest: dict[tuple[tuple[str, str], ...], Sample] = {}
    for sample in samples:
        key = tuple((label, sample.labels[label]) for label in by if label in sample.labels)
        kept = newest.get(key)
        if kept is None or sample.value > kept.value:
            newest[key] = Sample(dict(key), sample.value, sample.at)
    return list(newest.values())


def flagged(answers: Mapping[str, list[Sample]], mapped: Sequence[Mapped], labels: LabelMap,
            resolver: Resolver) -> tuple[dict[Element, list[str]], set[str]]:
    """Per element kind, matcher terms (`instance=~"a|b", device=~"x|y"`, one per set of
    devices whose named elements have the same names) that together select every series
    of every element the sieve named (its `answers` by mapping key), and little else: one term
    for all of them would select the cross product of devices and element names (33
    storm-paused ports on 33 switches: 1,089 ports, each with its DOM lanes); and the elements
    it named."""
    tails: dict[Element, dict[tuple[tuple[str, str], ...], set[str]]] = {}
    named: set[str] = set()
    for m in mapped:
        *leading, tail = labels.grouping(m.element)
        for sample in answers.get(m.key, []):
            element = resolver.element(m.element, sample.labels)
            if element is None:
                continue
            named.add(element)
            series = sample.labels
            where = tuple((label, series[label]) for label in leading if label in series)
            found = tails.setdefault(m.element, {}).setdefault(where, set())
            if tail in series:
                found.add(series[tail])
    terms_of: dict[Element, list[str]] = {}
    for element, groups in tails.items():
        tail = labels.grouping(element)[-1]
        merged: dict[tuple[tuple[str, ...], frozenset[str]], dict[str, set[str]]] = {}
        for where, names in groups.items():
            values = merged.setdefault((tuple(label for label, _ in where),
                                        frozenset(names)), {})
            for label, value in where:
                values.setdefault(label, set()).add(value)
        terms = []
        for (_, tails_of), values in merged.items():
            parts = [f'{label}=~"{alternatives(found)}"' for label, found in values.items()]
            if tails_of:
                parts.append(f'{tail}=~"{alternatives(set(tails_of))}"')
            terms.append(", ".join(parts))
        terms_of[element] = sorted(terms)
    return terms_of, named
