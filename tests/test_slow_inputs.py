"""Issue 39's inputs from real logs and Inspector files: step-time and busbw series, placed in
time and on ranks only as far as the input says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabtui.model.parsed.training_log import TrainingLog
from fabtui.parsers import nccl_inspector, training_log
from fabtui.triage.slowinputs import inspector_busbw, log_step_series, prom_busbw, prom_steps

FIXTURES = Path(__file__).parent / "fixtures"


def _log(name: str) -> TrainingLog:
    return training_log.parse((FIXTURES / "training-log" / name).read_text())


def test_a_rank0_titan_log_is_the_jobs_step_time_at_its_utc_moments() -> None:
    series, warnings = log_step_series(_log("torchtitan-pr1287-log-freq-10-gc-profiler.txt"),
                                       origin="train.log")
    assert warnings == [] and len(series) == 1
    one = series[0]
    assert one.rank == 0 and "the job's step time, not a per-rank series" in one.source
    assert one.step_s[0] == pytest.approx(1.4648)  # (22:31:04.970 - 22:30:50.322) / 10 steps
    assert one.t[0] == 1750113064.97  # 2025-06-16T22:31:04.970 UTC


def test_a_log_without_timestamps_cannot_be_placed_and_says_so() -> None:
    series, warnings = log_step_series(_log("megatron-llm-issue11-no-timestamp-last-cut.txt"),
                                       origin="megatron.log")
    assert series == []
    assert warnings == ["megatron.log: 5 step times without a timestamp cannot be placed in the "
                        "window (the log prints none on its step lines)"]


def test_the_time_zone_of_a_log_is_the_callers_to_say() -> None:
    log = _log("torchtitan-pr3393-rank0-tee-prefix.txt")
    utc, _ = log_step_series(log, origin="a")
    cest, _ = log_step_series(log, origin="a", utc_offset_s=7200)
    assert [t - 7200 for t in utc[0].t] == cest[0].t


def test_inspector_ranks_within_a_communicator_need_the_jobs_map() -> None:
    path = FIXTURES / "nccl-inspector" / "synthetic-jsonl-2.30-comm-name-p2p-nan-cut.txt"
    parsed = nccl_inspector.parse(path.read_text())
    comms, series, warnings = inspector_busbw(parsed, origin="insp")
    assert series == [] and [c.collective for c in comms] == ["AllReduce"]
    assert "without the job's rank map they are not placed" in warnings[0]
    comms, series, warnings = inspector_busbw(parsed, origin="insp",
                                              global_rank=lambda comm, r: 8 + r)
    assert [(s.rank, s.busbw_gbs) for s in series] == [(8, [361.837873])]
    assert comms[0].msg_bytes == 268435456 and comms[0].ranks == [8]


def test_inspector_textfile_series_are_placed_by_node_and_gpu() -> None:
    labels = {"node": "node004", "gpu": "GPU3", "comm_name": "DP Group 0", "nranks": "16",
              "collective": "AllReduce", "message_size": "256-257MB"}
    other = {**labels, "gpu": "GPU7"}
    placed = {("node004", 3): 27}
    comms, series, warnings = prom_busbw(
        [(labels, [(10.0, 350.0), (25.0, 120.0)]), (other, [(10.0, 351.0)])],
        rank_at=lambda host, gpu: placed.get((host, gpu)))
    assert [(s.rank, s.t, s.busbw_gbs) for s in series] == [(27, [10.0, 25.0], [350.0, 120.0])]
    assert comms[0].nranks == 16 and comms[0].id == "DP Group 0"
    assert warnings == ["busbw of DP Group 0 on node004 GPU7: no rank of the job is placed "
                        "there"]


def test_a_step_gauge_without_a_rank_is_left_out_with_a_warning() -> None:
    series, warnings = prom_steps([({"rank": "3"}, [(1.0, 2.5)]), ({"job": "x"}, [(1.0, 9.0)])],
                                  metric="training_step_time_seconds")
    assert [(s.rank, s.step_s) for s in series] == [(3, [2.5])]
    assert len(warnings) == 1 and "names no rank" in warnings[0]


def test_real_files_become_the_inputs_triage_slow_reads(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fabtui.cli import cli

    config = tmp_path / "fabtui.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    out = tmp_path / "inputs.json"
    log = FIXTURES / "training-log" / "torchtitan-pr3393-rank0-tee-prefix.txt"
    inspector = FIXTURES / "nccl-inspector" / "synthetic-jsonl-2.30-comm-name-p2p-nan-cut.txt"
    run = CliRunner().invoke(cli, ["--config", str(config), "triage", "slow-inputs", "--job",
                                   "4242", "--log", str(log), "--inspector", str(inspector),
                                   "-o", str(out)], catch_exceptions=False)
    assert run.exit_code == 0, run.stderr
    assert "without the job's rank map they are not placed" in run.stderr
    data = json.loads(out.read_text())
    assert [s["rank"] for s in data["steps"]] == [0] and len(data["steps"][0]["t"]) == 7
    run = CliRunner().invoke(cli, ["--config", str(config), "triage", "slow", "--inputs",
                                   str(out), "--json"], catch_exceptions=False)
    assert run.exit_code in (0, 1), run.stderr
    assert json.loads(run.stdout)["ranks"] == 1


def test_a_file_given_as_a_log_that_is_none_says_which_and_why(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fabtui.cli import cli

    config = tmp_path / "fabtui.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    bad = FIXTURES / "training-log" / "deepspeed-issue5779-overflow-only-no-step.txt"
    run = CliRunner().invoke(cli, ["--config", str(config), "triage", "slow-inputs", "--log",
                                   str(bad)], catch_exceptions=False)
    assert run.exit_code == 2
    assert run.stderr.startswith(f"{bad}: no training step line")  # file: what is wrong
