"""The live status model (headless): health per element, roll-ups, staleness, unreachable
devices, counts per layer, filters, and a poller that never piles polls up."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncGenerator, Callable

import pytest

from fabtui.model.verdict import Verdict
from fabtui.topology.graph import FabricGraph
from fabtui.views.fabricmap import FabricMap, FilterError, Layer, parse_filter
from fabtui.views.poller import PlanItem, Poller, on_demand
from fabtui.views.status import FabricSnapshot, FabricStatus, Health, PollState
from fabtui.views.updates import Quiet, Results, SourceFailed, StatusSource, StatusUpdate
from tests.support.tui_support import NOW, result, workspace


@pytest.fixture(scope="module")
def fabric_and_graph() -> tuple[FabricMap, FabricGraph]:
    graph = workspace().graph()
    return FabricMap.build(graph), graph


@pytest.fixture
def fabric(fabric_and_graph: tuple[FabricMap, FabricGraph]) -> FabricMap:
    return fabric_and_graph[0]


def test_metrics_land_on_the_elements_they_name_and_roll_up(fabric: FabricMap) -> None:
    """A failing NIC fails its host link, its node and no other node; a lane reading lands on
    its port's optic; problem counts count layers."""
    status = FabricStatus(fabric, clock=lambda: NOW)
    status.apply(result("nic.ethtool", "node006:mlx5_4", [
        ("node006:mlx5_4", "pause_ratio.tx_prio3", 0.95, Verdict.FAIL)]), 20)
    status.apply(result("switch.dom_all", "leaf-g00-r4", [
        ("leaf-g00-r4:Ethernet40/lane2", "rx_power_dbm", -9.5, Verdict.WARN)]), 20)
    snap = status.snapshot(1, PollState.WAITING)
    cell = fabric.cells[("node006", 4)][0]
    assert snap.of("node006:mlx5_4") is Health.FAIL
    assert cell.link is not None and cell.optic is not None
    assert snap.of(cell.link) is Health.FAIL and snap.of("node006") is Health.FAIL
    assert snap.of("node005") is Health.UNKNOWN
    assert snap.of(cell.optic) is Health.WARN
    assert "rx_power_dbm lane2" in snap.states[cell.optic].values
    assert snap.of("leaf-g00-r4") is Health.UNKNOWN  # optics are not the leaf's own ports
    assert snap.counts[Layer.NICS].fail == 1 and snap.counts[Layer.NICS].total == 64
    assert snap.counts[Layer.HOST_LINKS].fail == 1


def test_a_reading_older_than_its_interval_is_stale(fabric: FabricMap) -> None:
    now = [NOW]
    status = FabricStatus(fabric, clock=lambda: now[0])
    status.apply(result("nic.ethtool", "node001:mlx5_0", [
        ("node001:mlx5_0", "rate.tx_prio3_pause", 0, Verdict.OK)]), 20)
    assert status.snapshot(1, PollState.WAITING).of("node001:mlx5_0") is Health.OK
    now[0] += 21
    snap = status.snapshot(1, PollState.WAITING)
    assert snap.of("node001:mlx5_0") is Health.STALE
    assert snap.counts[Layer.NICS].stale == 1


def quiet_mark(keys: list[str], at: float) -> Quiet:
    """A source's mark: `keys` below every limit of nic.ethtool at `at` (Prometheus's sieve)."""
    return Quiet(keys[0].partition(":")[0], tuple(keys), ("nic.ethtool",), at, 20)


def test_a_repeated_quiet_mark_keeps_elements_ok_until_stale_and_still_clears_a_failure(
        fabric: FabricMap) -> None:
    """The same mark again (a device not scraped since) leaves its elements ok, goes stale
    when its time runs out without a newer one, and still clears a failure that a probe
    reported in between; a newer mark makes a stale element fresh again."""
    now = [NOW]
    status = FabricStatus(fabric, clock=lambda: now[0])
    nics = ["node002:mlx5_0", "node002:mlx5_1"]
    status.take(quiet_mark(nics, NOW))
    assert status.snapshot(1, PollState.WAITING).of(nics[0]) is Health.OK
    status.take(quiet_mark(nics, NOW))
    now[0] += 10
    assert status.snapshot(2, PollState.WAITING).of(nics[1]) is Health.OK
    status.apply(result("nic.ethtool", nics[0], [
        (nics[0], "pause_ratio.tx_prio3", 0.95, Verdict.FAIL)]), 20)
    assert status.snapshot(3, PollState.WAITING).of(nics[0]) is Health.FAIL
    status.take(quiet_mark(nics, NOW))
    snap = status.snapshot(4, PollState.WAITING)
    assert snap.of(nics[0]) is Health.OK and not snap.states[nics[0]].values
    now[0] += 11
    status.take(quiet_mark(nics, NOW))
    assert status.snapshot(5, PollState.WAITING).of(nics[1]) is Health.STALE
    now[0] -= 11  # a clock set back: judged again, not taken from the last snapshot
    assert status.snapshot(6, PollState.WAITING).of(nics[1]) is Health.OK
    now[0] += 11
    status.take(quiet_mark(nics, NOW + 20))
    assert status.snapshot(7, PollState.WAITING).of(nics[1]) is Health.OK


def test_a_device_that_did_not_answer_is_unreachable_with_its_error(fabric: FabricMap) -> None:
    status = FabricStatus(fabric, clock=lambda: NOW)
    status.apply(result("switch.pfc", "leaf-g00-r2", [], error="no result within 10s"), 20)
    snap = status.snapshot(1, PollState.WAITING)
    assert snap.of("leaf-g00-r2") is Health.UNREACHABLE
    assert snap.states["leaf-g00-r2"].error == "no result within 10s"
    assert snap.counts[Layer.LEAVES].unreachable == 1


def test_histories_keep_counters_and_are_bounded(fabric: FabricMap) -> None:
    status = FabricStatus(fabric, clock=lambda: NOW)
    for n in range(100):
        status.apply(result("nic.ethtool", "node001:mlx5_0", [
            ("node001:mlx5_0", "rate.tx_prio3_pause", n, Verdict.OK),
            ("node001:mlx5_0", "delta.module_unplug", 0, Verdict.OK)]), 20)
    state = status.snapshot(1, PollState.WAITING).states["node001:mlx5_0"]
    history = state.history["rate.tx_prio3_pause"]
    assert len(history) == 60 and history[-1] == 99
    assert "delta.module_unplug" not in state.history


def test_filters(fabric_and_graph: tuple[FabricMap, FabricGraph]) -> None:
    fabric, graph = fabric_and_graph
    rail = parse_filter(fabric, graph, "rail:4")
    assert rail.rails == frozenset({4}) and rail.nodes is not None and len(rail.nodes) == 8
    nodes = parse_filter(fabric, graph, "node[001-003]")
    assert nodes.nodes == frozenset({"node001", "node002", "node003"}) and nodes.rails is None
    leaf = parse_filter(fabric, graph, "leaf:leaf-g00-r2")
    assert leaf.rails == frozenset({2})
    assert parse_filter(fabric, graph, "job").nodes == frozenset(fabric.nodes)
    with pytest.raises(FilterError, match="node9"):
        parse_filter(fabric, graph, "node9*")


def test_find_and_on_demand_probes(fabric: FabricMap) -> None:
    assert fabric.find("node006:mlx5_4") == ["node006:mlx5_4"]
    assert "spine-01" in fabric.find("spine")
    assert on_demand(fabric, "node006:mlx5_4") == ("nic.ethtool", "node006:mlx5_4")
    assert on_demand(fabric, "node006:gpu4") == ("gpu.smi", "node006")
    assert on_demand(fabric, "leaf-g00-r4:Ethernet40") == ("switch.port_counters",
                                                           "leaf-g00-r4:Ethernet40")
    optic = fabric.cells[("node006", 4)][0].optic
    assert optic is not None
    assert on_demand(fabric, optic) == ("switch.dom", "leaf-g00-r4:Ethernet40")


def test_plan_items() -> None:
    assert PlanItem.parse("nic.ethtool@node*:*") == PlanItem("nic.ethtool", "node*:*")
    with pytest.raises(ValueError, match="probe@targets"):
        PlanItem.parse("nic.ethtool")


def poll_until(source: StatusSource, fabric: FabricMap, interval: float,
               done: Callable[[FabricSnapshot], bool]) -> tuple[list[FabricSnapshot], Poller,
                                                               float]:
    """Run a poller on `source` until a snapshot is `done` (10 s at most), then cancel it:
    every snapshot it emitted, the poller, and how long it took to stop after the cancel."""
    snaps: list[FabricSnapshot] = []
    reached = threading.Event()

    def emit(snapshot: FabricSnapshot) -> None:
        snaps.append(snapshot)
        if done(snapshot):
            reached.set()

    poller = Poller(source, FabricStatus(fabric), interval, emit)
    thread = threading.Thread(target=poller.run)
    thread.start()
    assert reached.wait(10)
    started = time.monotonic()
    poller.cancel()
    thread.join(5)
    assert not thread.is_alive()
    return snaps, poller, time.monotonic() - started


class SlowSource:
    """A source whose polls take `duration` seconds and record when they ran."""

    def __init__(self, duration: float) -> None:
        self.duration = duration
        self.spans: list[tuple[float, float]] = []
        self.running = 0
        self.overlapped = False

    async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
        import asyncio

        self.running += 1
        self.overlapped |= self.running > 1
        start = time.monotonic()
        await asyncio.sleep(self.duration)
        yield Results(result("nic.ethtool", "node001:mlx5_0", [
            ("node001:mlx5_0", "rate.tx_prio3_pause", 0, Verdict.OK)], at=time.time()), 5.0)
        self.spans.append((start, time.monotonic()))
        self.running -= 1


def test_the_next_poll_starts_an_interval_after_the_last_one_ended(fabric: FabricMap) -> None:
    """Polls that take longer than the interval never overlap: the next one is scheduled from
    the end of the last; cancel stops the poller promptly."""
    source = SlowSource(0.15)
    snaps, _, stopping = poll_until(source, fabric, 0.05, lambda s: s.round >= 3 and
                                    s.poll is PollState.WAITING)
    assert stopping < 1
    assert not source.overlapped
    for (_, ended), (next_start, _) in zip(source.spans, source.spans[1:], strict=False):
        assert next_start - ended >= 0.04
    assert snaps[-1].poll is PollState.STOPPED
    assert snaps[-1].states["node001:mlx5_0"].readings["nic.ethtool"].verdict is Verdict.OK


class FailingSource:
    """A source whose every poll yields one reading, the first `fails` of them then raising."""

    def __init__(self, fails: int) -> None:
        self.fails = fails
        self.polls = 0

    async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
        self.polls += 1
        yield Results(result("nic.ethtool", "node001:mlx5_0", [
            ("node001:mlx5_0", "rate.tx_prio3_pause", 0, Verdict.OK)], at=time.time()), 5.0)
        if self.polls <= self.fails:
            raise KeyError("x")


def test_a_source_that_raises_is_a_failed_round_and_the_poller_tries_again(
        fabric: FabricMap) -> None:
    """Each raise is a FAILED snapshot with the reason and the back-off (the interval,
    doubling); what the round read before it stays; the next good round is normal again."""
    source = FailingSource(2)
    snaps, poller, _ = poll_until(source, fabric, 0.05, lambda s: s.poll is PollState.WAITING)
    failed = [s for s in snaps if s.poll is PollState.FAILED]
    assert [(s.round, s.failure, s.retry_s) for s in failed] == \
        [(1, "KeyError: 'x'", 0.05), (2, "KeyError: 'x'", 0.1)]
    assert failed[0].states["node001:mlx5_0"].readings["nic.ethtool"].verdict is Verdict.OK
    waiting = next(s for s in snaps if s.poll is PollState.WAITING)
    assert waiting.round == 3 and waiting.failure is None and waiting.retry_s is None
    assert snaps[-1].poll is PollState.STOPPED and snaps[-1].failure is None
    assert [poller.retry_after(n) for n in (1, 2, 3, 12)] == [0.05, 0.1, 0.2, 60.0]
    assert Poller(source, FabricStatus(fabric), 90.0, snaps.append).retry_after(5) == 90.0


def test_cancel_stops_a_poller_waiting_out_a_back_off(fabric: FabricMap) -> None:
    source = FailingSource(10**6)
    snaps, _, stopping = poll_until(source, fabric, 30.0, lambda s: s.poll is PollState.FAILED)
    assert stopping < 1
    assert source.polls == 1 and snaps[-1].poll is PollState.STOPPED


def test_a_cancellation_from_the_source_is_not_a_failed_round(fabric: FabricMap) -> None:
    """Only `Exception`s are failed rounds: a `CancelledError` (a `BaseException`) goes on."""
    import asyncio

    class Cancelled:
        async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
            raise asyncio.CancelledError
            yield  # an async generator, as a source's poll is

    snaps: list[FabricSnapshot] = []
    with pytest.raises(asyncio.CancelledError):
        Poller(Cancelled(), FabricStatus(fabric), 0.05, snaps.append).run()
    assert [s.poll for s in snaps] == [PollState.POLLING]


def test_a_site_probe_named_prometheus_is_a_measurement_not_a_source_mark(
        fabric: FabricMap) -> None:
    """Source marks are typed (`Quiet`, `History`): a probe of a site's own named
    `prometheus`, whose parse happens to hold `quiet`, is measured like any other."""
    status = FabricStatus(fabric, clock=lambda: NOW)
    own = result("prometheus", "node001", [], error="no route to host").model_copy(
        update={"parsed": {"quiet": ["node002:mlx5_0"], "probes": ["nic.ethtool"]}})
    status.take(Results(own, 20))
    snap = status.snapshot(1, PollState.WAITING)
    assert snap.of("node001") is Health.UNREACHABLE  # what the result says
    assert snap.of("node002:mlx5_0") is Health.UNKNOWN  # no mark was read into it


def test_a_source_that_says_it_failed_is_a_failed_round(fabric: FabricMap) -> None:
    """`SourceFailed` is the typed way to say what a raise says: shown, then retried."""
    class Refused:
        async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
            yield SourceFailed("prometheus unreachable: connection refused")

    snaps, _, _ = poll_until(Refused(), fabric, 0.05, lambda s: s.poll is PollState.FAILED)
    first = next(s for s in snaps if s.poll is PollState.FAILED)
    assert first.failure == "prometheus unreachable: connection refused"
    assert first.retry_s == 0.05
