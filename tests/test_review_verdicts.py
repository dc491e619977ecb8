"""Issue 35 (field review, "New findings"): conclusions that were wrong on the demo fabric.

Each test plays the fault the review reproduced (a shipped scenario, or one written here that
combines shipped faults) and checks the conclusion the runbook or the probe now draws: the
finding's number is in the test's name. docs/thresholds.md records each correction and its
source.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from fabtui.model.probe import ProbeResult, Verdict
from fabtui.model.runbook import RunbookTest
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.probes.catalog import load_catalog
from fabtui.probes.pfc_paths import pause_origin
from fabtui.runbooks.library import load_library
from fabtui.runbooks.observe import RunSummary
from fabtui.runbooks.testing import run_test
from fabtui.sim.node_commands import run
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state
from fabtui.topology.graph import FabricGraph
from tests.support.sim import Fabric

LIBRARY = load_library([shipped_dir("runbooks")])
CATALOG = load_catalog([shipped_dir("probes")])
JOB_LOG = "/var/log/fabtui-sim/job.log"


def scenario_file(folder: Path, name: str, body: str) -> str:
    """A scenario written for one test (faults the shipped scenarios play one at a time)."""
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nduration: 1h\n{body}", encoding="utf-8")
    return str(path)


def play(book: str, scenario: str, folder: Path, *, at: str | None = None,
         inputs: dict[str, Any] | None = None, answers: dict[str, str] | None = None,
         repairs: dict[str, str] | None = None) -> RunSummary:
    """Run runbook `book` headless on the demo fabric playing `scenario`."""
    case = RunbookTest(name="review", scenario=scenario, at=at, inputs=inputs or {},
                       answers=answers or {}, repairs=repairs or {})
    outcome = asyncio.run(run_test(LIBRARY.runbooks[book], case, topology=demo_topology(),
                                   template_dirs=[shipped_templates()], catalog=CATALOG,
                                   folder=folder))
    assert outcome.summary is not None, outcome.problems
    return outcome.summary


def said(summary: RunSummary) -> str:
    return summary.text() + "\n" + "\n".join(str(v) for v in summary.vars.values())


def verdicts(result: ProbeResult, name: str) -> dict[str, Verdict]:
    return {m.component: m.verdict for m in result.metrics if m.name == name}


# N2 ---------------------------------------------------------------------------------------

def test_n2_a_pfc_storm_behind_a_shared_leaf_is_not_called_another_tenant(
        tmp_path: Path) -> None:
    both = scenario_file(tmp_path, "interference-and-storm", """start: 10m
timeline:
  - at: 3m
    fault: interference
    component: leaf-g00-r2
  - at: 9m
    fault: pfc-storm
    component: node003:mlx5_2
    params: {stall_prevention_s: 0}
""")
    summary = play("multi-job-interference", both, tmp_path, inputs={"leaf": "leaf-g00-r2"})
    assert "change-the-placement" not in summary.path, summary.text()
    assert summary.vars.get("shared_leaf") is None
    assert summary.handover == "pfc-storm", summary.text()
    assert "node003:mlx5_2" in said(summary)
    assert "1,000/s" not in Path(LIBRARY.runbooks["multi-job-interference"].path).read_text()


# N3 ---------------------------------------------------------------------------------------

FLAP_SHORT = {"node": "node004", "log_path": JOB_LOG}


def test_n3_a_drain_does_not_make_it_safe_to_shut_the_port_of_a_running_job(
        tmp_path: Path) -> None:
    summary = play("link-flap", "link-flap-short", tmp_path, at="11m", inputs=FLAP_SHORT,
                   answers={"drain": "node004", "isolate": "leaf-g00-r2:Ethernet24"})
    assert summary.vars["impact"] == "survived"
    # Job 4242 still runs on node004: without the operator accepting that it dies, the port
    # stays up (the shutdown outlasts the job's 8.59 s IB retry window).
    assert summary.blocks.get("isolate") in (None, Verdict.SKIPPED), summary.text()
    assert "4242" in said(summary)


def test_n3_the_port_is_shut_once_the_operator_accepts_that_the_job_dies(
        tmp_path: Path) -> None:
    summary = play("link-flap", "link-flap-short", tmp_path, at="11m", inputs=FLAP_SHORT,
                   answers={"drain": "node004", "accept-job-loss": "end job 4242",
                            "isolate": "leaf-g00-r2:Ethernet24"})
    assert summary.blocks.get("isolate") is Verdict.OK, summary.text()


# N7 ---------------------------------------------------------------------------------------

def test_n7_a_host_at_mtu_1024_is_not_a_cause_of_error_12(tmp_path: Path) -> None:
    summary = play("nccl-hang-triage", "mtu-mismatch", tmp_path,
                   inputs={"suspect_nic": "node005:mlx5_2"},
                   answers={"cordon": "node005", "restart": "yes"})
    assert summary.vars["cause"] != "mtu", summary.text()
    assert "an MTU mismatch on the path" not in said(summary)
    # The switch ports on the path are read (9100 on the demo leaves): no path MTU fault.
    assert summary.vars["path_mtu"] == 9100


# N8 ---------------------------------------------------------------------------------------

def test_n8_the_simulated_host_logs_no_stall_prevention_line_mlx5_never_prints() -> None:
    sim = build_sim(fresh_state(demo_topology(), find_scenario("pfc-storm-stall-prevention"),
                                [shipped_templates()]))
    dmesg, _, _ = run(sim, "node006", ["dmesg"], 120.0)
    assert "stall prevention" not in dmesg.lower()
    out, _, status = run(sim, "node006", ["ethtool", "--get-tunable", "enp153s0f0np0",
                                          "pfc-prevention-tout"], 120.0)
    assert status == 0 and out == "pfc-prevention-tout: 8000\n"
    off = build_sim(fresh_state(demo_topology(), find_scenario("pfc-storm"),
                                [shipped_templates()]))
    out, _, _ = run(off, "node006", ["ethtool", "--get-tunable", "enp153s0f0np0",
                                     "pfc-prevention-tout"], 400.0)
    assert out == "pfc-prevention-tout: 0\n"


def _real_mlx5_kernel_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a real host prints: mlx5 logs nothing when its PFC stall prevention fires (its
    events.c handles port, temperature and module events; the storm is only counted)."""
    import fabtui.sim.logs as logs

    original = logs.kernel_log

    def kernel_log(*args: Any, **kwargs: Any) -> str:
        return "".join(line for line in original(*args, **kwargs).splitlines(keepends=True)
                       if "stall prevention" not in line.lower())

    monkeypatch.setattr(logs, "kernel_log", kernel_log)


def test_n8_a_storm_stall_prevention_ended_is_named_from_the_nic_counters(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _real_mlx5_kernel_log(monkeypatch)
    summary = play("pfc-storm", "pfc-storm-stall-prevention", tmp_path)
    text = said(summary)
    assert "a PFC storm from node006:mlx5_4 ended on its own" in text, text
    assert "tx_pause_storm_error_events" in text
    assert "pfc-prevention-tout 8000 ms" in text


def test_n8_a_nic_with_stall_prevention_off_is_named_from_its_tunable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _real_mlx5_kernel_log(monkeypatch)
    summary = play("pfc-storm", "pfc-storm-100g", tmp_path, answers={"drained": "no"})
    text = said(summary)
    assert "no event in its kernel log" not in text
    assert "stall prevention off (pfc-prevention-tout 0)" in text, text


# N11 --------------------------------------------------------------------------------------

def test_n11_a_dr4_lane_just_below_the_informative_rx_minimum_warns(tmp_path: Path) -> None:
    dim = scenario_file(tmp_path, "dim-lane", """timeline:
  - at: 0
    fault: dirty-connector
    component: node002:mlx5_6
    params: {lanes: [1], loss_db: 4.2}
""")
    fabric = Fabric(dim, tmp_path)
    try:
        dom = fabric.probe("switch.dom", "leaf-g00-r6:Ethernet8")
    finally:
        fabric.close()
    rx = {m.component: m.value for m in dom.metrics if m.name == "rx_power_dbm"}
    dimmed = [c for c, v in rx.items() if isinstance(v, float) and -6.6 < v < -5.9]
    assert dimmed, rx  # the scenario put one lane a few tenths below -5.9 dBm
    assert verdicts(dom, "rx_power_dbm")[dimmed[0]] is Verdict.WARN
    assert dom.verdict is Verdict.WARN


def test_n11_a_lane_below_the_modules_own_low_alarm_still_fails(tmp_path: Path) -> None:
    dark = scenario_file(tmp_path, "dark-lane", """timeline:
  - at: 0
    fault: dirty-connector
    component: node002:mlx5_6
    params: {lanes: [1], loss_db: 9.5}
""")
    fabric = Fabric(dark, tmp_path)
    try:
        dom = fabric.probe("switch.dom", "leaf-g00-r6:Ethernet8")
    finally:
        fabric.close()
    assert Verdict.FAIL in verdicts(dom, "rx_power_dbm").values()



@pytest.mark.parametrize(("loss_db", "verdict"), [(5.0, Verdict.WARN), (7.5, Verdict.FAIL)])
def test_n11_the_nic_side_fails_only_when_its_pre_fec_ber_confirms_the_lost_margin(
        tmp_path: Path, loss_db: float, verdict: Verdict) -> None:
    dirt = scenario_file(tmp_path, "dim-nic-lane", f"""timeline:
  - at: 0
    fault: dirty-connector
    component: leaf-g00-r6:Ethernet8
    params: {{lanes: [1], loss_db: {loss_db}}}
""")
    fabric = Fabric(dirt, tmp_path)
    try:
        link = fabric.probe("nic.mlxlink", "node002:mlx5_6")
    finally:
        fabric.close()
    rx = {m.component: m.value for m in link.metrics if m.name == "rx_power_dbm"}
    low = [c for c, v in rx.items() if isinstance(v, float) and -10.4 < v < -5.9]
    assert low, rx  # below the DR4 minimum, above the module's own -10.4 dBm low alarm
    ber = next(m.value for m in link.metrics if m.name == "raw_ber")
    assert isinstance(ber, float) and (ber >= 1e-5) is (verdict is Verdict.FAIL), ber
    assert verdicts(link, "rx_power_dbm")[low[0]] is verdict


def test_n11_new_node_acceptance_accepts_a_marginal_lane_with_that_reservation(
        tmp_path: Path) -> None:
    # The issue: "acceptance fails on `fail`, not `warn`". A lane a few tenths under the DR4
    # informative minimum with clean FEC warns (above); the node is accepted, the lane named.
    summary = play("new-node-acceptance", "marginal-lane", tmp_path,
                   inputs={"node": "node002", "known_good": "node001"},
                   answers={"out-of-service": "yes", "resume": "node002"})
    assert summary.path[-1] == "accept", summary.text()
    assert summary.outcome is Verdict.WARN
    assert summary.vars["reasons"] == []
    assert any("leaf-g00-r6:Ethernet8/lane1 rx_power_dbm=-6.26" in r
               for r in summary.vars["reservations"]), summary.vars["reservations"]
    assert "accept node002 with reservations" in said(summary)


def test_n11_new_node_acceptance_still_rejects_a_lane_below_the_modules_low_alarm(
        tmp_path: Path) -> None:
    dark = scenario_file(tmp_path, "dark-lane", """start: 5m
timeline:
  - at: 0
    fault: dirty-connector
    component: node002:mlx5_6
    params: {lanes: [1], loss_db: 9.5}
""")
    summary = play("new-node-acceptance", dark, tmp_path,
                   inputs={"node": "node002", "known_good": "node001"},
                   answers={"out-of-service": "yes", "resume": "node002"})
    assert summary.path[-1] == "reject", summary.text()
    assert summary.outcome is Verdict.FAIL
    assert any("links of node002 not clean" in r and "Ethernet8/lane1" in r
               for r in summary.vars["reasons"]), summary.vars["reasons"]


# N12 --------------------------------------------------------------------------------------

def _lane(name: str, lane: str, value: float, verdict: str = "ok") -> dict[str, object]:
    return {"name": name, "component": f"x/lane{lane}", "value": value, "verdict": verdict}


def test_n12_an_fr4_link_has_its_own_loss_budget_and_near_end_blame_needs_a_good_far_end(
        ) -> None:
    from fabtui.probes.evaluators._optics import light_blame

    fr4: dict[str, object] = {"name": "optic_type", "component": "x",
                              "value": "400GBASE-FR4", "verdict": "ok"}
    near = [_lane("rx_power_dbm", "1", -7.6, "warn"), fr4]
    far = [_lane("tx_power_dbm", "1", -3.9)]
    # 3.7 dB lost: inside FR4's 4 dB budget (DR4's 3 dB would blame the fibre), and the far end
    # launches less than -7.3 + 4 dBm: its transmitter, not the fibre.
    blame = light_blame(near, far)
    assert blame is not None and blame["blame"] == "far-end transmitter", blame
    # A far end that launches plenty over a loss within budget: only then the near receiver.
    receiver = light_blame([_lane("rx_power_dbm", "1", -3.5, "warn"), fr4],
                           [_lane("tx_power_dbm", "1", -1.0)])
    assert receiver is not None and receiver["blame"] == "near-end optic", receiver
    # The near module's own bad laser is the other direction's light: no near-end blame.
    own = light_blame([_lane("rx_power_dbm", "1", -9.0, "warn"),
                       _lane("tx_power_dbm", "1", -6.0, "fail")], [_lane("tx_power_dbm", "1", 1.0)])
    assert own is not None and own["blame"] == "fibre or connector", own


# N13 --------------------------------------------------------------------------------------

LEAF_END_DIRT = """start: 5m
timeline:
  - at: 1m
    fault: dirty-connector
    component: leaf-g00-r6:Ethernet8
    params: {lanes: [2, 3], loss_db: 7.5}
"""
REPAIR_ANSWERS = {"drain": "node002", "drained": "yes", "shut-port": "leaf-g00-r6:Ethernet8",
                  "cleaned": "yes", "shut-again": "leaf-g00-r6:Ethernet8", "swapped": "yes",
                  "resume": "node002"}


def test_n13_cleaning_is_not_credited_when_the_nic_still_receives_weak_light(
        tmp_path: Path) -> None:
    dirt = scenario_file(tmp_path, "leaf-end-dirt", LEAF_END_DIRT)
    summary = play("optic-replacement", dirt, tmp_path,
                   inputs={"port": "leaf-g00-r6:Ethernet8", "soak_s": 300},
                   answers=REPAIR_ANSWERS)
    assert summary.vars["part"] == "fibre or connector"  # the light the NIC receives
    assert summary.vars["clean_fixed"] is False, summary.text()
    assert "swap-the-part" in summary.path


def test_n13_cleaning_that_restores_the_nics_light_is_credited(tmp_path: Path) -> None:
    dirt = scenario_file(tmp_path, "leaf-end-dirt", LEAF_END_DIRT)
    summary = play("optic-replacement", dirt, tmp_path,
                   inputs={"port": "leaf-g00-r6:Ethernet8", "soak_s": 300},
                   answers=REPAIR_ANSWERS, repairs={"cleaned": "leaf-g00-r6:Ethernet8"})
    assert summary.vars["clean_fixed"] is True, summary.text()
    assert "swap-the-part" not in summary.path


# N14 --------------------------------------------------------------------------------------

def _dumped(scenario: str, folder: Path, *probes: tuple[str, str]) -> list[dict[str, Any]]:
    fabric = Fabric(scenario, folder)
    try:
        return [fabric.probe(name, target).model_dump(mode="json") for name, target in probes]
    finally:
        fabric.close()


def test_n14_a_pause_loop_whose_queues_still_transmit_is_not_a_deadlock(
        tmp_path: Path) -> None:
    graph = FabricGraph(build_sim(fresh_state(demo_topology(), find_scenario("pfc-deadlock"),
                                              [shipped_templates()])).topology)
    pause = _dumped("pfc-deadlock", tmp_path / "a", ("switch.pfc", "leaf-g00-r1"),
                    ("switch.pfc", "leaf-g00-r2"))
    # The same held ports, read where traffic flows and no watchdog fired: congestion that
    # spreads through the spines shows the same pause picture while the queues drain.
    (tmp_path / "b").mkdir()
    flowing = _dumped("healthy", tmp_path / "b", ("switch.queues", "leaf-g00-r1:Ethernet64"),
                      ("switch.queues", "leaf-g00-r1:Ethernet72"),
                      ("switch.pfcwd", "leaf-g00-r1"), ("switch.pfcwd", "leaf-g00-r2"))
    origin = pause_origin(pause + flowing, graph)
    assert origin is not None and origin["kind"] != "pfc-deadlock", origin
    # Pause shares alone cannot tell: the loop is reported, not named a deadlock.
    alone = pause_origin(pause, graph)
    assert alone is not None and alone["kind"] == "pause-loop", alone


def test_n14_a_loop_whose_queues_stopped_and_stormed_is_a_deadlock(tmp_path: Path) -> None:
    summary = play("pfc-storm", "pfc-deadlock", tmp_path)
    assert summary.vars["loop_kind"] == "pfc-deadlock", summary.text()
    assert "no transmit progress" in said(summary)


# N15 --------------------------------------------------------------------------------------

def test_n15_a_leaf_that_is_up_but_storming_is_not_stood_down(tmp_path: Path) -> None:
    summary = play("major-incident", "pfc-storm", tmp_path,
                   inputs={"component": "leaf-g00-r4", "severity": "SEV2"},
                   answers={"declared": "yes"})
    assert "stand-down" not in summary.path, summary.text()
    assert summary.vars["broken"], summary.text()
    assert summary.handover == "pfc-storm"


def test_n15_a_healthy_leaf_is_still_stood_down_and_says_what_was_read(
        tmp_path: Path) -> None:
    summary = play("major-incident", "healthy", tmp_path,
                   inputs={"component": "leaf-g00-r3", "severity": "SEV2"},
                   answers={"declared": "yes"})
    assert summary.path[-1] == "stand-down"
    assert "pfcwd" in said(summary)


# N16 --------------------------------------------------------------------------------------

def test_n16_the_ib_retry_window_of_nccl_before_2_14_is_half_a_second() -> None:
    from fabtui.topology.expected import ib_retry_window_s

    # NCCL_IB_TIMEOUT defaults: 14 up to v2.13.4-1, 18 from v2.14.3-1, 20 from v2.23.4-1.
    assert ib_retry_window_s("2.13.4") == pytest.approx(0.537, abs=0.001)
    assert ib_retry_window_s("2.12.12+cuda11.6") == pytest.approx(0.537, abs=0.001)
    assert ib_retry_window_s("2.14.3") == pytest.approx(8.59, abs=0.01)
    assert ib_retry_window_s("2.22.3") == pytest.approx(8.59, abs=0.01)
    assert ib_retry_window_s("2.23.4") == pytest.approx(34.36, abs=0.01)
    assert ib_retry_window_s("2.13.4", {"NCCL_IB_TIMEOUT": "18"}) == pytest.approx(8.59, abs=0.01)


# N17 --------------------------------------------------------------------------------------

def test_n17_ecn_is_judged_against_the_point_pfc_pauses_not_a_constant(tmp_path: Path) -> None:
    # 1.5 MB (Cumulus' RoCE default is 1,501,500 bytes) marks long before a congested lossless
    # PG pauses in the demo leaves' 45 MB pool: away from the template, not a fault.
    early = play("roce-qos-audit", "qos-misconfig", tmp_path / "early", inputs={"node": "node004"})
    assert early.outcome is Verdict.WARN, early.text()
    late = scenario_file(tmp_path, "ecn-after-pause", """timeline:
  - at: 0
    fault: misconfig
    component: leaf-g00-r4
    params: {setting: ecn_min_kb, value: 30000}
""")
    summary = play("roce-qos-audit", late, tmp_path / "late", inputs={"node": "node004"})
    assert summary.outcome is Verdict.FAIL, summary.text()
    assert "leaf-g00-r4 ECN from 30000 KB, at or above the 23056 KB" in said(summary)


# N19 --------------------------------------------------------------------------------------

def test_n19_a_moved_gid_is_not_blamed_on_a_job_that_lets_nccl_pick_it(
        tmp_path: Path) -> None:
    auto = "".join(f"""  - at: 0
    fault: misconfig
    component: node00{n}
    params: {{setting: nccl_env, value: {{NCCL_IB_GID_INDEX: "-1"}}}}
""" for n in range(1, 9))
    moved = scenario_file(tmp_path, "gid-moved-auto", f"""timeline:
  - at: 0
    fault: misconfig
    component: node006:mlx5_0
    params: {{setting: gid_index, value: 5}}
{auto}""")
    summary = play("nccl-hang-triage", moved, tmp_path,
                   inputs={"suspect_nic": "node006:mlx5_0"},
                   answers={"cordon": "node006", "restart": "yes"})
    assert summary.vars["cause"] != "gid", summary.text()
    assert "NCCL_IB_GID_INDEX expects" not in said(summary)


def test_n19_rdma_triage_says_whether_the_job_is_hit_by_a_moved_gid(tmp_path: Path) -> None:
    pinned = play("rdma-error-triage", "rdma-gid-mismatch", tmp_path / "pinned",
                  inputs={"nic": "node006:mlx5_0", "log_path": JOB_LOG})
    assert "this job pins NCCL_IB_GID_INDEX=3 (its log) and is hit" in said(pinned)
    unread = play("rdma-error-triage", "rdma-gid-mismatch", tmp_path / "unread",
                  inputs={"nic": "node006:mlx5_0"})
    assert "whether the job pins NCCL_IB_GID_INDEX was not read" in said(unread)


# Residuals of the earlier review ----------------------------------------------------------

def test_runbook_prose_makes_no_unsourced_claim_the_review_caught() -> None:
    """rdma-baseline quoted 2.5-3 µs for a one-hop RoCE write (no capture or publication behind
    it); new-node-acceptance said swapped cables pass perftest (not on routed leaves);
    multi-job-interference gave every tenant its own lossless queue (two are practical)."""
    def text(book: str) -> str:
        return " ".join(Path(LIBRARY.runbooks[book].path).read_text(encoding="utf-8").split())

    assert "2.5-3 µs" not in text("rdma-baseline")
    assert "t_typical 0.98 µs" in text("rdma-baseline")
    assert "passes ibstat and even perftest" not in text("new-node-acceptance")
    assert "on routed leaves" in text("new-node-acceptance")
    interference = text("multi-job-interference")
    assert "give each tenant or job class its own traffic class" not in interference
    assert "QoS separates two tenants at most" in interference


def test_sonic_interfaces_status_lists_each_ports_own_lanes() -> None:
    """Real SONiC prints each port's serdes lanes (sonic-utilities tests/intfutil_test.py:
    Ethernet0 `0`, Ethernet32 `13,14,15,16`; sonic-mgmt's msn2700 capture: Ethernet0 `0,1,2,3`,
    Ethernet4 `4,5,6,7`); the simulator printed `0,1,2,3,4,5,6,7` on every port."""
    from tests.support.sim import switch_out

    sim = build_sim(fresh_state(demo_topology(), find_scenario("healthy"),
                                [shipped_templates()]))
    text = switch_out(sim, "leaf-g00-r2", "show interfaces status", 60.0)
    rows = [line.split() for line in text.splitlines() if line.strip().startswith("Ethernet")]
    assert len(rows) > 2
    lanes = {row[0]: row[1] for row in rows}
    assert lanes["Ethernet8"] == "8,9,10,11,12,13,14,15", lanes
    seen = [lane for value in lanes.values() for lane in value.split(",")]
    assert len(seen) == len(set(seen))  # no lane on two ports
