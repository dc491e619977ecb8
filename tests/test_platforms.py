"""GPU platforms: generations by name (Grace parts too), expected figures only where a published
or measured baseline exists, GPU-NIC affinity and the NVLink domain judged per platform
(issue 35: field review N4-N6 and its "platform awareness" gap)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabtui.model.probe import Metric, Verdict
from fabtui.model.topology import Gpu, Nic, Node
from fabtui.parsers import registry
from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.probes.evaluate import EvalContext, evaluate, hardware_classes
from fabtui.probes.targets import ProbeTarget
from fabtui.topology.expected import NodeShape, expected_busbw, gpu_generation, node_shape

CATALOG = load_catalog([shipped_dir("probes")])


def _node(model: str, gpus: int = 4, domain: str | None = None, name: str = "node001") -> Node:
    node: dict[str, Any] = {
        "hostname": name,
        "gpus": [Gpu(index=i, pci=f"0000:{0x18 + i:02x}:00.0", model=model) for i in range(gpus)],
        "nics": [Nic(name=f"mlx5_{i}", pci=f"0000:{0x40 + i:02x}:00.0", rail=i, speed=400)
                 for i in range(gpus)]}
    if domain is not None:
        node["nvlink_domain"] = domain
    return Node(**node)


def _judge(probe: str, kind: str, text: str, node: Node) -> list[Metric]:
    definition = CATALOG[probe]
    target = ProbeTarget(kind=definition.target, name=node.hostname, node=node)
    ctx = EvalContext(probe=definition, target=target, interval=5.0,
                      hardware=hardware_classes(target))
    return evaluate(kind, None, registry.get(kind).parse(text), ctx)


# GPU generations ---------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "generation"), [
    ("NVIDIA GB200", "GB200"), ("GB200", "GB200"), ("NVIDIA GB300", "GB300"),
    ("NVIDIA GH200 480GB", "GH200"), ("GH200-96GB", "GH200"), ("NVIDIA B200", "B200"),
    ("B200-180GB", "B200"), ("NVIDIA B300 SXM6 AC", "B300"), ("H100-SXM5-80GB", "H100"),
    ("NVIDIA H100 80GB HBM3", "H100"), ("NVIDIA H200", "H200"), ("NVIDIA A100-SXM4-80GB", "A100"),
    ("NVIDIA H20", None), ("Tesla V100", None), ("NVIDIA Graphics Device", None)])
def test_gpu_generations_by_name_grace_parts_included(name: str, generation: str | None) -> None:
    assert gpu_generation(name) == generation


# Expected figures: published or measured, never extrapolated -------------------------------

def test_no_single_node_all_reduce_figure_for_b200_or_b300() -> None:
    # 952 GB/s was the H100 NVLS ratio extrapolated; no published gate or measured baseline
    # exists for 8 x B200/B300 (NVIDIA/nccl #1807: one user's "830+" GB/s, and a question).
    for gpu in ("B200", "B300"):
        assert expected_busbw("all_reduce", 1, NodeShape(8, 8, 400, gpu)) is None
    # The NVLS factor stays where it was measured: 8 x H100 (nccl-tests #290).
    h100 = expected_busbw("all_reduce", 1, NodeShape(8, 8, 400, "H100"))
    assert h100 is not None and h100.value == pytest.approx(476.0) and h100.fail == 460


def test_gb200_tray_all_reduce_is_judged_by_azures_published_gate() -> None:
    tray = expected_busbw("all_reduce", 1, NodeShape(4, 4, 400, "GB200"))
    assert tray is not None
    assert tray.fail == 432 and tray.warn == 432  # nd128isr_ndr_gb200_v6.conf, 16 GB
    assert "nd128isr_ndr_gb200_v6" in tray.source
    assert tray.value == pytest.approx(679.6)  # Azure's measured ND GB200 v6 run, 8 GB
    # A GH200 node has one GPU: an all_reduce on it has no bus to judge.
    assert expected_busbw("all_reduce", 1, NodeShape(1, 1, 400, "GH200")) is None


def test_an_nvl72_rack_is_judged_by_the_measured_72_gpu_run() -> None:
    rack = [_node("GB200", domain="nvl-00", name=f"node{i:03d}") for i in range(1, 19)]
    shape = node_shape(rack)
    assert shape is not None and shape.gpu == "GB200" and shape.nvlink_domain_gpus == 72
    figure = expected_busbw("all_reduce", 18, shape)
    assert figure is not None
    assert figure.value == pytest.approx(835.0)  # coreweave/nccl-tests PR #43, 8 GB, 72 GPUs
    assert figure.fail == pytest.approx(668.0)
    # A rack that lost its NVLink domain runs over 4 x 400G per tray: far below the gate.
    network = expected_busbw("all_reduce", 18, NodeShape(4, 4, 400, "GB200"))
    assert network is not None and network.value == pytest.approx(192.0)
    assert network.value < figure.fail
    # Fewer trays inside the domain, or alltoall over it: nothing published, no figure.
    assert expected_busbw("all_reduce", 2, node_shape(rack[:2])) is None  # type: ignore[arg-type]
    assert expected_busbw("alltoall", 18, shape) is None


def test_nodes_in_different_nvlink_domains_meet_over_the_network() -> None:
    pair = [_node("GB200", domain="nvl-00", name="node001"),
            _node("GB200", domain="nvl-01", name="node019")]
    shape = node_shape(pair)
    assert shape is not None and shape.nvlink_domain_gpus == 0
    ring = expected_busbw("all_reduce", 2, shape)
    assert ring is not None and ring.value == pytest.approx(192.0)


def test_a_b200_node_at_the_publicly_reported_rate_is_neither_warned_nor_failed() -> None:
    rows = "\n".join(
        f"  {size:>12d}  {size // 4:>12d}     float     sum      -1  {size / 830e3 * 0.57:8.2f}"
        f"  {475.0:6.2f}  {830.0:6.2f}      0  {size / 830e3 * 0.57:8.2f}  {475.0:6.2f}"
        f"  {830.0:6.2f}      0" for size in (1 << 30, 1 << 32, 1 << 34))
    text = ("# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 17179869184 step: 4(factor) "
            "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n"
            "#                                                              out-of-place"
            "                       in-place          \n"
            "#       size         count      type   redop    root     time   algbw   busbw"
            " #wrong     time   algbw   busbw #wrong\n" + rows +
            "\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 830.00 \n#\n")
    metrics = {m.name: m for m in _judge("nccl.all_reduce", "nccl-tests", text,
                                         _node("B200-180GB", gpus=8))}
    assert metrics["busbw_max"].value == pytest.approx(830.0)
    assert metrics["busbw_max"].verdict is Verdict.OK
    assert "busbw_expected" not in metrics


# GPU-NIC affinity per platform ------------------------------------------------------------

GB200_TOPO = "\n".join([
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tNIC2\tNIC3\tCPU Affinity\tNUMA Affinity"
    "\tGPU NUMA ID",
    "GPU0\t X \tNV18\tNV18\tNV18\tNODE\tNODE\tSYS\tSYS\t0-71\t0\t2",
    "GPU1\tNV18\t X \tNV18\tNV18\tNODE\tNODE\tSYS\tSYS\t0-71\t0\t10",
    "GPU2\tNV18\tNV18\t X \tNV18\tSYS\tSYS\tNODE\tNODE\t72-143\t1\t18",
    "GPU3\tNV18\tNV18\tNV18\t X \tSYS\tSYS\tNODE\tNODE\t72-143\t1\t26",
    "NIC0\tNODE\tNODE\tSYS\tSYS\t X \tNODE\tSYS\tSYS",
    "NIC1\tNODE\tNODE\tSYS\tSYS\tNODE\t X \tSYS\tSYS",
    "NIC2\tSYS\tSYS\tNODE\tNODE\tSYS\tSYS\t X \tNODE",
    "NIC3\tSYS\tSYS\tNODE\tNODE\tSYS\tSYS\tNODE\t X ",
    "", "Legend:", "", "  X    = Self",
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
    "(e.g., QPI/UPI)",
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
    "within a NUMA node",
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
    "Bridge)",
    "  PIX  = Connection traversing at most a single PCIe bridge",
    "  NV#  = Connection traversing a bonded set of # NVLinks", "", "NIC Legend:", "",
    "  NIC0: mlx5_0", "  NIC1: mlx5_1", "  NIC2: mlx5_2", "  NIC3: mlx5_3", ""])


def test_node_is_normal_between_gpu_and_nic_on_grace_parts() -> None:
    for model in ("GB200", "GB300", "GH200"):
        metrics = _judge("gpu.topo", "nvidia-smi-topo", GB200_TOPO, _node(model))
        assert [m.verdict for m in metrics] == [Verdict.OK] * 4, model
        assert all("NODE" in str(m.value) for m in metrics)
        assert all("ngc_multinode_perf" in (m.source or "") for m in metrics)


def test_node_still_fails_on_x86_hgx_and_sys_fails_everywhere() -> None:
    metrics = _judge("gpu.topo", "nvidia-smi-topo", GB200_TOPO, _node("H100-SXM5-80GB"))
    assert [m.verdict for m in metrics] == [Verdict.FAIL] * 4
    across = GB200_TOPO.replace("NODE\tNODE\tSYS\tSYS\t0-71", "SYS\tSYS\tSYS\tSYS\t0-71")
    metrics = _judge("gpu.topo", "nvidia-smi-topo", across, _node("GB200"))
    assert metrics[0].verdict is Verdict.FAIL and metrics[1].verdict is Verdict.FAIL
    assert metrics[2].verdict is Verdict.OK


# The NVLink domain ----------------------------------------------------------------------------

def _fabric_xml(status: str = "Success", clique: str = "4026",
                cluster: str = "9c6f5af3-53bf-49b5-a436-b66766c413c3") -> str:
    gpus = "".join(f"""<gpu id="0000000{8 + i}:01:00.0">
<product_name>NVIDIA GB200</product_name>
<product_architecture>Blackwell</product_architecture>
<fabric><state>Completed</state><status>{status if i == 1 else "Success"}</status>
<cliqueId>{clique if i == 1 else "4026"}</cliqueId>
<clusterUuid>{cluster if i == 1 else "9c6f5af3-53bf-49b5-a436-b66766c413c3"}</clusterUuid>
<health><summary>Healthy</summary><bandwidth>Full</bandwidth></health></fabric>
</gpu>""" for i in range(4))
    return ('<?xml version="1.0" ?>\n<nvidia_smi_log><driver_version>570.133.20'
            f"</driver_version><attached_gpus>4</attached_gpus>{gpus}</nvidia_smi_log>\n")


def test_a_tray_in_an_nvlink_domain_needs_every_gpu_registered_in_it() -> None:
    tray = _node("GB200", domain="nvl-00")
    healthy = [m for m in _judge("gpu.smi_q", "nvidia-smi-q", _fabric_xml(), tray)
               if m.name == "nvlink_domain"]
    assert len(healthy) == 4 and {m.verdict for m in healthy} == {Verdict.OK}
    # Azure/azhpc-images PR #506: Completed with a non-Success status, CliqueId 0 and a zero
    # ClusterUUID is a GPU outside its NVLink domain.
    lost = _judge("gpu.smi_q", "nvidia-smi-q",
                  _fabric_xml("Insufficient Resources", "0",
                              "00000000-0000-0000-0000-000000000000"), tray)
    failed = [m for m in lost if m.name == "nvlink_domain" and m.verdict is Verdict.FAIL]
    assert [m.component for m in failed] == ["node001:GPU1"]
    assert "Insufficient Resources" in str(failed[0].value)
    # Another domain's ClusterUUID on one GPU is a split domain, as bad as none.
    split = _judge("gpu.smi_q", "nvidia-smi-q",
                   _fabric_xml(cluster="11111111-2222-3333-4444-555555555555"), tray)
    assert [m.component for m in split
            if m.name == "nvlink_domain" and m.verdict is Verdict.FAIL] == ["node001:GPU1"]


def test_an_hgx_node_is_not_judged_on_a_multi_node_nvlink_domain() -> None:
    # H100 drivers report Completed with a zero ClusterUUID (no MNNVL): not a fault there.
    metrics = _judge("gpu.smi_q", "nvidia-smi-q",
                     _fabric_xml("Success", "0", "00000000-0000-0000-0000-000000000000"),
                     _node("H100-SXM5-80GB"))
    assert not [m for m in metrics if m.name == "nvlink_domain" and m.verdict is not Verdict.OK]


def test_the_shipped_gb200_template_is_one_nvlink_domain_of_grace_trays() -> None:
    from fabtui.topology.loader import load_topology

    loaded = load_topology(Path(shipped_dir("topology")) / "templates" / "gb200-nvl72.yaml")
    nodes = loaded.topology.nodes
    assert len(nodes) == 18 and all(len(n.gpus) == 4 and len(n.nics) == 4 for n in nodes)
    assert {n.nvlink_domain for n in nodes} == {"nvl-00"}
    assert gpu_generation(nodes[0].gpus[0].model) == "GB200"
    assert all(g.pcie_switch is None for n in nodes for g in n.gpus)  # C2C, no PCIe switch


# The simulator models these platforms ------------------------------------------------------

def _parse(kind: str, text: str) -> Any:
    return registry.get(kind).parse(text)


def _sim(template: str, scenario: str) -> Any:
    from fabtui.paths import shipped_templates
    from fabtui.sim.scenario import find_scenario
    from fabtui.sim.state import build_sim, fresh_state

    return build_sim(fresh_state(shipped_dir("topology") / "templates" / f"{template}.yaml",
                                 find_scenario(scenario), [shipped_templates()]))


def _out(sim: Any, host: str, *argv: str) -> str:
    from fabtui.sim.node_commands import run

    out, err, status = run(sim, host, list(argv), 600.0)
    assert status == 0, err
    return out


def test_a_simulated_gb200_tray_looks_like_one() -> None:
    sim = _sim("gb200-nvl72", "healthy")
    topo = _parse("nvidia-smi-topo", _out(sim, "node005", "nvidia-smi", "topo", "-m"))
    assert {a.connection for a in topo.gpu_nic_affinity.values()} == {"NODE"}
    assert topo.matrix["GPU0"]["GPU3"] == "NV18" and topo.matrix["GPU0"]["NIC2"] == "SYS"
    query = _parse("nvidia-smi-q", _out(sim, "node005", "nvidia-smi", "-q", "-x"))
    assert {g.product_name for g in query.gpus} == {"NVIDIA GB200"}
    assert {(g.fabric_state, g.fabric_status) for g in query.gpus} == {("Completed", "Success")}
    assert len({(g.fabric_clique_id, g.fabric_cluster_uuid) for g in query.gpus}) == 1
    other = _parse("nvidia-smi-q", _out(sim, "node017", "nvidia-smi", "-q", "-x"))
    assert other.gpus[0].fabric_cluster_uuid == query.gpus[0].fabric_cluster_uuid  # one rack
    tray = _out(sim, "node005", "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "16G",
                "-f", "2", "-g", "4")
    ranks = _parse("nccl-tests", tray).ranks
    assert [(r.device, r.name) for r in ranks] == [(i, "NVIDIA GB200") for i in range(4)]
    from fabtui.sim.node_commands import run

    eight = run(sim, "node005", ["/opt/nccl-tests/build/all_reduce_perf", "-g", "8"], 600.0)
    assert eight[2] != 0 and "invalid device ordinal" in eight[1]  # a tray has 4 GPUs


def _rack_busbw(sim: Any, *env: str) -> float:
    hosts = ",".join(f"{n}:4" for n in sorted(sim.graph.nodes))
    text = _out(sim, "node001", "mpirun", "-np", "72", "-H", hosts, *env,
                "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "16G", "-f", "2",
                "-g", "1")
    parsed = _parse("nccl-tests", text)
    assert len(parsed.ranks) == 72
    return float(max(parsed.rows, key=lambda r: r.size_bytes).out_of_place.busbw)


def test_an_nvl72_rack_runs_over_nvlink_until_a_tray_drops_out() -> None:
    assert _rack_busbw(_sim("gb200-nvl72", "healthy")) == pytest.approx(835, rel=0.01)
    # NCCL_MNNVL_ENABLE=0, or a tray whose NVLinks are down: the 4 x 400G NICs bound it.
    assert _rack_busbw(_sim("gb200-nvl72", "healthy"), "-x", "NCCL_MNNVL_ENABLE=0") == \
        pytest.approx(192, rel=0.01)
    lost = _sim("gb200-nvl72", "nvlink-down")
    assert _rack_busbw(lost) == pytest.approx(192, rel=0.01)
    query = _parse("nvidia-smi-q", _out(lost, "node007", "nvidia-smi", "-q", "-x"))
    assert {(g.fabric_status, g.fabric_clique_id) for g in query.gpus} == \
        {("Insufficient Resources", "0")}


def test_a_nic_that_trained_at_200g_shows_in_ibstat_rdma_and_the_ring() -> None:
    sim = _sim("b200-64gpu", "link-speed-200g")
    ibstat = _parse("ibstat", _out(sim, "node003", "ibstat", "mlx5_5"))
    assert ibstat.cas["mlx5_5"].ports["1"].rate == 200
    write = _parse("perftest", _out(sim, "node003", "ib_write_bw", "-d", "mlx5_5",
                                                "--report_gbits", "node004"))
    assert write.rows[-1].bw_avg == pytest.approx(196, rel=0.01)
    hosts = ",".join(f"{n}:8" for n in sorted(sim.graph.nodes))
    ring = _parse("nccl-tests", _out(
        sim, "node001", "mpirun", "-np", "64", "-H", hosts,
        "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "16G", "-f", "2", "-g", "1"))
    assert max(ring.rows, key=lambda r: r.size_bytes).out_of_place.busbw == \
        pytest.approx(192, rel=0.01)
    single = _parse("nccl-tests", _out(
        sim, "node003", "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "16G", "-f",
        "2", "-g", "8"))
    assert {r.name for r in single.ranks} == {"NVIDIA B200"}
    # No figure for 8 x B200: the demo's node reaches the publicly reported 830+ GB/s.
    assert max(single.rows, key=lambda r: r.size_bytes).out_of_place.busbw == \
        pytest.approx(835, rel=0.01)


def test_a_dmabuf_node_has_no_peermem_module_and_full_gpudirect() -> None:
    sim = _sim("b200-64gpu", "gdr-dmabuf")
    assert "nvidia_peermem" not in _out(sim, "node002", "lsmod")
    assert "nvidia_peermem" in _out(sim, "node001", "lsmod")
    write = _parse("perftest", _out(sim, "node002", "ib_write_bw", "-d", "mlx5_0",
                                                "--report_gbits", "--use_cuda=0", "node001"))
    assert write.rows[-1].bw_avg == pytest.approx(392, rel=0.01)


# Acceptance fails on `fail`, not on `warn` -------------------------------------------------

def test_customer_acceptance_hands_over_a_marginal_node_with_reservations(tmp_path: Path) -> None:
    """A node in the warn band of a measured figure (an A100 has one: NVLink x 0.8, warn below
    90 %, fail below 80 %) is a reservation on the hand-over, not a failed hand-over."""
    import asyncio

    from fabtui.model.runbook import RunbookTest
    from fabtui.paths import shipped_templates
    from fabtui.runbooks.library import load_library
    from fabtui.runbooks.testing import run_test

    topology = tmp_path / "a100-2node.yaml"
    topology.write_text("template: rail-optimized\nparams: {name: a100-2node, nodes: 2, "
                        "rails: 8, rails_per_leaf: 8, nodes_per_leaf: 2, host_speed: 200, "
                        "gpu_model: A100-SXM4-80GB, leaf_flavor: sonic}\n")
    scenario = tmp_path / "marginal.yaml"
    scenario.write_text("name: marginal\nduration: 1h\ntimeline:\n  - at: 0\n"
                        "    fault: slow-node\n    component: node002\n"
                        "    params: {busbw_factor: 0.85}\n")
    book = load_library([shipped_dir("runbooks")]).runbooks["customer-acceptance"]
    case = RunbookTest(name="marginal", scenario=str(scenario), answers={"idle": "yes"})
    outcome = asyncio.run(run_test(book, case, topology=topology,
                                   template_dirs=[shipped_templates()], catalog=CATALOG))
    assert outcome.summary is not None, outcome.problems
    text = outcome.summary.text()
    assert outcome.summary.outcome is Verdict.WARN, text
    assert "hand-over passes with reservations" in text and "hand-over FAILS" not in text
    assert outcome.summary.vars["node_slow"] == []
    assert [n.split()[0] for n in outcome.summary.vars["node_marginal"]] == ["node002"]


def _comm_lines(sim: Any) -> list[tuple[int, int]]:
    """(localRanks, MNNVL) of every rank's `comm ... localRanks N localRank M MNNVL X` line in
    the simulated job log (NCCL's init line, printed since 2.20)."""
    import re

    log = _out(sim, "node001", "cat", "/var/log/fabtui-sim/job.log")
    return [(int(m.group(1)), int(m.group(2))) for m in
            re.finditer(r"localRanks (\d+) localRank \d+ MNNVL (\d)", log)]


def test_the_rack_job_log_says_it_runs_over_its_nvlink_domain() -> None:
    """A job over a healthy NVL72 rack: 72 ranks, 4 per tray, and NCCL's init line says MNNVL 1
    (it was `localRanks 8 ... MNNVL 0`, the HGX demo's line, while the collectives ran over
    NVLink). A tray out of the domain when the job starts: MNNVL 0, as the busbw says."""
    healthy = _comm_lines(_sim("gb200-nvl72", "healthy"))
    assert len(healthy) == 72 and set(healthy) == {(4, 1)}
    assert set(_comm_lines(_sim("gb200-nvl72", "nvlink-down"))) == {(4, 0)}
    assert set(_comm_lines(_sim("b200-64gpu", "healthy"))) == {(8, 0)}  # HGX: no MNNVL


def _job_log_verdict(scenario: str, folder: Path) -> Metric | None:
    """`logs.nccl`'s `nvlink_domain` metric for the job log of the GB200 NVL72 rack."""
    from tests.support.sim import JOB_LOG, Fabric

    fabric = Fabric(scenario, folder, shipped_dir("topology") / "templates" / "gb200-nvl72.yaml")
    try:
        result = fabric.probe("logs.nccl", "node001", **JOB_LOG)
    finally:
        fabric.close()
    return next((m for m in result.metrics if m.name == "nvlink_domain"), None)


def test_a_rack_job_that_runs_over_its_nvlink_domain_passes(tmp_path: Path) -> None:
    found = _job_log_verdict("healthy", tmp_path)
    assert found is not None and found.verdict is Verdict.OK, found
    assert "MNNVL 1" in str(found.value) and "18 nodes of NVLink domain nvl-00" in str(found.value)


def test_a_rack_job_that_lost_its_nvlink_domain_fails_for_it(tmp_path: Path) -> None:
    """Issue 35 Deliver 3: "an NVL72 job that lost its NVLink domain must not pass". node007's
    tray is out of the domain when the job starts: every rank prints MNNVL 0."""
    found = _job_log_verdict("nvlink-down", tmp_path)
    assert found is not None and found.verdict is Verdict.FAIL, found
    assert "runs without its NVLink domain" in str(found.value)
    assert "IMEX" in str(found.value) and "NCCL_MNNVL_ENABLE" in str(found.value)


def test_a_rack_job_that_turned_mnnvl_off_itself_warns_naming_it(tmp_path: Path) -> None:
    off = tmp_path / "mnnvl-off.yaml"
    off.write_text("name: mnnvl-off\nduration: 1h\nworkload: {job: llama3-70b-pretrain, "
                   "utilization: 0.55, step_s: 4, nccl_env: {NCCL_MNNVL_ENABLE: \"0\"}}\n",
                   encoding="utf-8")
    found = _job_log_verdict(str(off), tmp_path)
    assert found is not None and found.verdict is Verdict.WARN, found
    assert "NCCL_MNNVL_ENABLE=0 set by the job" in str(found.value)


def test_an_hgx_job_is_not_judged_on_an_nvlink_domain(tmp_path: Path) -> None:
    from tests.support.sim import JOB_LOG, Fabric

    fabric = Fabric("healthy", tmp_path)
    try:
        result = fabric.probe("logs.nccl", "node001", **JOB_LOG)
    finally:
        fabric.close()
    assert [m for m in result.metrics if m.name == "nvlink_domain"] == []
