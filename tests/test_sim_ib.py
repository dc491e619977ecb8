"""The demo's InfiniBand variant (issue 35, point 4): selected by its scenarios, every tool
reading the same subnet (LIDs, SM, counters at both ends of a cable), its faults where planted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.config import load_settings, with_scenario
from fabtui.model.parsed.nccl_log import NcclLog
from fabtui.parsers import registry
from fabtui.paths import demo_topology, shipped_templates
from fabtui.runbooks.testing import case_topology
from fabtui.sim import ib
from fabtui.sim.core import Sim
from fabtui.sim.node_commands import run
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state


def ib_sim(scenario: str) -> Sim:
    return build_sim(fresh_state(case_topology("h100-64gpu-ib", [shipped_templates()]),
                                 find_scenario(scenario), [shipped_templates()]))


def parsed(sim: Sim, host: str, *argv: str, t: float) -> object:
    out, err, status = run(sim, host, list(argv), t)
    assert status == 0, err
    kind = registry.detect(out)[0][0]
    return registry.get(kind).module.parse(out)


def test_an_ib_scenario_brings_the_ib_fabric_and_a_configured_topology_stays(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("FABTUI_CONFIG", raising=False)
    s = load_settings(None)
    assert s.topology == demo_topology()
    assert with_scenario(s, "ib-xmit-wait").topology.name == "h100-64gpu-ib.yaml"
    assert with_scenario(s, "pfc-storm").topology == demo_topology()
    mine = tmp_path / "mine.yaml"
    mine.write_text("x")
    configured = s.__class__(**{**s.__dict__, "topology": mine, "topology_is_default": False})
    assert with_scenario(configured, "ib-xmit-wait").topology == mine


def test_hcas_see_the_sm_and_their_lids_as_ibnetdiscover_does() -> None:
    sim = ib_sim("ib-healthy")
    stat = parsed(sim, "node003", "ibstat", "mlx5_3", t=900)
    port = stat.cas["mlx5_3"].ports["1"]  # type: ignore[attr-defined]
    assert port.link_layer == "InfiniBand"
    assert port.sm_lid == ib.sm_state(sim, 900).master_lid
    topo = parsed(sim, "node001", "ibnetdiscover", t=900)
    lids = {n.name: n.lid for n in topo.cas}  # type: ignore[attr-defined]
    assert lids["node003 mlx5_3"] == port.base_lid


def test_a_bad_cable_counts_at_the_leaf_port_and_both_ends_count_its_flaps() -> None:
    sim = ib_sim("ib-bad-cable")
    t = 900.0
    leaf = ib.pma_counters(sim, "leaf-g00-r3", "IB1/5", t)
    hca = ib.pma_counters(sim, "node005", "mlx5_3", t)
    other = ib.pma_counters(sim, "leaf-g00-r3", "IB1/4", t)
    assert leaf and hca and other
    assert leaf["SymbolErrorCounter"] > 0 and leaf["PortRcvErrors"] > 0
    assert other["SymbolErrorCounter"] == 0 and other["LinkDownedCounter"] == 0
    assert leaf["LinkDownedCounter"] == hca["LinkDownedCounter"] >= 2
    assert leaf["PortRcvErrors"] <= leaf["PortRcvPkts"]


def test_xmit_wait_roots_at_the_leaf_port_sending_to_the_slow_hca() -> None:
    sim = ib_sim("ib-xmit-wait")

    def share(device: str, port: str) -> float:
        before = ib.pma_counters(sim, device, port, 900.0)
        after = ib.pma_counters(sim, device, port, 910.0)
        assert before and after
        ticks = after["PortXmitWait"] - before["PortXmitWait"]
        return ticks * ib.XMIT_WAIT_BYTES * 8 / (10 * 400e9)

    assert share("leaf-g00-r2", "IB1/6") == pytest.approx(0.35, rel=0.02)
    assert share("node003", "mlx5_2") == pytest.approx(0.35 / 3, rel=0.05)
    assert share("leaf-g00-r2", "IB1/3") < 0.01
    assert share("leaf-g00-r4", "IB1/6") < 0.01


def test_an_sm_flap_moves_the_master_and_the_log_shows_each_handover() -> None:
    sim = ib_sim("ib-sm-flap")  # handovers every 90 s from 1 min
    assert ib.sm_state(sim, 30).master_host == "node001"
    assert ib.sm_state(sim, 100).master_host == "node002"
    assert ib.sm_state(sim, 200).master_host == "node001"
    out, _, _ = run(sim, "node001", ["cat", ib.OPENSM_LOG], 900)
    assert out.count("Entering STANDBY state") == 5  # lost at 1, 4, 7, 10 and 13 min
    assert out.count("Entering MASTER state") == 6  # the start, then back at 2.5 ... 14.5
    sminfo, _, _ = run(sim, "node003", ["sminfo"], 100)
    assert f"sm lid {ib.sm_state(sim, 100).master_lid} " in sminfo
    healthy, _, _ = run(ib_sim("ib-healthy"), "node001", ["cat", ib.OPENSM_LOG], 900)
    assert healthy.count("SUBNET UP") == 1 and "STANDBY" not in healthy


def test_the_cli_plays_an_ib_scenario_and_later_commands_keep_its_fabric(
        run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABTUI_SIM_IN_PROCESS", "1")
    started = run("--scenario", "ib-bad-cable", "sim", "start")
    assert started.exit_code == 0, started.stderr
    shown = run("probe", "run", "nic.ibstat", "--target", "node005:mlx5_3", "--json")
    assert shown.exit_code == 0, shown.stderr
    assert '"InfiniBand"' in shown.stdout  # the IB fabric, with no --scenario repeated
    diag = run("probe", "run", "ib.ibdiagnet", "--target", "node001", "--json")
    assert diag.exit_code == 1  # a problem found
    ports = {m["component"] for m in json.loads(diag.stdout)["metrics"]
             if m["name"].startswith("port_error.")}
    assert len(ports) == 1  # one port of the whole subnet: the bad cable's receiving end
    back = run("sim", "start")
    assert back.exit_code == 0
    roce = run("probe", "run", "nic.ibstat", "--target", "node005:mlx5_3", "--json")
    assert '"Ethernet"' in roce.stdout  # `sim start` is the RoCE demo again


def test_ibdiagnet_on_the_healthy_ib_fabric_finds_nothing() -> None:
    sim = ib_sim("ib-healthy")
    out = parsed(sim, "node001", "ibdiagnet", "--pm_pause_time", "30", t=1200)
    assert not out.port_errors  # type: ignore[attr-defined]
    assert all(s.errors == 0 for s in out.stages.values())  # type: ignore[attr-defined]
    assert out.switches == 10 and out.channel_adapters == 64  # type: ignore[attr-defined]


def test_a_slow_receiver_slows_the_job_and_collectives_through_it() -> None:
    congested, healthy = ib_sim("ib-xmit-wait"), ib_sim("ib-healthy")
    assert congested.job_factor(900) == pytest.approx(0.65)
    pair = ["node005", "node006"]
    assert congested.busbw(pair, 900, 1 << 30) == pytest.approx(
        0.65 * healthy.busbw(pair, 900, 1 << 30), rel=0.02)
    others = ["node001", "node002"]
    assert congested.busbw(others, 900, 1 << 30) == pytest.approx(
        healthy.busbw(others, 900, 1 << 30), rel=0.02)


REAL_SMINFO = [
    # infiniband-diags sminfo, as printed on real fabrics (public notes; the code index's
    # stored files 16761114325, 19332339083: a ConnectX-3 cluster and an Oracle BDA rack)
    "sminfo: sm lid 37 sm guid 0x7cfe90030016aef1, activity count 4484381 priority 14 "
    "state 3 SMINFO_MASTER",
    "sminfo: sm lid 15 sm guid 0x10e0406d5aa0a0, activity count 26263191 priority 14 "
    "state 3 SMINFO_MASTER",
]


def test_the_runbook_reads_sminfo_as_real_and_simulated_hosts_print_it() -> None:
    import re

    from fabtui.paths import shipped_dir

    text = (shipped_dir("runbooks") / "ib-fabric-triage.md").read_text()
    pattern = re.search(r'```sh \{id=sminfo .*?capture="(.+?)"\}\n', text)
    assert pattern is not None
    capture = re.compile(pattern.group(1))
    simulated, _, _ = run(ib_sim("ib-healthy"), "node004", ["sminfo"], 900)
    for line in [*REAL_SMINFO, simulated.strip()]:
        found = capture.search(line)
        assert found is not None, line
        assert found.group("sm_state") == "3" and int(found.group("sm_lid")) > 0


def test_the_job_log_on_the_ib_fabric_says_infiniband_and_sets_no_roce_variables() -> None:
    """NCCL names each HCA's link layer in its `NET/IB : Using [0]mlx5_0:1/IB` line (`/RoCE` on
    Ethernet). The IB variant's job printed `/RoCE` and the RoCE fleet's nccl.conf (GID index
    3, traffic class 106), so `logs.nccl` judged a DSCP on an InfiniBand fabric."""
    sim = ib_sim("healthy")
    out, err, status = run(sim, "node001", ["cat", "/var/log/fabtui-sim/job.log"], 600.0)
    assert status == 0, err
    log = registry.get("nccl-log").parse(out)
    assert isinstance(log, NcclLog)
    assert log.transports and {t.link_layer for t in log.transports} == {"IB"}
    assert "NCCL_IB_GID_INDEX" not in log.env and "NCCL_IB_TC" not in log.env
