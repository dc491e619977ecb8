"""The rail-optimized generator and shipped templates: shapes people run, cabled by the rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fabtui.model.topology import Role
from fabtui.paths import shipped_templates
from fabtui.topology.export import dump_yaml
from fabtui.topology.generate import RailOptimizedParams, port_name, rail_optimized
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology, topology_from_doc
from fabtui.topology.validate import validate
from fabtui.yamldoc import parse_yaml


def counts(path: Path) -> tuple[int, int, int, int, int]:
    topo = load_topology(path).topology
    roles = [s.role for s in topo.switches]
    return (len(topo.nodes), sum(len(n.gpus) for n in topo.nodes), roles.count(Role.LEAF),
            roles.count(Role.SPINE), len(topo.links))


@pytest.mark.parametrize("name, expected", [
    ("h100-1node", (1, 8, 1, 0, 8)),
    ("h100-32gpu", (4, 32, 2, 2, 32 + 2 * 16)),
    ("h100-64gpu", (8, 64, 8, 2, 64 + 8 * 8)),
    ("h100-256gpu-roce", (32, 256, 16, 8, 256 + 16 * 16)),
    ("h100-1024gpu-rail", (128, 1024, 32, 16, 1024 + 32 * 32)),
    ("b200-1node", (1, 8, 1, 0, 8)),
    ("b300-64gpu-2plane", (8, 64, 16, 4, 128 + 16 * 8)),
])
def test_shipped_templates_have_the_advertised_shape(
        name: str, expected: tuple[int, ...], template: Callable[[str], Path]) -> None:
    assert counts(template(name)) == expected


def test_nic_i_lands_on_the_rail_i_leaf_of_its_group(template: Callable[[str], Path]) -> None:
    topo = load_topology(template("h100-1024gpu-rail")).topology
    graph = FabricGraph(topo)
    for n, node in enumerate(topo.nodes):
        for nic in node.nics:
            leaf = graph.switches[graph.attachments[(node.hostname, nic.name)].switch]
            assert leaf.rail == (nic.rail,)
            assert leaf.group == n // 32


def test_every_leaf_reaches_every_spine_evenly(template: Callable[[str], Path]) -> None:
    graph = FabricGraph(load_topology(template("h100-1024gpu-rail")).topology)
    spines = sorted(s for s, sw in graph.switches.items() if sw.role is Role.SPINE)
    for name, switch in graph.switches.items():
        if switch.role is Role.LEAF:
            assert graph.neighbours_above(name) == spines
            assert len(graph.uplinks(name)) == 32


def test_two_planes_keep_each_nic_port_in_its_plane(template: Callable[[str], Path]) -> None:
    topo = load_topology(template("b300-64gpu-2plane")).topology
    graph = FabricGraph(topo)
    node = topo.nodes[0]
    assert len(node.nics) == 16
    assert {nic.plane for nic in node.nics} == {"plane0", "plane1"}
    for nic in node.nics:
        leaf = graph.switches[graph.attachments[(node.hostname, nic.name)].switch]
        assert leaf.plane == nic.plane and leaf.rail == (nic.rail,)
    # The two ports of one ConnectX-8 are functions .0 and .1 of one PCI device.
    assert [n.pci for n in node.nics[:2]] == ["0000:17:00.0", "0000:17:00.1"]


def test_pods_join_through_super_spines() -> None:
    params = RailOptimizedParams(nodes=64, nodes_per_leaf=16, rails=2, spines=2,
                                 uplinks_per_leaf=16, pods=2, super_spines=2,
                                 uplinks_per_spine=8)
    topo = rail_optimized(params)
    roles = [s.role for s in topo.switches]
    assert roles.count(Role.SUPER_SPINE) == 2 and roles.count(Role.SPINE) == 4
    doc = parse_yaml("template: rail-optimized\n", "t")
    loaded = topology_from_doc(doc, param_overrides=params.model_dump(exclude_defaults=True))
    assert validate(loaded) == []


def test_infiniband_fabric_uses_ib_mtu_and_port_names() -> None:
    topo = rail_optimized(RailOptimizedParams(nodes=2, nodes_per_leaf=2, fabric="infiniband",
                                              leaf_flavor="onyx"))
    assert topo.nodes[0].nics[0].mtu == 4096
    assert topo.nodes[0].nics[0].netdev == "ibp23s0"
    assert topo.links[0].b.endswith(":IB1/1")


@pytest.mark.parametrize("flavor, first, tenth", [
    ("sonic", "Ethernet0", "Ethernet72"), ("nvue", "swp1", "swp10"),
    ("eos", "Ethernet1/1", "Ethernet10/1"), ("nxos", "Ethernet1/1", "Ethernet1/10"),
    ("onyx", "Eth1/1", "Eth1/10"), ("linux", "eth0", "eth9"),
])
def test_port_names_follow_the_switch_os(flavor: str, first: str, tenth: str) -> None:
    from fabtui.model.topology import FabricKind, Flavor

    assert port_name(Flavor(flavor), 0, FabricKind.ROCE) == first
    assert port_name(Flavor(flavor), 9, FabricKind.ROCE) == tenth


def test_fewer_nics_than_gpus_pairs_neighbouring_gpus() -> None:
    topo = rail_optimized(RailOptimizedParams(nodes=1, rails=4, nodes_per_leaf=1,
                                              rails_per_leaf=4))
    from fabtui.topology.pairing import gpu_map

    assert gpu_map(topo.nodes[0]) == {"mlx5_0": (0, 1), "mlx5_1": (2, 3), "mlx5_2": (4, 5),
                                      "mlx5_3": (6, 7)}


def test_generation_is_deterministic_and_round_trips_through_yaml(
        tmp_path: Path, template: Callable[[str], Path]) -> None:
    for path in sorted(shipped_templates().glob("*.yaml")):
        first = load_topology(path).topology
        assert load_topology(path).topology == first
        explicit = tmp_path / f"{path.stem}.yaml"
        explicit.write_text(dump_yaml(first, "header"))
        assert load_topology(explicit).topology == first, path.stem


def test_a_multi_group_fabric_gets_its_spine_layer_unless_one_is_named() -> None:
    """`topo generate rail-optimized --param nodes=1024` must not give 32 groups of leaves that
    cannot reach each other: unnamed, the spine layer is non-blocking, one uplink per host port."""
    from fabtui.topology.generate import check_params

    params = RailOptimizedParams(nodes=1024)
    assert (params.spines, params.uplinks_per_leaf) == (32, 32) and not check_params(params)
    graph = FabricGraph(rail_optimized(params))
    assert len([s for s in graph.switches if s.startswith("spine")]) == 32
    assert RailOptimizedParams(nodes=32).spines == 0  # one group: nothing to join
    named = RailOptimizedParams(nodes=1024, spines=8, uplinks_per_leaf=16)
    assert (named.spines, named.uplinks_per_leaf) == (8, 16)
    assert RailOptimizedParams(nodes=1024, spines=0, uplinks_per_leaf=0).spines == 0
