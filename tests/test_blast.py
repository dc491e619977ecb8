"""Blast radius: exactly who loses what when a component fails."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.topology.blast import UnknownComponent, blast_radius
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology


@pytest.fixture(scope="module")
def big() -> FabricGraph:
    from fabtui.paths import shipped_templates

    return FabricGraph(load_topology(shipped_templates() / "h100-1024gpu-rail.yaml").topology)


def test_a_leaf_takes_exactly_its_nodes_rail(big: FabricGraph) -> None:
    result = blast_radius(big, "leaf-g01-r3")
    assert result.kind == "leaf" and result.switches_down == ["leaf-g01-r3"]
    expected_nodes = [f"node{n:03d}" for n in range(33, 65)]
    assert [n.node for n in result.nodes] == expected_nodes
    assert all(n.nics_down == ["mlx5_3"] and n.injection_lost == 0.125 for n in result.nodes)
    assert [r.rank for r in result.ranks] == [(n - 1) * 8 + 3 for n in range(33, 65)]
    assert all(r.injection_lost == 1.0 and r.rails == [3] for r in result.ranks)
    (rail,) = result.rails
    assert (rail.rail, rail.nodes_affected, rail.injection_lost, rail.uplink_lost) == \
        (3, 32, 0.25, 0.25)
    assert len(result.links_down) == 32 + 32


def test_a_spine_costs_every_leaf_a_sixteenth_of_its_uplinks(big: FabricGraph) -> None:
    result = blast_radius(big, "spine-01")
    assert len(result.nodes) == 128
    assert all(n.injection_lost == 0 and n.cross_leaf_lost == 0.0625 for n in result.nodes)
    assert [r.rail for r in result.rails] == list(range(8))
    assert all(r.uplink_lost == 0.0625 and r.injection_lost == 0 for r in result.rails)
    assert any("32 switches below spine-01" in note for note in result.notes)


def test_a_nic_and_its_optic_are_the_same_loss(big: FabricGraph) -> None:
    nic = blast_radius(big, "node001:mlx5_0")
    optic = blast_radius(big, nic.links_down[0].optic or "")
    assert nic.kind == "nic" and optic.kind == "optic"
    for result in (nic, optic):
        assert [(n.node, n.nics_down, n.injection_lost) for n in result.nodes] == \
            [("node001", ["mlx5_0"], 0.125)]
        assert [(r.rank, r.injection_lost) for r in result.ranks] == [(0, 1.0)]


def test_an_uplink_thins_the_cross_leaf_bandwidth_of_that_leafs_nodes(big: FabricGraph) -> None:
    uplink = big.topology.links[big.uplinks("leaf-g00-r0")[0]]
    port = uplink.a if uplink.a.startswith("leaf-g00-r0:") else uplink.b
    result = blast_radius(big, port)
    assert result.kind == "uplink"
    assert len(result.nodes) == 32
    assert all(n.injection_lost == 0 and n.cross_leaf_lost == round(1 / 32 / 8, 4)
               for n in result.nodes)
    assert {r.rank % 8 for r in result.ranks} == {0}
    assert all(r.cross_leaf_lost == round(1 / 32, 4) for r in result.ranks)


def test_a_node_loses_everything(big: FabricGraph) -> None:
    result = blast_radius(big, "node007")
    assert [(n.node, n.injection_lost) for n in result.nodes] == [("node007", 1.0)]
    assert [r.rank for r in result.ranks] == list(range(48, 56))


def test_unknown_components_get_suggestions(big: FabricGraph) -> None:
    with pytest.raises(UnknownComponent, match="did you mean leaf-g01-r3"):
        blast_radius(big, "leaf-g01-r33")
    with pytest.raises(UnknownComponent, match="node001 has no NIC 'mlx5_9'"):
        blast_radius(big, "node001:mlx5_9")
    with pytest.raises(UnknownComponent, match="nothing is cabled to leaf-g00-r0:swp200"):
        blast_radius(big, "leaf-g00-r0:swp200")


def test_cli_blast_on_the_1024_gpu_template(run: Callable[..., Result],
                                            template: Callable[[str], Path]) -> None:
    path = str(template("h100-1024gpu-rail"))
    result = run("topo", "blast", "leaf-g02-r5", "-t", path, "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert [n["node"] for n in data["nodes"]] == [f"node{n:03d}" for n in range(65, 97)]
    assert [(r["rail"], r["nodes_affected"]) for r in data["rails"]] == [(5, 32)]
    text = run("topo", "blast", "leaf-g02-r5", "-t", path).stdout
    assert "nodes affected: 32" in text and "node065" in text and "node096" in text
    assert "node064" not in text and "node097" not in text
    bad = run("topo", "blast", "leaf-g02-r55", "-t", path)
    assert bad.exit_code == 2 and "no component 'leaf-g02-r55'" in bad.stderr
