"""The fabric read from a real Prometheus scraping the simulated fabric's exporter.

One Prometheus per module (scrape_interval 1 s) scrapes `fabtui.sim.exporter` serving the demo
fabric playing pfc-storm; the tests read through its HTTP API with the same `PrometheusSource`
the app uses, and compare its verdicts with the direct probes'.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from fabtui.config import load_settings
from fabtui.model.element import device_of
from fabtui.model.probe import ProbeResult, Verdict
from fabtui.paths import demo_topology, shipped_templates
from fabtui.prom import pace
from fabtui.prom import queries as promql
from fabtui.prom.catalog import Element, Mapped
from fabtui.prom.client import Sample
from fabtui.prom.presence import device_clocks
from fabtui.prom.results import Readings
from fabtui.prom.sieve import sieves
from fabtui.sim.exporter import Exporter, scrape_config
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import fresh_state, state_file, write_state
from fabtui.views.fabricmap import FabricMap
from fabtui.views.status import FabricSnapshot, FabricStatus, Health, PollState
from fabtui.views.updates import History, Quiet, Results, StatusUpdate
from fabtui.workspace import Workspace, promsource
from fabtui.workspace.promsource import PrometheusSource, live_source
from tests.support.prom_server import PrometheusServer, require_prometheus

STORM_PORT = "leaf-g00-r4:Ethernet40"
STORM_NIC = "node006:mlx5_4"
T = TypeVar("T")


class Fabric:
    """The running pieces: the exporter, Prometheus, and a config that points at it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.state = state_file(self.data)
        write_state(self.state, fresh_state(demo_topology(), find_scenario("pfc-storm"),
                                            [shipped_templates()]))
        self.exporter = Exporter(self.state).start()
        # The recording rules of `fabtui prom rules` for this fabric and config, loaded from
        # the start (the URL is not used to write them).
        ruled = live_source(Workspace(load_settings(self.config(url="http://127.0.0.1:9"))))
        assert ruled is not None
        self.prometheus = PrometheusServer(
            folder, scrape_config("sim", f"127.0.0.1:{self.exporter.port}"),
            rules=ruled.rules())

    def config(self, **prometheus: str) -> Path:
        """A config file choosing the Prometheus source (`prometheus` overrides its keys)."""
        table = {"window": "8s", "stale_after": "15s", "timeout": "5s", **prometheus}
        if "url" not in table:
            table["url"] = self.prometheus.url
        lines = [f'data_dir = "{self.data}"', 'scenario = "pfc-storm"', 'source = "prometheus"',
                 "[prometheus]", *(f'{k} = "{v}"' for k, v in table.items())]
        path = self.folder / f"config-{len(list(self.folder.glob('config-*')))}.toml"
        path.write_text("\n".join(lines) + "\n")
        return path

    def settle(self) -> float:
        """Until every job's last scrape worked and the storm port has a sample and its storm
        rate over the window (on a loaded machine a 1 s scrape can time out, and its series
        are stale until the next: a sieve then missed the storm port); the moment of that."""
        self.prometheus.wait_for('min(up{job=~"sim-.*"}) == 1 and '
                                 'count(up{job=~"sim-.*"}) == 3', 30)
        self.prometheus.wait_for(
            'sonic_interface_operational_status{device="Ethernet40",instance="leaf-g00-r4"}', 30)
        self.prometheus.wait_for(
            'rate(sonic_interface_receive_pfc_packets{device="Ethernet40"}[8s]) > 9000', 30)
        return time.time()

    def moment(self) -> float:
        """A moment for reads that must all see the same values: settled, and the recording
        rules evaluated after it. An evaluation is stamped with its interval's start, up to
        1 s before it began (Prometheus aligns it): one that began 1 s after the settle is
        of samples after it."""
        settled = self.settle()
        self.prometheus.wait_evaluated(settled + 1.0)
        return time.time()

    def whole_at(self, moment: float) -> bool:
        """Whether every job's scrapes worked at `moment` and at the rule evaluation a recorded
        read of `moment` sees (the last one before it), asked once every scrape begun by then
        has ended. A scrape that times out (a 1 s switch scrape on a loaded machine) is
        written as failed at its start, its series stale from there: reads of `moment`, or a
        rule evaluation after that scrape, then lack that job's devices (a recorded sieve
        without the storm's switch, in a fresh-clone CI run), as the app's next refresh would
        (not judged, going stale), which is not what the reads were to compare."""
        time.sleep(max(0.0, moment + 2.5 - time.time()))  # a 1 s interval, a 1 s timeout
        recorded = " or on() ".join(f"timestamp(fabtui:device_clock:{kind})"
                                    for kind in ("gpu", "nic", "ibport", "port"))
        evaluated = self.prometheus.value_at(f"min({recorded})", moment) or moment
        # from the scrape before that evaluation (1 s apart, later on a loaded machine) on
        span = max(0.0, moment - evaluated) + 3.0
        return self.prometheus.value_at(
            f'count(min_over_time(up{{job=~"sim-.*"}}[{span:.0f}s]) == 1)', moment) == 3

    def scrapes_worked_since(self, start: float) -> bool:
        """Whether every job's scrapes from `start` to now worked (asked once those begun by
        now have ended)."""
        time.sleep(2.5)  # a 1 s interval, a 1 s timeout
        now = time.time()
        span = max(1.0, now - start)
        return self.prometheus.value_at(
            f'count(min_over_time(up{{job=~"sim-.*"}}[{span:.0f}s]) == 1)', now) == 3

    def whole_moment(self, read: Callable[[float], T]) -> T:
        """`read(moment)` for the first of five moments at which every scrape worked (from
        the rule evaluation a recorded read sees to the moment: a span of a few seconds, which
        a loaded machine misses more often than one instant); what it asserts counts only for
        such a moment."""
        for _ in range(5):
            moment = self.moment()
            try:
                found = read(moment)
            except AssertionError:
                if self.whole_at(moment):
                    raise
                continue
            if self.whole_at(moment):
                return found
        raise AssertionError("a scrape failed at each of 5 moments: the machine is too slow")

    def source(self, **prometheus: str) -> tuple[Workspace, PrometheusSource]:
        self.settle()
        ws = Workspace(load_settings(self.config(**prometheus)))
        found = live_source(ws)
        assert found is not None
        return ws, found


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fabric]:
    require_prometheus()
    running = Fabric(tmp_path_factory.mktemp("prom"))
    try:
        running.prometheus.wait_ready()
        # An 8 s rate() window full of scrapes: the storm's rate is steady (a window of a few
        # samples taken on a loaded machine can be off by half, the limit is half the maximum).
        running.prometheus.wait_for(
            'rate(sonic_interface_receive_pfc_packets{device="Ethernet40"}[8s]) > 9000 and '
            'count_over_time(sonic_interface_receive_pfc_packets{device="Ethernet40"}[8s]) > 5',
            60)
        yield running
    finally:
        running.prometheus.stop()
        running.exporter.stop()


def poll(source: PrometheusSource) -> list[StatusUpdate]:
    async def collect() -> list[StatusUpdate]:
        async with contextlib.aclosing(source.poll()) as stream:
            return [item async for item in stream]

    return asyncio.run(collect())


def healths_of(ws: Workspace, updates: list[StatusUpdate], moment: float | None = None) \
        -> dict[str, Health]:
    """The fabric's healths once `updates` are applied (at `moment` on the status's clock)."""
    status = FabricStatus(FabricMap.build(ws.graph()),
                          **({} if moment is None else {"clock": lambda: moment}))
    for update in updates:
        status.take(update)
    return dict(status.snapshot(1, PollState.WAITING).health)


def _full_then_sieve(fabric: Fabric, moment: float) \
        -> tuple[Workspace, PrometheusSource, dict[str, Health]]:
    """A full read's healths at `moment` (the storm port failing), and a sieving source set
    at the same moment, with its workspace."""
    ws, full = fabric.source(mode="full")
    full.at = moment
    expected = healths_of(ws, poll(full), moment)
    assert expected[STORM_PORT] is Health.FAIL
    ws, source = fabric.source(mode="sieve")
    source.at = moment
    return ws, source, expected


def results_of(updates: list[StatusUpdate]) -> list[ProbeResult]:
    """The probe results among a poll's updates."""
    return [u.result for u in updates if isinstance(u, Results)]


def test_pfc_storm_port_fails_through_the_app(fabric: Fabric) -> None:
    """`fabtui` with the Prometheus source on pfc-storm: the storming port and NIC fail, a
    port on another leaf stays ok, through the app's own status model and snapshot."""
    from fabtui.tui.app import FabtuiApp

    fabric.settle()
    ws = Workspace(load_settings(fabric.config()))
    app = FabtuiApp(ws, live=False, interval=1.0)
    snapshots: list[FabricSnapshot] = []
    poller = app.make_poller(snapshots.append)
    assert isinstance(poller.source, PrometheusSource)
    worker = threading.Thread(target=poller.run)
    worker.start()
    # Two polls at least, and until one shows the storm (a poll whose queries timed out on a
    # loaded machine reads unknown, as the app would show it, and the next one is waited for).
    deadline = time.monotonic() + 60
    while not (poller.rounds >= 2 and snapshots[-1].of(STORM_PORT) is Health.FAIL
               and snapshots[-1].of(STORM_NIC) is Health.FAIL):
        assert time.monotonic() < deadline, f"no poll saw the storm in 60 s ({poller.rounds})"
        time.sleep(0.1)
    poller.cancel()
    worker.join(10)
    assert not worker.is_alive()
    snapshot = app.status.snapshot(poller.rounds, snapshots[-1].poll)
    assert snapshot.of(STORM_PORT) is Health.FAIL
    assert snapshot.of(STORM_NIC) is Health.FAIL
    assert snapshot.of("leaf-g00-r4") is Health.FAIL
    assert snapshot.of("leaf-g00-r0:Ethernet0") is Health.OK
    assert snapshot.of("node001:gpu0") is Health.OK
    state = snapshot.states[STORM_PORT]
    share = state.values["pause_share.rx.PFC3"]
    assert share.verdict is Verdict.FAIL and share.limit == 0.5
    assert any("pause_share.rx.PFC3" in f.message for f in state.findings)
    nic = snapshot.states[STORM_NIC].values["pause_ratio.tx_prio3"]
    assert nic.verdict is Verdict.FAIL and nic.limit == 0.5
    # The sparkline starts with the past (a range query), then one sample per poll.
    sparkline = state.history["rate.rx.PFC3"]
    assert len(sparkline) > poller.rounds - 1 >= 1
    # A quiet port reads 0; the storm ~10,000/s, which a rate() over scrapes delayed on a
    # loaded machine can read down to half of (8,894 seen as the highest of a run).
    assert min(sparkline) > 1000 and max(sparkline) > 5000


def test_verdicts_match_the_direct_probe(fabric: Fabric) -> None:
    """Every port's pause verdict from Prometheus is the one `switch.pfc` gives on the device."""
    ws, source = fabric.source()
    probed = asyncio.run(ws.run_probe("switch.pfc", "leaf-g00-r4", {}))
    direct = {m.component: m.verdict for m in probed.metrics if m.name == "pause_share.rx.PFC3"}
    assert direct[STORM_PORT] is Verdict.FAIL
    # A scrape that timed out on a loaded machine leaves that switch's series stale until the
    # next one (seen: a port missing from a read): read again, once every job is up, for 30 s.
    deadline = time.monotonic() + 30
    while True:
        from_prom = {m.component: m.verdict for r in results_of(poll(source))
                     if r.probe == "switch.pfc"
                     for m in r.metrics if m.name == "pause_share.rx.PFC3"}
        if set(direct) <= set(from_prom) or time.monotonic() > deadline:
            break
        fabric.settle()
    missing = sorted(set(direct) - set(from_prom))
    assert not missing, f"ports Prometheus still had no reading of after 30 s: {missing}"
    assert {k: from_prom[k] for k in direct} == direct


def test_a_full_read_decodes_one_answer_at_a_time(fabric: Fabric,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`mode = "full"` fetches its answers concurrently but decodes each, and folds it into
    the readings, before decoding the next: one answer's objects alive at a time (decoding
    them all at once fragmented the heap: `benchmarks/prom_memory.py --mode full`), and
    every answer is read."""
    _, source = fabric.source(mode="full")
    mapped = set(source.queries.values())
    lock = threading.Lock()
    open_now, most, decoded = 0, 0, []
    samples, fold = source.client.samples, source._fold

    def counted_samples(promql: str, body: bytes) -> list[Sample]:
        nonlocal open_now, most
        if promql in mapped:
            with lock:
                open_now += 1
                most = max(most, open_now)
                decoded.append(promql)
            time.sleep(0.005)  # long enough for another thread's answer to overlap
        return samples(promql, body)

    def counted_fold(readings: Readings, which: Mapped, found: list[Sample],
                     only: set[str] | None = None) -> None:
        nonlocal open_now
        fold(readings, which, found, only)
        with lock:
            open_now -= 1

    monkeypatch.setattr(source.client, "samples", counted_samples)
    monkeypatch.setattr(source, "_fold", counted_fold)
    found = results_of(poll(source))
    assert sorted(decoded) == sorted(mapped)
    assert most == 1
    assert any(r.probe == "switch.pfc" and r.verdict is Verdict.FAIL for r in found)


def test_the_sieve_gives_the_full_reads_verdicts(fabric: Fabric) -> None:
    """At scale a refresh asks Prometheus only for series near a limit and reads those devices
    in full: every element's health is the one a full read gives, the storm still fails, and
    quiet elements are ok without their values being read. Recorded: the same sieve read from
    the recording rules of `source.rules()` (evaluated by Prometheus every second) gives the
    same healths too."""
    def read(moment: float) -> dict[str, tuple[dict[str, Health], list[StatusUpdate],
                                               FabricSnapshot]]:
        """Per mode: the healths, the updates, and the snapshot of one refresh of `moment`
        (every mode reads the same moment: the same values)."""
        reads = {}
        for mode in ("full", "sieve", "recorded"):
            ws, source = fabric.source(mode=mode)
            source.at = moment
            assert source.sieving is (mode != "full")
            status = FabricStatus(FabricMap.build(ws.graph()))
            updates = poll(source)
            for update in updates:
                status.take(update)
            snapshot = status.snapshot(1, PollState.WAITING)
            reads[mode] = dict(snapshot.health), updates, snapshot
        return reads

    reads = fabric.whole_moment(read)
    healths = {mode: health for mode, (health, _, _) in reads.items()}
    for mode in ("sieve", "recorded"):
        _, updates, snapshot = reads[mode]
        full_reads = {r.target for r in results_of(updates)}
        assert "leaf-g00-r4" in full_reads and STORM_NIC in full_reads, mode
        assert "leaf-g00-r0" not in full_reads and "node001" not in full_reads
        assert snapshot.states["leaf-g00-r0:Ethernet0"].values == {}
        # the sparklines' past: range queries for the flagged devices only
        past = next(u.series for u in updates if isinstance(u, History))
        assert len(past[STORM_PORT]["rate.rx.PFC3"]) > 1
        assert not any(k.startswith("leaf-g00-r0:") for k in past)
    assert healths["sieve"][STORM_PORT] is Health.FAIL
    assert healths["sieve"]["leaf-g00-r0:Ethernet0"] is Health.OK
    differ = {k: (healths["full"].get(k), v) for k, v in healths["sieve"].items()
              if healths["full"].get(k) is not v}
    assert differ == {}
    assert set(healths["full"]) == set(healths["sieve"])
    assert healths["recorded"] == healths["sieve"]


def test_a_spread_first_sieve_never_shows_an_unsieved_device_ok(fabric: Fabric) -> None:
    """Sieving raw series with a first sieve spread over the first refreshes (a budget of 100
    elements a refresh on the demo, as 4,000 at 1,024 nodes): after each refresh the elements
    of every device not sieved yet read "not judged yet", never ok (nor their node, their
    links), the counts and the note say so; the storm fails once its devices are sieved; and
    once every device was sieved the healths are the full read's of the same moment. The
    presence is not read whole on the first refresh but each device's with its first sieve
    (the others' elements, from the topology, not judged), and ends the whole read's."""
    def snapshot_of(ws: Workspace, status: FabricStatus, updates: list[StatusUpdate]
                    ) -> FabricSnapshot:
        for update in updates:
            status.take(update)
        return status.snapshot(1, PollState.WAITING)

    def read(moment: float) -> None:
        ws, full = fabric.source(mode="full")
        full.at = moment
        # Both judged at the moment read (a loaded machine's many refreshes took longer than
        # a reading stays fresh: the first refresh's readings went stale on the wall clock).
        expected = dict(snapshot_of(ws, FabricStatus(FabricMap.build(ws.graph()),
                                                     clock=lambda: moment),
                                    poll(full)).health)
        ws, whole = fabric.source(mode="sieve")
        whole.at = moment
        whole.first_sieve_elements = None  # the presence read whole, on the first refresh
        poll(whole)
        ws, source = fabric.source(mode="sieve")
        source.at = moment
        source.first_sieve_elements = 100
        texts: list[str] = []
        ask = source._ask

        async def counted(queries: list[str]) -> list[list[Sample]]:
            texts.extend(queries)
            return await ask(queries)

        source._ask = counted  # type: ignore[method-assign, assignment]
        status = FabricStatus(FabricMap.build(ws.graph()), clock=lambda: moment)
        fabric_map = status.fabric
        refreshes = 0
        while True:
            snapshot = snapshot_of(ws, status, poll(source))
            refreshes += 1
            sieved = source._sieved.clocks  # each device's clock when it was sieved
            waiting = {device for kind, devices in (source._presence.devices or {}).items()
                       for device in devices if device not in sieved.get(kind, {})}
            if refreshes == 1:  # the presence: not read whole, but with each device's sieve
                stamps = source._stamps()
                assert not set(source._presence_queries(dict.fromkeys(stamps)).values()) & \
                    set(texts)
                assert source._presence.read == {(device, kind) for kind, devices in
                                                 sieved.items() for device in devices}
                assert waiting and not any(device in waiting
                                           for device, _ in source._presence.by_device)
                # what the topology gives the devices not read: not judged (not unknown)
                assert {d for d in waiting if d in fabric_map.members} <= \
                    {device_of(key) for key in source.unjudged}
            if not waiting:
                break
            assert source.unjudged and any("not sieved yet" in n for n in source.notes)
            assert snapshot.unjudged_why.startswith("not sieved yet")
            for key in source.unjudged:
                assert device_of(key) in waiting
                assert snapshot.of(key) is not Health.OK, key
            for device in waiting:
                assert snapshot.of(device) is not Health.OK, device
                if device in fabric_map.members:  # a node: its links too
                    for link, members in fabric_map.members.items():
                        if any(device_of(m) == device for m in members):
                            assert snapshot.of(link) is not Health.OK, (device, link)
            assert sum(c.unjudged for c in snapshot.counts.values()) > 0
            if STORM_PORT not in source.unjudged:
                assert snapshot.of(STORM_PORT) is expected[STORM_PORT]
            assert refreshes < 20
        assert refreshes >= 3  # spread, on the demo too
        assert dict(snapshot.health) == expected
        assert sum(c.unjudged for c in snapshot.counts.values()) == 0
        assert source._presence.by_device == whole._presence.by_device

    fabric.whole_moment(read)


def test_presence_slices_add_up_to_the_full_read(fabric: Fabric) -> None:
    """After the first refresh each refresh re-reads the elements of a slice of the devices
    only, selected by their scrape targets' labels (RE2-escaped, `leaf\\-g00\\-r0`): from the
    real Prometheus each slice's answer names its devices' elements and no others, and the
    presence stays the full read's, per clock series (sieve) and per recorded clock. Every
    read is of one moment: a 1 s scrape missed on a loaded machine must not move a device."""
    def read(moment: float) -> None:
        for mode in ("sieve", "recorded"):
            _, source = fabric.source(mode=mode)
            source.presence_every = 3
            source.at = moment
            poll(source)
            full = dict(source._presence.by_device)
            assert {element for _, element in full} == {"gpu", "nic", "ibport", "port"}
            asked: set[str] = set()
            for _ in range(3):
                due = source._presence_due()
                source._presence.round -= 1  # the poll below takes this turn
                answers = source._ask(list(source._presence_queries(due).values()))
                for (element, devices), samples in zip(due.items(), asyncio.run(answers),
                                                       strict=True):
                    assert devices is not None and samples
                    named = {source.resolver.element(element, s.labels) for s in samples}
                    assert {key.partition(":")[0] for key in named if key} == devices
                    asked |= devices
                poll(source)
                assert source._presence.by_device == full
            assert asked == {device for device, _ in full}

    fabric.whole_moment(read)


def test_the_first_refresh_dates_the_devices_from_the_whole_presence(
        fabric: Fabric, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the whole presence of raw series (the first refresh of a sieve not spread:
    spread, each device's presence is read with its first sieve), each device's clock is
    the newest of its elements' there: from the real Prometheus, those equal the device
    clock queries' answers of the same moment (labels and times, every kind), so the first
    refresh does not ask them (Prometheus would select and stamp every clock series twice);
    the next refresh, which reads a slice of the presence only, asks them."""
    def read(moment: float) -> None:
        _, source = fabric.source(mode="sieve")
        source.at = moment
        source.first_sieve_elements = None  # sieved whole: the presence read whole too
        clocks = promql.device_clock_queries(source.labels, source._stamps(), recorded=False)
        whole = source._presence_queries(dict.fromkeys(clocks))
        answers = asyncio.run(source._ask([*clocks.values(), *whole.values()]))
        for asked, present, element in zip(answers, answers[len(clocks):], clocks, strict=False):
            derived = device_clocks(element, present, source.labels)
            assert asked
            assert sorted((sorted(s.labels.items()), s.value) for s in derived) == \
                sorted((sorted(s.labels.items()), s.value) for s in asked), element
        texts: list[str] = []
        ask = source._ask

        async def counted(queries: list[str]) -> list[list[Sample]]:
            texts.extend(queries)
            return await ask(queries)

        monkeypatch.setattr(source, "_ask", counted)
        poll(source)
        assert not set(clocks.values()) & set(texts)
        assert set(whole.values()) <= set(texts)
        assert set(source._presence.devices or {}) == set(clocks)
        # after it, each kind's device clocks from one clock series a device: the same
        # labels and times as from every series, of every device, in a fraction of the series
        # (every series of one kind at its turn: none of the next refreshes here)
        monkeypatch.setattr(promsource, "DISCOVER_EVERY", 1000)
        cheap = source._cheap_clocks(clocks)
        assert set(cheap) == set(clocks)
        answers = asyncio.run(ask([*clocks.values(), *cheap.values()]))
        series = asyncio.run(ask([text.replace("max by", "count by", 1)
                                  for text in (*clocks.values(), *cheap.values())]))
        for element, every, one, per_device in zip(clocks, answers, answers[len(clocks):],
                                                   series[len(clocks):], strict=False):
            assert one and sorted((sorted(s.labels.items()), s.value) for s in one) == \
                sorted((sorted(s.labels.items()), s.value) for s in every), element
            assert {s.value for s in per_device} == {1.0}, element  # one series a device
        texts.clear()
        poll(source)
        assert set(cheap.values()) <= set(texts)
        assert not set(clocks.values()) & set(texts)
        monkeypatch.setattr(promsource, "DISCOVER_EVERY", 4)  # the port kind's turn: 3 of 4
        source._polls = 2
        texts.clear()
        poll(source)
        assert {cheap[k] for k in ("gpu", "ibport", "nic")} <= set(texts)
        # the port kind's discovery: not every series, but the first elements' on every
        # switch and a slice of every series, besides one a switch; dating the same
        assert clocks["port"] not in texts and cheap["port"] not in texts
        head = clocks["port"].split("{")[0]
        sliced = next(t for t in texts if t.startswith(head))
        assert 'device=~"Ethernet0"' in sliced  # the first slice of the ports' names seen
        assert str(promql.discovery_slice("device", source._presence.tails["port"], 0)) in sliced
        whole_read, sliced_read, counted_read = asyncio.run(ask([
            clocks["port"], sliced, sliced.replace("max by (instance)", "count", 1)]))
        assert sorted((sorted(s.labels.items()), s.value) for s in sliced_read) == \
            sorted((sorted(s.labels.items()), s.value) for s in whole_read)
        ports = sum(len(m) for (_, kind), m in source._presence.by_device.items()
                    if kind == "port")
        assert counted_read[0].value < ports / 2  # a fraction of the clock series

    fabric.whole_moment(read)


def test_a_device_whose_dating_series_went_quiet_is_dated_from_its_others(
        fabric: Fabric) -> None:
    """The device clocks read from one clock series a device (`_cheap_clocks`): a device whose
    series is missing there (taken here: a first element no series has) is dated from every
    series of its own, in a second query: every device stays dated, with the time every series
    gives, and nothing goes unjudged."""
    def read(moment: float) -> None:
        _, source = fabric.source(mode="sieve")
        source.at = moment
        for _ in range(10):  # until every device's elements were read (with its first sieve)
            poll(source)
            if not source.unjudged:
                break
        full = dict(source._presence.devices or {})
        clocks = promql.device_clock_queries(source.labels, source._stamps(), recorded=False)
        every = asyncio.run(source._ask(list(clocks.values())))
        planted: list[tuple[str, Element, str]] = [
            ("leaf-g00-r4", "port", "Ethernet999"),
            (STORM_NIC.partition(":")[0], "nic", "nosuchnic")]
        for device, element, value in planted:
            firsts = source._presence.firsts[(device, element)]
            assert firsts
            for target in firsts:
                firsts[target] = value
        cheap = source._cheap_clocks(clocks)
        one = asyncio.run(source._ask([cheap[e] for e in clocks]))
        assert "leaf-g00-r4" not in {source.resolver.device("port", s.labels)
                                     for s in one[list(clocks).index("port")]}
        dated = asyncio.run(source._clocks_of_missing(list(clocks), one, clocks))
        for element, got, want in zip(clocks, dated, every, strict=True):
            assert sorted((sorted(s.labels.items()), s.value) for s in got) == \
                sorted((sorted(s.labels.items()), s.value) for s in want), element
        poll(source)
        assert set(source._presence.devices or {}) == set(full)
        for element, devices in full.items():
            assert set((source._presence.devices or {})[element]) == set(devices)
        assert not source.unjudged

    fabric.whole_moment(read)


def test_every_element_of_the_demo_has_series(fabric: Fabric) -> None:
    # A scrape that timed out on a loaded machine leaves its node's series stale for a moment
    # (a CI run missed node001's 65): a miss counts only when every scrape worked meanwhile.
    for _ in range(5):
        _, source = fabric.source()
        asked = time.time()
        missing = source.check()
        if not missing or fabric.scrapes_worked_since(asked - 3.0):
            break
    assert missing == []


def test_check_names_elements_without_series(fabric: Fabric) -> None:
    """A label mapping that names no node: every GPU is listed as having no DCGM series."""
    _, source = fabric.source()
    source.labels = type(source.labels)(gpu_node="nosuchlabel", node="nosuchlabel")
    source.resolver = type(source.resolver)(source.graph, source.labels)
    missing = source.check()
    gpus = [m for m in missing if m.exporter == "dcgm-exporter"]
    assert len(gpus) == sum(len(n.gpus) for n in source.graph.nodes.values())
    assert gpus[0].metrics == ("everything",)


def test_history_is_a_range_query_of_the_pause_rate(fabric: Fabric) -> None:
    _, source = fabric.source()
    history = source.history("sonic.pfc_rx", span_s=6, step_s=1)
    points = history[STORM_PORT]
    assert len(points) >= 3
    assert all(v > 1000 for _, v in points[-2:])
    assert all(v == 0 for _, v in history["leaf-g00-r0:Ethernet0"])


def test_gpu_values_are_dcgm_exporter_values(fabric: Fabric) -> None:
    _, source = fabric.source()
    gpu = next(r for r in results_of(poll(source))
               if r.probe == "gpu.nvml" and r.target == "node001")
    temperatures = [m for m in gpu.metrics if m.name == "temperature_c"]
    assert len(temperatures) == 8
    # idle (the pfc-storm job has died by now) or busy, below the 90 °C limit
    assert all(isinstance(m.value, int | float) and 25 <= m.value <= 90 for m in temperatures)
    assert {m.limit for m in temperatures} == {90.0}  # gpu.nvml's catalog threshold


def test_a_stopped_scrape_goes_stale(fabric: Fabric) -> None:
    """The exporter answers 503: Prometheus marks its series stale, the poll says the targets
    are down, and the devices' readings turn stale once stale_after has passed."""
    ws, source = fabric.source(stale_after="4s")
    status = FabricStatus(FabricMap.build(ws.graph()))
    # First a poll that finds the GPU fresh: on a loaded machine a scrape (every 1 s) can come
    # late, and a reading older than these 4 s is rightly stale already.
    deadline = time.monotonic() + 30
    health = None
    while health is not Health.OK and time.monotonic() < deadline:
        for update in poll(source):
            status.take(update)
        health = status.snapshot(0, PollState.WAITING).of("node001:gpu0")
    assert health is Health.OK
    fabric.exporter.pause()
    try:
        fabric.prometheus.wait_for("up == 0", 20, want=3)
        paused = time.monotonic()
        poll(source)
        assert time.monotonic() - paused < 5
        assert any("scrape target(s) down" in n for n in source.notes)
        health = Health.OK
        rounds = 1
        while health is Health.OK and time.monotonic() - paused < 15:
            time.sleep(0.5)
            for update in poll(source):  # what the poller goes on doing
                status.take(update)
            health = status.snapshot(rounds, PollState.WAITING).of("node001:gpu0")
            rounds += 1
        assert health is Health.STALE
    finally:
        fabric.exporter.pause(False)
        fabric.prometheus.wait_for("up == 1", 20, want=3)


def test_sim_exporter_command_serves_the_playing_scenario(tmp_path: Path) -> None:
    """`fabtui --scenario pfc-storm sim exporter --port 0` serves the storm as a pause counter
    that grows on one switch port only (no Prometheus needed)."""
    import os
    import re
    import subprocess
    import sys
    import urllib.request

    repo = Path(__file__).resolve().parent.parent
    process = subprocess.Popen(
        [sys.executable, "-m", "fabtui", "--scenario", "pfc-storm", "sim", "exporter",
         "--port", "0"], cwd=repo, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(repo)})
    try:
        assert process.stderr is not None
        line = ""
        while "serving" not in line:
            line = process.stderr.readline()
            assert line, "the exporter exited"
        port = re.search(r"127\.0\.0\.1:(\d+)", line)
        assert port is not None
        url = f"http://127.0.0.1:{port.group(1)}/metrics/switch"

        def pause_counters() -> dict[str, float]:
            text = urllib.request.urlopen(url, timeout=10).read().decode()
            return {m.group(1): float(m.group(2)) for m in re.finditer(
                r'^sonic_interface_receive_pfc_packets\{device="(\S+?)",instance="leaf-g00-r4"'
                r',priority="3"\} (\S+)$', text, re.M)}

        first = pause_counters()
        time.sleep(1.5)
        second = pause_counters()
        grew = sorted(port for port in second if second[port] > first[port])
        assert grew == ["Ethernet40"]
    finally:
        process.terminate()
        process.wait(10)


def test_auto_reads_the_recording_rules_once_it_finds_them_loaded(
        fabric: Fabric, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped `mode = "auto"` at scale (sieving; forced here on the small demo) asks the
    real Prometheus whether `fabtui prom rules` is loaded and, as it is here, reads the recorded
    sieve: the same healths as `mode = "recorded"`. Where the rules are not found (the probe
    asks for a name no rule writes), it sieves raw series and a slow refresh says how to load
    them."""
    monkeypatch.setattr(promsource, "SIEVE_FROM_NICS", 0)

    def read(moment: float) -> dict[str, tuple[bool, dict[str, Health], list[str]]]:
        reads = {}
        for label, probe in (("loaded", promsource.RULES_PROBE),
                             ("missing", 'count({__name__=~"fabtui:no_such_rule:.+"})')):
            monkeypatch.setattr(promsource, "RULES_PROBE", probe)
            monkeypatch.setattr(promsource, "SLOW_REFRESH_S", 0.0)
            ws, source = fabric.source(mode="auto")
            source.at = moment
            status = FabricStatus(FabricMap.build(ws.graph()))
            for update in poll(source):
                status.take(update)
            reads[label] = (source.recorded, dict(status.snapshot(1, PollState.WAITING).health),
                            list(source.notes))
        ws, source = fabric.source(mode="recorded")
        source.at = moment
        status = FabricStatus(FabricMap.build(ws.graph()))
        for update in poll(source):
            status.take(update)
        reads["recorded"] = (True, dict(status.snapshot(1, PollState.WAITING).health), [])
        ws, source = fabric.source(mode="full")
        source.at = moment
        status = FabricStatus(FabricMap.build(ws.graph()))
        for update in poll(source):
            status.take(update)
        reads["full"] = (False, dict(status.snapshot(1, PollState.WAITING).health), [])
        # Asserted here: a moment at which a scrape failed is read again (`whole_moment`).
        recorded, healths, notes = reads["loaded"]
        # The recorded sieve is what Prometheus's last rule evaluation saw: the storm is
        # flagged, and how far (warn or fail) depends on where in its ramp that evaluation
        # fell (warn in one CI run); the point is that auto reads what recorded reads.
        assert recorded and healths.get(STORM_PORT) in (Health.WARN, Health.FAIL)
        assert healths.get(STORM_PORT) is reads["recorded"][1].get(STORM_PORT)
        assert not any("recording rules" in note for note in notes)
        # Without the rules, auto sieves the raw series: every health is the full read's of
        # the same moment (the storm at warn or fail, as far as its rate over the window went
        # on a loaded machine: WARN in one CI run).
        recorded, healths, notes = reads["missing"]
        assert not recorded and healths.get(STORM_PORT) in (Health.WARN, Health.FAIL)
        assert healths == reads["full"][1]
        assert any("fabtui prom rules >" in note and "rule_files" in note for note in notes)
        return reads

    fabric.whole_moment(read)


def test_a_refresh_sieves_only_the_devices_scraped_since_their_last_sieve(
        fabric: Fabric) -> None:
    """Sieving raw series, the first refresh sieves every element kind whole; a refresh of the
    same moment (no device scraped since) asks no sieve at all and keeps the answers; with the
    storm's switch and NIC's node as if scraped since (their answers forgotten), the next asks
    about those two devices only, by their targets' labels, from the real Prometheus. Every
    refresh's healths are the full read's."""
    def read(moment: float) -> None:
        ws, source, expected = _full_then_sieve(fabric, moment)
        assert healths_of(ws, poll(source), moment) == expected
        # every device of every kind, by its targets' labels (the first sieve fits its budget)
        dated = source._presence.devices or {}
        assert source.last_sieve == {kind: len(dated[kind]) for kind in dated}
        assert not source.unjudged
        assert healths_of(ws, poll(source), moment) == expected
        assert source.last_sieve == dict.fromkeys(("gpu", "ibport", "nic", "port"), 0)
        memory = source._sieved
        storm_node = STORM_NIC.partition(":")[0]
        moved: tuple[tuple[Element, str], ...] = (("port", "leaf-g00-r4"), ("nic", storm_node))
        for element, device in moved:
            memory.clocks[element][device] = 0.0
            memory.answers[element].pop(device, None)
        assert healths_of(ws, poll(source), moment) == expected
        assert source.last_sieve == {"gpu": 0, "ibport": 0, "nic": 1, "port": 1}
        assert "leaf-g00-r4" in memory.answers["port"] and storm_node in memory.answers["nic"]

    fabric.whole_moment(read)


def test_a_kinds_turn_is_spread_and_still_catches_what_it_alone_would(fabric: Fabric) -> None:
    """Sieving raw series with a budget, a kind's periodic sieve (its turn) is spread over
    refreshes instead of asked whole in one: from the real Prometheus, with the storm switch's
    last answer lost (what only the periodic sieve re-reads: its clock has not moved), the
    turn re-sieves every switch once, no kind whole in any refresh, within ceil(its elements /
    budget) + 1 refreshes, and the storm port fails again by then; every refresh's healths
    stay away from the full read's only for that port, and at the end they are the full
    read's. The turn also asks about the series outside the dated switches: none here, and
    the storm switch's own once it is taken out of the dated ones."""
    def read(moment: float) -> None:
        ws, source, expected = _full_then_sieve(fabric, moment)
        source.first_sieve_elements = budget = 100
        for _ in range(20):  # the first sieve, spread
            poll(source)
            if not source.unjudged:
                break
        assert not source.unjudged
        memory = source._sieved
        switch = device_of(STORM_PORT)
        memory.answers["port"].pop(switch)
        seen: list[str] = []
        ask = source._ask

        async def counted(texts: list[str]) -> list[list[Sample]]:
            seen.extend(texts)
            return await ask(texts)

        source._ask = counted  # type: ignore[method-assign]
        kinds = sorted(source._sieve_kinds())
        memory.round = 90  # the next refresh (91) is the port's turn
        assert memory._due(91, kinds.index("port"), len(kinds))
        elements = sum(len(m) for (_, kind), m in source._presence.by_device.items()
                       if kind == "port")
        refreshes = 0
        while refreshes == 0 or "port" in memory.resweep:
            seen.clear()
            found = healths_of(ws, poll(source), moment)
            refreshes += 1
            assert None not in source.last_sieve.values()  # no kind whole
            if refreshes == 1:
                assert memory.turned == {"port"}
                assert any("!~" in text for text in seen)  # the series outside the dated
            assert {k for k, v in found.items() if v is not expected.get(k)} <= \
                {STORM_PORT, switch}
            assert refreshes <= -(-elements // budget) + 1
        assert refreshes >= 2  # spread on the demo too
        assert found == expected
        # the series outside the dated switches: none; the storm switch's once undated
        of_port = tuple(m for m in source.mapped if m.element == "port")
        terms = source._presence.outside("port")
        assert terms is not None
        answers = asyncio.run(ask(list(sieves(of_port, {m.key: source.query_of(m, terms)
                                                        for m in of_port},
                                              source.catalog, source._slowest).values())))
        assert answers and not any(answers)
        dated = source._presence.devices or {}
        dated["port"].pop(switch)
        terms = source._presence.outside("port")
        assert terms is not None
        answers = asyncio.run(ask(list(sieves(of_port, {m.key: source.query_of(m, terms)
                                                        for m in of_port},
                                              source.catalog, source._slowest).values())))
        named = {source.resolver.element("port", s.labels) for found in answers for s in found}
        assert STORM_PORT in named and {device_of(k or "") for k in named} == {switch}

    fabric.whole_moment(read)


def test_a_device_scraped_since_and_not_sieved_again_is_quiet_as_of_its_last_sieve(
        fabric: Fabric) -> None:
    """Sieving raw series by a budget, the devices scraped since their last sieve wait their
    turn (here a budget of one device): until then each keeps its last answer, and its quiet
    (ok) marks are dated by the scrape that sieve judged, never by the newer scrape not judged
    yet; a device sieved again is dated by its new scrape."""
    def read(moment: float) -> None:
        _, source = fabric.source(mode="sieve")
        source.at = moment - 5.0
        poll(source)
        assert not source.unjudged
        before = {kind: dict(clocks) for kind, clocks in source._sieved.clocks.items()}
        source.at = moment
        source.first_sieve_elements = 1
        updates = poll(source)
        waiting = resieved = 0
        for update in updates:
            if not isinstance(update, Quiet):
                continue
            kind = next(k for (d, k), members in source._presence.by_device.items()
                        if d == update.device and update.keys[0] in members)
            judged = source._sieved.clocks[kind][update.device]
            assert update.at <= judged, update.device
            if judged == before[kind].get(update.device):
                waiting += 1
            else:
                resieved += 1
        assert waiting and resieved  # most wait, one a refresh was sieved again
        newest = max(max(c.values()) for c in source._sieved.clocks.values())
        assert newest > max(max(c.values()) for c in before.values())

    fabric.whole_moment(read)


class _Ticking:
    """A source's clock (`PrometheusSource.clock`, called as a refresh starts, as its sieve
    is planned, and as it ends): each refresh's first round takes no time and the refresh
    `took` seconds in all."""

    def __init__(self) -> None:
        self.now, self.calls, self.took = 0.0, 0, 0.2

    def __call__(self) -> float:
        self.calls += 1
        if self.calls % 3 == 0:
            self.now += self.took
        return self.now


def test_slow_refreshes_sieve_less_and_fast_ones_more_every_device_still_judged(
        fabric: Fabric, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sieving raw series, the sieve's budget follows the refreshes' times (`fabtui.prom.pace`,
    the source's clock passed in): from the real Prometheus, with the demo's first sieve spread
    by a most of 120 elements and a floor of 20, refreshes that took 3 s make the next sieve
    the floor's (one device), fast ones grow it back; what each refresh sieves stays within its
    budget (and one device), and every device is judged in the end, as the full read judges."""
    monkeypatch.setattr(pace, "FLOOR", 20)

    def read(moment: float) -> None:
        ws, source, expected = _full_then_sieve(fabric, moment)
        source.first_sieve_elements = 120
        ticking = source.clock = _Ticking()
        budgets: list[tuple[int, int, float]] = []  # (budget, elements sieved, seconds)
        for took in (3.0, 3.0, 3.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2):
            ticking.took = took
            found = healths_of(ws, poll(source), moment)
            assert source.sieve_budget is not None and source.last_round_s == pytest.approx(took)
            budgets.append((source.sieve_budget, source._sieved.spent, took))
            if not source.unjudged:
                break
        assert not source.unjudged and found == expected
        assert budgets[0][0] == 60  # half the most: nothing measured yet
        assert budgets[1][0] < budgets[0][0] and budgets[2][0] == 20  # slow: the floor
        largest = max(len(m) for m in source._presence.by_device.values())
        for (budget, spent, took), (after, _, _) in itertools.pairwise(budgets):
            assert 20 <= budget <= 120 and spent < budget + largest
            if took > 1 or spent >= budget / 2:  # slow, or fast and the budget used
                assert (after < budget or after == 20) if took > 1 else \
                    (after > budget or after == 120)

    fabric.whole_moment(read)


def test_rules_found_during_a_spread_first_sieve_leave_no_device_unread(
        fabric: Fabric, monkeypatch: pytest.MonkeyPatch) -> None:
    """`mode = "auto"` without the rules spreads its first sieve and each device's presence
    with it; when the rules are found meanwhile (loaded while the app runs) the next refresh
    reads them, and the presence of every device not read yet with it: the healths are a
    fresh recorded read's of the same moment, not unknown for the devices never sieved."""
    monkeypatch.setattr(promsource, "SIEVE_FROM_NICS", 0)

    def read(moment: float) -> None:
        ws, source = fabric.source(mode="recorded")
        source.at = moment
        expected = healths_of(ws, poll(source), moment)
        monkeypatch.setattr(promsource, "RULES_PROBE",
                            'count({__name__=~"fabtui:no_such_rule:.+"})')
        ws, source = fabric.source(mode="auto")
        source.at = moment
        source.first_sieve_elements = 100
        updates = poll(source)
        assert not source.recorded and source.unjudged  # spread: devices left unread
        dated = {(device, kind) for kind, devices in (source._presence.devices or {}).items()
                 for device in devices}
        assert dated - source._presence.read
        source._take_rules(True)  # found loaded (as the check every 30 refreshes would)
        updates += poll(source)
        assert source.recorded and dated <= source._presence.read
        assert healths_of(ws, updates, moment) == expected

    fabric.whole_moment(read)
