"""Issue 35, Deliver 4: what experts check that fabtui did not (the domain review's gaps).

Each check end to end: the rule on real captured input where one exists (tests/fixtures), the
verdict on the demo fabric playing the fault, and the runbook step that acts on it. The gap's
number in the review's list ("Domain gaps") is in the test's name; docs/thresholds.md gives
each rule's source.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.parsers.registry import parse
from fabtui.paths import shipped_dir
from fabtui.topology.traffic_class import judge, qos_design
from tests.support.evaluation import evaluated
from tests.support.sim import Fabric

FIXTURES = Path(__file__).parent / "fixtures"
JOB_LOG = "/var/log/fabtui-sim/job.log"


def scenario_file(folder: Path, name: str, body: str) -> str:
    """A scenario written for one test."""
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nduration: 1h\n{body}", encoding="utf-8")
    return str(path)


def metric_of(result: object, name: str) -> tuple[str, Verdict] | None:
    for m in getattr(result, "metrics", []):
        if m.name == name:
            return str(m.value), m.verdict
    return None


# 1. The job's own traffic class ------------------------------------------------------------

def test_gap1_a_real_roce_job_marking_tc_106_is_dscp_26_on_the_lossless_priority() -> None:
    env = json.loads((FIXTURES / "nccl-log" / "slurmv4-nccl-2.27.5-full-init-2node-16gpu-roce-"
                      "gdrdma.expected.json").read_text(encoding="utf-8"))["env"]
    assert env["NCCL_IB_TC"] == "106"
    result = judge(env, qos_design())
    assert (result.verdict, result.dscp, result.priority) == ("ok", 26, 3)
    assert "ECT(0)" in result.value


def test_gap1_a_job_marking_another_dscp_lands_in_a_lossy_queue() -> None:
    result = judge({"NCCL_IB_TC": "160"}, qos_design())
    assert result.verdict == "fail"
    assert "DSCP 40" in result.value and "priority 5 (no PFC: lossy)" in result.value
    # same priority as the design's DSCP, but the leaf's map only sends DSCP 26 to TC 3
    assert judge({"NCCL_IB_TC": "96"}, qos_design()).verdict == "fail"


def test_gap1_an_unset_traffic_class_is_dscp_0_unless_the_nic_forces_one_cannot_tell() -> None:
    for env in ({}, {"NCCL_IB_TC": "-1"}):
        result = judge(env, qos_design())
        assert result.verdict == "warn"
        assert "TC 0 (DSCP 0" in result.value and "traffic_class" in result.value


def test_gap1_the_sl_matters_only_where_the_host_trusts_pcp() -> None:
    design = qos_design()
    assert judge({"NCCL_IB_TC": "106", "NCCL_IB_SL": "5"}, design).verdict == "ok"
    pcp = {**design, "host": {**design["host"], "trust": "pcp"}}
    assert judge({"NCCL_IB_TC": "106", "NCCL_IB_SL": "5"}, pcp).verdict == "fail"
    assert judge({"NCCL_IB_TC": "106", "NCCL_IB_FIFO_TC": "0"}, design).verdict == "warn"


def test_gap1_the_demo_job_log_is_judged_by_its_traffic_class(tmp_path: Path) -> None:
    (tmp_path / "h").mkdir()
    (tmp_path / "w").mkdir()
    healthy = Fabric("healthy", tmp_path / "h")
    wrong = Fabric("job-traffic-class", tmp_path / "w")
    try:
        assert metric_of(healthy.probe("logs.nccl", "node001", path=JOB_LOG),
                         "ib_traffic_class") == (
            "TC 106 (DSCP 26, ECN bits ECT(0)) on priority 3 (lossless)", Verdict.OK)
        found = metric_of(wrong.probe("logs.nccl", "node001", path=JOB_LOG), "ib_traffic_class")
        assert found is not None and found[1] is Verdict.FAIL and "DSCP 40" in found[0]
    finally:
        healthy.close()
        wrong.close()


def test_gap1_nodes_reimaged_without_nccl_conf_tc_print_no_tc_and_warn(tmp_path: Path) -> None:
    # every node of the job re-imaged: the log's env holds the first value of a name, any rank's
    fleet = "".join(f"""  - at: 0
    fault: misconfig
    component: node00{n}
    params: {{setting: nccl_env, value: {{NCCL_IB_TC: ""}}}}
""" for n in range(1, 9))
    bare = scenario_file(tmp_path, "no-nccl-tc", "timeline:\n" + fleet)
    fabric = Fabric(bare, tmp_path)
    try:
        result = fabric.probe("logs.nccl", "node001", path=JOB_LOG)
        parsed: Any = result.parsed
        env = parsed.get("env", {}) if isinstance(parsed, dict) else parsed.env
        assert "NCCL_IB_TC" not in env and env.get("NCCL_IB_GID_INDEX") == "3"
        found = metric_of(result, "ib_traffic_class")
        assert found is not None and found[1] is Verdict.WARN
    finally:
        fabric.close()


def test_gap1_an_infiniband_job_is_not_judged_by_a_dscp() -> None:
    text = (FIXTURES / "nccl-log" / "felixfu-nccl-2.4.8-init-net-ib-ring-2node.txt").read_text(
        encoding="utf-8")
    parsed: Any = parse(text, "nccl-log")
    assert not any("roce" in (t.link_layer or "").lower() for t in parsed.transports)
    from fabtui.probes.evaluators.nccl_log import _traffic_class
    assert _traffic_class(parsed, None) == []  # type: ignore[arg-type]


# 4. GPU recovery actions by Xid -------------------------------------------------------------

def _dmesg_metrics(text: str) -> dict[str, tuple[str, Verdict]]:
    from fabtui.paths import demo_topology
    from fabtui.probes.catalog import load_catalog
    from fabtui.probes.evaluate import EvalContext, evaluate, hardware_classes
    from fabtui.probes.targets import resolve
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.loader import load_topology

    graph = FabricGraph(load_topology(demo_topology()).topology)
    definition = load_catalog([shipped_dir("probes")])["logs.dmesg"]
    target = resolve(graph, "node001", definition.target)
    ctx = EvalContext(probe=definition, target=target, interval=5.0,
                      hardware=hardware_classes(target))
    metrics = evaluate("kernel-log", None, parse(text, "kernel-log"), ctx)
    return {f"{m.name}@{m.component}": (str(m.value), m.verdict) for m in metrics}


def test_gap4_xid_154_names_the_drivers_recovery_action_per_gpu() -> None:
    text = (FIXTURES / "kernel-log" / "synthetic-dmesg-xid-154-recovery-action-catalog-"
            "format.txt").read_text(encoding="utf-8")
    found = _dmesg_metrics(text)
    reboot = found["recovery_action@node001:0000:01:00"]
    reset = found["recovery_action@node001:0008:01:00"]
    assert reboot[1] is Verdict.FAIL and reboot[0].startswith("reboot node: the driver's Xid "
                                                                "154: Node Reboot Required")
    assert reset[1] is Verdict.FAIL and reset[0].startswith("reset GPU:")


def test_gap4_the_newest_xid_154_wins_so_a_recovered_gpu_needs_nothing() -> None:
    text = ("[100.0] NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 "
            "(None) to 0x1 (GPU Reset Required)\n"
            "[200.0] NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x1 "
            "(GPU Reset Required) to 0x0 (None)\n")
    assert _dmesg_metrics(text)["recovery_action@node001:0000:01:00"][1] is Verdict.OK


def test_gap4_xid_46_resets_the_gpu_and_nvlink5_xids_defer_to_xid_154() -> None:
    text = ("[100.0] NVRM: Xid (PCI:0000:18:00): 46, pid=4242, name=python3, GPU stopped "
            "processing\n"
            "[101.0] NVRM: Xid (PCI:0000:2a:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 "
            "(0x026001c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n")
    found = _dmesg_metrics(text)
    assert found["recovery_action@node001:0000:18:00"][0].startswith("reset GPU: Xid 46")
    nvlink5 = found["recovery_action@node001:0000:2a:00"]
    assert nvlink5[1] is Verdict.WARN and "WORKFLOW_NVLINK5_ERR" in nvlink5[0]
    with_154 = text + ("[101.5] NVRM: Xid (PCI:0000:2a:00): 154, GPU recovery action changed "
                       "from 0x0 (None) to 0x4 (Drain and Reset)\n")
    assert _dmesg_metrics(with_154)["recovery_action@node001:0000:2a:00"] == (
        "drain P2P and reset GPU: the driver's Xid 154: Drain and Reset (drain peer-to-peer "
        "work, then reset the GPU)", Verdict.FAIL)


def test_gap4_the_demo_nvlink_down_node_logs_xid_74_and_is_told_to_reset(tmp_path: Path) -> None:
    fabric = Fabric("nvlink-down", tmp_path)
    try:
        result = fabric.probe("logs.dmesg", "node007")
        actions = [m for m in result.metrics if m.name == "recovery_action"]
        assert len(actions) == 8
        assert all(m.verdict is Verdict.FAIL and str(m.value).startswith(
            "reset GPU or reboot node: Xid 74") for m in actions)
    finally:
        fabric.close()
    (tmp_path / "h").mkdir()
    healthy = Fabric("healthy", tmp_path / "h")
    try:
        assert not [m for m in healthy.probe("logs.dmesg", "node007").metrics
                    if m.name == "recovery_action"]
    finally:
        healthy.close()


# 3. NVLink error deltas --------------------------------------------------------------------

def _nvlink_metrics(before: str | None, after: str) -> dict[str, tuple[object, Verdict]]:
    return _by_name_at(evaluated("gpu.nvlink_errors", "node001", "nvlink-errors",
                                 parse(after, "nvlink-errors"),
                                 parse(before, "nvlink-errors") if before is not None else None,
                                 interval=10.0))


def _by_name_at(metrics: list[Metric]) -> dict[str, tuple[object, Verdict]]:
    return {f"{m.name}@{m.component}": (m.value, m.verdict) for m in metrics}


def test_gap3_the_real_nvlink_e_output_parses_and_one_read_is_not_judged() -> None:
    text = (FIXTURES / "nvlink-errors" / "mlengineering-nvidia-smi-nvlink-e-h100.txt").read_text(
        encoding="utf-8")
    found = _nvlink_metrics(None, text)
    assert found["nvlink.recovery_total@node001:GPU0"] == (0, Verdict.OK)
    grown = text.replace("Link 17: Replay Errors: 0", "Link 17: Replay Errors: 9").replace(
        "Link 1: Recovery Errors: 0", "Link 1: Recovery Errors: 1")
    found = _nvlink_metrics(text, grown)
    assert found["nvlink.replay_delta@node001:GPU0"] == ("9 (link 17 +9)", Verdict.WARN)
    assert found["nvlink.recovery_delta@node001:GPU0"] == ("1 (link 1 +1)", Verdict.FAIL)
    assert found["nvlink.crc_delta@node001:GPU0"] == (0, Verdict.OK)
    # a large but constant total is the past, not now
    old = text.replace("Link 0: CRC Errors: 0", "Link 0: CRC Errors: 123456")
    assert _nvlink_metrics(old, old)["nvlink.crc_delta@node001:GPU0"] == (0, Verdict.OK)


def test_gap3_the_demo_gpu_with_a_marginal_nvlink_shows_growing_replays(tmp_path: Path) -> None:
    fabric = Fabric("nvlink-errors", tmp_path)
    try:
        result = fabric.probe("gpu.nvlink_errors", "node006")
        flagged = {m.component: m.verdict for m in result.metrics if m.verdict is not Verdict.OK}
        assert flagged == {"node006:GPU3": Verdict.WARN}, result.metrics
        replay = next(m for m in result.metrics if m.name == "nvlink.replay_delta"
                      and m.component == "node006:GPU3")
        assert str(replay.value).endswith("(link 0 +" + str(replay.value).split()[0] + ")")
    finally:
        fabric.close()


# 7. FEC histogram tail --------------------------------------------------------------------

def _fec_metrics(before: str | None, after: str) -> dict[str, tuple[object, Verdict]]:
    return _by_name_at(evaluated("switch.fec_histogram", "leaf-g00-r6:Ethernet8", "fec-stats",
                                 parse(after, "fec-stats"),
                                 parse(before, "fec-stats") if before is not None else None,
                                 interval=10.0))


def test_gap7_the_fec_histogram_tail_is_judged_on_its_growth() -> None:
    real = (FIXTURES / "fec-stats" / "sonic-swss-pr3919-fec-histogram-ethernet48.txt").read_text(
        encoding="utf-8").replace("fec-histogram Ethernet48", "fec-histogram")
    # one reading: the printed bins reach BIN2 since the port came up; not judged
    assert _fec_metrics(None, real)["fec_max_t_total@leaf-g00-r6:Ethernet8"] == (2, Verdict.OK)
    # nothing new in the window: the old BIN2 codewords are not now
    assert _fec_metrics(real, real)["fec_max_t@leaf-g00-r6:Ethernet8"] == (0, Verdict.OK)

    def grown(bin_name: str) -> str:
        import re

        return re.sub(rf"(?m)^({bin_name}\s+)0$", r"\g<1>17", real)

    assert "BIN9 " in real and grown("BIN9") != real
    assert _fec_metrics(real, grown("BIN9"))["fec_max_t@leaf-g00-r6:Ethernet8"] == (
        9, Verdict.WARN)
    assert _fec_metrics(real, grown("BIN13"))["fec_max_t@leaf-g00-r6:Ethernet8"] == (
        13, Verdict.FAIL)


def test_gap7_the_demo_dirty_connector_uses_part_of_the_fec_margin(tmp_path: Path) -> None:
    fabric = Fabric("far-end-dirty-connector", tmp_path)
    try:
        result = fabric.probe("switch.fec_histogram", "leaf-g00-r6:Ethernet8")
        tail = next(m for m in result.metrics if m.name == "fec_max_t")
        assert tail.component == "leaf-g00-r6:Ethernet8"
        assert isinstance(tail.value, int) and 1 <= tail.value < 8
        assert tail.verdict is Verdict.OK
    finally:
        fabric.close()


# 2. Fabric manager state on NVSwitch nodes --------------------------------------------------

def test_gap2_a_gpu_the_fabric_manager_has_not_registered_fails(tmp_path: Path) -> None:
    (tmp_path / "h").mkdir()
    (tmp_path / "d").mkdir()
    healthy = Fabric("healthy", tmp_path / "h")
    down = Fabric("fabric-manager-down", tmp_path / "d")
    try:
        ok = [m for m in healthy.probe("gpu.smi_q", "node005").metrics
              if m.name == "fabric_registration"]
        assert len(ok) == 8 and all(m.verdict is Verdict.OK for m in ok)
        bad = [m for m in down.probe("gpu.smi_q", "node005").metrics
               if m.name == "fabric_registration"]
        assert len(bad) == 8 and all(m.verdict is Verdict.FAIL for m in bad)
        assert str(bad[0].value).startswith("In Progress/-: the fabric manager has not "
                                            "registered this GPU")
        assert not [m for m in down.probe("gpu.smi_q", "node004").metrics
                    if m.name == "fabric_registration" and m.verdict is not Verdict.OK]
    finally:
        healthy.close()
        down.close()


def test_gap2_gpus_without_a_fabric_state_are_not_judged() -> None:
    from fabtui.probes.evaluators.nvidia_smi_q import _fabric_registration

    v100 = parse((FIXTURES / "nvidia-smi-q" / "mockdata-nvidia-smi-q-v100-550.127.05-first-"
                  "gpu.txt").read_text(encoding="utf-8"), "nvidia-smi-q")
    assert _fabric_registration(v100.gpus, None) == []  # type: ignore[attr-defined, arg-type]


# 8. Switch-side congestion evidence: buffer watermarks --------------------------------------

def test_gap8_watermarks_of_the_lossless_pgs_are_reported_per_port() -> None:
    from fabtui.paths import demo_topology
    from fabtui.probes.catalog import load_catalog
    from fabtui.probes.evaluate import EvalContext, evaluate, hardware_classes
    from fabtui.probes.targets import resolve
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.loader import load_topology

    text = (FIXTURES / "queue-watermark" / "sonic-utilities-wm-test-vectors-pg-headroom-multi-"
            "asic.txt").read_text(encoding="utf-8")
    parsed: Any = parse(text)  # detected, not told
    assert parsed.kind == "queue-watermark"
    assert [t.namespace for t in parsed.tables] == ["asic0", "asic1"]
    graph = FabricGraph(load_topology(demo_topology()).topology)
    definition = load_catalog([shipped_dir("probes")])["switch.watermarks"]
    target = resolve(graph, "leaf-g00-r1", definition.target)
    ctx = EvalContext(probe=definition, target=target, interval=5.0,
                      hardware=hardware_classes(target))
    found = {f"{m.name}@{m.component}": m.value for m in evaluate("queue-watermark", None,
                                                                  parsed, ctx)}
    assert found["watermark.pg_headroom.PG3@leaf-g00-r1:Ethernet4"] == 203
    assert found["watermark.pg_headroom.PG4@leaf-g00-r1:Ethernet-BP260"] == 204
    assert not any(".PG0@" in key for key in found)


def test_gap8_a_watermark_cell_that_is_not_bytes_is_refused_at_its_line() -> None:
    import pytest

    from fabtui.parsers.errors import ParseError

    text = (FIXTURES / "queue-watermark" / "sonic-command-reference-queue-watermark-unicast.txt"
            ).read_text(encoding="utf-8")
    text = text.replace("Ethernet8      0      0", "Ethernet8      0  lots")
    with pytest.raises(ParseError) as error:
        parse(text, "queue-watermark")
    assert error.value.line == 7 and "UC1 is 'lots'" in str(error.value)
