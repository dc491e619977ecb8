"""The demo fabric playing a scenario, for the simulator's tests: probed through the real
transports (`Fabric`, the `fabric` fixture, `scenario`), and its state file with a pinned clock
(`pinned_state`).

A test module that takes the `fabric` fixture imports it from here (pytest finds a fixture in
the test module's namespace) and names it in `__all__`, so that the import reads as used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabtui.model.probe import ProbeDef, ProbeResult, Verdict
from fabtui.parsers import registry
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.probes.catalog import load_catalog
from fabtui.probes.runner import ProbeRunner, Transports
from fabtui.sim.core import Sim
from fabtui.sim.latency import LATENCY_VAR
from fabtui.sim.node_commands import run
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import TIME_VAR, build_sim, fresh_state, write_state
from fabtui.sim.switch_cli import reply
from fabtui.sim.transports import SimCliTransport, SimSshTransport

CATALOG = load_catalog([shipped_dir("probes")])
JOB_LOG = {"path": "/var/log/fabtui-sim/job.log"}


def parse(kind: str, text: str) -> Any:
    """`text` read by the registered parser of `kind`."""
    return registry.get(kind).module.parse(text)


def node_out(sim: Sim, host: str, argv: list[str], t: float) -> str:
    """What the simulated `host` prints for `argv` at time `t`; a non-zero exit fails the test."""
    out, err, status = run(sim, host, argv, t)
    assert status == 0, err
    return out


def switch_out(sim: Sim, switch: str, command: str, t: float) -> str:
    """What the simulated `switch`'s CLI answers to `command` at `t`; a rejection fails the test."""
    text, rejected = reply(sim, sim.graph.switches[switch], command, t)
    assert not rejected, text
    return text


class Fabric:
    """The demo fabric playing one scenario, and a probe runner wired to it."""

    def __init__(self, scenario: str, folder: Path, topology: Path | None = None) -> None:
        state = fresh_state(topology or demo_topology(), find_scenario(scenario),
                            [shipped_templates()])
        self.state_file = folder / "state.json"
        write_state(self.state_file, state)
        graph = build_sim(state).graph
        self.loop = asyncio.new_event_loop()
        self.runner = ProbeRunner(graph, Transports(ssh=SimSshTransport(self.state_file),
                                                    cli=SimCliTransport(self.state_file)))

    def probe(self, name: str, target: str, **params: str) -> ProbeResult:
        definition: ProbeDef = CATALOG[name]
        if definition.samples > 1:
            definition = definition.model_copy(update={"interval": 1.0})
        result = self.loop.run_until_complete(self.runner.run(definition, target, params))
        assert result.error is None, result.error
        return result

    def close(self) -> None:
        self.loop.run_until_complete(self.runner.close())
        self.loop.close()


@pytest.fixture
def fabric(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Fabric]:
    """The demo fabric playing the scenario the test is parametrized with (`scenario`)."""
    running = Fabric(request.param, tmp_path)
    yield running
    running.close()


def scenario(name: str) -> pytest.MarkDecorator:
    """Mark a test taking `fabric` to run on the demo fabric playing scenario `name`."""
    return pytest.mark.parametrize("fabric", [name], indirect=True)


def flagged(result: ProbeResult) -> dict[str, Verdict]:
    """Component -> worst verdict, for the metrics that are not ok."""
    worst: dict[str, Verdict] = {}
    for metric in result.metrics:
        if metric.verdict is not Verdict.OK:
            worst[metric.component] = Verdict.worst([worst.get(metric.component, Verdict.OK),
                                                     metric.verdict])
    return worst


def only(result: ProbeResult, prefix: str, verdict: Verdict) -> None:
    """Every finding is about `prefix` (a component or its lanes/queues), at `verdict` or more."""
    found = flagged(result)
    assert found, f"{result.probe} on {result.target} found nothing"
    assert all(c == prefix or c.startswith(prefix + "/") for c in found), found
    assert Verdict.worst(list(found.values())) is verdict, found


def clean(result: ProbeResult) -> None:
    assert result.verdict is Verdict.OK, flagged(result)


def pinned_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: str) -> Path:
    """A demo fabric's state file playing `scenario`, its clock pinned (both transports then
    answer at the same simulated moment) and no latency configured."""
    monkeypatch.setenv(TIME_VAR, "120")
    monkeypatch.delenv(LATENCY_VAR, raising=False)
    path = tmp_path / "state.json"
    write_state(path, fresh_state(demo_topology(), find_scenario(scenario),
                                  [shipped_templates()]))
    return path
