"""The job's log in the slow-job chain's `logs.nccl` check (issue 39 follow-up): on the demo the
printed command names the simulated job's log and runs as printed; on a real fabric it names the
job's log from the inputs (`job_log`, `--job-log`) or a `‹job-log›` placeholder to fill in,
never the simulator's path."""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.paths import demo_topology
from fabtui.sim.slowjob import play_slow_job
from tests.support.slowjob_scoreboard import sim_of

SIM_LOGS = "/var/log/fabtui-sim"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "fabtui.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    return path


def _printed_nccl_log(out: str) -> list[str]:
    """The `logs.nccl` check an on-call note prints, as argv after `fabtui`."""
    line = next(x for x in out.splitlines() if "> fabtui probe run logs.nccl" in x)
    words = shlex.split(line.split("> ", 1)[1].split(" (runbook", 1)[0])
    assert words[0] == "fabtui"
    return words[1:]


def test_on_the_demo_the_printed_job_log_check_runs_as_printed(run: Callable[..., Result],
                                                               config: Path) -> None:
    note = run("--config", str(config), "--scenario", "slow-pxn-off", "triage", "slow")
    assert note.exit_code == 1, note.stderr
    words = _printed_nccl_log(note.stdout)
    assert f"path={SIM_LOGS}/job.log" in words
    result = run("--config", str(config), *words)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "logs.nccl on node001: OK" in result.stdout.splitlines()[0]


@pytest.fixture(scope="module")
def pxn_off_inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The slow-pxn-off window as inputs from elsewhere (no job log named), and a copy of the
    demo's topology: a fabric that is not the simulated one."""
    folder = tmp_path_factory.mktemp("real")
    inputs = play_slow_job(sim_of("slow-pxn-off")).to_inputs()
    path = folder / "inputs.json"
    path.write_text(inputs.model_copy(update={"job_log": None}).model_dump_json())
    topology = folder / "fabric.yaml"
    shutil.copy(demo_topology(), topology)
    return path, topology


def test_on_a_real_fabric_no_simulator_path_is_printed(
        run: Callable[..., Result], config: Path, pxn_off_inputs: tuple[Path, Path]) -> None:
    inputs, topology = pxn_off_inputs
    note = run("--config", str(config), "triage", "slow", "--inputs", str(inputs),
               "-t", str(topology))
    assert note.exit_code == 1, note.stderr
    assert SIM_LOGS not in note.stdout
    words = _printed_nccl_log(note.stdout)
    assert "path=‹job-log›" in words
    assert "‹job-log›: the job's log on node001" in note.stdout  # the summary says what to fill
    as_json = run("--config", str(config), "triage", "slow", "--inputs", str(inputs),
                  "-t", str(topology), "--json")
    assert SIM_LOGS not in as_json.stdout
    commands = [h["probe"]["command"] for c in json.loads(as_json.stdout)["chains"]
                for h in c["hops"] if h["probe"] and h["probe"]["probe"] == "logs.nccl"]
    assert commands and all("path=‹job-log›" in c for c in commands)


def test_the_job_log_given_is_the_one_printed(run: Callable[..., Result], config: Path,
                                              pxn_off_inputs: tuple[Path, Path],
                                              tmp_path: Path) -> None:
    inputs, topology = pxn_off_inputs
    given = "/scratch/jobs/4242/slurm-4242.out"
    note = run("--config", str(config), "triage", "slow", "--inputs", str(inputs),
               "-t", str(topology), "--job-log", given)
    assert f"path={given}" in _printed_nccl_log(note.stdout)
    assert "‹job-log›" not in note.stdout
    # the inputs file carries it too: `triage slow-inputs --job-log` writes it there
    log = Path(__file__).parent / "fixtures" / "training-log"
    first = sorted(p for p in log.glob("*.txt"))[0]
    written = tmp_path / "made.json"
    made = run("triage", "slow-inputs", "--log", str(first), "--job-log", given,
               "-o", str(written))
    assert made.exit_code == 0, made.stderr
    assert json.loads(written.read_text())["job_log"] == given
    kept = json.loads(inputs.read_text()) | {"job_log": given}
    with_log = tmp_path / "with-log.json"
    with_log.write_text(json.dumps(kept))
    note = run("--config", str(config), "triage", "slow", "--inputs", str(with_log),
               "-t", str(topology))
    assert f"path={given}" in _printed_nccl_log(note.stdout)
