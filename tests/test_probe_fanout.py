"""Target sets, sweeps (limit, order, time limits, failures as rows), and safe cancellation.

Everything runs against the demo fabric: the set forms resolve in its topology, sweeps run the
real runner, probe and parser on its simulated nodes, and cancellation is checked on its
simulated device programs (no process may outlive a cancelled probe).
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.model.probe import ProbeResult, TargetKind, Verdict
from fabtui.model.transport import TransportResult
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.probes.catalog import load_catalog
from fabtui.probes.runner import ProbeRunner, Transports
from fabtui.probes.targets import TargetError, is_set, resolve_set
from fabtui.sim.core import Sim
from fabtui.sim.latency import LATENCY_VAR
from fabtui.sim.latency import parse as parse_latency
from fabtui.sim.node_commands import run as node_run
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import SimState, build_sim, fresh_state, write_state
from fabtui.sim.transports import SimCliTransport, SimSshTransport
from fabtui.transports.local import result_from
from fabtui.transports.output import LineCallback
from fabtui.transports.process import ProcessOutcome
from fabtui.transports.ssh import SshTarget, SshTransport
from tests.support.processes import descendants

CATALOG = load_catalog([shipped_dir("probes")])
IBSTAT = CATALOG["nic.ibstat"]


@pytest.fixture(scope="module")
def sim() -> Sim:
    return build_sim(fresh_state(demo_topology(), find_scenario("healthy"),
                                 [shipped_templates()]))


@pytest.fixture
def state_file(tmp_path: Path) -> tuple[Path, SimState]:
    state = fresh_state(demo_topology(), find_scenario("healthy"), [shipped_templates()])
    path = tmp_path / "state.json"
    write_state(path, state)
    return path, state


# target sets ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, kind, count, first, last", [
    ("node*:mlx5_*", "nic", 64, "node001:mlx5_0", "node008:mlx5_7"),
    ("node003:*", "nic", 8, "node003:mlx5_0", "node003:mlx5_7"),
    ("node003:*", "gpu", 8, "node003:gpu0", "node003:gpu7"),
    ("node[001-004]", "node", 4, "node001", "node004"),
    ("node[001-002,007]:mlx5_0", "nic", 3, "node001:mlx5_0", "node007:mlx5_0"),
    ("node00[1-2]:mlx5_[0-3]", "nic", 8, "node001:mlx5_0", "node002:mlx5_3"),
    ("rail:3", "nic", 8, "node001:mlx5_3", "node008:mlx5_3"),
    ("rail:3", "switch", 1, "leaf-g00-r3", "leaf-g00-r3"),
    ("rail:3", "port", 8, "leaf-g00-r3:Ethernet0", "leaf-g00-r3:Ethernet56"),
    ("leaf:leaf-g00-r5", "nic", 8, "node001:mlx5_5", "node008:mlx5_5"),
    ("leaf:leaf-g00-r5", "port", 8, "leaf-g00-r5:Ethernet0", "leaf-g00-r5:Ethernet56"),
    ("leaf:leaf-g00-r5", "node", 8, "node001", "node008"),
    ("leaf-*", "switch", 8, "leaf-g00-r0", "leaf-g00-r7"),
    ("node00[1-2]:mlx5_0", "node", 2, "node001", "node002"),  # NICs fitted to their nodes
    ("node002,node001,node002", "node", 2, "node002", "node001"),  # a list: given order, once
    ("node001:mlx5_1,rail:1", "nic", 8, "node001:mlx5_1", "node008:mlx5_1"),
])
def test_target_sets_resolve_in_topology_order(sim: Sim, text: str, kind: TargetKind, count: int,
                                               first: str, last: str) -> None:
    names = [t.name for t in resolve_set(sim.graph, text, kind)]
    assert (len(names), names[0], names[-1]) == (count, first, last)
    assert len(set(names)) == len(names)


def test_a_plain_name_or_pair_is_one_target_not_a_set(sim: Sim) -> None:
    assert not is_set("node001:mlx5_0") and not is_set("node001,node002")
    assert is_set("node*") and is_set("node[001-002]") and is_set("rail:0") and is_set("a,b,c")
    assert [t.name for t in resolve_set(sim.graph, "node001,node002", "node-pair")] == \
        ["node001,node002"]
    assert [t.kind for t in resolve_set(sim.graph, "node001:mlx5_0", "nic")] == ["nic"]


@pytest.mark.parametrize("text, kind, message", [
    ("nodx*:mlx5_*", "nic", "'nodx\\*:mlx5_\\*' matches no nic of this fabric"),
    ("spine-*", "nic", "matches no nic .*spine-01 is a switch"),
    ("rail:42", "nic", "no NIC is on rail 42 \\(rails: 0, 1, 2, 3, 4, 5, 6, 7\\)"),
    ("rail:x", "nic", "a rail is a number"),
    ("leaf:leaf-g00", "nic", "no switch 'leaf-g00' \\(did you mean leaf-g00-r0"),
    ("node[007-010]", "node", "'node009' is not a node"),
    ("node[004-001]", "node", "runs backwards"),
    ("node*", "node-pair", "a pair probe runs on one pair"),
])
def test_a_set_that_matches_nothing_says_so(sim: Sim, text: str, kind: TargetKind,
                                            message: str) -> None:
    with pytest.raises(TargetError, match=message):
        resolve_set(sim.graph, text, kind)


def test_latency_knob_reads_defaults_and_per_device_globs() -> None:
    knob = parse_latency("0.5, node003=20, leaf-*=2s")
    assert (knob.of("node001"), knob.of("node003"), knob.of("leaf-g00-r1")) == (0.5, 20, 2)
    assert parse_latency("").of("node001") == 0
    for bad in ("slow", "node003=", "=3", "-1"):
        with pytest.raises(Exception, match=LATENCY_VAR):
            parse_latency(bad)


# sweeps, on a transport the test holds in its hand -----------------------------------------------
class HeldNodes(SshTransport):
    """Simulated nodes answering in-process, each only when the test releases its host."""

    def __init__(self, sim: Sim) -> None:
        super().__init__()
        self.sim = sim
        self.release: dict[str, asyncio.Event] = {}
        self.in_flight = 0
        self.most = 0
        self.started: list[str] = []
        self.fail: set[str] = set()

    def gate(self, name: str) -> asyncio.Event:
        return self.release.setdefault(name, asyncio.Event())

    async def run(self, target: SshTarget, argv: Sequence[str], *, timeout: float = 60.0,
                  on_line: LineCallback | None = None, retry_on_drop: bool = True,
                  stdin: bytes | None = None) -> TransportResult:
        key = f"{target.name}:{argv[-1]}"
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        self.started.append(key)
        try:
            if key in self.fail:
                raise RuntimeError(f"transport bug on {key}")
            await self.gate(key).wait()
        finally:
            self.in_flight -= 1
        started = datetime.now(UTC)
        out, err, status = node_run(self.sim, target.name, list(argv), 600.0)
        outcome = ProcessOutcome(out, err, status, False, False, len(out), started, started)
        return result_from(outcome, target=target.name, transport="held",
                           command=shlex.join(argv), timeout=timeout)


async def _wait_for(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def test_a_sweep_keeps_to_its_limit_and_yields_in_completion_order(sim: Sim) -> None:
    targets = resolve_set(sim.graph, "node001:*,node002:mlx5_[0-1]", "nic")
    nodes = HeldNodes(sim)
    runner = ProbeRunner(sim.graph, Transports(ssh=nodes))

    async def main() -> list[str]:
        seen: list[str] = []
        stream = runner.sweep(IBSTAT, targets, limit=3)
        pending = asyncio.ensure_future(stream.__anext__())
        while len(seen) < len(targets):
            await _wait_for(lambda: nodes.in_flight == min(3, len(targets) - len(seen)))
            # Release the latest started of those waiting: the reverse of the start order.
            newest = next(k for k in reversed(nodes.started) if not nodes.gate(k).is_set())
            nodes.gate(newest).set()
            result = await pending
            seen.append(result.target)
            assert result.target == newest and result.verdict is Verdict.OK
            if len(seen) < len(targets):
                pending = asyncio.ensure_future(stream.__anext__())
        await stream.aclose()
        return seen

    seen = asyncio.run(main())
    assert nodes.most == 3
    assert sorted(seen) == sorted(t.name for t in targets) and seen != [t.name for t in targets]


def test_a_hung_or_broken_target_is_one_row_and_the_sweep_goes_on(sim: Sim) -> None:
    targets = resolve_set(sim.graph, "node00[1-3]:mlx5_0", "nic")
    nodes = HeldNodes(sim)
    nodes.gate("node001:mlx5_0").set()
    nodes.fail.add("node003:mlx5_0")  # node002 is never released: it hangs
    runner = ProbeRunner(sim.graph, Transports(ssh=nodes))

    async def main() -> list[tuple[str, Verdict, str | None]]:
        return [(r.target, r.verdict, r.error)
                async for r in runner.sweep(IBSTAT, targets, target_timeout=0.5)]

    rows = {target: (verdict, error) for target, verdict, error in asyncio.run(main())}
    assert rows["node001:mlx5_0"] == (Verdict.OK, None)
    assert rows["node002:mlx5_0"][0] is Verdict.ERROR
    assert "no result within 0.5s" in (rows["node002:mlx5_0"][1] or "")
    assert rows["node003:mlx5_0"] == (Verdict.ERROR, "RuntimeError: transport bug on "
                                                     "node003:mlx5_0")
    assert nodes.in_flight == 0  # the hung command was cancelled, not abandoned


def test_leaving_a_sweep_early_cancels_what_still_runs(sim: Sim) -> None:
    targets = resolve_set(sim.graph, "node001:*", "nic")
    nodes = HeldNodes(sim)
    nodes.gate("node001:mlx5_0").set()
    runner = ProbeRunner(sim.graph, Transports(ssh=nodes))

    async def main() -> str:
        stream = runner.sweep(IBSTAT, targets)
        first = await stream.__anext__()
        await stream.aclose()
        return first.target

    assert asyncio.run(main()) == "node001:mlx5_0"
    assert nodes.in_flight == 0


# the command line, through the simulated device programs ----------------------------------------
def test_probe_run_on_a_set_prints_one_table(run: Callable[..., Result]) -> None:
    result = run("probe", "run", "nic.ibstat", "--target", "node00[1-2]:mlx5_[0-1]")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["target", "verdict", "s"]
    assert [line.split()[:2] for line in lines[1:5]] == [
        ["node001:mlx5_0", "ok"], ["node001:mlx5_1", "ok"], ["node002:mlx5_0", "ok"],
        ["node002:mlx5_1", "ok"]]
    assert "port.state=Active" in lines[1]
    assert lines[-1] == "nic.ibstat: 4 targets: 4 ok"
    data = json.loads(run("probe", "run", "nic.ibstat", "--target", "rail:6", "--json").stdout)
    assert [r["target"] for r in data] == [f"node00{i}:mlx5_6" for i in range(1, 9)]


def test_a_slow_target_is_a_row_with_its_timeout(run: Callable[..., Result],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LATENCY_VAR, "node002=60")
    result = run("probe", "run", "nic.ibstat", "--target", "node00[1-3]:mlx5_4",
                 "--target-timeout", "4")
    assert result.exit_code == 3
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:4]}
    assert rows["node002:mlx5_4"].split()[1] == "error"
    assert "no result within 4s" in rows["node002:mlx5_4"]
    assert rows["node001:mlx5_4"].split()[1] == rows["node003:mlx5_4"].split()[1] == "ok"


def test_a_set_that_matches_nothing_exits_2(run: Callable[..., Result]) -> None:
    result = run("probe", "run", "nic.ibstat", "--target", "gpu*:mlx5_*")
    assert result.exit_code == 2 and "matches no nic" in result.stderr


# cancellation -----------------------------------------------------------------------------------
@pytest.fixture
def no_leftovers() -> Iterator[None]:
    before = descendants(zombies=False)
    yield
    assert descendants(zombies=False) - before == set()


def test_cancelling_a_pair_probe_stops_both_sides(state_file: tuple[Path, SimState],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  no_leftovers: None) -> None:
    monkeypatch.setenv(LATENCY_VAR, "2")  # every command runs 2 s: long enough to be caught
    path, state = state_file
    runner = ProbeRunner(build_sim(state).graph, Transports(ssh=SimSshTransport(path)))
    runner.server_start_s = 0.2
    before = descendants(zombies=False)

    async def main() -> None:
        task = asyncio.create_task(runner.run(CATALOG["perftest.ib_write_bw"],
                                              "node001:mlx5_0,node002:mlx5_0"))
        await _wait_for(lambda: len(descendants(zombies=False) - before) >= 2)  # server and client
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert descendants(zombies=False) - before == set()  # at once, not when the loop shuts down

    asyncio.run(main())


def test_cancelling_a_switch_probe_closes_its_session_and_lock(
        state_file: tuple[Path, SimState], monkeypatch: pytest.MonkeyPatch,
        no_leftovers: None) -> None:
    monkeypatch.setenv(LATENCY_VAR, "leaf-g00-r3=60")  # its CLI answers after a minute
    path, state = state_file
    cli = SimCliTransport(path)
    runner = ProbeRunner(build_sim(state).graph, Transports(cli=cli))
    before = descendants(zombies=False)

    async def main() -> None:
        task = asyncio.create_task(runner.run(CATALOG["switch.lldp"], "leaf-g00-r3"))
        await _wait_for(lambda: bool(descendants(zombies=False) - before))
        await asyncio.sleep(0.5)  # logged in, and waiting on its first reply
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert descendants(zombies=False) - before == set()  # at once, not when the loop shuts down
        assert cli._locks["leaf-g00-r3"].acquire(blocking=False)  # let go, not held 60 s
        cli._locks["leaf-g00-r3"].release()
        assert not any(cli.sessions().values())
        await runner.close()

    asyncio.run(main())


class ListeningPair(SshTransport):
    """A perftest pair in this process: the server says it listens, then serves one client."""

    def __init__(self, sim: Sim, *, announce: bool) -> None:
        super().__init__()
        self.sim, self.announce = sim, announce
        self.connected = asyncio.Event()

    async def run(self, target: SshTarget, argv: Sequence[str], *, timeout: float = 60.0,
                  on_line: LineCallback | None = None, retry_on_drop: bool = True,
                  stdin: bytes | None = None) -> TransportResult:
        started = datetime.now(UTC)
        out, err, status = node_run(self.sim, target.name, list(argv), 600.0)
        server = target.name == "node002"
        if server:
            if self.announce and on_line is not None:
                for line in out.splitlines()[:4]:  # the banner, before any client came
                    on_line(line)
            await self.connected.wait()  # a server runs until its client has been served
        else:
            self.connected.set()
        outcome = ProcessOutcome(out, err, status, False, False, len(out), started, started)
        return result_from(outcome, target=target.name, transport="pair",
                           command=shlex.join(argv), timeout=timeout)


def test_a_pair_probes_client_starts_when_its_server_says_it_listens(sim: Sim) -> None:
    runner = ProbeRunner(sim.graph, Transports(ssh=ListeningPair(sim, announce=True)))
    runner.server_start_s = 60.0  # the bound is not what ends the wait

    async def main() -> ProbeResult:
        return await asyncio.wait_for(runner.run(CATALOG["perftest.ib_write_bw"],
                                                 "node001:mlx5_0,node002:mlx5_0"), 20)

    result = asyncio.run(main())
    assert result.verdict is Verdict.OK, result.findings


def test_a_pair_probes_client_still_starts_when_its_server_stays_silent(sim: Sim) -> None:
    runner = ProbeRunner(sim.graph, Transports(ssh=ListeningPair(sim, announce=False)))
    runner.server_start_s = 0.2  # remote output may come only at the end: the bound ends it

    result = asyncio.run(runner.run(CATALOG["perftest.ib_write_bw"],
                                    "node001:mlx5_0,node002:mlx5_0"))
    assert result.verdict is Verdict.OK, result.findings


def test_a_row_names_the_lane_or_port_each_metric_was_read_on() -> None:
    from fabtui.cli.sweep import _metric
    from fabtui.model.probe import Metric

    lane = Metric(name="rx_power_dbm", value=-9.08, unit="dBm",
                  component="leaf-g00-r3:Ethernet16/lane1", verdict=Verdict.FAIL)
    assert _metric(lane, "leaf-g00-r3:Ethernet16") == "lane1 rx_power_dbm=-9.08 dBm [fail]"
    port = Metric(name="pause_share.rx.PFC3", value=1.0, component="leaf-g00-r4:Ethernet40")
    assert _metric(port, "leaf-g00-r4") == "Ethernet40 pause_share.rx.PFC3=1"
    own = Metric(name="port.state", value="Active", component="node001:mlx5_0")
    assert _metric(own, "node001:mlx5_0") == "port.state=Active"
