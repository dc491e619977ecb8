"""FabricGraph queries: rank placement, far ends, ECMP paths."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fabtui.topology.graph import FabricGraph, UnknownRank
from fabtui.topology.loader import load_topology
from fabtui.topology.ranks import parse_rank_text
from fabtui.topology.routes import routes


@pytest.fixture
def demo_graph(demo: Path) -> FabricGraph:
    return FabricGraph(load_topology(demo).topology)


def test_rank_placement_from_gpu_to_spines(demo_graph: FabricGraph) -> None:
    p = demo_graph.placement(11)
    assert (p.rank, p.node, p.gpu, p.gpu_pci, p.numa) == (11, "node002", 3, "0000:5d:00.0", 0)
    (nic,) = p.nics
    assert (nic.nic, nic.netdev, nic.rail, nic.leaf, nic.leaf_port) == \
        ("mlx5_3", "enp92s0f0np0", 3, "leaf-g00-r3", "Ethernet8")
    assert nic.spines == ["spine-01", "spine-02"]
    assert nic.optic == "MT24000026"


def test_unknown_rank(demo_graph: FabricGraph) -> None:
    with pytest.raises(UnknownRank, match="rank 64 is outside the job: ranks are 0-63"):
        demo_graph.placement(64)


def test_far_end_works_both_ways_and_by_netdev(demo_graph: FabricGraph) -> None:
    assert demo_graph.far_end("node001:mlx5_0") == "leaf-g00-r0:Ethernet0"
    assert demo_graph.far_end("node001:enp23s0f0np0") == "leaf-g00-r0:Ethernet0"
    assert demo_graph.far_end("leaf-g00-r0:Ethernet0") == "node001:mlx5_0"
    assert demo_graph.far_end("leaf-g00-r0:Ethernet64") == "spine-01:Ethernet1/1"
    assert demo_graph.far_end("leaf-g00-r0:Ethernet200") is None


def test_endpoint_queries_agree_from_either_end_and_by_netdev(demo_graph: FabricGraph) -> None:
    """One query each for what runbooks, targets, the fabric map and triage all ask."""
    by_rdma = demo_graph.attachment_of("node002:mlx5_3")
    by_netdev = demo_graph.attachment_of("node002:enp92s0f0np0")
    assert by_rdma is not None and by_rdma == by_netdev
    assert (by_rdma.switch, by_rdma.port, by_rdma.nic.rail) == ("leaf-g00-r3", "Ethernet8", 3)
    assert demo_graph.attachment_of("leaf-g00-r3:Ethernet8") is None  # a port is no NIC
    optic = demo_graph.optic_at("node002:mlx5_3")
    assert optic == "MT24000026" == demo_graph.optic_at("leaf-g00-r3:Ethernet8") == \
        demo_graph.optic_at("node002:enp92s0f0np0")
    assert demo_graph.optic_at("node002:mlx5_99") is None
    assert [n.name for n in demo_graph.nics_of_gpu("node002", 3)] == ["mlx5_3"]
    assert demo_graph.nics_of_gpu("no-such-node", 0) == ()


def test_same_node_is_nvlink(demo_graph: FabricGraph) -> None:
    result = routes(demo_graph, 0, 7)
    assert result.kind == "nvlink" and result.paths == [] and result.ecmp_width == 0


def test_same_rail_stays_on_one_leaf(demo_graph: FabricGraph) -> None:
    result = routes(demo_graph, 0, 8)
    assert result.kind == "same-leaf" and result.ecmp_width == 1
    assert [str(h) for h in result.paths[0].hops] == [
        "node001[mlx5_0]", "leaf-g00-r0[Ethernet0 -> Ethernet8]", "node002[mlx5_0]"]
    assert [link.optic for link in result.paths[0].links] == ["MT24000001", "MT24000002"]


def test_cross_rail_lists_every_ecmp_member(demo_graph: FabricGraph) -> None:
    result = routes(demo_graph, 0, 9)
    # 2 spines, and 4 parallel uplinks from each leaf to each spine: 2 x 4 x 4 paths.
    assert result.kind == "spine" and result.ecmp_width == 32 and len(result.paths) == 32
    assert len({tuple(str(h) for h in p.hops) for p in result.paths}) == 32
    first = result.paths[0]
    assert [h.device for h in first.hops] == ["node001", "leaf-g00-r0", "spine-01", "leaf-g00-r1",
                                              "node002"]
    assert any("rails differ (0 vs 1)" in note for note in result.notes)


def test_large_fabric_ecmp_between_groups(template: Callable[[str], Path]) -> None:
    graph = FabricGraph(load_topology(template("h100-1024gpu-rail")).topology)
    result = routes(graph, 3, 8 * 40 + 3)  # node001 GPU3 -> node041 GPU3, groups 0 and 1
    assert result.kind == "spine"
    assert result.ecmp_width == 16 * 2 * 2  # 16 spines, 2 uplinks per leaf to each
    assert {p.hops[1].device for p in result.paths} == {"leaf-g00-r3"}
    assert {p.hops[3].device for p in result.paths} == {"leaf-g01-r3"}


def test_rank_file_moves_a_rank(demo: Path) -> None:
    topo = load_topology(demo).topology
    slots = parse_rank_text("rank 0=node002 slot=5\nrank 1=node001 slot=0\n", topo, "r.txt")
    graph = FabricGraph(topo, slots)
    assert (graph.placement(0).node, graph.placement(0).gpu) == ("node002", 5)
    with pytest.raises(UnknownRank):
        graph.placement(2)


def test_an_uncabled_nic_makes_the_rank_unreachable(write: Callable[[str, str], Path]) -> None:
    path = write("t.yaml", "template: rail-optimized\nparams: {nodes: 2, nodes_per_leaf: 2, "
                           "rails: 2, gpus_per_node: 2}\noverrides:\n"
                           "  remove_links: [node002:mlx5_1]\n")
    graph = FabricGraph(load_topology(path).topology)
    result = routes(graph, 1, 3)
    assert result.kind == "unreachable"
    assert result.notes == ["node002:mlx5_1 has no cable to a switch"]


def test_nic_ips_map_back_to_nics(demo_graph: FabricGraph) -> None:
    assert demo_graph.nic_ips["10.203.0.2"] == ("node002", "mlx5_3")
    assert len(demo_graph.nic_ips) == 64


@pytest.mark.parametrize("fabric", ["demo", "faulty", "h100-1024gpu-rail"])
def test_switch_lookups_agree_with_the_networkx_view(fabric: str, demo: Path, faulty: Path,
                                                     template: Callable[[str], Path]) -> None:
    """The plain adjacency that `topo show` uses without networkx answers exactly as the
    networkx multigraph that path search uses: same cables, same order, parallel links kept."""
    path = {"demo": demo, "faulty": faulty}.get(fabric) or template(fabric)
    graph = FabricGraph(load_topology(path).topology)
    nx_view = graph.switch_graph
    assert graph.switch_edges_once() == list(nx_view.edges(keys=True))
    assert len(graph.switch_edges) == nx_view.number_of_edges() > 0
    for switch in graph.switches:
        cabled = [(other, key) for _, other, key in nx_view.edges(switch, keys=True)]
        mine = graph.tier(switch)
        assert graph.uplinks(switch) == [k for o, k in cabled if graph.tier(o) > mine]
        assert graph.downlinks(switch) == [k for o, k in cabled if graph.tier(o) < mine]
        assert list(graph.switch_adjacency[switch]) == list(nx_view.neighbors(switch))
    parallel = [keys for links in graph.switch_adjacency.values() for keys in links.values()
                if len(keys) > 1]
    assert parallel or fabric != "h100-1024gpu-rail"  # 2 uplinks per leaf to each spine
