"""The evidence chain on the demo fabric: each scenario confirms its own layers, healthy none;
a dead or slow device is an `unknown` link with its reason."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pytest

from fabtui.config import load_settings
from fabtui.model.chain import EvidenceChain
from fabtui.model.probe import ProbeResult
from fabtui.sim.scenario import find_scenario, load_scenario
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.triage.chain import SuspectLocation, build_chain, render_chain
from fabtui.workspace import Workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")

ROOT = Path(__file__).resolve().parent.parent
JOB_LOG = "/var/log/fabtui-sim/job.log"


@pytest.fixture(scope="module")
def graph() -> FabricGraph:
    return FabricGraph(load_topology(ROOT / "topology" / "demo.yaml").topology)


def _chain(tmp_path: Path, scenario: str, suspect: SuspectLocation) -> EvidenceChain:
    settings = dataclasses.replace(load_settings(None), scenario=scenario, scenario_chosen=True,
                                   data_dir=tmp_path)
    with Workspace(settings) as space:
        return asyncio.run(build_chain(suspect, space.graph(), space))


def _status(chain: EvidenceChain) -> dict[str, str]:
    return {link.layer: link.status for link in chain.links}


def test_nccl_hang_confirms_the_dead_optic(tmp_path: Path, graph: FabricGraph) -> None:
    expect = load_scenario(find_scenario("nccl-hang")).scenario.expect
    suspect = SuspectLocation.of_rank(graph, expect["rank"], job_log=JOB_LOG)
    assert suspect.leaf_port == expect["port"] and suspect.optic == expect["optic"]
    chain = _chain(tmp_path, "nccl-hang", suspect)
    assert _status(chain) == {"job": "confirmed", "busbw": "confirmed", "rail": "confirmed",
                              "pfc": "contradicted", "fec": "unknown", "optic": "confirmed"}
    assert chain.deepest == "optic"
    optic = chain.links[-1]
    assert optic.probe == "switch.dom" and optic.target == expect["port"]
    powers = [float(str(v)) for k, v in optic.values.items() if k.startswith("rx_power_dbm")]
    assert powers and all(p == float("-inf") for p in powers)  # no light on any lane
    assert "down" in chain.links[4].reason  # FEC on a dark link says nothing, and says why


def test_optic_degrading_confirms_fec_and_dom_only(tmp_path: Path, graph: FabricGraph) -> None:
    expect = load_scenario(find_scenario("optic-degrading")).scenario.expect
    leaf, port = expect["component"].split(":")
    attachment = next(a for a in graph.attachments.values()
                      if a.switch == leaf and a.port == port)
    suspect = SuspectLocation(node=attachment.node.hostname, nic=attachment.nic.name,
                              leaf_port=expect["component"], optic=expect["optic"],
                              job_log=JOB_LOG)
    chain = _chain(tmp_path, "optic-degrading", suspect)
    assert chain.confirmed == ["fec", "optic"] and chain.deepest == "optic"
    assert _status(chain)["pfc"] == "contradicted"
    fec = chain.links[4]  # the leaf's laser ages: the NIC end receives the errors
    assert fec.probe == "nic.mlxlink" and fec.values and "NIC end" in fec.reason


def test_pfc_storm_confirms_the_pause(tmp_path: Path, graph: FabricGraph) -> None:
    expect = load_scenario(find_scenario("pfc-storm")).scenario.expect
    node, nic = expect["nic"].split(":")
    attachment = graph.attachments[(node, nic)]
    suspect = SuspectLocation(node=node, nic=nic,
                              leaf_port=f"{attachment.switch}:{attachment.port}")
    assert suspect.leaf_port == expect["component"]
    chain = _chain(tmp_path, "pfc-storm", suspect)
    status = _status(chain)
    assert status["pfc"] == "confirmed" and chain.deepest == "pfc"
    assert status["optic"] == "contradicted" and status["fec"] == "contradicted"
    assert status["job"] == "unknown"  # no job log, no step times: said, not guessed
    assert "pause_share.rx.PFC3" in chain.links[3].reason


def test_healthy_confirms_nothing(tmp_path: Path, graph: FabricGraph) -> None:
    chain = _chain(tmp_path, "healthy", SuspectLocation.of_rank(graph, 21, job_log=JOB_LOG))
    assert chain.confirmed == [] and chain.deepest is None
    assert all(link.status == "contradicted" for link in chain.links), render_chain(chain)
    assert "no layer confirms a fault" in render_chain(chain)


class _Broken:
    """The DOM read hangs, the pair test's node is unreachable, the rest answers nothing."""

    async def run_probe(self, name: str, target: str | None, params: Mapping[str, str],
                        topology: Path | None = None) -> ProbeResult:
        if name == "switch.dom":
            await asyncio.sleep(30)
        if name == "nccl.mpirun":
            raise ConnectionError("ssh: connect to host node003: No route to host")
        raise LookupError(f"no {target}")


def test_dead_or_slow_devices_are_unknown_never_a_hang(graph: FabricGraph) -> None:
    suspect = SuspectLocation.of_rank(graph, 21, job_log=JOB_LOG)
    chain = asyncio.run(build_chain(suspect, graph, _Broken(), timeout=0.3))
    assert all(link.status == "unknown" for link in chain.links)
    reasons = {link.layer: link.reason for link in chain.links}
    assert "did not answer in 0.3 s" in reasons["optic"]
    assert "No route to host" in reasons["busbw"]
    assert chain.summary.startswith("no layer confirms a fault")


def test_a_suspect_without_a_port(graph: FabricGraph) -> None:
    chain = asyncio.run(build_chain(SuspectLocation(node="node001", step_ratio=0.5), graph,
                                    _Broken(), timeout=0.3))
    status = _status(chain)
    assert status["job"] == "confirmed" and chain.links[0].values == {"step_ratio": 0.5}
    assert {status[k] for k in ("rail", "pfc", "fec", "optic")} == {"unknown"}
    assert chain.links[2].reason == "no leaf port known for the suspect"
