"""The interval between a counter probe's two readings: real on real devices, skipped on the sim.

On the simulated fabric the runner does not sleep: it moves the simulated clock on for that
probe's next commands (node commands and switch sessions alike), so the two readings are the
interval apart on the devices' clock, and nothing of it leaks to other probes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from fabtui.model.probe import ProbeResult
from fabtui.parsers import registry
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.probes.catalog import load_catalog
from fabtui.probes.runner import ProbeRunner, Transports
from fabtui.sim.node_commands import ethtool_counters
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import TIME_VAR, build_sim, fresh_state, write_state
from fabtui.sim.transports import SimCliTransport, SimSshTransport
from fabtui.transports import clock
from fabtui.transports.cli_session import CliTarget
from fabtui.transports.ssh import SshTarget, SshTransport

T = TypeVar("T")

CATALOG = load_catalog([shipped_dir("probes")])
PINNED = 100.0


@pytest.fixture
def state_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo fabric in a PFC storm (counters that move), its clock pinned at t=100."""
    monkeypatch.setenv(TIME_VAR, str(PINNED))
    path = tmp_path / "state.json"
    write_state(path, fresh_state(demo_topology(), find_scenario("pfc-storm"),
                                  [shipped_templates()]))
    return path


async def _skewed(seconds: float, work: Callable[[], Awaitable[T]]) -> T:
    clock.advance(seconds)
    return await work()


def test_a_node_command_runs_at_the_clock_its_probe_moved_on(state_file: Path) -> None:
    transport = SimSshTransport(state_file)
    node = SshTarget(name="node001", host="node001")

    async def read() -> str:
        result = await transport.run(node, ["ethtool", "-S", "enp23s0f0np0"], timeout=30)
        assert result.ok, result.error_message
        return result.output

    async def main() -> tuple[str, str, str]:
        return await read(), await read(), await asyncio.create_task(_skewed(5.0, read))

    first, again, later = asyncio.run(main())
    assert first == again  # pinned clock, no skew: the same moment
    parse = registry.get("ethtool-stats").parse
    before, after = parse(first).model_dump(), parse(later).model_dump()
    assert before != after  # 5 s later on the simulated clock, counters have moved
    assert clock.SKEW.get() == 0.0  # the skew stayed in its task


def test_a_switch_session_runs_each_command_at_its_probes_clock(state_file: Path) -> None:
    transport = SimCliTransport(state_file)
    leaf = CliTarget(ssh=SshTarget(name="leaf-g00-r0", host="leaf-g00-r0"), flavor="sonic")

    async def read() -> str:
        result = await transport.run(leaf, "show interfaces counters", timeout=30)
        assert result.ok, result.error_message
        return result.output

    async def main() -> list[str]:
        try:
            # One session throughout: the clock escape must neither echo nor stick.
            return [await read(), await asyncio.create_task(_skewed(5.0, read)), await read()]
        finally:
            await transport.close()

    first, later, back = asyncio.run(main())
    assert later != first
    assert back == first
    assert "fabtui-skew" not in later + back


def test_a_counter_probe_on_the_sim_reads_the_interval_apart_without_waiting_it(
        state_file: Path) -> None:
    state = fresh_state(demo_topology(), find_scenario("pfc-storm"), [shipped_templates()])
    sim = build_sim(state)
    runner = ProbeRunner(sim.graph, Transports(ssh=SimSshTransport(state_file)))
    probe = CATALOG["nic.ethtool"].model_copy(update={"interval": 30.0})

    async def main() -> ProbeResult:
        try:
            return await asyncio.wait_for(runner.run(probe, "node001:mlx5_0"), 20)
        finally:
            await runner.close()

    result = asyncio.run(main())  # 30 s apart, yet within 20 s: the interval was not slept
    assert result.error is None, result.error
    node = sim.graph.nodes["node001"]
    nic = next(n for n in node.nics if n.name == "mlx5_0")
    parse = registry.get("ethtool-stats").parse
    for raw, t in zip(result.raw, (PINNED, PINNED + 30.0), strict=True):
        counters = parse(raw.output).model_dump()["counters"]
        expected = ethtool_counters(sim, "node001", nic, t)
        assert {k: counters[k] for k in expected} == expected
    assert clock.SKEW.get() == 0.0


def test_real_devices_keep_the_real_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr("fabtui.transports.ssh.asyncio.sleep", sleep)
    asyncio.run(SshTransport().let_pass(5.0))
    assert slept == [5.0]
    assert clock.SKEW.get() == 0.0
