"""Training logs and NCCL Inspector files as issue 39 reads them: what a log can say about
ranks, step times from timestamps, and damaged input read with its line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import nccl_inspector, training_log
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures"
TITAN = ("{prefix}[titan] 2026-05-18 16:04:{second:02d},{ms:03d} - root - INFO - step: {step}  "
         "loss:  3.1  grad_norm:  0.8  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  "
         "mfu: 0.17%")


def _titan(prefix: str, step: int, second: int, ms: int = 0) -> str:
    return TITAN.format(prefix=prefix, step=step, second=second, ms=ms)


def test_a_rank_0_log_gives_the_jobs_step_time_not_a_per_rank_series() -> None:
    text = (FIXTURES / "training-log" / "torchtitan-pr3393-rank0-tee-prefix.txt").read_text()
    log = training_log.parse(text)
    assert log.ranks == [0] and not log.per_rank
    assert [s.step_time_ms for s in log.steps[:3]] == [None, 1118.0, 1121.0]


def test_interleaved_srun_ranks_make_a_series_per_rank() -> None:
    lines = []
    for step, second in ((1, 10), (2, 11), (3, 15)):
        lines.append(f"0: {_titan('', step, second)}")
        # rank 1 is half a second later at step 3 only: it is its own series
        lines.append(f"1: {_titan('', step, second, 500 if step == 3 else 0)}")
    log = training_log.parse("\n".join(lines))
    assert log.per_rank and log.ranks == [0, 1]
    by_rank = {r: [s.step_time_ms for s in log.steps if s.rank == r] for r in (0, 1)}
    assert by_rank == {0: [None, 1000.0, 4000.0], 1: [None, 1000.0, 4500.0]}
    assert log.repeated_unnamed == 0


def test_colours_and_carriage_return_redraws_of_a_progress_bar_are_read() -> None:
    text = ("\x1b[32m 10%|#         | 10/100 [00:20<03:00,  2.00s/it]\r"
            " 11%|#         | 11/100 [00:22<02:58,  2.50s/it]\r"
            " 11%|#         | 11/100 [00:22<02:58,  2.50s/it]\x1b[0m\n")
    log = training_log.parse(text)
    assert [(s.step, s.step_time_ms) for s in log.steps] == [(10, 2000.0), (11, 2500.0)]
    assert log.steps[0].step_time_basis == "progress-bar-rate"


def test_a_restart_is_said_and_no_step_time_spans_it() -> None:
    text = "\n".join([_titan("", 250, 10), _titan("", 10, 50), _titan("", 11, 51)])
    log = training_log.parse(text)
    assert [s.step_time_ms for s in log.steps] == [None, None, 1000.0]
    assert any(w.startswith("line 2: step 10 after step 250") for w in log.warnings)


@pytest.mark.parametrize("text", ["", "hello\nworld\n", "iteration 5/", "{'loss': }",
                                  "step: 1 loss:", "\x00\x1b[2J"])
def test_input_without_a_step_is_refused_with_a_message(text: str) -> None:
    try:
        training_log.parse(text)
    except ParseError as exc:
        assert "no training step line" in exc.message
    else:  # `step: 1 loss:` is a (cut) TorchTitan step line: read, with its warning
        assert text == "step: 1 loss:"


def test_the_inspector_json_keeps_the_communicator_rank_and_says_where_a_record_is_cut() -> None:
    path = FIXTURES / "nccl-inspector" / "synthetic-jsonl-2.30-comm-name-p2p-nan-cut.txt"
    result = nccl_inspector.parse(path.read_text())
    assert [(o.comm_name, o.rank, o.operation) for o in result.operations] == [
        ("DP Group 0", 0, "AllReduce"), ("DP Group 0", 0, "ReduceScatter"),
        ("PP Group 3", 1, "Send")]
    assert result.operations[1].busbw_gbs is None  # "nan" as printed, not a number made up
    assert result.warnings == ["line 4: record cut short or malformed (Expecting ',' "
                               "delimiter), skipped"]


def test_the_inspector_textfile_names_node_and_gpu_and_no_rank() -> None:
    path = FIXTURES / "nccl-inspector" / "nccl-readme-prometheus-textfile-v5.1.txt"
    result = nccl_inspector.parse(path.read_text())
    busbw = [g for g in result.gauges if g.metric == "nccl_bus_bandwidth_gbs"]
    assert [(g.node, g.gpu, g.comm_name, g.value) for g in busbw] == [
        ("nvl72004-T01", "GPU0", "DP Group 0", 678.263)]
    assert all("rank" not in g.labels for g in result.gauges)
