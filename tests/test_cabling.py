"""Design against cabling (issue 41 point 4): what the simulated plant's switches hear (LLDP,
ibnetdiscover) and where its NIC cards sit (`nvidia-smi topo -m`) against the topology, each
difference with the exact fix; the demo's miscabling scenarios are found, a healthy fabric
yields nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabtui.cli.app import cli
from fabtui.config import load_settings, with_scenario
from fabtui.model.cabling import CablingReport
from fabtui.paths import demo_topology
from fabtui.sim.scenario import find_scenario, load_scenario
from fabtui.topology.cabling import Heard, compare_cabling
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.workspace import Workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")


def _report(scenario: str, *nodes: str, affinity: bool = True) -> CablingReport:
    with Workspace(with_scenario(load_settings(None), scenario)) as ws:
        return asyncio.run(ws.cabling(nodes, affinity=affinity))


@pytest.mark.parametrize("scenario", ["miscabled-swap", "miscabled-plant", "ib-miscabled"])
def test_each_miscabling_scenario_is_found_with_the_exact_fix(scenario: str) -> None:
    expect = load_scenario(find_scenario(scenario)).scenario.expect["cabling"]
    report = _report(scenario, affinity=scenario != "ib-miscabled")
    assert not report.ok and not report.unread
    found = sorted((f.rule, f.fix) for f in report.findings)
    assert len(found) == len(expect), found
    for wanted in expect:
        assert any(rule == wanted["rule"] and fix.startswith(wanted["fix"])
                   for rule, fix in found), (wanted, found)


def test_a_swap_of_one_nodes_cables_is_fixed_at_the_node() -> None:
    report = _report("rank-mapping")
    assert [f.rule for f in report.findings] == ["swap"]
    assert report.findings[0].fix.startswith("swap the cables of node007 mlx5_2 and mlx5_6 at "
                                             "node007")
    assert "node007 mlx5_2 lands on leaf-g00-r6:Ethernet48" in report.findings[0].message
    assert report.ports_checked - report.ports_matched == 2
    assert report.findings[0].ranks == [50, 54]  # node007's GPUs 2 and 6 send through them


@pytest.mark.parametrize("scenario", ["healthy", "ib-healthy"])
def test_a_healthy_fabric_has_zero_findings(scenario: str) -> None:
    report = _report(scenario)
    assert report.ok and report.findings == []
    assert report.ports_checked == report.ports_matched == 192  # 64 host ports + 128 uplink ends


def test_another_nodes_cabling_is_not_blamed() -> None:
    assert _report("rank-mapping", "node003", affinity=False).findings == []
    only = _report("rank-mapping", "node007", affinity=False)
    assert [f.rule for f in only.findings] == ["swap"]


def test_infiniband_cabling_is_read_from_ibnetdiscover(tmp_path: Path) -> None:
    plant = tmp_path / "ib-swap.yaml"
    plant.write_text("name: ib-swap\ntopology: h100-64gpu-ib\ntimeline:\n"
                     "  - {at: 0, fault: rank-mapping, component: node002:mlx5_1,"
                     " params: {with: 'node006:mlx5_4'}}\n", encoding="utf-8")
    report = _report(str(plant), affinity=False)
    assert report.sources == ["ibnetdiscover from node001"]
    assert [f.rule for f in report.findings] == ["swap"]
    assert {"node002:mlx5_1", "node006:mlx5_4"} <= set(report.findings[0].components)


def test_the_command_exits_1_on_findings_and_0_on_a_healthy_fabric() -> None:
    runner = CliRunner()
    bad = runner.invoke(cli, ["--scenario", "miscabled-swap", "topo", "cabling", "--json"])
    assert bad.exit_code == 1, bad.output
    data = json.loads(bad.stdout)
    assert data["ok"] is False and {f["rule"] for f in data["findings"]} == {"swap",
                                                                            "wrong-leaf"}
    good = runner.invoke(cli, ["--scenario", "healthy", "topo", "cabling"])
    assert good.exit_code == 0 and "no finding" in good.stdout
    unknown = runner.invoke(cli, ["--scenario", "healthy", "topo", "cabling", "--node", "nx"])
    assert unknown.exit_code == 2 and "not a node of the fabric: nx" in unknown.output


# the comparison alone ---------------------------------------------------------------------------
def _demo() -> FabricGraph:
    return FabricGraph(load_topology(demo_topology()).topology)


def _heard(graph: FabricGraph, changes: Mapping[str, str | None]) -> list[Heard]:
    """Every designed port of every switch heard as designed, except `changes` (None:
    silent)."""
    heard = {key: graph.far_end(key) for key in graph.port_links
             if key.split(":")[0] in graph.switches}
    heard.update(changes)
    return [Heard(port, far, "test") for port, far in heard.items() if far]


def test_three_cables_in_a_ring_are_three_moves_not_a_swap() -> None:
    graph = _demo()
    ring = {"leaf-g00-r1:Ethernet0": "node002:mlx5_1", "leaf-g00-r1:Ethernet8": "node003:mlx5_1",
            "leaf-g00-r1:Ethernet16": "node001:mlx5_1"}
    assert {graph.far_end(p) for p in ring} == set(ring.values())
    findings, checked, matched = compare_cabling(graph, _heard(graph, ring), set(graph.switches))
    assert [f.rule for f in findings] == ["wrong-port"] * 3
    assert "move the cable of node002 mlx5_1 from leaf-g00-r1:Ethernet0 to " \
           "leaf-g00-r1:Ethernet8" in [f.fix for f in findings]
    assert checked - matched == 3


def test_an_unknown_neighbour_and_an_uplink_on_the_wrong_spine_port() -> None:
    graph = _demo()
    uplink = "leaf-g00-r0:Ethernet112"
    spine_end = graph.far_end(uplink) or ""
    spine, port = spine_end.split(":")
    other = "spine-02:" + port if spine == "spine-01" else "spine-01:" + port
    owner = graph.far_end(other) or ""
    changes: dict[str, str | None] = {"leaf-g00-r4:Ethernet8": "rogue-host:eth0",
                                      uplink: other, other: uplink, spine_end: None,
                                      owner: None}
    findings, _, _ = compare_cabling(graph, _heard(graph, changes), set(graph.switches))
    rules = sorted(f.rule for f in findings)
    assert rules == ["unknown-peer", "wrong-port"]
    unknown = next(f for f in findings if f.rule == "unknown-peer")
    assert "rogue-host:eth0" in unknown.message and unknown.fix.startswith(
        "re-cable leaf-g00-r4:Ethernet8 to node002 mlx5_4")


def test_an_uplink_moved_to_a_spare_spine_port_is_moved_back() -> None:
    graph = _demo()
    uplink = "leaf-g00-r0:Ethernet112"
    spine_end = graph.far_end(uplink) or ""
    findings, _, _ = compare_cabling(
        graph, _heard(graph, {uplink: "spine-01:Ethernet60/1", spine_end: None}),
        {"leaf-g00-r0"})
    assert [(f.rule, f.fix) for f in findings] == [
        ("wrong-port", f"move the far end of the cable in {uplink} from spine-01:Ethernet60/1 "
                       f"to {spine_end}")]


def test_switches_not_read_are_not_judged() -> None:
    graph = _demo()
    findings, checked, _ = compare_cabling(graph, [], {"leaf-g00-r0"})
    assert checked == 16 and len(findings) == 16  # 8 hosts and 8 uplinks, none heard
    assert {f.rule for f in findings} == {"missing"}
    assert all(f.components[0].startswith("leaf-g00-r0:") for f in findings)


def test_what_a_switch_reports_is_printed_escaped() -> None:
    from fabtui.cli.render import cabling
    from fabtui.model.cabling import CablingReport

    graph = _demo()
    findings, checked, matched = compare_cabling(
        graph, _heard(graph, {"leaf-g00-r4:Ethernet8": "evil\x1b]0;owned\x07\nfix: none:eth0"}),
        set(graph.switches))
    text = cabling(CablingReport(cluster="demo", findings=findings, ports_checked=checked,
                                 ports_matched=matched))
    assert "\x1b" not in text and "\x07" not in text and "\nfix: none" not in text
    assert "evil\\x1b]0;owned\\x07\\nfix: none:eth0" in text
