"""`PrometheusSource`: the live view's status read from Prometheus instead of polling devices.

One poll is a fixed set of instant queries, run concurrently: per mapped exporter metric
(`fabtui.prom.catalog`) `sum by (<element labels>) (rate(metric[window]))` for counters and the
latest value for gauges, plus per device the newest `timestamp()` of its series (when its exporter
was last scraped: one sample per scrape target), `up == 0` (scrapes failing) and the elements of a
slice of the devices that have series at all (the presence, kept between refreshes by
`fabtui.prom.presence`: each device's turn comes every `presence_every` refreshes; the first
refresh reads every device's and, reading raw series, takes the device clocks from it instead of
asking them too; sieving raw series by a budget, each device's is read with its first sieve
instead, `_spread_first`). At scale the sieve (`fabtui.prom.sieve`) is asked after the device
clocks, about the devices scraped since their last sieve only (`fabtui.prom.resieve`). The
PromQL is built by `fabtui.prom.queries`; this module runs the poll. Results are the probes'
own results (`fabtui.prom.results`), so verdicts are the probes' verdicts; each result is dated
by its device's newest sample, so `FabricStatus` shows a device whose scrapes stopped as stale
once `stale_after` has passed. Prometheus unreachable or too slow: every node and switch is
reported unreachable with the reason (and the poll's note says it), never a hang (each query
has the configured timeout).
`check()` lists the topology elements no series names.

Side effects: HTTP requests to the configured Prometheus; resolves the auth reference once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

from fabtui.config import PrometheusSettings
from fabtui.model.element import device_of
from fabtui.model.probe import ProbeDef, ProbeResult, Verdict
from fabtui.prom import heap
from fabtui.prom import queries as promql
from fabtui.prom.alerting import AlertRule, RuleBook, alerting_document, alerting_yaml
from fabtui.prom.catalog import MAPPED, Element, Mapped
from fabtui.prom.client import PromClient, PromError, Sample, Series
from fabtui.prom.labels import LabelMap, Resolver
from fabtui.prom.pace import Pace
from fabtui.prom.presence import PRESENCE_EVERY, Presence, device_clocks, flagged, matchers
from fabtui.prom.resieve import SieveMemory, device_times
from fabtui.prom.results import Assembler, Readings
from fabtui.prom.rules import every_sieve, rules_document, rules_yaml, sieve_name
from fabtui.prom.sieve import sieves
from fabtui.topology.graph import FabricGraph
from fabtui.transports.credentials import CredentialError, resolve
from fabtui.views.updates import (
    History,
    NotJudged,
    Quiet,
    Results,
    SourceFailed,
    StatusUpdate,
)

if TYPE_CHECKING:
    from fabtui.workspace.core import Workspace

T = TypeVar("T")

SPARKLINES = {"sonic.pfc_rx": "rate.rx.PFC3", "sonic.pfc_tx": "rate.tx.PFC3",
              "ethtool.rx_prio3_pause": "rate.rx_prio3_pause",
              "ethtool.tx_prio3_pause": "rate.tx_prio3_pause",
              "sonic.fec_pre_ber": "fec_pre_ber"}
"""Mapped metric -> the sparkline (`FabricStatus` history name) its range query fills."""

ASKERS = 32
"""Queries in flight at once, on the source's own threads: a refresh's first round is 10-40
queries (with the last refresh's full read: 15 per element kind the sieve named), which the
event loop's default executor (CPUs + 4 threads: 6 on two cores) ran in waves, each as slow as
its slowest query; and its threads are the loop's, new for each `asyncio.run`. Prometheus
queues what exceeds its own `--query.max-concurrency` (20)."""

SIEVE_FROM_NICS = 512
"""`mode = "auto"` sieves from this many NICs up (below it a full read is fast enough)."""

RULES_PROBE = 'count({__name__=~"fabtui:clock:.+"})'
"""Whether `fabtui prom rules` is loaded in this Prometheus (its clocks have series): an index
lookup, asked with a refresh's first round in `mode = "auto"`."""

RULES_CHECK_EVERY = 30
"""`mode = "auto"` asks again every this many refreshes, so rules loaded (or removed) while
the app runs are taken up without a restart."""

DISCOVER_EVERY = 10
"""Sieving raw series, refreshes between two discovery reads of a kind's clock series (the
kinds take turns; the other refreshes read one series a dated target,
`Presence.clock_terms`): each reads the usual first element's series on every target and one
slice of every series (`Presence.discovery_terms`), so a scrape target that starts being
dated (a new one, or one answering again) is found within this many refreshes where it has the
usual first element, within this many times `queries.DISCOVER_SLICES` (6: 60) where not;
`up == 0` names a failing one at once. Every series of a kind at each turn (before issue 42.3:
16,384 for the switch ports at 1,024 nodes) was 0.6-2.7 s beside a scrape's ingestion."""

SLOW_REFRESH_S = 1.0
"""A refresh slower than this without the recording rules is told how to load them."""

FIRST_SIEVE_ELEMENTS = 2000
"""Sieving raw series, the elements a refresh sieves, at most (`fabtui.prom.resieve`'s budget:
the devices scraped since their last sieve first, then those never sieved, then a kind's
periodic re-sieve; one device at least of each). Named for the first sieve, which it spreads
over the first refreshes (the devices not sieved yet shown as not judged). Evaluating every
series once is 6-7 CPU-s of Prometheus's at 1,024 nodes (40,960 elements, ~770,000 series; a
first refresh of 6-8 s on a 2-core machine). A refresh's budget is paced under this most by
the refreshes' measured times (`fabtui.prom.pace`: 1,000 after slow refreshes, 2,000 after
fast ones). Fixed at 2,000, one such sieve beside a scrape's ingestion cost Prometheus 2.4
CPU-s and made a 2.88 s refresh at a load of 2-3 on 2 cores; paced, Prometheus's busiest
refresh cost 1.1-1.4 CPU-s, every device judged by the 22nd-33rd refresh
(`benchmarks/prom_refresh.py`, docs/prometheus.md). With 4,000 (before) 1.7-2.4 CPU-s,
judged by the 11th; a fabric near `SIEVE_FROM_NICS` (64 nodes, ~2,500 elements) is judged
by the second or third."""


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
    _full_texts: list[str] = field(default_factory=list)
    """The last refresh's full-read queries (of the elements its sieve named)."""
    _presence: Presence = field(default_factory=Presence)
    """The dated devices and which of their elements have series (`fabtui.prom.presence`)."""
    _rules_loaded: bool | None = None
    """`mode = "auto"`: whether this Prometheus evaluates `fabtui prom rules` (None: not asked
    yet); when it does, a refresh reads them as `mode = "recorded"` does."""
    _polls: int = 0
    _sieved: SieveMemory = field(default_factory=SieveMemory)
    """Sieving raw series: each device's last sieve answer (`fabtui.prom.resieve`)."""
    last_sieve: dict[str, int | None] = field(default_factory=dict)
    """Per element kind, how many devices the last refresh sieved (None: the whole kind)."""
    first_sieve_elements: int | None = FIRST_SIEVE_ELEMENTS
    """See `FIRST_SIEVE_ELEMENTS` (None: the first refresh sieves every kind whole)."""
    _rediscover: set[Element] = field(default_factory=set)
    """The kinds whose next device clocks read every clock series whatever their turn
    (`_cheap_clocks`): a new device's elements could not be read, so it is to be found again."""
    unjudged: frozenset[str] = frozenset()
    """Sieving raw series: the elements of the devices not sieved yet after the last refresh
    (not judged: shown so, never ok)."""
    clock: Callable[[], float] = time.monotonic
    """Seconds, for a refresh's duration (`last_round_s`) and the sieve's pacing (tests pass
    their own)."""
    _pace: Pace = field(default_factory=Pace)
    """Sieving raw series with a budget: the budget paced by the refreshes' times
    (`fabtui.prom.pace`; `first_sieve_elements` is its most)."""
    sieve_budget: int | None = None
    """The elements the last refresh's sieve was allowed (None: not sieving raw series with a
    budget)."""
    _started: float = 0.0
    """When the refresh under way began (`clock`): its first round's time paces its sieve."""
    _expected_of: dict[tuple[str, Element], list[str]] | None = None

    def __post_init__(self) -> None:
        self._pool = ThreadPoolExecutor(ASKERS, thread_name_prefix="prometheus")
        self.labels = LabelMap(**dict(self.settings.labels))
        self.resolver = Resolver(self.graph, self.labels)
        self.names = {m.key: dict(self.settings.metrics).get(m.key, m.metric)
                      for m in self.mapped}
        self.assembler = Assembler(self.graph, self.catalog, self.mapped)
        self.queries = {m.key: self.query_of(m) for m in self.mapped}
        speeds = [link.speed for link in self.graph.topology.links if link.speed] or [400]
        self._slowest = min(speeds)
        self.sieves = sieves(self.mapped, self.queries, self.catalog, self._slowest)
        self._probes_of = {element: sorted({m.probe for m in self.mapped if m.element == element})
                           for element in promql.CLOCK_PROBE}

    # PromQL (`fabtui.prom.queries`) ------------------------------------------------------------
    def selector(self, mapped: Mapped, only: str = "") -> str:
        """The metric's selector, with `only` (a `label=~"..."` matcher) added."""
        return promql.selector(self.names[mapped.key], mapped, only)

    def query_of(self, mapped: Mapped, only: str | Sequence[str] = "") -> str:
        """The instant query a mapped metric is read with; with `only`, of the series those
        matchers select (several terms: the union of their selections)."""
        return promql.query_of(self.names[mapped.key], mapped, self.labels, self.settings.window,
                               only)

    def _stamps(self) -> dict[Element, str]:
        """Per element kind, `timestamp()` of the series that dates its devices' scrapes."""
        return promql.clock_stamps(self.mapped, self.names)

    def _presence_due(self) -> dict[Element, set[str] | None]:
        """Per element kind, the devices whose elements this refresh re-reads (None: every
        device's, on the first refresh; sieving raw series by a budget, none then: each
        device's are read with its first sieve, `_resieve`)."""
        due = self._presence.due(self._stamps(), self.presence_every,
                                 whole=not self._spread_first)
        if not self._spread_first:  # and every dated device's never read (the rules were
            for element, dated in (self._presence.devices or {}).items():  # found meanwhile)
                if due.get(element, set()) is not None and \
                        (unread := self._presence.unread(element, dated)):
                    due[element] = (due.get(element) or set()) | unread
        return due

    @property
    def _spread_first(self) -> bool:
        """Whether the first sieve is spread over refreshes (raw series, a budget): then so is
        the first read of the presence, each device's with its first sieve. Read whole, the
        presence (~41,000 series at 1,024 nodes: ~5 MB to answer and decode) was most of a
        first refresh, 0.75-2.5 s of it on a shared 2-core machine (issue 42.3)."""
        return self.sieving and not self.recorded and self.first_sieve_elements is not None

    def _expected_sizes(self) -> dict[tuple[str, Element], list[str]]:
        """Per (device, element kind), the elements the topology gives it (`_expected`): what
        a device whose presence is not read yet is reckoned to have (its sieve's share of the
        budget; shown not judged meanwhile)."""
        if self._expected_of is None:
            found: dict[tuple[str, Element], list[str]] = {}
            for element, keys in self._expected().items():
                for key in keys:
                    found.setdefault((device_of(key), element), []).append(key)
            self._expected_of = found
        return self._expected_of

    def _presence_queries(self, due: Mapping[Element, set[str] | None]) -> dict[Element, str]:
        return {element: promql.presence_query(element, self.labels, self.mapped, self.names,
                                               recorded=self.recorded,
                                               terms=("",) if devices is None else
                                               self._presence.terms(element, devices))
                for element, devices in due.items()}

    async def _older_rules(self, clocks: Mapping[Element, str],
                           answers: list[list[Sample]]) -> list[list[Sample]]:
        """The device clocks' `answers`, recorded; an element kind with none but per-element
        clocks (a rule file from before `fabtui:device_clock:*`) dated from those instead, and
        a note to re-generate the file."""
        empty = [(i, element) for i, element in enumerate(clocks) if not answers[i]]
        if not empty:
            return answers
        found = await self._ask(list(promql.recorded_device_clocks(
            self.labels, (e for _, e in empty)).values()))
        answers = list(answers)
        for (i, _), samples in zip(empty, found, strict=True):
            answers[i] = samples
        if any(found):
            # The action first: the Fabric screen's header shows as much as fits.
            self.notes.append("prometheus: re-generate the rule file (`fabtui prom rules`): it "
                              "has no fabtui:device_clock:* series, so each refresh is slower")
        return answers

    def _cheap_clocks(self, full: Mapping[Element, str]) -> dict[Element, str]:
        """Per element kind of `full` (the device clock queries), the query that dates the same
        devices from one clock series each (`Presence.clock_terms`: ~3,300 series at 1,024
        nodes where every series is ~41,000, the port kind's 16,384 the costliest query of a
        refresh while Prometheus ingests a scrape); a kind whose devices cannot be told apart
        keeps its query of every series, and so does each kind every `DISCOVER_EVERY`
        refreshes (the kinds taking turns: one kind's at most a refresh), which finds a target
        that starts being dated; since issue 42.3 not every series but the usual first
        elements' on every target and a slice of every series (`Presence.discovery_terms`).
        A kind whose new device's elements could not be read reads every series. (A negative
        matcher excluding the dated targets, asked every refresh instead, cost more:
        Prometheus 2.42 merges the postings of every excluded label value, each `instance`
        value's naming every series of its node.)"""
        found = {}
        kinds = sorted(full)
        for turn, element in enumerate(kinds):
            discover = self._polls % DISCOVER_EVERY == turn * DISCOVER_EVERY // len(kinds)
            tail = self.labels.grouping(element)[-1]
            terms = None if element in self._rediscover else \
                self._presence.clock_terms(element, tail)
            self._rediscover.discard(element)
            if terms and discover:  # and a slice of every series (`Presence.discovery_terms`)
                terms += self._presence.discovery_terms(element, tail,
                                                        self._polls // DISCOVER_EVERY)
            if terms:
                found[element] = promql.device_clock_query(element, self.labels, self.mapped,
                                                           self.names, terms)
        return found

    async def _clocks_of_missing(self, kinds: list[Element], dated: list[list[Sample]],
                                 cheap: Iterable[Element]) -> list[list[Sample]]:
        """The cheap device clocks' answers (`_cheap_clocks`), with the clocks of the scrape
        targets they miss (dated by the last refresh, and their first element's series has no
        sample now: it went stale, or the target is gone) read from every series of those
        targets (of the `cheap` kinds: the others read every series)."""
        known = self._presence.devices or {}
        cheap = set(cheap)
        missing: list[tuple[int, Element, set[tuple[tuple[str, str], ...]]]] = []
        for i, (element, samples) in enumerate(zip(kinds, dated, strict=True)):
            if element not in cheap:
                continue
            answered = {_target(s.labels) for s in samples}
            lost = {_target(t) for targets in known.get(element, {}).values()
                    for t in targets} - answered
            if lost:
                missing.append((i, element, lost))
        if not missing:
            return dated
        found = await self._ask([promql.device_clock_query(
            element, self.labels, self.mapped, self.names, matchers(dict(t) for t in lost))
            for _, element, lost in missing])
        dated = list(dated)
        for (i, _, lost), samples in zip(missing, found, strict=True):
            dated[i] = [*dated[i], *(s for s in samples if _target(s.labels) in lost)]
        return dated

    @property
    def sieving(self) -> bool:
        """Whether a refresh reads only what nears a limit (`fabtui.prom.sieve`)."""
        mode = self.settings.mode
        if mode != "auto":
            return mode in ("sieve", "recorded")
        return sum(len(n.nics) for n in self.graph.nodes.values()) >= SIEVE_FROM_NICS

    @property
    def recorded(self) -> bool:
        """Whether the sieve and the clocks are read from recording rules (`rules()`):
        `mode = "recorded"`, or `auto` where this Prometheus was found to evaluate them."""
        if self.settings.mode == "auto":
            return bool(self._rules_loaded) and self.sieving
        return self.settings.mode == "recorded"

    def _rules_check_due(self) -> bool:
        """`mode = "auto"` at scale: whether this refresh asks if the recording rules are
        loaded (the first refresh, and every `RULES_CHECK_EVERY` after)."""
        return self.settings.mode == "auto" and self.sieving and (
            self._rules_loaded is None or not self._polls % RULES_CHECK_EVERY)

    async def _rules_found(self) -> bool | None:
        """Whether the recording rules are loaded; None when Prometheus did not answer (the
        refresh itself reports an unreachable server; the last answer is kept)."""
        with contextlib.suppress(PromError):
            found = (await self._ask([RULES_PROBE]))[0]
            return bool(found and found[0].value > 0)
        return None

    def _take_rules(self, found: bool | None) -> None:
        if found is None:
            return
        if found and not self._rules_loaded:  # read from the rules: raw sieves forgotten
            self._sieved = SieveMemory()  # its budget: set by each poll
        self._rules_loaded = found

    def _offer_rules(self) -> None:
        """A note, after a slow refresh in `mode = "auto"` without the rules, saying how to
        load them (one command) and that they are taken up by themselves."""
        if self.settings.mode == "auto" and self.sieving and not self._rules_loaded \
                and self.last_round_s is not None and self.last_round_s > SLOW_REFRESH_S:
            self.notes.append(
                f"prometheus: a refresh took {self.last_round_s:.1f} s reading raw series; "
                "load fabtui's recording rules to make it fast: `fabtui prom rules > "
                "<dir>/fabtui.rules.yml`, list it under rule_files, reload Prometheus "
                "(fabtui notices them by itself)")

    def rules(self, interval: str | None = None, *, as_json: bool = False,
              alerting: bool = False, flap_window: str = "15m") -> str:
        """The recording rule file `mode = "recorded"` reads (`fabtui.prom.rules`): YAML, or
        JSON (which Prometheus reads as YAML too); with `alerting`, the fabric's alerting
        rules beside them (`fabtui.prom.alerting`, a second group)."""
        clocks = {str(element): text for element, text in
                  promql.clock_queries(self.labels, self._stamps()).items()}
        devices = {str(element): text for element, text in
                   promql.recorded_device_clocks(self.labels, self._stamps()).items()}
        alerts = self.alert_rules(flap_window) if alerting else []
        if as_json:
            document = rules_document(self.sieves, clocks, interval, devices)
            if alerts:
                document["groups"].append(alerting_document(alerts, interval))
            return json.dumps(document, indent=2) + "\n"
        text = rules_yaml(self.sieves, clocks, interval, devices)
        return text + alerting_yaml(alerts, interval) if alerts else text

    def alert_rules(self, flap_window: str = "15m") -> list[AlertRule]:
        """The fabric's alerting rules (`fabtui.prom.alerting`) for this topology, label
        mapping, metric names and catalog, counting rates over the configured window."""
        return RuleBook(self.graph, self.labels, self.names, self.catalog,
                        self.settings.window, flap_window).rules()

    def _first_queries(self) -> list[str]:
        """A refresh's first round besides the clocks: (recorded) one selector for every
        sieve's series. Sieving raw series: none (`_resieve` asks after the clocks); the full
        read: none either (`_stream` reads it beside the first round)."""
        return [every_sieve()] if self.recorded else []

    def _sieve_kinds(self) -> set[Element]:
        return {m.element for m in self.mapped if m.key in self.sieves}

    def _whole_ahead(self) -> list[tuple[Element, str]]:
        """(element kind, mapping key) of the sieves this refresh asks of whole kinds whatever
        the clocks say (`SieveMemory.whole_ahead`: on the first refresh, every kind): asked
        with the first round instead of after it (one round trip fewer; the first refresh's
        whole sieve is most of what Prometheus evaluates)."""
        ahead = self._sieved.whole_ahead(self._sieve_kinds())
        return [(m.element, m.key) for m in self.mapped
                if m.element in ahead and m.key in self.sieves]

    async def _resieve(self, clocks: Sequence[Element], dated: list[list[Sample]],
                       ahead: Mapping[tuple[Element, str], list[Sample]]
                       ) -> dict[str, list[Sample]]:
        """The sieve's answers by mapping key, asking only about the devices scraped since
        their last sieve (`fabtui.prom.resieve`; `dated`: the device clocks' answers;
        `ahead`: the whole kinds' sieves, already answered); at a kind's spread turn, also
        about the series outside its dated devices (`_outside`)."""
        times = device_times(clocks, dated, self.resolver)
        presence = self._presence
        sizes = {key: len(members) for key, members in self._expected_sizes().items()
                 if key not in presence.read}
        sizes.update((key, len(members)) for key, members in presence.by_device.items())
        memory = self._sieved
        if memory.budget is not None:  # paced: what the recent refreshes and this one's
            memory.budget = self._pace.budget(memory.budget,  # first round took
                                              self.clock() - self._started)
        self.sieve_budget = memory.budget
        plan = memory.plan(self._sieve_kinds(), times, sizes)
        beyond: dict[Element, str] = {}
        for element in sorted(memory.turned):
            excluding = self._presence.outside(element)
            if excluding is None:  # nothing to exclude the dated devices by: the kind whole
                plan[element] = None
            else:
                beyond[element] = promql.outside_query(
                    element, self.labels,
                    sorted({self.names[m.key] for m in self.mapped if m.element == element}),
                    excluding)
        asked: list[tuple[Element, str]] = []
        texts: list[str] = []
        for element, devices in plan.items():
            if (devices is not None and not devices) or \
                    (devices is None and any(e == element for e, _ in ahead)):
                continue
            texts += self._sieves_of(element, "" if devices is None else
                                     self._presence.terms(element, devices), asked)
        # the elements of the devices sieved for the first time, never read: beside their
        # sieve (the first read of the presence spread with the first sieve)
        unread = {element: new for element, devices in plan.items() if devices
                  if (new := presence.unread(element, devices))}
        for element, clocked in times.items():  # and one device of a kind none was read of:
            if clocked and not presence.tails.get(element) and element not in unread:
                unread[element] = {min(clocked)}  # its usual first element dates the others
        # (`Presence.clock_terms`; else the next refresh reads every clock series of the kind)
        found = await self._ask([*texts, *beyond.values(),
                                 *self._presence_queries(unread).values()])
        presence.record(unread, found[len(texts) + len(beyond):], self.resolver)
        found = found[:len(texts) + len(beyond)]
        answers = dict(zip(asked, found, strict=False))
        answers.update(ahead)
        for element, devices in plan.items():
            if devices is None or devices:
                memory.record(element, devices,
                              {k: a for (e, k), a in answers.items() if e == element},
                              self.mapped, self.resolver, times.get(element, {}))
        outside = await self._outside(dict(zip(beyond, found[len(texts):], strict=True)))
        for element in beyond:
            memory.record_outside(element, outside.get(element, {}), times.get(element, {}))
        self.last_sieve = {str(e): (None if d is None else len(d)) for e, d in plan.items()}
        return memory.by_key()

    def _sieves_of(self, element: Element, terms: str | list[str],
                   asked: list[tuple[Element, str]]) -> list[str]:
        """The sieve queries of `element`'s metrics, of the series `terms` select; their
        (kind, mapping key) appended to `asked`."""
        of_kind = tuple(m for m in self.mapped if m.element == element)
        found = sieves(of_kind, {m.key: self.query_of(m, terms) for m in of_kind}, self.catalog,
                       self._slowest)
        asked += [(element, key) for key in found]
        return list(found.values())

    async def _outside(self, counted: Mapping[Element, list[Sample]]
                       ) -> dict[Element, dict[str, list[Sample]]]:
        """At kinds' turns, per kind, the sieve's answers (by mapping key) about the series of
        devices no clock dates: `counted` (per kind, the answer of `promql.outside_query`: one
        sample per such target, none where every device is dated, the common case, which asks
        nothing more) names their targets, whose series are then sieved by their labels. One
        negative matcher a kind's turn: Prometheus merges the postings of every dated value
        for it, so it is not asked with each sieve query."""
        asked: list[tuple[Element, str]] = []
        texts: list[str] = []
        for element, samples in counted.items():
            targets = [{k: v for k, v in s.labels.items() if k != "__name__"} for s in samples]
            if targets:
                texts += self._sieves_of(element, matchers(targets), asked)
        found: dict[Element, dict[str, list[Sample]]] = {}
        for (element, key), samples in zip(asked, await self._ask(texts) if texts else [],
                                           strict=True):
            found.setdefault(element, {})[key] = samples
        return found

    def _unjudged(self, quiet: dict[tuple[str, Element], list[str]]
                  ) -> dict[tuple[str, Element], list[str]]:
        """Takes out of `quiet` (the elements present and not read in full) those of the
        devices whose kind was never sieved (a spread first sieve): not judged, not ok; and
        returns them. None left to sieve (every dated device was; no kind lacked clocks):
        nothing to take, no walk over every quiet element."""
        unjudged: dict[tuple[str, Element], list[str]] = {}
        if not self._sieved.unsieved_kinds and not self._sieved.clockless:
            return unjudged
        kinds = self._sieve_kinds()
        clocks = self._sieved.clocks
        for device, element in list(quiet):
            if element in kinds and device not in clocks.get(element, {}):  # never sieved
                unjudged[(device, element)] = quiet.pop((device, element))
        # dated, never sieved and their elements not read yet (`_spread_first`): those the
        # topology gives them
        expected = self._expected_sizes()
        for element, devices in (self._presence.devices or {}).items():
            if element in kinds:
                seen = clocks.get(element, {})
                for device in self._presence.unread(element, devices):
                    if device not in seen and (members := expected.get((device, element))):
                        unjudged[(device, element)] = members
        return unjudged

    def _note_unjudged(self, unjudged: Mapping[tuple[str, Element], list[str]]) -> str:
        """Why the `unjudged` elements are not judged (a detail panel says it), also a note
        for the header; empty when none is."""
        if not unjudged:
            return ""
        devices = {device for dated in (self._presence.devices or {}).values()
                   for device in dated} | {device for device, _ in self._presence.by_device}
        waiting = {device for device, _ in unjudged}
        text = (f"not sieved yet: the first sieve of raw series is spread over the first "
                f"refreshes ({len(devices) - len(waiting):,} of {len(devices):,} devices "
                f"judged, {len(waiting):,} to go; `fabtui prom rules` makes it one refresh)")
        self.notes.append(f"prometheus: {text}")
        return text

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
    async def _stream(self, readings: Readings) -> None:
        """The full read (not sieving) into `readings`: every mapped metric's query fetched
        concurrently on the source's threads, and each answer decoded, folded in and dropped
        before the next is decoded (one lock), so one answer's objects are alive at a time;
        decoding them all at once, then folding, fragmented pymalloc's arenas and the RSS
        grew a refresh (`benchmarks/prom_memory.py --mode full`)."""
        loop = asyncio.get_running_loop()
        decoding = threading.Lock()

        def read(mapped: Mapped) -> None:
            text = self.queries[mapped.key]
            body = self.client.fetch(text, self.at)
            with decoding:
                self._fold(readings, mapped, self.client.samples(text, body))

        await asyncio.gather(*(loop.run_in_executor(self._pool, read, m) for m in self.mapped))

    async def _ask(self, texts: list[str]) -> list[list[Sample]]:
        return await self._all(self.client.query, [(q, self.at) for q in texts])

    async def _all(self, call: Callable[..., T], calls: list[tuple[object, ...]]) -> list[T]:
        """`call(*args)` for every `args` of `calls`, concurrently on the source's threads."""
        loop = asyncio.get_running_loop()
        return list(await asyncio.gather(*(loop.run_in_executor(self._pool, call, *args)
                                           for args in calls)))

    async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
        self.notes.clear()
        started = self._started = self.clock()
        self.sieve_budget = None
        recheck = False
        if self._rules_check_due():
            if self._rules_loaded is None:  # what to read depends on it: asked first
                self._take_rules(await self._rules_found())
            else:  # asked beside the first round; taken up from the next refresh
                recheck = True
        self._polls += 1
        self._sieved.budget = self.first_sieve_elements
        first = self._first_queries()
        sieving = self.sieving
        clocks = promql.device_clock_queries(self.labels, self._stamps(), recorded=self.recorded)
        due = self._presence_due()
        presence = self._presence_queries(due)
        # reading the whole presence of raw series (the first refresh), the device clocks are
        # its maxima per device: not asked (Prometheus would select and stamp every clock
        # series twice, most of the first round's cost)
        derive = not self.recorded and set(due) == set(clocks) and \
            all(devices is None for devices in due.values())
        cheap = self._cheap_clocks(clocks) if sieving and not self.recorded and not derive \
            else {}
        asked_clocks = [] if derive else [cheap.get(e, text) for e, text in clocks.items()]
        # The last refresh's full read, asked with the first round: when the sieve names the
        # same elements again (a storm lasts minutes) the refresh needs no second round trip,
        # which is what a loaded Prometheus (its rule evaluation) makes slow. So are the
        # sieves of the kinds sieved whole (the first refresh's: every kind).
        guess = self._full_texts if sieving else []
        ahead = self._whole_ahead() if sieving and not self.recorded else []
        texts = [*first, *asked_clocks, *presence.values(), "up == 0"]
        readings = Readings()
        rules_found: bool | None = None
        past: tuple[list[str], list[list[Series]]] | None = None
        try:
            answers, _, rules_found, past = await asyncio.gather(
                self._ask([*texts, *guess, *(self.sieves[key] for _, key in ahead)]),
                self._stream(readings) if not sieving else asyncio.sleep(0),
                self._rules_found() if recheck else _nothing(),
                # the sparklines' past of a full read: every device's, asked at once
                self._past_asked(None) if not sieving and not self._seeded else _nothing())
            whole = dict(zip(ahead, answers[len(texts) + len(guess):], strict=True))
            guessed = answers[len(texts):len(texts) + len(guess)]
            del answers[len(texts):]
            ends = len(first) + len(asked_clocks)
            if derive:
                present = dict(zip(due, answers[ends:-1], strict=True))
                dated = [device_clocks(element, present[element], self.labels)
                         for element in clocks]
            else:
                dated = answers[len(first):ends]
            if cheap:
                dated = await self._clocks_of_missing(list(clocks), dated, cheap)
            if self.recorded:
                dated = await self._older_rules(clocks, dated)
            before = self._presence.date(clocks, dated, readings, self.resolver)
            self._presence.record(due, answers[ends:-1], self.resolver)
            if before is not None:  # a target came or went: read its elements, drop theirs
                await self._changed(before)
            self._note_down(answers[-1])
            if sieving and not self.recorded:
                by_key = await self._resieve(list(clocks), dated, whole)
            elif sieving:
                by_key = self._by_key(first, answers[:len(first)])
            quiet: dict[tuple[str, Element], list[str]] = {}
            flagged: dict[Element, list[str]] | None = None
            if sieving:
                flagged, named = self._flagged(by_key)
                wanted = [(m, self.query_of(m, flagged[m.element])) for m in self.mapped
                          if m.element in flagged]
                asked = [q for _, q in wanted]
                # the sparklines' past (the first refresh) beside the full read it dates
                full, past = await asyncio.gather(
                    _ready(guessed) if asked == guess else self._ask(asked),
                    self._past_asked(flagged) if not self._seeded else _nothing())
                self._full_texts = asked
                self._read(readings, {m.key: a for (m, _), a in zip(wanted, full, strict=True)},
                           named)
                quiet = self._presence.quiet(readings)
            unjudged = self._unjudged(quiet) if sieving and not self.recorded else {}
        except PromError as exc:
            self.notes.append(f"prometheus {exc.kind}: {exc}")
            for result in self._unreachable(str(exc)):
                yield Results(result, self.settings.stale_after)
            self.last_round_s = self.clock() - started
            self._paced()
            # and the round failed: the header says so in red and the poller backs off
            yield SourceFailed(f"prometheus {exc.kind}: {exc}")
            return
        self._note_gaps(readings, bool(self._presence.by_device) or
                        any((self._presence.devices or {}).values()))
        waiting = frozenset(key for members in unjudged.values() for key in members)
        if waiting or self.unjudged:  # none left: said once, then nothing to say
            yield NotJudged(waiting, self._note_unjudged(unjudged))
        self.unjudged = waiting
        for result in self.assembler.results(readings, self.queries):
            yield Results(result, self.settings.stale_after)
        raw = sieving and not self.recorded
        for (device, element), members in quiet.items():
            at = readings.sampled.get(device)
            # sieving raw series: quiet as of the sieve that found it so (a device scraped
            # since and not sieved again yet, waiting for the budget, is not ok as of now)
            judged = self._sieved.clocks.get(element, {}).get(device) if raw else None
            if at is not None and judged is not None:
                at = min(at, judged)
            if at is not None:
                yield Quiet(device, tuple(members), tuple(self._probes_of[element]), at,
                            self.settings.stale_after)
        if not self._seeded:
            self._seeded = True
            devices = {device_of(key) for per_key in readings.values.values()
                       for key in per_key}
            if past is not None:  # else: sparklines start empty, as for probes
                history = self._past(devices, *past)
                if history.series:
                    yield history
        if not sieving:  # every series decoded: give back what glibc's arenas kept
            heap.trim()
        self.last_round_s = self.clock() - started
        self._paced()
        self._take_rules(rules_found)
        self._offer_rules()

    def _paced(self) -> None:
        """After a refresh that sieved by a paced budget: its time taken into the pacing
        (`fabtui.prom.pace`: the next budget shrinks after a slow refresh, grows after a fast
        one that used it)."""
        if self.sieve_budget is not None and self.last_round_s is not None:
            self._pace.after(self.last_round_s, self._sieved.spent)

    async def _past_asked(self, flagged: Mapping[Element, list[str]] | None
                          ) -> tuple[list[str], list[list[Series]]] | None:
        """The sparklines' past from range queries, `HISTORY` steps back: pause and FEC rates
        of every device (a full read), or at scale of those the sieve named (its `flagged`
        matchers); (mapping keys, answers), or None when Prometheus did not answer."""
        from fabtui.views.status import HISTORY

        now = time.time()
        step = self.history_step or max(1.0, promql.seconds(self.settings.window) / 4)
        span = step * (HISTORY - 1)
        kinds = {m.key: m.element for m in self.mapped}
        keys = [k for k in SPARKLINES if k in self.queries]
        if flagged is not None:
            keys = [k for k in keys if kinds[k] in flagged]
        texts = [self.queries[k] if flagged is None else
                 self.query_of(self._mapped_of(k), flagged[kinds[k]]) for k in keys]
        with contextlib.suppress(PromError):
            return keys, await self._all(self.client.query_range,
                                         [(text, now - span, now - step, step)
                                          for text in texts])
        return None

    def _past(self, devices: set[str], keys: list[str],
              answers: list[list[Series]]) -> History:
        """The sparklines' past of the devices just read in full, from `_past_asked`."""
        past: dict[str, dict[str, list[float]]] = {}
        for key, series in zip(keys, answers, strict=True):
            mapped = self._mapped_of(key)
            for item in series:
                element = self.resolver.element(mapped.element, item.labels)
                if element is not None and device_of(element) in devices:
                    past.setdefault(element, {})[SPARKLINES[key]] = [
                        round(v, 3) for _, v in item.points]
        return History(past)

    def _mapped_of(self, key: str) -> Mapped:
        return next(m for m in self.mapped if m.key == key)

    def _read(self, readings: Readings, answers: Mapping[str, list[Sample]],
              only: set[str] | None = None) -> None:
        """Every sample of `answers` onto its element (of `only`'s elements, when given: the
        matchers of a sieve's full read select a cross product of labels, a superset)."""
        for mapped in self.mapped:
            self._fold(readings, mapped, answers.get(mapped.key, []), only)

    def _fold(self, readings: Readings, mapped: Mapped, samples: list[Sample],
              only: set[str] | None = None) -> None:
        """`mapped`'s samples onto their elements (of `only`'s, when given)."""
        for sample in samples:
            key = self.resolver.element(mapped.element, sample.labels)
            if key is not None and (only is None or key in only):
                extra = tuple(sorted((b, sample.labels.get(b, "")) for b in mapped.by))
                readings.add(mapped, key, extra, sample.value)

    async def _changed(self, before: Mapping[Element, Mapping[str, object]]) -> None:
        """Devices dated now and not at the last refresh: their elements read at once; devices
        no longer dated (no series left): their elements dropped."""
        fresh = self._presence.changed(before)
        if fresh:
            queries = self._presence_queries(dict(fresh))
            try:
                answers = await self._ask(list(queries.values()))
            except PromError:  # not dated yet, then: the next refresh reads them again
                self._presence.undate(fresh)
                self._rediscover.update(fresh)
                raise
            self._presence.record(dict(fresh), answers, self.resolver)

    def _flagged(self, answers: Mapping[str, list[Sample]]) -> tuple[dict[Element, list[str]],
                                                                     set[str]]:
        """Per element kind, the matcher terms of the full read of the elements the sieve
        named (`fabtui.prom.presence.flagged`); and those elements."""
        return flagged(answers, self.mapped, self.labels, self.resolver)

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
            yield ProbeResult(probe="prometheus", target=device, command=self.client.shown_url,
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
        texts = {m.key: promql.count_query(self.names[m.key], m, self.labels)
                 for m in self.mapped}
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
                         if device_of(p) in graph.switches]}


def _target(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A device clock sample's scrape target: its labels (the device labels), sorted."""
    if "__name__" in labels:  # (an aggregation's answer has none: no copy, the common case)
        labels = {k: v for k, v in labels.items() if k != "__name__"}
    return tuple(sorted(labels.items()))


async def _nothing() -> None:
    """An awaitable of nothing, in the place of a query a refresh does not ask."""
    return None


async def _ready(value: T) -> T:
    return value


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
