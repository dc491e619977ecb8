"""nccl-tests busbw is judged against the NICs the run may use: `NCCL_IB_HCA` read as NCCL
reads it (issue 39: a rail-pinned pair test was judged against all 8 NICs and failed on a
healthy fabric)."""

from __future__ import annotations

import pytest

from fabtui.model.probe import Metric, Verdict
from fabtui.parsers import registry
from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.probes.evaluate import EvalContext, evaluate, hardware_classes
from fabtui.probes.targets import resolve
from fabtui.topology.graph import FabricGraph
from fabtui.topology.hca import hca_in_command, parse_hca, selected_nics
from fabtui.topology.loader import load_topology
from tests.support.fixture_inputs import FIXTURES

CATALOG = load_catalog([shipped_dir("probes")])
GRAPH = FabricGraph(load_topology(shipped_dir("topology") / "demo.yaml").topology)
# A real 2-node all_reduce (CSCS, 2 x 4 GH200, busbw 122.57 GB/s at 128 MiB; SOURCES.md in
# the fixture folder); its hosts are renamed to two demo nodes (8 x 400G NICs each) so the
# evaluator judges the real figure against the demo topology.
TEXT = (FIXTURES / "nccl-tests" / "cscs-allreduce-2node-8xGH200-slingshot-v2.17.1.txt") \
    .read_text().replace("nid005471", "node001").replace("nid005487", "node002")


def _judge(command: str) -> dict[str, Metric]:
    definition = CATALOG["nccl.mpirun"]
    target = resolve(GRAPH, "node001", definition.target)
    ctx = EvalContext(probe=definition, target=target, interval=0.0,
                      hardware=hardware_classes(target), graph=GRAPH, command=command)
    after = registry.get("nccl-tests").parse(TEXT)
    return {m.name: m for m in evaluate("nccl-tests", None, after, ctx)}


@pytest.mark.parametrize(("hca", "nics"), [
    ("", 8),                            # unset: every NIC
    ("NCCL_IB_HCA=mlx5", 8),            # a prefix: every mlx5* card
    ("NCCL_IB_HCA=mlx5_3", 1),          # a prefix that names one card on this node
    ("NCCL_IB_HCA==mlx5_3", 1),         # `=`: exact names
    ("NCCL_IB_HCA==mlx5_0:1,mlx5_1:1", 2),  # `:port` suffixes (NCCL env docs example)
    ("NCCL_IB_HCA=^=mlx5_1,mlx5_4", 6),  # `^`: every card but these
    ("NCCL_IB_HCA=^mlx5", 0),           # nothing left: no figure
])
def test_expected_busbw_counts_the_nics_ncclibhca_selects(hca: str, nics: int) -> None:
    command = ("mpirun -np 16 -H node001:8,node002:8 -x NCCL_DEBUG=WARN "
               f"-x {hca or 'NCCL_ALGO=Ring'} /opt/nccl-tests/build/all_reduce_perf")
    metrics = _judge(command)
    busbw = metrics["busbw_max"]
    assert busbw.value == pytest.approx(122.57)
    if nics == 0:
        assert "busbw_expected" not in metrics and busbw.verdict is Verdict.OK
        assert "no figure" in (busbw.source or "")
        return
    # one 400G NIC moves 400/8 x 0.96 = 48 GB/s (nccl-tests #267, #319)
    assert metrics["busbw_expected"].value == pytest.approx(48.0 * nics)
    # 122.57 GB/s passes one or two NICs' worth and fails six or eight (below 80 %)
    assert busbw.verdict is (Verdict.OK if nics <= 2 else Verdict.FAIL)


def test_last_assignment_wins_and_quoted_values_read() -> None:
    assert hca_in_command("env NCCL_IB_HCA=mlx5 mpirun -x 'NCCL_IB_HCA==mlx5_2' x") == "=mlx5_2"
    assert hca_in_command("mpirun -x NCCL_ALGO=Ring x") is None
    node = GRAPH.nodes["node001"]
    assert [n.name for n in selected_nics(node, "=mlx5_2:1")] == ["mlx5_2"]
    assert parse_hca("") is None
    # a prefix takes longer names too: mlx5_1 would select mlx5_10 and mlx5_11 on a larger host
    prefix, exact = parse_hca("mlx5_1"), parse_hca("=mlx5_1")
    assert prefix is not None and prefix.selects("mlx5_10")
    assert exact is not None and not exact.selects("mlx5_10") and exact.selects("mlx5_1")
