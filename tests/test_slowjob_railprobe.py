"""The check a rail hop prints crosses what moved (issue 39): a pair of nodes under different
leaves of the rail for a leaf<->spine uplink, the suspect node paired for a NIC-side fault, and
the port's own read where the fabric has one leaf per rail and no pair leaves it."""

from __future__ import annotations

import shlex
from pathlib import Path

from fabtui.model.element import device_of
from fabtui.paths import demo_topology
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology, shipped_template
from fabtui.triage.slowjob.railprobe import rail_check
from fabtui.triage.slowjob.reach import Port, Reach, build_reach


def _reach(path: Path | None) -> Reach:
    assert path is not None
    return build_reach(FabricGraph(load_topology(path).topology))


def _uplink(reach: Reach, leaf: str) -> Port:
    return next(p for p in reach.ports.values()
                if p.uplink and p.layer == "leaf port" and p.switch == leaf)


def _params(command: str) -> dict[str, str]:
    words = shlex.split(command)
    return dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "--param")


def _nodes(reach: Reach) -> list[str]:
    return sorted(set(reach.rank_node.values()))


def test_a_spine_side_fault_pairs_nodes_under_different_leaves_of_the_rail() -> None:
    # h100-256gpu-roce: 2 groups of 16 nodes, a rail-3 leaf per group, 8 spines
    reach = _reach(shipped_template("h100-256gpu-roce"))
    uplink = _uplink(reach, "leaf-g01-r3")
    spine_end = reach.ports[uplink.far or ""]
    for moved in (uplink, spine_end):  # the leaf's end or the spine's end of the uplink
        check = rail_check(3, [moved], _nodes(reach), reach)
        assert check.probe is not None and check.probe.probe == "nccl.mpirun"
        params = _params(check.probe.command)
        assert params["nccl_env"] == "NCCL_IB_HCA==mlx5_3"
        first, second = (h.split(":")[0] for h in params["hosts"].split(","))
        leaves = [device_of(reach.ports[f"{n}:mlx5_3"].far or "") for n in (first, second)]
        # one node under the suspect uplink's leaf, the other under the other group's leaf
        assert leaves == ["leaf-g01-r3", "leaf-g00-r3"]
        assert check.note is not None and "meet only through the spines" in check.note


def test_a_nic_side_fault_pairs_the_suspect_node() -> None:
    reach = _reach(demo_topology())
    nic = reach.ports["node006:mlx5_1"]
    check = rail_check(1, [nic], ["node006", *_nodes(reach)], reach)
    assert check.probe is not None and check.note is None
    params = _params(check.probe.command)
    assert params["hosts"] == "node006:8,node001:8"
    assert params["nccl_env"] == "NCCL_IB_HCA==mlx5_1"


def test_one_leaf_per_rail_reads_the_port_and_says_why() -> None:
    reach = _reach(demo_topology())
    uplink = _uplink(reach, "leaf-g00-r6")
    check = rail_check(6, [uplink], _nodes(reach), reach)
    assert check.probe is not None and check.probe.probe == "switch.fec"  # SONiC leaf
    assert check.probe.target == "leaf-g00-r6"
    assert check.note is not None and f"no pair test crosses {uplink.key}" in check.note
    down = rail_check(6, [uplink], _nodes(reach), reach, frozenset({uplink.key}))
    assert down.probe is not None and down.probe.probe == "switch.counters"
