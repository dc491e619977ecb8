"""Evaluators turn real captured output into metrics with verdicts, named in topology terms."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, ProbeDef, Verdict
from fabtui.parsers import registry
from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.probes.evaluate import EvalContext, evaluate, findings, hardware_classes
from fabtui.probes.targets import resolve
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from tests.support.fixture_inputs import FIXTURES, NOT_INPUT

CATALOG = load_catalog([shipped_dir("probes")])
GRAPH = FabricGraph(load_topology(shipped_dir("topology") / "demo.yaml").topology)


def parsed(kind: str, name: str) -> Any:
    inputs = [p for p in sorted((FIXTURES / kind).glob(f"{name}*"))
              if not p.name.endswith(NOT_INPUT)]
    path = next((p for p in inputs if p.stem == name), inputs[0])
    return registry.get(kind).parse(path.read_text())


def judge(probe: str, target: str, kind: str, after: Any, before: Any = None,
          interval: float = 5.0) -> dict[str, Metric]:
    definition = CATALOG[probe]
    resolved = resolve(GRAPH, target, definition.target)
    ctx = EvalContext(probe=definition, target=resolved, interval=interval,
                      hardware=hardware_classes(resolved))
    metrics = evaluate(kind, before, after, ctx)
    return {f"{m.name}@{m.component}": m for m in metrics}


def test_nccl_tests_bandwidth_and_correctness() -> None:
    result = parsed("nccl-tests", "superbench-allreduce-8xA100-c0")
    metrics = judge("nccl.all_reduce", "node001", "nccl-tests", result)
    busbw = metrics["busbw_max@node001"]
    assert busbw.value == max(r.out_of_place.busbw or 0 for r in result.rows
                              if r.size_bytes == max(x.size_bytes for x in result.rows))
    # The demo nodes are H100: the Azure 460 GB/s gate applies and an A100 run misses it.
    assert busbw.verdict is Verdict.FAIL and busbw.limit == 460
    assert "azurehpc-health-checks" in (busbw.source or "")
    assert metrics["wrong_total@node001"].verdict is Verdict.OK


def test_nccl_tests_wrong_data_fails_whatever_the_bandwidth() -> None:
    result = parsed("nccl-tests", "synthetic-broadcast-wrong-data-min-bw-failed")
    metrics = judge("nccl.all_gather", "node002", "nccl-tests", result)
    assert metrics["wrong_total@node002"].verdict is Verdict.FAIL
    assert metrics["status@node002"].verdict is Verdict.FAIL


def test_nccl_tests_init_failure_did_not_run() -> None:
    result = parsed("nccl-tests", "synthetic-init-failure-no-table-avg-zero")
    metrics = judge("nccl.all_reduce", "node001", "nccl-tests", result)
    assert metrics["status@node001"].value == "did_not_run"
    assert metrics["status@node001"].verdict is Verdict.ERROR


def test_perftest_bandwidth_in_gbits() -> None:
    result = parsed("perftest", "felixfu-ib_write_bw-cx3-ib-client")
    metrics = judge("perftest.ib_write_bw", "node001:mlx5_0,node002:mlx5_0", "perftest", result)
    bw = metrics["bw_avg_gbps@node001:mlx5_0,node002:mlx5_0"]
    assert bw.value == round(result.rows[-1].bw_avg * 8 / 1000, 2)
    assert bw.verdict is Verdict.FAIL  # a CX-3 FDR link is far below the H100 GPUDirect gate


def test_perftest_latency_percentiles() -> None:
    result = parsed("perftest", "felixfu-ib_write_lat-cx3-ib-client")
    metrics = judge("perftest.ib_write_lat", "node001,node002", "perftest", result)
    assert metrics["t_typical_usec@node001,node002"].value == result.rows[0].t_typical_usec


def test_kernel_log_flaps_and_xids_name_the_device() -> None:
    flaps = judge("logs.dmesg", "node004", "kernel-log",
                  parsed("kernel-log", "slurmv4-dmesg-mlx5-link-flap-bond-slave"))
    flap = flaps["link_flaps@node004:enp83s0f0np0"]
    assert flap.value == 3 and flap.verdict is Verdict.WARN
    xids = judge("logs.dmesg", "node004", "kernel-log",
                 parsed("kernel-log", "forum-dmesg-nvrm-xid32-desktop"))
    (xid,) = [m for k, m in xids.items() if k.startswith("xid.32@")]
    assert xid.value == 2 and xid.verdict is Verdict.WARN and "0000:01:00" in xid.component


def test_topology_affinity_from_nvidia_smi() -> None:
    good = judge("gpu.topo", "node001", "nvidia-smi-topo",
                 parsed("nvidia-smi-topo", "felixfu-topo-m-dgx1"))
    assert all(m.verdict is Verdict.OK for m in good.values())
    affinity = good["gpu_nic_affinity@node001:GPU0"].value
    assert isinstance(affinity, str) and affinity.startswith("PIX")
    old = judge("gpu.topo", "node001", "nvidia-smi-topo",
                parsed("nvidia-smi-topo", "felixfu-topo-matrix-2xK80"))
    assert any(m.verdict is Verdict.FAIL and "PHB" in str(m.value) for m in old.values())


def test_dcgmi_verdict_per_test_with_the_failing_gpu() -> None:
    metrics = judge("gpu.dcgmi_diag", "node003", "dcgmi-diag",
                    parsed("dcgmi-diag", "mlengineering-dcgmi-diag-fail-excerpts"))
    assert metrics["overall@node003"].verdict is Verdict.FAIL
    assert metrics["test.GPU Memory@node003:GPU0"].verdict is Verdict.FAIL


def test_ibstat_rate_below_the_topology_speed_fails() -> None:
    metrics = judge("nic.ibstat", "node001:mlx5_0", "ibstat",
                    parsed("ibstat", "felixfu-ibstat-cx3-fdr10"))
    # The capture is of mlx4_0, not the target's mlx5_0: nothing is claimed about mlx5_0.
    assert metrics == {}
    text = ("CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n"
            "\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 200\n"
            "\t\tLink layer: InfiniBand\n")
    metrics = judge("nic.ibstat", "node001:mlx5_0", "ibstat", registry.get("ibstat").parse(text))
    assert metrics["port.state@node001:mlx5_0"].verdict is Verdict.OK
    rate = metrics["port.rate_gbps@node001:mlx5_0"]
    assert rate.value == 200.0 and rate.limit == 400.0 and rate.verdict is Verdict.FAIL


def test_ibstat_on_a_node_names_each_port_as_the_topology_nic_it_is() -> None:
    """`node.ibstat` (the live view's link-state read, one command per node): a port of a NIC
    the topology lists lands on that NIC with its rate judged against the NIC's speed; an HCA
    the topology does not list (mlx5_8 and up on the demo's nodes) keeps its device/port."""
    metrics = judge("node.ibstat", "node001", "ibstat",
                    parsed("ibstat", "github-b300-host-ibstat-cx8-mt4131-cx7-mt4129"))
    down = metrics["port.state@node001:mlx5_0"]
    assert down.value == "Down" and down.verdict is Verdict.FAIL
    assert metrics["port.physical_state@node001:mlx5_0"].value == "Disabled"
    assert metrics["port.physical_state@node001:mlx5_0"].verdict is Verdict.FAIL
    up = metrics["port.state@node001:mlx5_2"]
    assert up.value == "Active" and up.verdict is Verdict.OK
    rate = metrics["port.rate_gbps@node001:mlx5_2"]  # 100 where the demo's NIC is 400
    assert rate.value == 100.0 and rate.limit == 400.0 and rate.verdict is Verdict.FAIL
    # Down: ibstat's `Rate: 10` is no speed, so no rate is claimed (not 10, not judged).
    assert "port.rate_gbps@node001:mlx5_0" not in metrics
    extra = metrics["port.state@node001:mlx5_10/1"]
    assert extra.verdict is Verdict.FAIL and extra.limit is None
    assert "port.rate_gbps@node001:mlx5_10/1" not in metrics
    assert not any(k.endswith("node001:mlx5_2/1") for k in metrics)


def test_rdma_counters_two_samples_give_deltas_and_rates() -> None:
    before = parsed("rdma-statistic", "cnnotes-rdma-statistic-show-4links-cx4lx")
    after = before.model_copy(deep=True)
    link = next(iter(after.links))
    after.links[link]["out_of_sequence"] = before.links[link].get("out_of_sequence", 0) + 5000
    metrics = judge("nic.rdma_statistic", "node001:mlx5_0", "rdma-statistic", after, before)
    moved = metrics["delta.out_of_sequence@node001:mlx5_0"]
    assert moved.value == 5000 and moved.verdict is Verdict.FAIL
    assert "counters.c" in (moved.source or "")


def test_findings_are_worded_with_component_and_limit() -> None:
    definition: ProbeDef = CATALOG["nccl.all_reduce"]
    metric = Metric(name="busbw_max", value=300.0, unit="GB/s", component="node001",
                    verdict=Verdict.FAIL, limit=460)
    (finding,) = findings(definition, [metric])
    assert finding.component == "node001" and finding.rule == "nccl.all_reduce:busbw_max"
    assert finding.message == "node001: busbw_max = 300 GB/s (limit 460 GB/s)"


def _on_port(probe: str, target: str, kind: str, after: Any, before: Any = None) -> list[Metric]:
    definition = CATALOG[probe]
    resolved = resolve(GRAPH, target, definition.target)
    ctx = EvalContext(probe=definition, target=resolved, interval=5.0,
                      hardware=hardware_classes(resolved), graph=GRAPH)
    return evaluate(kind, before, after, ctx)


def test_dom_dark_lanes_fail_and_name_the_lane() -> None:
    capture = parsed("transceiver-dom", "synthetic-sonic-eeprom-dom-osfp-los-lanes")
    # Evaluate it as if it were read from the demo's leaf-g00-r0 (a switch-wide view).
    metrics = _on_port("switch.dom_all", "leaf-g00-r0", "transceiver-dom", capture)
    dark = {m.component for m in metrics if m.name == "rx_power_dbm" and
            m.verdict is Verdict.FAIL and m.value == "-inf"}
    assert dark == {"leaf-g00-r0:Ethernet0/lane3", "leaf-g00-r0:Ethernet0/lane7"}


def test_dom_module_alarms_are_failures() -> None:
    capture = parsed("transceiver-dom", "cisco-nxos-show-interface-transceiver-details")
    metrics = _on_port("switch.dom_all", "leaf-g00-r0", "transceiver-dom", capture)
    alarms = [m for m in metrics if m.name.startswith("alarm.")]
    assert alarms and all(m.verdict is Verdict.FAIL for m in alarms if "alarm" in str(m.value))
    assert any(m.component.startswith("leaf-g00-r0:Ethernet3/2") for m in alarms)


def test_fec_uncorrectable_codewords_fail_on_any_growth() -> None:
    before = parsed("fec-stats", "sonic-show-interfaces-counters-fec-stats")
    after = before.model_copy(deep=True)
    port = next(iter(after.interfaces))
    after.interfaces[port].fec_uncorr = (before.interfaces[port].fec_uncorr or 0) + 2
    metrics = _on_port("switch.fec", "leaf-g00-r0", "fec-stats", after, before)
    (moved,) = [m for m in metrics if m.name == "delta.fec_uncorr" and port in m.component]
    assert moved.value == 2 and moved.verdict is Verdict.FAIL


def test_pfc_rates_per_port_and_priority() -> None:
    before = parsed("pfc-counters", "sonic-show-pfc-counters")
    after = before.model_copy(deep=True)
    port = next(iter(after.rx))
    after.rx[port]["PFC3"] = (before.rx[port]["PFC3"] or 0) + 500_000
    metrics = _on_port("switch.pfc", "leaf-g00-r0", "pfc-counters", after, before)
    (storm,) = [m for m in metrics if m.name == "rate.rx.PFC3" and port in m.component]
    assert storm.value == 100_000.0
    (share,) = [m for m in metrics if m.name == "pause_share.rx.PFC3" and port in m.component]
    assert share.value == 1.0 and share.verdict is Verdict.FAIL


def test_nccl_tests_failed_run_names_the_peer_failure_on_its_host() -> None:
    result = parsed("nccl-tests",
                    "nccl-tests-issue204-4090-socket-closed-test-nccl-failure-no-table")
    metrics = judge("nccl.all_reduce", "node001", "nccl-tests", result)
    closed = metrics["event.connection_closed@node001:DisAI-4090-3"]
    assert closed.verdict is Verdict.FAIL and "10.102.0.232" in str(closed.value)
    assert metrics["failure.nccl@DisAI-4090-2"].verdict is Verdict.FAIL


def test_nccl_log_gloo_peer_failure_and_ib_status_meaning_fail_the_job() -> None:
    gloo = judge("logs.nccl", "node001", "nccl-log",
                 parsed("nccl-log", "pytorch-issue75512-gloo-connection-closed-by-peer"))
    [closed] = [m for m in gloo.values() if m.name == "event.connection_closed"]
    assert closed.verdict is Verdict.FAIL and "18.25.6.30" in str(closed.value)
    ib = judge("logs.nccl", "node001", "nccl-log",
               parsed("nccl-log", "nccl-issue1405-ib-completion-status12-device4-no-rank"))
    [error] = [m for m in ib.values() if m.name == "event.ib_completion_error"]
    assert "transport retry counter exceeded" in str(error.value)
    assert "10.216.210.236" in str(error.value)


def test_switch_counters_down_port_from_the_sonic_state_column() -> None:
    # PR 130's capture prints STATE as words; Ethernet0 is DOWN (not said to be admin down).
    capture = parsed("switch-counters", "sonic-utilities-pr130-portstat-state-up-down-words")
    metrics = _on_port("switch.counters", "leaf-g00-r0", "switch-counters", capture)
    down = {m.component for m in metrics if m.name == "state_down"}
    assert down == {"leaf-g00-r0:Ethernet0"}
    # `X` is admin down: an operator shut it, so it is not reported as a fault.
    capture = parsed("switch-counters", "sonic-utilities-pr1013-counters-multi-asic-states-u-x")
    metrics = _on_port("switch.counters", "leaf-g00-r0", "switch-counters", capture)
    assert not [m for m in metrics if m.name == "state_down"]


def test_triage_report_fails_on_its_suspects_at_their_ports() -> None:
    metrics = judge("triage.nccl", "node001", "nccl-triage",
                    parsed("nccl-triage", "victim-first-report"))
    assert metrics["verdict@node001"].value == "culprit found"
    assert metrics["verdict@node001"].verdict is Verdict.FAIL
    suspect = metrics["suspect.lagging@leaf-g00-r2:Ethernet0"]
    assert suspect.verdict is Verdict.FAIL and "never arrived" in str(suspect.value)
