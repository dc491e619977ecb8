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
