"""Host lists through ClusterShell's NodeSet: the forms Slurm prints and the faults users type."""

from __future__ import annotations

import pytest

from fabtui.hostlist import MAX_HOSTS, HostlistError, expand, fold


@pytest.mark.parametrize("text, first, last, count", [
    ("node[001-128,200]", "node001", "node200", 129),
    ("gpu-a[01-04]-b[1-2]", "gpu-a01-b1", "gpu-a04-b2", 8),
    ("node-[63-65]", "node-63", "node-65", 3),
    ("node[9-11]", "node9", "node11", 3),
    ("cn001,cn[003-004]", "cn001", "cn004", 3),
    ("itp02", "itp02", "itp02", 1),
])
def test_slurm_host_lists_expand_with_their_padding(text: str, first: str, last: str,
                                                   count: int) -> None:
    names = expand(text)
    assert (names[0], names[-1], len(names)) == (first, last, count)
    assert len(set(names)) == count


def test_fold_is_the_inverse_of_expand() -> None:
    names = [f"node{i:03d}" for i in (1, 2, 3, 4, 7)] + ["login1"]
    folded = fold(names)
    assert folded in ("login1,node[001-004,007]", "node[001-004,007],login1")
    assert sorted(expand(folded)) == sorted(names)
    assert fold([]) == "" and expand("") == []


@pytest.mark.parametrize("text, message", [
    ("node[004-001]", "runs backwards"),
    ("node[1-", "missing bracket"),
    ("node[01-3]", "padding length mismatch"),
    ("node00*", "a glob is not a host list"),
    ("node a", "no spaces"),
    ("node[1-100000000]", f"more than {MAX_HOSTS} hosts"),
    ("a[1-1000]b[1-1000]", f"more than {MAX_HOSTS} hosts"),
    ("%a1[--]1", "Invalid range"),  # NodeSet says it with a ValueError
    ("n[0-" + "9" * 5000 + "]", "digits"),  # int() refuses a number this long
])
def test_bad_host_lists_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(HostlistError, match=message.replace("*", r"\*")) as caught:
        expand(text)
    assert repr(text) in str(caught.value)


def test_fold_refuses_names_that_are_not_host_names() -> None:
    for bad in ("node[1]", "node*", "a,b"):
        with pytest.raises(HostlistError, match="not a host name"):
            fold([bad])


def test_probe_target_sets_mix_ranges_with_globs() -> None:
    from fabtui.paths import demo_topology
    from fabtui.probes.targets import resolve_set
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.loader import load_topology

    graph = FabricGraph(load_topology(demo_topology()).topology)
    nics = [t.name for t in resolve_set(graph, "node[001,003]:mlx5_[0-1]", "nic")]
    assert nics == ["node001:mlx5_0", "node001:mlx5_1", "node003:mlx5_0", "node003:mlx5_1"]
    every = {t.name.split(":")[0] for t in resolve_set(graph, "node[001,003,006]:*", "nic")}
    assert every == {"node001", "node003", "node006"}
