"""Rank files in the forms launchers write, and the mistakes people make in them."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.errors import InputError
from fabtui.model.topology import Topology
from fabtui.topology.loader import load_topology
from fabtui.topology.ranks import default_ranks, parse_rank_text


@pytest.fixture
def topo(demo: Path) -> Topology:
    return load_topology(demo).topology


def placed(text: str, topo: Topology) -> list[tuple[int, str, int]]:
    return [(s.rank, s.node, s.gpu) for s in parse_rank_text(text, topo, "ranks.txt")]


def test_default_is_eight_per_node_in_order(topo: Topology) -> None:
    slots = default_ranks(topo)
    assert len(slots) == 64
    assert (slots[9].node, slots[9].gpu) == ("node002", 1)


def test_open_mpi_rankfile(topo: Topology) -> None:
    text = "# job 42\nrank 1=node003 slot=2\nrank 0=node001 slot=7:0\n"
    assert placed(text, topo) == [(0, "node001", 7), (1, "node003", 2)]


def test_plain_table_and_host_gpu_pairs(topo: Topology) -> None:
    assert placed("0 node002 4\n1, node002, 5\n", topo) == [(0, "node002", 4), (1, "node002", 5)]
    assert placed("node004 0\nnode004 1\n", topo) == [(0, "node004", 0), (1, "node004", 1)]


def test_hostfile_fills_gpus_in_order(topo: Topology) -> None:
    result = placed("node008 slots=2\nnode001\n", topo)
    assert result[:3] == [(0, "node008", 0), (1, "node008", 1), (2, "node001", 0)]
    assert len(result) == 10


@pytest.mark.parametrize("text, message", [
    ("rank 0=node099 slot=0\n", "ranks.txt:1: host 'node099' is not a node of the topology"),
    ("rank 0=node001 slot=9\n", "ranks.txt:1: node001 has no GPU 9 (it has 8 GPUs)"),
    ("0 node001 0\n0 node001 1\n", "ranks.txt:2: rank 0 is already placed on line 1"),
    ("0 node001 0\n2 node001 1\n", "ranks.txt: ranks 1 are not placed"),
    ("0 node001 0\n1 node001 0\n", "ranks.txt:2: node001 GPU 0 already runs rank 0"),
    ("rank zero on node1\n", "ranks.txt:1: cannot read 'rank zero on node1'"),
    ("node001 slots=9\n", "ranks.txt:1: node001 has 8 GPUs, not 9 slots"),
    ("# nothing\n", "ranks.txt: no ranks in file"),
])
def test_mistakes_are_reported_with_their_line(topo: Topology, text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_rank_text(text, topo, "ranks.txt")
    assert str(caught.value.problems[0]).startswith(message)
