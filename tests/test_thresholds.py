"""The corrected thresholds, each on real-looking input: what used to be missed is found, and
what used to fail a healthy fabric passes (docs/thresholds.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabtui.model.parsed.nccl_tests import NcclTestsOutput
from fabtui.model.parsed.perftest import Perftest
from fabtui.model.parsed.transceiver_dom import TransceiverDomReport
from fabtui.model.probe import Metric, Verdict
from fabtui.parsers import registry
from fabtui.probes.targets import ProbeTarget, resolve
from fabtui.sim.node_commands import run
from fabtui.sim.scenario import find_scenario, load_scenario
from fabtui.sim.state import sim_for
from tests.support.evaluation import CATALOG, GRAPH, TOPOLOGY, evaluated

FIXTURES = Path(__file__).parent / "fixtures"


def one(metrics: list[Metric], name: str, component: str | None = None) -> Metric:
    found = [m for m in metrics if m.name == name and
             (component is None or m.component == component)]
    assert len(found) == 1, [f"{m.name}@{m.component}" for m in metrics]
    return found[0]


# PFC ------------------------------------------------------------------------------------------

PFC_HEADER = ("  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
              "-----------  ------  ------  ------  ------  ------  ------  ------  ------\n")


def pfc_counters(rx_pfc3: int) -> Any:
    """`show pfc counters` of a SONiC leaf whose Ethernet0 received `rx_pfc3` pause frames."""
    def table(direction: str, value: int) -> str:
        head = PFC_HEADER.replace("Rx", direction)
        zero = "       0"
        return head + f"  Ethernet0{zero * 3}{value:>8}{zero * 4}\n"
    return registry.get("pfc-counters").parse(table("Rx", rx_pfc3) + "\n" + table("Tx", 0))


@pytest.mark.parametrize(("speed", "verdict"), [(100, Verdict.FAIL), (400, Verdict.WARN)])
def test_a_pfc_storm_on_a_100g_port_is_found(speed: int, verdict: Verdict) -> None:
    # A host that holds a 100G port fully paused sends ~2,980 frames/s (65535 quanta x 512
    # bit times = 336 us each): the old 10,000 frames/s limit never saw it.
    leaf = GRAPH.switches["leaf-g00-r0"].model_copy(update={"port_speed": speed})
    target = ProbeTarget(kind="switch", name=leaf.name, switch=leaf)
    metrics = evaluated("switch.pfc", target, "pfc-counters", pfc_counters(1_000 + 2_980 * 5),
                        pfc_counters(1_000))
    assert one(metrics, "rate.rx.PFC3").value == pytest.approx(2_980)
    share = one(metrics, "pause_share.rx.PFC3")
    assert share.verdict is verdict
    assert share.value == pytest.approx(1.0 if speed == 100 else 0.25, abs=0.01)


# optics ---------------------------------------------------------------------------------------

def dr4_module(lane1_dbm: float) -> Any:
    """A SONiC DOM capture of a 400GBASE-DR4 module whose own warning is at -8.4 dBm."""
    capture = registry.get("transceiver-dom").parse(
        (FIXTURES / "transceiver-dom" / "sonic-show-interfaces-transceiver-eeprom-dom-qsfpdd.txt")
        .read_text())
    assert isinstance(capture, TransceiverDomReport)
    name, module = next(iter(capture.interfaces.items()))
    lanes = {lane: (lane1_dbm if lane == "1" else -1.8) for lane in module.rx_power_dbm}
    module = module.model_copy(update={
        "media_type": "400GBASE-DR4 (Cl 124)", "rx_power_dbm": lanes,
        "tx_power_dbm": {lane: 0.8 for lane in lanes}, "tx_bias_ma": {lane: 7.0 for lane in lanes},
        "los_lanes": [], "alarms": [],
        "thresholds": {**module.thresholds, "rx_power_low_alarm_dbm": -10.4,
                       "rx_power_low_warning_dbm": -8.4, "tx_power_low_alarm_dbm": -8.4}})
    return capture.model_copy(update={"interfaces": {name: module}})


@pytest.mark.parametrize(("lane1", "verdict"), [(-6.5, Verdict.WARN), (-5.5, Verdict.OK)])
def test_dr4_receive_power_is_judged_against_the_dr4_minimum(lane1: float,
                                                             verdict: Verdict) -> None:
    # Before: judged against FR4's -7.3 dBm and the module's -8.4 dBm, -6.5 passed. The DR4
    # minimum is informative (IEEE 802.3): below it the lane warns, it fails at the module's
    # own low alarm or when the pre-FEC BER confirms (issue 35 N11).
    metrics = evaluated("switch.dom_all", "leaf-g00-r0", "transceiver-dom", dr4_module(lane1))
    (lane,) = [m for m in metrics if m.name == "rx_power_dbm" and m.component.endswith("lane1")]
    assert lane.verdict is verdict
    assert one(metrics, "optic_type").value == "400GBASE-DR4"
    if verdict is Verdict.WARN:
        assert lane.limit == -5.9 and "802.3bs" in (lane.source or "")


def test_low_transmit_power_and_lane_spread_are_judged_too() -> None:
    capture = dr4_module(-5.0)
    name, module = next(iter(capture.interfaces.items()))
    module = module.model_copy(update={"tx_power_dbm": {**module.tx_power_dbm, "2": -3.5}})
    metrics = evaluated("switch.dom_all", "leaf-g00-r0", "transceiver-dom",
                        capture.model_copy(update={"interfaces": {name: module}}))
    (tx,) = [m for m in metrics if m.name == "tx_power_dbm" and m.component.endswith("lane2")]
    assert tx.verdict is Verdict.FAIL and tx.limit == -2.9
    assert one(metrics, "rx_power_spread_db").verdict is Verdict.WARN  # -5.0 vs -1.8


# kernel log: Xids, SXids, flaps, each in its window --------------------------------------------

KERNEL_LOG = "".join(line + "\n" for line in (
    "[ 1000.000000] NVRM: Xid (PCI:0000:18:00): 48, pid=4321, name=python, An uncorrectable "
    "double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, "
    "subpartition 0.",
    "[ 9000.000000] NVRM: Xid (PCI:0000:2a:00): 95, pid=1234, name=python, Uncontained: FBHUB. "
    "RST: Yes, D-RST: No",
    "[ 9001.000000] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 24007, Fatal, Link 44 "
    "sourcetrack timeout error",
    "[ 9002.000000] nvidia-nvswitch2: SXid (PCI:0000:06:00.0): 22013, Non-fatal, Link 60 MINION "
    "Link DLREQ interrupt"))


def test_xid_95_and_fatal_sxids_fail_and_old_xids_do_not() -> None:
    log = registry.get("kernel-log").parse(KERNEL_LOG)
    metrics = evaluated("logs.dmesg", "node001", "kernel-log", log)
    assert one(metrics, "xid.95").verdict is Verdict.FAIL
    assert one(metrics, "sxid.24007").verdict is Verdict.FAIL
    assert one(metrics, "sxid.22013").verdict is Verdict.WARN
    # Xid 48 was logged 2 h 13 min before the newest line: outside Azure's 2 h window.
    assert not [m for m in metrics if m.name == "xid.48"]


def flaps(times_s: list[float]) -> str:
    return "".join(f"[{t:12.6f}] mlx5_core 0000:17:00.0 enp23s0f0np0: Link down\n"
                   f"[{t + 2:12.6f}] mlx5_core 0000:17:00.0 enp23s0f0np0: Link up\n"
                   for t in times_s)


def test_five_flaps_fail_only_within_24_hours() -> None:
    hour = 3600.0
    recent = registry.get("kernel-log").parse(flaps([100 * hour + 60 * i for i in range(5)]))
    spread = registry.get("kernel-log").parse(flaps([i * 30 * hour for i in range(5)]))
    assert one(evaluated("logs.dmesg", "node001", "kernel-log", recent),
               "link_flaps").verdict is Verdict.FAIL
    old = one(evaluated("logs.dmesg", "node001", "kernel-log", spread), "link_flaps")
    assert old.value == 1 and old.verdict is Verdict.WARN and old.component == "node001:mlx5_0"


def test_one_counter_window_never_applies_the_24_hour_rule() -> None:
    limits = {t.metric: t for t in CATALOG["nic.ethtool"].thresholds}
    flap = limits["delta.link_down_events_phy"]
    assert flap.fail is None and flap.warn == 1 and flap.window == "probe interval"


# bandwidth against the topology ------------------------------------------------------------------

def nccl_run(scenario: str, collective: str, hosts: list[str]) -> list[Metric]:
    sim = sim_for(TOPOLOGY, load_scenario(find_scenario(scenario)))
    argv = ["mpirun", "-np", str(8 * len(hosts)), "-H", ",".join(f"{h}:8" for h in hosts),
            f"/opt/nccl-tests/build/{collective}_perf", "-b", "8", "-e", "16G", "-g", "1"]
    out, err, status = run(sim, hosts[0], argv, 1300.0)
    assert status == 0, err
    return evaluated("nccl.mpirun", hosts[0], "nccl-tests", registry.get("nccl-tests").parse(out))


def test_a_healthy_alltoall_passes_at_the_formulas_figure() -> None:
    eight = [f"node{i:03d}" for i in range(1, 9)]
    wide = one(nccl_run("healthy", "alltoall", eight), "alltoall_busbw_max")
    assert wide.value == pytest.approx(54.0, rel=0.01) and wide.verdict is Verdict.OK
    pair = one(nccl_run("healthy", "alltoall", eight[:2]), "alltoall_busbw_max")
    assert pair.value == pytest.approx(90.0, rel=0.01) and pair.verdict is Verdict.OK
    assert "nccl-tests #130" in (wide.source or "")


def test_a_slow_collective_still_fails_against_its_expected_figure() -> None:
    hosts = ["node001", "node002"]
    slow = one(nccl_run("gdr-off", "all_reduce", hosts), "busbw_max")
    assert slow.verdict is Verdict.FAIL and slow.limit == pytest.approx(307.2)


def test_single_node_gate_follows_the_gpu_model() -> None:
    capture = registry.get("nccl-tests").parse(run(
        sim_for(TOPOLOGY, load_scenario(find_scenario("healthy"))), "node001",
        ["/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "16G", "-g", "8"], 1300.0)[0])
    assert isinstance(capture, NcclTestsOutput)
    h100 = one(evaluated("nccl.all_reduce", "node001", "nccl-tests", capture), "busbw_max")
    assert h100.verdict is Verdict.OK and h100.limit == 460
    node = GRAPH.nodes["node001"]
    h200 = node.model_copy(update={"gpus": tuple(g.model_copy(update={"model": "H200-SXM-141GB"})
                                                 for g in node.gpus)})
    target = ProbeTarget(kind="node", name="node001", node=h200)
    slower = capture.model_copy(update={"rows": [
        r.model_copy(update={"out_of_place": r.out_of_place.model_copy(update={"busbw": 440.0})})
        for r in capture.rows]})
    judged = one(evaluated("nccl.all_reduce", target, "nccl-tests", slower), "busbw_max")
    assert judged.verdict is Verdict.OK and judged.limit == 431  # would fail an H100's 460


def perftest_at(gbps: float) -> Any:
    capture = registry.get("perftest").parse(
        (FIXTURES / "perftest" / "felixfu-ib_write_bw-cx3-ib-client.txt").read_text())
    assert isinstance(capture, Perftest)
    rows = [r.model_copy(update={"bw_avg": gbps, "bw_peak": gbps}) for r in capture.rows]
    return capture.model_copy(update={"rows": rows, "unit": "Gb/sec"})


def test_rdma_write_is_judged_against_the_roce_ceiling() -> None:
    # 400GbE carries at most 400 x 4096/(4096+82) = 392.2 Gb/s of RDMA payload at MTU 4096.
    pair = "node001:mlx5_0,node002:mlx5_0"
    healthy = one(evaluated("perftest.ib_write_bw", pair, "perftest", perftest_at(391.0)),
                  "bw_avg_gbps")
    assert healthy.verdict is Verdict.OK
    # On the H100 SKU Azure's 380 Gb/s gate is the stricter rule and stays in force.
    sku = one(evaluated("perftest.ib_write_bw", pair, "perftest", perftest_at(370.0)),
              "bw_avg_gbps")
    assert sku.verdict is Verdict.FAIL and sku.limit == 380
    # Without a SKU gate (no GPU model known) the ceiling's shares decide.
    bare = resolve(GRAPH, pair, "node-pair")
    bare = ProbeTarget(kind="node-pair", name=bare.name, nic=bare.nic, peer=bare.peer)
    for gbps, verdict, limit in ((350.0, Verdict.WARN, 352.9), (300.0, Verdict.FAIL, 313.7)):
        judged = one(evaluated("perftest.ib_write_bw", bare, "perftest", perftest_at(gbps)),
                     "bw_avg_gbps")
        assert judged.verdict is verdict and judged.limit == pytest.approx(limit)
        assert "4096/(4096+82)" in (judged.source or "")


def test_rdma_read_and_send_are_not_judged_against_a_write_figure() -> None:
    # Azure's 380 Gb/s (H100) is an ib_write_bw GPUDirect figure; read and send had it too
    # (issue 35 residual). At 370 Gb/s, within the RoCE ceiling's 90 %, they now pass.
    pair = "node001:mlx5_0,node002:mlx5_0"
    for probe in ("perftest.ib_read_bw", "perftest.ib_send_bw"):
        judged = one(evaluated(probe, pair, "perftest", perftest_at(370.0)), "bw_avg_gbps")
        assert judged.verdict is Verdict.OK, (probe, judged)
        assert "4096/(4096+82)" in (judged.source or "")
        low = one(evaluated(probe, pair, "perftest", perftest_at(300.0)), "bw_avg_gbps")
        assert low.verdict is Verdict.FAIL and low.limit == pytest.approx(313.7)


# NCCL logs: the job's own link-flap tolerance ----------------------------------------------------

def test_the_jobs_ib_retry_window_comes_from_its_version_and_environment() -> None:
    old = registry.get("nccl-log").parse("node001:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n")
    tuned = registry.get("nccl-log").parse(
        "node001:1:1 [0] NCCL INFO NCCL version 2.27.5+cuda12.9\n"
        "node001:1:1 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22.\n")
    window = [one(evaluated("logs.nccl", "node001", "nccl-log", log), "ib_retry_window_s").value
              for log in (old, tuned)]
    assert window == [pytest.approx(8.59, abs=0.01), pytest.approx(137.44, abs=0.01)]


# both ends of a cable -------------------------------------------------------------------------

def dom_result(rx_lane1: float, tx: dict[str, float] | None = None) -> dict[str, Any]:
    """A `switch.dom_all` result as a runbook sees it (plain data)."""
    capture = dr4_module(rx_lane1)
    name, module = next(iter(capture.interfaces.items()))
    if tx is not None:
        module = module.model_copy(update={"tx_power_dbm": {**module.tx_power_dbm, **tx}})
    metrics = evaluated("switch.dom_all", "leaf-g00-r0", "transceiver-dom",
                        capture.model_copy(update={"interfaces": {name: module}}))
    return {"metrics": [m.model_dump(mode="json") for m in metrics]}


def test_low_light_is_blamed_on_the_far_end_or_the_fibre_not_the_near_optic() -> None:
    from fabtui.runbooks.functions import optic_blame

    healthy_far = dom_result(-1.8)
    assert optic_blame(dom_result(-1.8), healthy_far) is None
    # The far end launches 0.8 dBm and 7.8 dB are lost: a dirty connector or the fibre.
    fibre = optic_blame(dom_result(-7.0), healthy_far)
    assert fibre is not None and fibre["blame"] == "fibre or connector"
    assert fibre["lanes"] == ["1"] and "7.8 dB" in fibre["reason"]
    # The far transmitter itself launches below the DR4 minimum.
    weak = optic_blame(dom_result(-7.0), dom_result(-1.8, tx={"1": -4.0}))
    assert weak is not None and weak["blame"] == "far-end transmitter"
    # The near module's own laser is the other direction's light: it does not make the near
    # optic the suspect for what it receives (issue 35 N12); 7.8 dB lost is still the fibre.
    own = optic_blame(dom_result(-7.0, tx={"3": -4.0}), healthy_far)
    assert own is not None and own["blame"] == "fibre or connector"
    assert "other direction's light" in own["reason"]
