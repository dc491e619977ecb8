"""`fabtui triage slow` on demo scenarios that end, hang or endanger the job without slowing its
steps first: never "healthy" with exit 0 (the reviewer's finding: pfc-storm, link-flap-long and
optic-degrading printed "healthy: the step time held 4.00 s"). A job whose step times end before
the window does is "stopped"; a fault on its path with steps still at their baseline is
"cannot tell"; both exit 1 (docs/triage-slow.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.support.slowjob_scoreboard import sim_of


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "fabtui.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    return path


@pytest.mark.parametrize("scenario", ["pfc-storm", "link-flap-long", "nccl-hang", "leaf-down"])
def test_a_job_that_stopped_is_not_healthy(run: Callable[..., Result], config: Path,
                                           scenario: str) -> None:
    result = run("--config", str(config), "--scenario", scenario, "triage", "slow")
    assert result.exit_code == 1, result.stdout + result.stderr
    head = result.stdout.splitlines()[0]
    assert "healthy" not in head
    assert "stopped: no step time after" in head and "fabtui triage nccl" in head
    # what the play does not model is said as such: the stop is played, not the fault's series
    assert "is not played in the step-time series" not in result.stdout
    report = json.loads(run("--config", str(config), "triage", "slow", "--json").stdout)
    assert report["healthy"] is False
    assert report["stopped_at"] is not None and report["stopped_at"] < report["end"]


def test_a_long_flap_stops_the_job_one_retry_window_in_and_names_the_link(
        run: Callable[..., Result], config: Path) -> None:
    failure = sim_of("link-flap-long").job_failure()
    assert failure is not None
    result = run("--config", str(config), "--scenario", "link-flap-long", "triage", "slow",
                 "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    # the last step time is the last 15 s sample before the job died (2 min + 8.6 s)
    assert failure[0] - 15 <= report["stopped_at"] - report["start"] <= failure[0]
    assert any(f.startswith("node005:mlx5_6 (nic): link down") for f in report["path_faults"])
    assert "node005:mlx5_6" in report["summary"] or \
        "leaf-g00-r6:Ethernet32" in report["summary"]


def test_a_degrading_optic_before_the_steps_slow_is_cannot_tell(run: Callable[..., Result],
                                                                config: Path) -> None:
    # 20 min in, the NIC behind leaf-g00-r3:Ethernet16 already loses codewords; the steps
    # have not slowed yet (go-back-N costs little at that loss)
    result = run("--config", str(config), "--scenario", "optic-degrading", "triage", "slow")
    assert result.exit_code == 1, result.stdout + result.stderr
    head = result.stdout.splitlines()[0]
    assert "healthy" not in head
    assert "cannot tell: the step time held" in head and "node003:mlx5_3 (nic)" in head
    assert "FEC uncorrectable" in head and "pre-FEC BER" in head
    report = json.loads(run("--config", str(config), "triage", "slow", "--json").stdout)
    assert report["healthy"] is False and report["episodes"] == []
    assert [f.split(" ", 1)[0] for f in report["path_faults"]] == ["node003:mlx5_3"]


def test_a_spreading_pfc_storm_slows_the_job_on_the_storming_rail(run: Callable[..., Result],
                                                                  config: Path) -> None:
    # no watchdog, no stall prevention: node006 mlx5_4 holds its leaf port paused 95 % of the
    # time, so rail 4's all_reduce and the alltoall through it crawl
    result = run("--config", str(config), "--scenario", "pfc-storm-spreading", "triage",
                 "slow")
    assert result.exit_code == 1, result.stdout + result.stderr
    out = result.stdout
    assert "healthy" not in out.splitlines()[0] and "slower" in out.splitlines()[0]
    assert "dp-r4 (AllReduce, 8 ranks): busbw" in out
    assert "node006:mlx5_4: pause frames out 0.0/s ->" in out
    assert "leaf-g00-r4:Ethernet40: pause frames in 0.0/s ->" in out


def test_the_played_pause_is_the_pause_the_probes_read() -> None:
    from fabtui.sim.slowjob import play_slow_job

    sim = sim_of("pfc-storm-spreading")
    play = play_slow_job(sim, start=0.0, end=600.0)
    after = (play.t - sim.epoch) >= 330  # a whole sample into the storm (it starts at 5 min)
    link = next(f.link for f in sim.faults if f.link is not None)
    full = sim.full_pause_rate(link)
    sent = play.fabric["node006:mlx5_4"]["pause_tx_per_s"][after]
    got = play.fabric["leaf-g00-r4:Ethernet40"]["pause_rx_per_s"][after]
    assert abs(float(sent.mean()) / full - 1) < 0.05 and abs(float(got.mean()) / full - 1) < 0.05
    assert play.fabric["leaf-g00-r4:Ethernet40"]["pause_share_rx"][after].min() > 0.9
    assert play.fabric["node006:mlx5_4"]["pause_rx_per_s"][after].max() == 0.0


def test_a_pfc_deadlock_on_the_uplinks_is_cannot_tell(run: Callable[..., Result],
                                                      config: Path) -> None:
    result = run("--config", str(config), "--scenario", "pfc-deadlock", "triage", "slow",
                 "--json")
    assert result.exit_code == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["healthy"] is False and report["summary"].startswith("cannot tell")
    held = {f.split(" ", 1)[0] for f in report["path_faults"]}
    assert {"leaf-g00-r1:Ethernet64", "spine-01:Ethernet9/1"} <= held


def test_a_storm_stall_prevention_ends_in_8_s_stays_healthy(run: Callable[..., Result],
                                                           config: Path) -> None:
    # one sample slowed by the 8 s stall (played), no bursts that recur: still healthy, not
    # "jitter: the application"
    result = run("--config", str(config), "--scenario", "pfc-storm-stall-prevention", "triage",
                 "slow", "--json")
    assert result.exit_code == 0, result.stdout
    report = json.loads(result.stdout)
    assert report["healthy"] is True and max(report["timeline"]["v"]) > 5.0
