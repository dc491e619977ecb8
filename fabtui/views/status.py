"""The live status model: what every element of the fabric looked like at the latest poll.

`FabricStatus` takes probe results (from any `StatusSource`: the probe poller in
`workspace/probesource.py`, the Prometheus reader in `workspace/promsource.py`) and keeps, per
element, the latest verdict of each probe that measured it, its values, short histories of its
counters, and whether its device answered. `snapshot()` freezes it into a `FabricSnapshot` a face
can read without locks: per-element health (staleness judged at the snapshot's time), roll-ups (a
node shows its NICs and GPUs, a host link its NIC, port and optic) and problem counts per layer.

What a source yields is in `views/updates.py`; polling it on an interval, in `views/poller.py`.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from fabtui.model.element import Kind
from fabtui.model.probe import ProbeResult
from fabtui.model.transport import ErrorKind
from fabtui.model.verdict import Verdict
from fabtui.views.fabricmap import LAYER_OF, FabricMap, Layer
from fabtui.views.updates import History, NotJudged, Quiet, Results, StatusUpdate

HISTORY = 60
"""Samples kept per counter for sparklines."""
HISTORY_METRICS = ("rate.", "pause_ratio.", "pause_share.", "fec_pre_ber", "pre_fec_ber",
                   "rx_power_dbm", "temperature_c")
"""Metric name prefixes worth a sparkline (counters per second, BER, optic power)."""
KEY_COUNTERS = ("rate.", "rx_power_dbm", "fec_pre_ber", "pre_fec_ber")
"""What a detail panel lists first after problems: pause/s, FEC/s, BER, rx power."""
OPTIC_METRICS = ("rx_power", "tx_power", "tx_bias", "temperature_c", "optic_")
"""Metrics a port's DOM reading reports about the optic in it."""

class Health(StrEnum):
    """How an element looks now. Never shown by colour alone: the app gives each a sign
    (`tui.glyphs`)."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"
    UNJUDGED = "unjudged"
    """Has series, no verdict yet (`NotJudged`): never ok, and so no roll-up over it is."""
    STALE = "stale"
    UNREACHABLE = "unreachable"

    @property
    def rank(self) -> int:
        """Worse is higher, for roll-ups (unknown is below ok: nothing known is no problem)."""
        return _RANK[self]

    @property
    def problem(self) -> bool:
        return self in _PROBLEMS


_PROBLEMS = frozenset((Health.WARN, Health.FAIL, Health.STALE, Health.UNREACHABLE))
_RANK = {Health.UNKNOWN: 0, Health.OK: 1, Health.UNJUDGED: 2, Health.STALE: 3,
         Health.WARN: 4, Health.FAIL: 5, Health.UNREACHABLE: 6}
_RANK_OR_NONE: dict[Health | None, int] = {None: -1, **{h: r for h, r in _RANK.items()}}
_BY_RANK = {rank: health for health, rank in _RANK.items()}
_OF_VERDICT = {Verdict.OK: Health.OK, Verdict.SKIPPED: Health.OK, Verdict.WARN: Health.WARN,
               Verdict.FAIL: Health.FAIL}
_NEVER = float("inf")


_NOT_REACHED = frozenset((ErrorKind.UNREACHABLE, ErrorKind.TIMEOUT, ErrorKind.AUTH,
                          ErrorKind.HOST_KEY, ErrorKind.CANCELLED))
"""Transport errors that mean the device was not reached (or not trusted): it shows ⊘."""


def _answered(result: ProbeResult) -> bool:
    """Whether the probe's device answered though nothing was measured: its command failed (a
    missing tool, a CLI that rejected it, no driver) or its output could not be read, as
    opposed to a device that did not answer at all."""
    last = result.raw[-1] if result.raw else None
    return last is not None and last.error not in _NOT_REACHED


def worst_health(values: Iterable[Health]) -> Health:
    """The worst of `values` (unknown when empty)."""
    return max(values, key=lambda h: _RANK[h], default=Health.UNKNOWN)


@dataclass(frozen=True)
class Value:
    """One latest value of an element."""

    value: float | int | str | bool | None
    unit: str
    verdict: Verdict
    probe: str
    limit: float | None = None


@dataclass(frozen=True)
class Reading:
    """What one probe last said about one element."""

    probe: str
    verdict: Verdict
    at: float
    """Epoch seconds the result ended."""
    stale_after: float
    """Seconds after which this reading is stale."""
    error: str | None = None
    """Why the device did not answer (the element is unreachable)."""


@dataclass(frozen=True)
class LiveFinding:
    """What one probe concluded about one element at its latest reading (a metric out of its
    limits), as the live view keeps it: typed, never parsed back from a line."""

    probe: str
    severity: str
    """`error` or `warning`."""
    component: str
    """What the finding names, in the probe's terms (`leaf-g00-r5:Ethernet16/lane1`,
    `node001:GPU2`): the element it landed on, or a part of it."""
    message: str
    """What it says, component first (`leaf:Ethernet40: pause_share.rx.PFC3 = 1 (limit 0.5)`)."""

    @property
    def what(self) -> str:
        """The message without the component it opens with: the metric and its value."""
        head, sep, rest = self.message.partition(": ")
        return rest if sep and head == self.component else self.message

    @property
    def line(self) -> str:
        """`error: leaf:Ethernet40: pause_share.rx.PFC3 = 1 (limit 0.5)`: as a detail shows it."""
        return f"{self.severity}: {self.message}"

    def __str__(self) -> str:
        return f"{self.probe} {self.line}"


@dataclass(frozen=True)
class ElementState:
    """Everything known about one measured element (frozen; replaced on each update)."""

    readings: Mapping[str, Reading]
    values: Mapping[str, Value]
    findings: tuple[LiveFinding, ...]
    history: Mapping[str, Sequence[float]]
    """Per metric, its last `HISTORY` values, oldest first (arrays of doubles, never changed
    once stored: an update stores new ones)."""

    def health(self, now: float) -> Health:
        """Unreachable if any probe's device did not answer, stale if every reading is older
        than its interval allows, else the worst fresh verdict."""
        return self.health_until(now)[0]

    def health_until(self, now: float) -> tuple[Health, float]:
        """`health(now)`, and until when it holds at the latest: the moment its first fresh
        reading goes stale (infinity when none can change it: unreachable, or all stale)."""
        worst: Health | None = None
        rank = -1
        until = _NEVER
        for reading in self.readings.values():  # inline worst_health: per element, per snapshot
            if reading.error is not None:
                return Health.UNREACHABLE, _NEVER
            if now - reading.at <= reading.stale_after:
                until = min(until, reading.at + reading.stale_after)
                health = _OF_VERDICT.get(reading.verdict, Health.FAIL)
                if _RANK[health] > rank:
                    worst, rank = health, _RANK[health]
        if worst is None:
            return (Health.STALE if self.readings else Health.UNKNOWN), _NEVER
        return worst, until

    @property
    def error(self) -> str | None:
        return next((r.error for r in self.readings.values() if r.error), None)

    @property
    def updated(self) -> float:
        return max((r.at for r in self.readings.values()), default=0.0)


class PollState(StrEnum):
    """What the poller is doing."""

    STARTING = "starting"
    POLLING = "polling"
    WAITING = "waiting"
    FAILED = "failed"
    """The last round raised: the snapshot's `failure` says why; the next try is `retry_s`
    seconds after it."""
    STOPPED = "stopped"


@dataclass(frozen=True)
class LayerCount:
    """Problem counts of one layer."""

    total: int
    warn: int = 0
    fail: int = 0
    stale: int = 0
    unreachable: int = 0
    ok: int = 0
    """Elements known to be fine (the rest of `total` less the problems: not known yet)."""
    unjudged: int = 0
    """Elements with series not judged yet (`Health.UNJUDGED`), of those not known."""

    @property
    def problems(self) -> int:
        return self.warn + self.fail + self.stale + self.unreachable


@dataclass(frozen=True)
class FabricSnapshot:
    """The fabric at one moment (frozen; a face reads it without locks)."""

    taken_at: float
    round: int
    poll: PollState
    health: Mapping[str, Health]
    """Every element with a known health, roll-ups included; missing: unknown."""
    states: Mapping[str, ElementState]
    counts: Mapping[Layer, LayerCount]
    last_data: float | None = None
    """Epoch seconds of the newest result."""
    round_s: float | None = None
    """How long the last finished poll took."""
    note: str | None = None
    """A poll-wide problem (a probe the catalog lacks, a target set that matches nothing)."""
    failure: str | None = None
    """Why the last round failed (`KeyError: 'x'`); set only when `poll` is `FAILED`."""
    retry_s: float | None = None
    """Seconds from `taken_at` to the next try after a failed round."""
    unjudged_why: str = ""
    """Why the elements that are `Health.UNJUDGED` are not judged yet (`NotJudged.why`)."""

    def of(self, key: str) -> Health:
        return self.health.get(key, Health.UNKNOWN)

    def troubled_members(self, fabric: FabricMap, key: str) -> list[str]:
        """The members of `key`'s roll-up that are not ok, worst first: why a node, a cable or
        a switch reads a health its own readings may not give it (a node is red because of
        one NIC)."""
        members = [m for m in fabric.members.get(key, ()) if self.of(m) in _PROBLEMS]
        return sorted(members, key=lambda m: -self.of(m).rank)


EMPTY = FabricSnapshot(0.0, 0, PollState.STARTING, {}, {}, {})


class FabricStatus:
    """Per-element latest readings, values and histories (thread-safe; see module docstring)."""

    def __init__(self, fabric: FabricMap, clock: Callable[[], float] = time.time) -> None:
        self.fabric = fabric
        self.clock = clock
        self._lock = threading.Lock()
        self._states: dict[str, ElementState] = {}
        self._history: dict[str, dict[str, array[float]]] = {}
        """Per element, per metric: its sparkline's values, an array of doubles (one object per
        series: ~0.6 KB at 60 values where a deque of floats and its frozen tuple took ~2.5 KB,
        and left pymalloc's arenas pinned by floats kept between each refresh's freed
        answers: RSS grew ~10 MB a refresh at 128 nodes, `--mode full`)."""
        self._last_data: float | None = None
        self._unjudged: NotJudged = NotJudged(frozenset())
        """The source's last word on the elements it has not judged yet."""
        self._marks: dict[tuple[tuple[str, ...], float, float], Mapping[str, Reading]] = {}
        self._marks_before: dict[tuple[tuple[str, ...], float, float], Mapping[str, Reading]] = {}
        """The readings of the quiet marks since the last snapshot (and of those before it),
        by (probes, at, stale_after): a mark that repeats (at scale a device's marks repeat
        until its next scrape, a minute later) gets the same dict, so `_quiet` sees its
        elements unchanged and leaves them as they are."""
        self._healths: dict[str, tuple[ElementState, Health, float, float]] = {}
        """Per element, the health `snapshot` last judged: (state, health, judged at, holds
        until), reused while the state is the same object and the clock is in between."""

    def take(self, update: StatusUpdate) -> None:
        """Take one update of a source (see `StatusUpdate`); a `SourceFailed` changes nothing
        here (the poller shows it)."""
        if isinstance(update, Results):
            self.apply(update.result, update.stale_after)
        elif isinstance(update, Quiet):
            self.apply_quiet(update)
        elif isinstance(update, NotJudged):
            with self._lock:
                self._unjudged = update
        elif isinstance(update, History):
            self.seed_history(update)

    def seed_history(self, past: History) -> None:
        """Older values (element -> metric -> values, oldest first: a source that can read the
        past, as Prometheus's range queries do) go before the sparklines' own samples."""
        with self._lock:
            for key, metrics in past.series.items():
                self._seed(key, metrics)

    def apply_quiet(self, quiet: Quiet) -> None:
        """Elements a source found below every limit without reading their values
        (Prometheus at scale): each gets an ok reading of each of `quiet.probes`, replacing
        what those probes said before (a port's optic too)."""
        probes = quiet.probes
        with self._lock:
            self._last_data = max(self._last_data or 0.0, quiet.at)
            optic_of = self.fabric.optic_of
            states = self._states
            fresh = self._fresh(probes, quiet.at, quiet.stale_after)
            for key in quiet.keys:
                # holding this very mark already (the common case at scale: `_quiet` would
                # find every reading the same and leave it), nothing to do
                if (old := states.get(key)) is None or old.readings is not fresh:
                    self._quiet(key, probes, fresh)
                if (optic := optic_of(key)) and (  # what the port's DOM reading would say
                        (old := states.get(optic)) is None or old.readings is not fresh):
                    self._quiet(optic, probes, fresh)

    def apply(self, result: ProbeResult, stale_after: float) -> None:
        """Take one probe result: its metrics land on the elements they name; a result that
        measured nothing (the device did not answer) makes its target unreachable."""
        at = result.ended_at.timestamp()
        grouped: dict[str, list[tuple[str, Value]]] = {}
        element_of = self.fabric.element_of
        for metric in result.metrics:
            key, lane = element_of(metric.component)
            if metric.name.startswith(OPTIC_METRICS) and (optic := self.fabric.optic_of(key)):
                key = optic
            name = f"{metric.name} lane{lane}" if lane else metric.name
            grouped.setdefault(key, []).append(
                (name, Value(metric.value, metric.unit, metric.verdict, result.probe,
                             metric.limit)))
        findings: dict[str, list[LiveFinding]] = {}
        for finding in result.findings:
            key, _ = element_of(finding.component)
            # A finding goes where its metric went: a port's light (`rx_power_dbm`) is its
            # optic's (a dark optic's findings were dropped, its element showing none).
            about = finding.message.removeprefix(f"{finding.component}: ").split(" ", 1)[0]
            if about.startswith(OPTIC_METRICS) and (optic := self.fabric.optic_of(key)):
                key = optic
            findings.setdefault(key, []).append(LiveFinding(
                result.probe, finding.severity.value, finding.component, finding.message))
        error = result.error if result.verdict is Verdict.ERROR and not result.metrics else None
        verdict_of_error = result.verdict
        if error is not None:
            grouped.setdefault(result.target, [])
            if _answered(result):
                # The device answered but the command failed (`ibstat: command not found`):
                # it is reachable; what this probe reads is unknown there, which is a warning
                # naming why, never a device shown as down.
                findings.setdefault(result.target, []).append(LiveFinding(
                    result.probe, "warning", result.target,
                    f"{result.target}: {result.probe} could not read: {error}"))
                verdict_of_error, error = Verdict.WARN, None
        with self._lock:
            self._last_data = max(self._last_data or 0.0, at)
            for key, values in grouped.items():
                verdicts = [v.verdict for _, v in values] or [verdict_of_error]
                verdict = max(verdicts, key=lambda v: v.rank)
                reading = Reading(result.probe, verdict, at, stale_after, error)
                self._update(key, reading, values, findings.get(key, ()))

    def _seed(self, key: str, metrics: Mapping[str, Sequence[float]]) -> None:
        history = self._history.setdefault(key, {})
        for name, values in metrics.items():
            own = history.get(name, ())
            history[name] = array("d", [*map(float, values), *own][-HISTORY:])
        old = self._states.get(key)
        if old is not None:
            self._states[key] = ElementState(old.readings, old.values, old.findings,
                                             dict(history))

    def _fresh(self, probes: tuple[str, ...], at: float,
               stale_after: float) -> Mapping[str, Reading]:
        """The ok readings of a quiet mark: the same dict as a recent mark's with the same
        probes, time and freshness (see `_marks`)."""
        key = (probes, at, stale_after)
        found = self._marks.get(key)
        if found is None:
            found = self._marks_before.get(key)
        if found is None:
            found = {probe: Reading(probe, Verdict.OK, at, stale_after) for probe in probes}
        self._marks[key] = found
        return found

    def _quiet(self, key: str, probes: tuple[str, ...], fresh: Mapping[str, Reading]) -> None:
        old = self._states.get(key)
        # `fresh` is shared by every element of one mark (never mutated: updates copy it).
        if old is None:  # no merging
            self._states[key] = ElementState(fresh, {}, (), {})
            return
        # The same mark as last time (its readings are only ever stored by this method, which
        # dropped those probes' values then): nothing changed. The common case at scale, also
        # where two marks (a NIC's ethtool and its IB port) share an element.
        readings = old.readings
        for probe, reading in fresh.items():
            if readings.get(probe) is not reading:
                break
        else:
            return
        if not old.values and not old.findings:  # quiet before: only the readings change
            readings = fresh if old.readings.keys() <= fresh.keys() else \
                {**old.readings, **fresh}
            self._states[key] = ElementState(readings, {}, (), old.history)
            return
        readings = {**old.readings, **fresh}
        values = {n: v for n, v in old.values.items() if v.probe not in probes}
        findings = tuple(f for f in old.findings if f.probe not in probes)
        self._states[key] = ElementState(readings, values, findings, old.history)

    def _update(self, key: str, reading: Reading, values: list[tuple[str, Value]],
                findings: Iterable[LiveFinding]) -> None:
        old = self._states.get(key)
        readings = dict(old.readings) if old else {}
        readings[reading.probe] = reading
        merged = {n: v for n, v in (old.values.items() if old else ()) if v.probe != reading.probe}
        merged.update(values)
        kept = tuple(f for f in (old.findings if old else ()) if f.probe != reading.probe)
        tagged = tuple(findings)
        history = self._history.setdefault(key, {})
        for name, value in values:
            if name.startswith(HISTORY_METRICS) and isinstance(value.value, int | float) and \
                    not isinstance(value.value, bool):
                history[name] = _appended(history.get(name), float(value.value))
        frozen_history = dict(history) if values else (old.history if old else {})
        self._states[key] = ElementState(readings, merged, kept + tagged, frozen_history)

    def snapshot(self, round_no: int, poll: PollState, round_s: float | None = None,
                 note: str | None = None, *, failure: str | None = None,
                 retry_s: float | None = None) -> FabricSnapshot:
        """The status now, frozen, with roll-ups and per-layer counts."""
        now = self.clock()
        with self._lock:
            states = dict(self._states)
            last = self._last_data
            self._marks_before, self._marks = self._marks, {}
            unjudged = self._unjudged
        health = self._judge(states, now)
        fabric = self.fabric
        get = health.get
        for key in unjudged.keys:  # no verdict yet: never ok, nor a roll-up over it
            for each in (key, fabric.optic_of(key)):
                if each is not None and get(each, Health.UNKNOWN) is Health.UNKNOWN:
                    health[each] = Health.UNJUDGED
        rank = _RANK_OR_NONE.__getitem__
        for key, members in _rollups(fabric):  # the worst of the members' and its own
            top = max(map(rank, map(get, members)), default=-1)
            if top >= 0:
                health[key] = _BY_RANK[max(top, rank(get(key)))]
        counts = {}
        for layer, keys in _layers(fabric).items():  # one pass a layer (57,000 keys at scale)
            tally = Counter(map(get, keys))
            counts[layer] = LayerCount(len(keys), tally[Health.WARN], tally[Health.FAIL],
                                       tally[Health.STALE], tally[Health.UNREACHABLE],
                                       tally[Health.OK],
                                       tally[Health.UNJUDGED] if unjudged.keys else 0)
        return FabricSnapshot(now, round_no, poll, health, states, counts, last, round_s, note,
                              failure, retry_s,
                              unjudged.why if unjudged.keys else "")

    def _judge(self, states: Mapping[str, ElementState], now: float) -> dict[str, Health]:
        """Every element's health at `now`; an element whose state is the one judged last
        time, at a moment its health still holds for, is not judged again (at scale most are
        unchanged from one snapshot to the next)."""
        cache = self._healths
        health: dict[str, Health] = {}
        for key, state in states.items():
            seen = cache.get(key)
            if seen is not None and seen[0] is state and seen[2] <= now < seen[3]:
                health[key] = seen[1]
                continue
            judged, until = state.health_until(now)
            cache[key] = (state, judged, now, until)
            health[key] = judged
        return health


def _appended(values: array[float] | None, value: float) -> array[float]:
    """A new array: `values` (never changed: a frozen state may hold it) with `value` added,
    the oldest dropped beyond `HISTORY`. Built at its exact size (an append over-allocates:
    a full one took 552 bytes of buffer from malloc instead of 480 from pymalloc's pools)."""
    return (values[1 - HISTORY:] if values is not None else _EMPTY) + array("d", (value,))


_EMPTY: array[float] = array("d")


def _rollups(fabric: FabricMap) -> list[tuple[str, tuple[str, ...]]]:
    """(element, members) in roll-up order: cables and switches, then nodes (cached)."""
    cached: list[tuple[str, tuple[str, ...]]] | None = getattr(fabric, "_rollup_cache", None)
    if cached is None:
        first = [(k, fabric.members.get(k, ())) for k, kind in fabric.kinds.items()
                 if kind in (Kind.HOST_LINK, Kind.SPINE_LINK, Kind.LEAF, Kind.SPINE)]
        cached = first + [(k, fabric.members.get(k, ())) for k in fabric.nodes]
        fabric._rollup_cache = cached  # type: ignore[attr-defined]
    return cached


def _layers(fabric: FabricMap) -> dict[Layer, list[str]]:
    cached: dict[Layer, list[str]] | None = getattr(fabric, "_layer_cache", None)
    if cached is None:
        cached = {layer: [] for layer in Layer}
        for key, kind in fabric.kinds.items():
            if (layer := LAYER_OF.get(kind)) is not None:
                cached[layer].append(key)
        fabric._layer_cache = cached  # type: ignore[attr-defined]
    return cached
