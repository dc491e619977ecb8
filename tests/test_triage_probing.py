"""Triage reports a probe it could not run as "cannot tell" only for errors that mean that (a
refused request, a missing component, a dead device); a bug surfaces instead of becoming an
`unknown` link or a failed run presented as a fact about the fabric."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest

from fabtui.errors import RequestError
from fabtui.model.probe import ProbeResult
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.triage.chain import SuspectLocation, build_chain
from fabtui.triage.stragglers import plan_sweep, run_sweep

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def graph() -> FabricGraph:
    return FabricGraph(load_topology(ROOT / "topology" / "demo.yaml").topology)


class _Raising:
    """A probe runner whose every run raises `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def run_probe(self, name: str, target: str | None, params: Mapping[str, str],
                        topology: Path | None = None) -> ProbeResult:
        raise self.error


@pytest.mark.parametrize("error", [
    RequestError("no probe 'switch.dom'"), ConnectionRefusedError("connection refused"),
    LookupError("no such port")])
def test_errors_that_mean_cannot_tell_are_unknown_links(graph: FabricGraph,
                                                        error: Exception) -> None:
    suspect = SuspectLocation.of_rank(graph, 21, job_log="/var/log/job.log")
    chain = asyncio.run(build_chain(suspect, graph, _Raising(error), timeout=5))
    assert all(link.status == "unknown" for link in chain.links)
    assert any(str(error) in (link.reason or "") for link in chain.links)


@pytest.mark.parametrize("error", [TypeError("unsupported operand"), KeyError("busbw"),
                                   AttributeError("'NoneType' object has no attribute 'x'")])
def test_a_bug_in_a_probe_run_surfaces_from_the_chain(graph: FabricGraph,
                                                      error: Exception) -> None:
    suspect = SuspectLocation.of_rank(graph, 21, job_log="/var/log/job.log")
    with pytest.raises(type(error)):
        asyncio.run(build_chain(suspect, graph, _Raising(error), timeout=5))


def test_a_dead_device_is_a_failed_sweep_run(graph: FabricGraph) -> None:
    nodes = list(graph.nodes)[:2]
    done = asyncio.run(run_sweep(plan_sweep(nodes, graph),
                                 _Raising(ConnectionResetError("reset by peer")), graph))
    assert [r.error for r in done.runs] == ["reset by peer"]


@pytest.mark.parametrize("error", [TypeError("unsupported operand"), IndexError("list index")])
def test_a_bug_in_a_probe_run_surfaces_from_the_sweep(graph: FabricGraph,
                                                      error: Exception) -> None:
    nodes = list(graph.nodes)[:2]
    with pytest.raises(type(error)):
        asyncio.run(run_sweep(plan_sweep(nodes, graph), _Raising(error), graph))
