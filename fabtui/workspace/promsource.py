"""`PrometheusSource`: the live view's status read from Prometheus instead of polling devices.

One poll is a fixed set of instant queries, run concurrently: per mapped exporter metric
(`fabtui.prom.catalog`) `sum by (<element labels>) (rate(metric[window]))` for counters and the
latest value for gauges, plus per device the newest `timestamp()` of its series (when its
exporter was last scraped: one sample per scrape target) and `up == 0` (scrapes failing). Which
elements have series at all (per element, ~41,000 samples at 1,024 nodes) changes rarely: it
is read in full on the first refresh only; after that each refresh re-reads the elements of a
fixed slice of the devices (each device every `presence_every` refreshes, by a hash of its name),
a device that starts being dated has its elements read at once, and one that stops has them
dropped. So no refresh decodes the whole presence again (a ~5 MB answer each minute left the
heap fragmented: RSS grew at every re-read). Results are the probes' own results
(`fabtui.prom.results`), so verdicts are the probes' verdicts; each result is dated by its
device's newest sample, so `FabricStatus` shows a device whose scrapes stopped as stale once
`stale_after` has passed. Prometheus unreachable or too slow: every node and switch is reported
unreachable with the reason (and the poll's note says it), never a hang (each query has the
configured timeout). `check()` lists the topology elements no series names.

Side effects: HTTP requests to the configured Prometheus; resolves the auth reference once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import zlib
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

from fabtui.config import PrometheusSettings
from fabtui.model.probe import ProbeDef, ProbeResult, Verdict
from fabtui.prom.catalog import MAPPED, Element, Mapped
from fabtui.prom.client import PromClient, PromError, Sample, Series
from fabtui.prom.labels import LabelMap, Resolver
from fabtui.prom.results import Assembler, Readings
from fabtui.prom.rules import (
    clock_name,
    device_clock_name,
    every_sieve,
    rules_document,
    rules_yaml,
    sieve_name,
)
from fabtui.prom.sieve import sieves
from fabtui.topology.graph import FabricGraph
from fabtui.transports.credentials import CredentialError, resolve

if TYPE_CHECKING:
    from fabtui.workspace.core import Workspace

T = TypeVar("T")

_CLOCK_PROBE: dict[Element, str] = {"gpu": "dcgm.temperature", "nic": "ethtool.rx_prio3_pause",
                "ibport": "infiniband.state_id", "port": "sonic.oper_status"}
"""Per element kind, the series whose `timestamp()` says when its device was last scraped."""


SPARKLINES = {"sonic.pfc_rx": "rate.rx.PFC3", "sonic.pfc_tx": "rate.tx.PFC3",
              "ethtool.rx_prio3_pause": "rate.rx_prio3_pause",
              "ethtool.tx_prio3_pause": "rate.tx_prio3_pause",
              "sonic.fec_pre_ber": "fec_pre_ber"}
"""Mapped metric -> the sparkline (`FabricStatus` history name) its range query fills."""

PRESENCE_EVERY = 60
"""Refreshes between two reads of a device's elements that have series at all (its per-element
clocks; ~41,000 samples for the whole fabric at 1,024 nodes, read in full only on the first
refresh): each refresh re-reads a 1/PRESENCE_EVERY slice of the devices."""

ASKERS = 32
"""Queries in flight at once, on the source's own threads: a refresh's first round is 10-40
queries (with the last refresh's full read: 15 per element kind the sieve named), which the
event loop's default executor (CPUs + 4 threads: 6 on two cores) ran in waves, each as slow as
its slowest query; and its threads are the loop's, new for each `asyncio.run`. Prometheus
queues what exceeds its own `--query.max-concurrency` (20)."""

SIEVE_FROM_NICS = 512
"""`mode = "auto"` sieves from this many NICs up (below it a full read is fast enough)."""


def _alternatives(values: set[str]) -> str:
    """A PromQL regex matching exactly `values` (escaped for RE2 inside a string literal)."""
    return "|".join(re.escape(v) for v in sorted(values)).replace("\\", "\\\\")


def _seconds(duration: str) -> float:
    """A PromQL duration (`1m`, `30s`, `2h`) in seconds."""
    return float(duration[:-1]) * {"s": 1, "m": 60, "h": 3600}[duration[-1]]


def client_for(settings: PrometheusSettings) -> PromClient:
    """A client with the configured auth resolved (raises `CredentialError` with the fix)."""
    bearer = resolve(settings.bearer) if settings.bearer else None
    password = resolve(settings.password) if settings.password else None
    return PromClient.with_auth(settings.url, settings.timeout, bearer=bearer,
                                username=settings.username, password=password)


@dataclass(frozen=True)
class Missing:
    """A topology element some mapped series should name but none does."""

    element: str
    exporter: str
    metrics: tuple[str, ...]
    """The metric names with no series for it (all of the exporter's: `everything`)."""


@dataclass
class PrometheusSource:
    """See the module docstring. Implements `fabtui.views.status.StatusSource`."""

    client: PromClient
    graph: FabricGraph
    catalog: Mapping[str, ProbeDef]
    settings: PrometheusSettings
    mapped: tuple[Mapped, ...] = MAPPED
    notes: list[str] = field(default_factory=list)
    last_round_s: float | None = None
    at: float | None = None
    """Evaluate every query at this moment (epoch seconds) instead of now: two reads of the
    same moment see the same values (tests, replaying an incident)."""
    history_step: float | None = None
    """Seconds between the past values the first poll reads for sparklines (range queries);
    default a quarter of the rate window (its resolution)."""
    presence_every: int = PRESENCE_EVERY
    _seeded: bool = False
    _round: int = 0
    _full_texts: list[str] = field(default_factory=list)
    """The last refresh's full-read queries (of the elements its sieve named)."""
    _devices: dict[Element, dict[str, list[dict[str, str]]]] | None = None
    """Per element kind, the devices the last refresh dated, with the labels of their
    device-clock samples (one per scrape target of the device: what a query selects its series
    by); None before the first refresh."""
    _present_by_device: dict[tuple[str, Element], list[str]] = field(default_factory=dict)
    """The presence per (device, element kind): the elements' keys, sorted."""

    def __post_init__(self) -> None:
        self._pool = ThreadPoolExecutor(ASKERS, thread_name_prefix="prometheus")
        self.labels = LabelMap(**dict(self.settings.labels))
        self.resolver = Resolver(self.graph, self.labels)
        self.names = {m.key: dict(self.settings.metrics).get(m.key, m.metric)
                      for m in self.mapped}
        self.assembler = Assembler(self.graph, self.catalog, self.mapped)
        self.queries = {m.key: self.query_of(m) for m in self.mapped}
        speeds = [link.speed for link in self.graph.topology.links if link.speed] or [400]
        self.sieves = sieves(self.mapped, self.queries, self.catalog, min(speeds))
        self._probes_of = {element: sorted({m.probe for m in self.mapped if m.element == element})
                           for element in _CLOCK_PROBE}

    # PromQL ---------------------------------------------------------------------------------
    def selector(self, mapped: Mapped, only: str = "") -> str:
        """The metric's selector, with `only` (a `label=~"..."` matcher) added."""
        matchers = ", ".join(m for m in (mapped.matchers, only) if m)
        return f"{self.names[mapped.key]}{{{matchers}}}"

    def query_of(self, mapped: Mapped, only: str | Sequence[str] = "") -> str:
        """The instant query a mapped metric is read with; with `only`, of the series those
        matchers select (several terms: the union of their selections)."""
        by = ", ".join((*self.labels.grouping(mapped.element), *mapped.by))
        terms = [only] if isinstance(only, str) else list(only) or [""]
        if mapped.counter:
            window = self.settings.window
            read = " or ".join(f"rate({self.selector(mapped, t)}[{window}])" for t in terms)
        else:
            read = " or ".join(self.selector(mapped, t) for t in terms)
        return f"sum by ({by}) ({read})" if mapped.counter else f"max by ({by}) ({read})"

    def _stamps(self) -> dict[Element, str]:
        """Per element kind, `timestamp()` of the series that dates its devices' scrapes."""
        found: dict[Element, str] = {}
        for element, key in _CLOCK_PROBE.items():
            mapped = next((m for m in self.mapped if m.key == key), None)
            if mapped is not None:
                found[element] = f"timestamp({self.selector(mapped)})"
        return found

    def _clock_queries(self) -> dict[Element, str]:
        """Per element kind: when each element's series was last scraped, i.e. which elements
        have series at all (the presence; recorded as `fabtui:clock:<kind>`)."""
        return {element: f"max by ({', '.join(self.labels.grouping(element))}) ({stamp})"
                for element, stamp in self._stamps().items()}

    def _presence_query(self, element: Element, terms: Sequence[str] = ("",)) -> str:
        """What the presence of an element kind is read with: its clocks, or (recorded) their
        recorded series; with `terms` (matchers), of the series they select (their union)."""
        if self.recorded:
            return " or ".join(f"{clock_name(element)}{{{t}}}" if t else clock_name(element)
                               for t in terms)
        mapped = next(m for m in self.mapped if m.key == _CLOCK_PROBE[element])
        stamps = " or ".join(f"timestamp({self.selector(mapped, t)})" for t in terms)
        return f"max by ({', '.join(self.labels.grouping(element))}) ({stamps})"

    def _presence_due(self) -> dict[Element, set[str] | None]:
        """Per element kind, the devices whose elements this refresh re-reads: every device
        (None) on the first refresh, then the slice of this refresh (each device once every
        `presence_every` refreshes; a stable hash, so a device keeps its turn whichever others
        come and go)."""
        self._round += 1
        if self._devices is None:
            return dict.fromkeys(self._stamps())
        turn = self._round % self.presence_every
        return {element: due for element, devices in self._devices.items()
                if (due := {d for d in devices
                            if zlib.crc32(d.encode()) % self.presence_every == turn})}

    def _device_terms(self, element: Element, devices: Iterable[str]) -> list[str]:
        """Matcher terms that select (at least) every series of `devices`, from the labels of
        their device-clock samples: one term per set of label names, `label=~"a|b"` each."""
        known = (self._devices or {}).get(element, {})
        values: dict[tuple[str, ...], dict[str, set[str]]] = {}
        for device in devices:
            for target in known[device]:
                labels = {k: v for k, v in target.items() if k != "__name__"}
                found = values.setdefault(tuple(sorted(labels)), {})
                for label, value in labels.items():
                    found.setdefault(label, set()).add(value)
        return sorted(", ".join(f'{label}=~"{_alternatives(v)}"' for label, v in sorted(by.items()))
                      for by in values.values())

    def _presence_queries(self, due: Mapping[Element, set[str] | None]) -> dict[Element, str]:
        return {element: self._presence_query(element) if devices is None else
                self._presence_query(element, self._device_terms(element, devices))
                for element, devices in due.items()}

    def _device_clock_queries(self) -> dict[Element, str]:
        """Per element kind: each device's newest sample time, one sample per scrape target
        (~3,000 at 1,024 nodes where the per-element clocks are ~41,000). Recorded: the
        recorded device clocks, a plain selector each."""
        if self.recorded:
            return {element: device_clock_name(element) for element in self._stamps()}
        return self._device_clocks_of(self._stamps())

    def _device_clocks_of(self, inner: Mapping[Element, str]) -> dict[Element, str]:
        """The device clocks aggregated from per-kind `inner` clock expressions."""
        return {element: f"max by ({', '.join(self.labels.device_grouping(element))}) ({text})"
                for element, text in inner.items()}

    def _recorded_device_clocks(self, elements: Iterable[Element]) -> dict[Element, str]:
        """The device clocks aggregated from the recorded per-element clocks: the rules of
        `fabtui:device_clock:*`, and what a refresh asks when they are missing."""
        return self._device_clocks_of({element: clock_name(element) for element in elements})

    async def _older_rules(self, clocks: Mapping[Element, str],
                           answers: list[list[Sample]]) -> list[list[Sample]]:
        """The device clocks' `answers`, recorded; an element kind with none but per-element
        clocks (a rule file from before `fabtui:device_clock:*`) dated from those instead, and
        a note to re-generate the file."""
        empty = [(i, element) for i, element in enumerate(clocks) if not answers[i]]
        if not empty:
            return answers
        found = await self._ask(list(self._recorded_device_clocks(e for _, e in empty).values()))
        answers = list(answers)
        for (i, _), samples in zip(empty, found, strict=True):
            answers[i] = samples
        if any(found):
            # The action first: the Fabric screen's header shows as much as fits.
            self.notes.append("prometheus: re-generate the rule file (`fabtui prom rules`): it "
                              "has no fabtui:device_clock:* series, so each refresh is slower")
        return answers

    @property
    def sieving(self) -> bool:
        """Whether a refresh reads only what nears a limit (`fabtui.prom.sieve`)."""
        mode = self.settings.mode
        if mode != "auto":
            return mode in ("sieve", "recorded")
        return sum(len(n.nics) for n in self.graph.nodes.values()) >= SIEVE_FROM_NICS

    @property
    def recorded(self) -> bool:
        """Whether the sieve and the clocks are read from recording rules (`rules()`)."""
        return self.settings.mode == "recorded"

    def rules(self, interval: str | None = None, *, as_json: bool = False) -> str:
        """The recording rule file `mode = "recorded"` reads (`fabtui.prom.rules`): YAML, or
        JSON (which Prometheus reads as YAML too)."""
        clocks = {str(element): text for element, text in self._clock_queries().items()}
        devices = {str(element): text for element, text in
                   self._recorded_device_clocks(self._stamps()).items()}
        if as_json:
            return json.dumps(rules_document(self.sieves, clocks, interval, devices),
                              indent=2) + "\n"
        return rules_yaml(self.sieves, clocks, interval, devices)

    def _first_queries(self) -> list[str]:
        """A refresh's first round: the sieve's (or the full read's) queries. Recorded: one
        selector for every sieve's series."""
        if self.recorded:
            return [every_sieve()]
        return list((self.sieves if self.sieving else self.queries).values())

    def _by_key(self, texts: list[str], answers: list[list[Sample]]) -> dict[str, list[Sample]]:
        """The first round's answers by mapping key (recorded: split by the series' name)."""
        if not self.recorded:
            keys = self.sieves if self.sieving else self.queries
            return dict(zip(keys, answers, strict=False))
        names = {sieve_name(key): key for key in self.sieves}
        found: dict[str, list[Sample]] = {}
        for sample in answers[0] if texts else []:
            key = names.get(sample.labels.get("__name__", ""))
            if key is not None:
                found.setdefault(key, []).append(sample)
        return found

    # polling --------------------------------------------------------------------------------
    async def _ask(self, texts: list[str]) -> list[list[Sample]]:
        return await self._all(self.client.query, [(q, self.at) for q in texts])

    async def _all(self, call: Callable[..., T], calls: list[tuple[object, ...]]) -> list[T]:
        """`call(*args)` for every `args` of `calls`, concurrently on the source's threads."""
        loop = asyncio.get_running_loop()
        return list(await asyncio.gather(*(loop.run_in_executor(self._pool, call, *args)
                                           for args in calls)))

    async def poll(self) -> AsyncGenerator[tuple[ProbeResult, float], None]:
        self.notes.clear()
        started = time.monotonic()
        first = self._first_queries()
        sieving = self.sieving
        clocks = self._device_clock_queries()
        due = self._presence_due()
        presence = self._presence_queries(due)
        # The last refresh's full read, asked with the first round: when the sieve names the
        # same elements again (a storm lasts minutes) the refresh needs no second round trip,
        # which is what a loaded Prometheus (its rule evaluation) makes slow.
        guess = self._full_texts if sieving else []
        texts = [*first, *clocks.values(), *presence.values(), "up == 0"]
        try:
            answers = await self._ask([*texts, *guess])
            guessed = answers[len(texts):]
            del answers[len(texts):]
            readings = Readings()
            ends = len(first) + len(clocks)
            dated = answers[len(first):ends]
            if self.recorded:
                dated = await self._older_rules(clocks, dated)
            before = self._devices
            self._devices = self._date(clocks, dated, readings)
            self._present(due, answers[ends:-1])
            if before is not None:  # a target came or went: read its elements, drop theirs
                await self._changed(before)
            self._note_down(answers[-1])
            by_key = self._by_key(first, answers[:len(first)])
            quiet: dict[tuple[str, Element], list[str]] = {}
            flagged: dict[Element, list[str]] | None = None
            if sieving:
                flagged, named = self._flagged(by_key)
                wanted = [(m, self.query_of(m, flagged[m.element])) for m in self.mapped
                          if m.element in flagged]
                asked = [q for _, q in wanted]
                full = guessed if asked == guess else await self._ask(asked)
                self._full_texts = asked
                self._read(readings, {m.key: a for (m, _), a in zip(wanted, full, strict=True)},
                           named)
                read = {key for per_key in readings.values.values() for key in per_key}
                read_devices = {key.partition(":")[0] for key in read}
                for (device, element), members in self._present_by_device.items():
                    if device in read_devices:
                        members = [key for key in members if key not in read]
                    if members:
                        quiet[(device, element)] = members
            else:
                self._read(readings, by_key)
        except PromError as exc:
            self.notes.append(f"prometheus {exc.kind}: {exc}")
            for result in self._unreachable(str(exc)):
                yield result, self.settings.stale_after
            self.last_round_s = time.monotonic() - started
            return
        self._note_gaps(readings, bool(self._present_by_device))
        for result in self.assembler.results(readings, self.queries):
            yield result, self.settings.stale_after
        for (device, element), members in quiet.items():
            at = readings.sampled.get(device)
            if at is not None:
                yield self._quiet(device, element, members, at), self.settings.stale_after
        if not self._seeded:
            self._seeded = True
            devices = {key.partition(":")[0] for per_key in readings.values.values()
                       for key in per_key}
            with contextlib.suppress(PromError):  # sparklines then start empty, as for probes
                past = await self._past(devices, flagged)
                if past.parsed and past.parsed["history"]:
                    yield past, self.settings.stale_after
        self.last_round_s = time.monotonic() - started

    async def _past(self, devices: set[str],
                    flagged: Mapping[Element, list[str]] | None) -> ProbeResult:
        """The sparklines' past from range queries: pause and FEC rates of the devices just
        read in full (at scale: the ones near a limit, and only theirs are asked for, by the
        sieve's `flagged` matchers), `HISTORY` steps back."""
        from fabtui.views.status import HISTORY

        now = time.time()
        step = self.history_step or max(1.0, _seconds(self.settings.window) / 4)
        span = step * (HISTORY - 1)
        kinds = {m.key: m.element for m in self.mapped}
        keys = [k for k in SPARKLINES if k in self.queries]
        if flagged is not None:
            keys = [k for k in keys if kinds[k] in flagged]
        texts = [self.queries[k] if flagged is None else
                 self.query_of(self._mapped_of(k), flagged[kinds[k]]) for k in keys]
        answers = await self._all(self.client.query_range,
                                  [(text, now - span, now - step, step) for text in texts])
        past: dict[str, dict[str, list[float]]] = {}
        for key, series in zip(keys, answers, strict=True):
            mapped = self._mapped_of(key)
            for item in series:
                element = self.resolver.element(mapped.element, item.labels)
                if element is not None and element.partition(":")[0] in devices:
                    past.setdefault(element, {})[SPARKLINES[key]] = [
                        round(v, 3) for _, v in item.points]
        stamp = datetime.now(UTC)
        return ProbeResult(probe="prometheus", target="history", command="promql: range",
                           started_at=stamp, ended_at=stamp, verdict=Verdict.OK,
                           parsed={"history": past})

    def _mapped_of(self, key: str) -> Mapped:
        return next(m for m in self.mapped if m.key == key)

    def _read(self, readings: Readings, answers: Mapping[str, list[Sample]],
              only: set[str] | None = None) -> None:
        """Every sample of `answers` onto its element (of `only`'s elements, when given: the
        matchers of a sieve's full read select a cross product of labels, a superset)."""
        for mapped in self.mapped:
            for sample in answers.get(mapped.key, []):
                key = self.resolver.element(mapped.element, sample.labels)
                if key is not None and (only is None or key in only):
                    extra = tuple(sorted((b, sample.labels.get(b, "")) for b in mapped.by))
                    readings.add(mapped, key, extra, sample.value)

    def _present(self, due: Mapping[Element, set[str] | None],
                 answers: list[list[Sample]]) -> None:
        """The presence of the `due` devices' elements (None: every device's) from their
        presence queries' answers, in place of what was known of them."""
        present = self._present_by_device
        for (element, devices), samples in zip(due.items(), answers, strict=True):
            for stale in [k for k in present if k[1] == element] if devices is None else \
                    [(device, element) for device in devices]:
                present.pop(stale, None)
            keys: dict[str, set[str]] = {}
            for sample in samples:
                key = self.resolver.element(element, sample.labels)
                if key is not None:
                    device = key.partition(":")[0]
                    if devices is None or device in devices:
                        keys.setdefault(device, set()).add(key)
            for device, found in keys.items():
                present[(device, element)] = sorted(found)

    async def _changed(self, before: Mapping[Element, Mapping[str, object]]) -> None:
        """Devices dated now and not at the last refresh: their elements read at once; devices
        no longer dated (no series left): their elements dropped."""
        now = self._devices or {}
        fresh = {element: new for element, devices in now.items()
                 if (new := set(devices) - set(before.get(element, {})))}
        for element, devices in before.items():
            for gone in set(devices) - set(now.get(element, {})):
                self._present_by_device.pop((gone, element), None)
        if fresh:
            queries = self._presence_queries(dict(fresh))
            try:
                answers = await self._ask(list(queries.values()))
            except PromError:  # not dated yet, then: the next refresh reads them again
                for element, unread in fresh.items():
                    for device in unread:
                        now[element].pop(device, None)
                raise
            self._present(dict(fresh), answers)

    def _date(self, clocks: Mapping[Element, str], answers: list[list[Sample]],
              readings: Readings) -> dict[Element, dict[str, list[dict[str, str]]]]:
        """Each device's newest sample time onto `readings`; per element kind, the devices
        that have one, with their samples' labels."""
        dated: dict[Element, dict[str, list[dict[str, str]]]] = {}
        sampled = readings.sampled
        for element, samples in zip(clocks, answers, strict=True):
            devices: dict[str, list[dict[str, str]]] = {}
            dated[element] = devices
            for sample in samples:
                device = self.resolver.device(element, sample.labels)
                if device is not None:
                    devices.setdefault(device, []).append(sample.labels)
                    sampled[device] = max(sampled.get(device, 0.0), sample.value)
        return dated

    def _flagged(self, answers: Mapping[str, list[Sample]]) -> tuple[dict[Element, list[str]],
                                                                     set[str]]:
        """Per element kind, matcher terms (`instance=~"a|b", device=~"x|y"`, one per set of
        devices whose named elements have the same names) that together select every series
        of every element the sieve named, and little else: one term for all of them would
        select the cross product of devices and element names (33 storm-paused ports on 33
        switches: 1,089 ports, each with its DOM lanes); and the elements it named."""
        tails: dict[Element, dict[tuple[tuple[str, str], ...], set[str]]] = {}
        named: set[str] = set()
        for mapped in self.mapped:
            *leading, tail = self.labels.grouping(mapped.element)
            for sample in answers.get(mapped.key, []):
                element = self.resolver.element(mapped.element, sample.labels)
                if element is None:
                    continue
                named.add(element)
                labels = sample.labels
                where = tuple((label, labels[label]) for label in leading if label in labels)
                found = tails.setdefault(mapped.element, {}).setdefault(where, set())
                if tail in labels:
                    found.add(labels[tail])
        flagged: dict[Element, list[str]] = {}
        for element, groups in tails.items():
            tail = self.labels.grouping(element)[-1]
            merged: dict[tuple[tuple[str, ...], frozenset[str]], dict[str, set[str]]] = {}
            for where, names in groups.items():
                values = merged.setdefault((tuple(label for label, _ in where),
                                            frozenset(names)), {})
                for label, value in where:
                    values.setdefault(label, set()).add(value)
            terms = []
            for (_, tails_of), values in merged.items():
                parts = [f'{label}=~"{_alternatives(found)}"' for label, found in values.items()]
                if tails_of:
                    parts.append(f'{tail}=~"{_alternatives(set(tails_of))}"')
                terms.append(", ".join(parts))
            flagged[element] = sorted(terms)
        return flagged, named

    def _quiet(self, device: str, element: Element, keys: list[str], at: float) -> ProbeResult:
        """The sieve's ok mark for a device's elements of one kind (`keys`, sorted)."""
        ended = datetime.fromtimestamp(at, UTC)
        probes = self._probes_of[element]
        return ProbeResult(probe="prometheus", target=device, command="promql: sieve",
                           started_at=ended, ended_at=ended, verdict=Verdict.OK,
                           parsed={"quiet": keys, "probes": probes})

    def _note_down(self, down: list[Sample]) -> None:
        if down:
            jobs = sorted({f"{s.labels.get('job', '?')} {s.labels.get('instance', '?')}"
                           for s in down})
            self.notes.append(f"prometheus: {len(jobs)} scrape target(s) down: "
                              f"{', '.join(jobs[:5])}{' ...' if len(jobs) > 5 else ''} "
                              "(their devices go stale)")

    def _note_gaps(self, readings: Readings, seen: bool) -> None:
        nodes = list(self.graph.nodes)
        quiet = [n for n in nodes if n not in readings.sampled]
        if quiet and len(quiet) < len(nodes):
            self.notes.append(f"prometheus: no recent samples for {len(quiet)} node(s) "
                              f"({', '.join(quiet[:3])}{' ...' if len(quiet) > 3 else ''}); "
                              "`fabtui prom check` lists what has no series")
        elif not seen and self.recorded:
            self.notes.append("prometheus: no fabtui:clock:* series (mode = \"recorded\"): is "
                              "the rule file of `fabtui prom rules` loaded?")
        elif not seen:
            self.notes.append("prometheus: no series matched the fabric; `fabtui prom check` "
                              "says which names and labels it looked for")

    def _unreachable(self, reason: str) -> Iterable[ProbeResult]:
        now = datetime.now(UTC)
        for device in (*self.graph.nodes, *self.graph.switches):
            yield ProbeResult(probe="prometheus", target=device, command=self.client.url,
                              started_at=now, ended_at=now, verdict=Verdict.ERROR,
                              error=reason)

    # history --------------------------------------------------------------------------------
    def history(self, key: str, span_s: float, step_s: float,
                end: float | None = None) -> dict[str, list[tuple[float, float]]]:
        """A mapped metric's history per element key (a range query of the same PromQL the
        poll uses), for sparklines: `{"leaf-g00-r4:Ethernet40": [(t, pause/s), ...]}`."""
        mapped = next(m for m in self.mapped if m.key == key)
        stop = time.time() if end is None else end
        series: list[Series] = self.client.query_range(self.queries[key], stop - span_s, stop,
                                                        step_s)
        found: dict[str, list[tuple[float, float]]] = {}
        for item in series:
            element = self.resolver.element(mapped.element, item.labels)
            if element is not None:
                found.setdefault(element, []).extend(item.points)
        return found

    # check ----------------------------------------------------------------------------------
    def check(self) -> list[Missing]:
        """Every topology element that a mapped exporter should have series for and has none
        (raises `PromError` when Prometheus does not answer)."""
        expected = self._expected()
        present: dict[str, set[str]] = {}
        texts = {m.key: f"count by ({', '.join((*self.labels.grouping(m.element), *m.by))}) "
                        f"({self.selector(m)})" for m in self.mapped}
        for key, text in texts.items():
            samples: list[Sample] = self.client.query(text)
            mapped = next(m for m in self.mapped if m.key == key)
            present[key] = {e for s in samples
                            if (e := self.resolver.element(mapped.element, s.labels))}
        missing: list[Missing] = []
        by_exporter: dict[tuple[str, Element], list[Mapped]] = {}
        for mapped in self.mapped:
            by_exporter.setdefault((mapped.exporter, mapped.element), []).append(mapped)
        for (exporter, element), members in by_exporter.items():
            for key in expected[element]:
                lacking = tuple(self.names[m.key] for m in members if key not in present[m.key])
                if len(lacking) == len(members):
                    missing.append(Missing(key, exporter, ("everything",)))
                elif lacking:
                    missing.append(Missing(key, exporter, lacking))
        return missing

    def _expected(self) -> dict[Element, list[str]]:
        graph = self.graph
        nics = [f"{h}:{nic.name}" for h, node in graph.nodes.items() for nic in node.nics]
        return {"gpu": [f"{h}:gpu{g.index}" for h, node in graph.nodes.items()
                        for g in node.gpus],
                "nic": nics, "ibport": nics,
                "port": [p for p in graph.port_links
                         if p.partition(":")[0] in graph.switches]}


def prometheus_source(settings: PrometheusSettings, graph: FabricGraph,
                      catalog: Mapping[str, ProbeDef]) -> PrometheusSource:
    """The source for these settings (raises `CredentialError` for an auth reference that
    cannot be resolved)."""
    return PrometheusSource(client_for(settings), graph, catalog, settings)




def live_source(workspace: Workspace) -> PrometheusSource | None:
    """The Prometheus source when the settings choose it (`source = "prometheus"`), else None
    (the live view polls probes). Raises `RequestError` for auth that cannot be resolved."""
    from fabtui.errors import RequestError

    settings = workspace.settings
    if settings.live_source != "prometheus":
        return None
    if settings.prometheus is None:
        raise RequestError("source = \"prometheus\" needs a [prometheus] table with its url "
                           "(docs/prometheus.md)")
    try:
        return prometheus_source(settings.prometheus, workspace.graph(), workspace.catalog)
    except CredentialError as exc:
        raise RequestError(f"prometheus credentials: {exc}") from None
