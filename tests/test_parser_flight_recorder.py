"""PyTorch Flight Recorder: fr_trace reports (2.4/2.5/2.6+), dumps (JSON / unpickled), listings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabtui.model.parsed.flight_recorder import FlightRecorder
from fabtui.parsers import flight_recorder as fr
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "flight-recorder"


def _parse(name: str) -> FlightRecorder:
    return fr.parse((FIXTURES / name).read_text())


def test_torchfrtrace_missing_rank() -> None:
    result = _parse("pytorch-tutorial-torchfrtrace-missing-rank.txt")
    assert result.format == "fr_trace"
    (finding,) = result.mismatches
    assert finding.error == "not_all_ranks_joining"
    assert (finding.collective_seq_id, finding.record_id) == (5, 4)
    assert (finding.pg_name, finding.pg_desc) == ("0", "default_pg")
    assert finding.missing_ranks == [1] and finding.expected_rank_count == 2
    assert finding.input_sizes == [[3, 4]] and finding.state == "scheduled"
    assert finding.stack[-1] == "<module> at /home/cpio/test/crash.py:44"


def test_newer_report_with_culprits_and_undecidable() -> None:
    result = _parse("synthetic-fr-trace-2.6-errors-and-missing-ranks.txt")
    errors, missing, undecided = result.mismatches
    assert errors.error == "collective_errors" and errors.collective_seq_id == 12
    assert errors.record_id == 11 and errors.expected_ranks == [0, 1, 2, 3]
    (culprit,) = errors.culprits
    assert (culprit.rank, culprit.error_type) == (2, "COLLECTIVE_STATE_MISMATCH")
    assert culprit.detail is not None and "found state: 'completed'" in culprit.detail
    assert len(errors.stack) == 3
    assert missing.missing_ranks == [3] and missing.pg == "1:tp_group"
    assert undecided.error == "cannot_decide" and undecided.missing_ranks == [5, 7]


def test_old_one_line_report_and_log_prefix() -> None:
    text = ("INFO:root:Not all ranks joining collective for group 0:default_pg collective "
            "nccl:all_reduce  Missing ranks are {2, 3}  [[8]] [[8]] 4 scheduled\n"
            "2025-01-02 10:00:00,001 INFO Collective 7 at entry 9 errors\n"
            "2025-01-02 10:00:00,001 INFO error message: Culprit rank 1; "
            "MatchState.COLLECTIVE_TYPE_MISMATCH\n")
    first, second = fr.parse(text).mismatches
    assert first.missing_ranks == [2, 3] and first.profiling_name == "nccl:all_reduce"
    assert first.expected_rank_count == 4 and first.input_sizes == [[8]]
    assert (second.collective_seq_id, second.record_id) == (7, 9)
    assert second.culprits[0].error_type == "COLLECTIVE_TYPE_MISMATCH"


def test_unpickled_dump_with_tuple_and_elision() -> None:
    result = _parse("pytorch-tutorial-fr-unpickled-dump-v2.5.json.txt")
    assert result.format == "dump" and result.version == "2.5" and result.elided == 1
    assert result.pg_config["0"].ranks == [0, 1]
    status = result.pg_status["0"]
    assert (status.last_enqueued_collective, status.last_started_collective,
            status.last_completed_collective) == (2, -1, 2)
    (entry,) = result.entries
    assert (entry.record_id, entry.pg_name, entry.pg_desc) == (0, "0", "default_pg")
    assert (entry.collective_seq_id, entry.p2p_seq_id, entry.op) == (1, 0, "all_reduce")
    assert entry.state == "completed" and entry.timeout_ms == 600000
    assert entry.time_discovered_started_ns is None
    assert entry.frames[0].name == "test_short_pickle" and entry.frames[0].line == 3647


def test_json_and_python_repr_dumps() -> None:
    dump = {"version": "2.7", "rank": 3, "pg_config": {"0": {"name": "0", "desc": "default_pg",
                                                            "ranks": "[0, 1, 2, 3]"}},
            "entries": [{"record_id": 7, "process_group": ["0", "default_pg"],
                         "collective_seq_id": 4, "p2p_seq_id": 2, "profiling_name":
                         "nccl:send 3->0", "state": "started", "is_p2p": True,
                         "time_created_ns": float("nan"), "timeout_ms": float("inf")}]}
    # JSON is read as it is (NaN and infinities as none); a repr token by token: the same dump
    from_json = fr.parse(json.dumps(dump))
    from_repr = fr.parse(repr(dump).replace("['0', 'default_pg']", "('0', 'default_pg')"))
    assert from_json == from_repr
    assert from_json.entries[0].time_created_ns is None and from_json.entries[0].timeout_ms is None
    (entry,) = from_json.entries
    assert (entry.rank, entry.op, entry.is_p2p, entry.state) == (3, "send", True, "started")


def test_state_listing() -> None:
    result = _parse("mlengineering-fr-pickle-analyze-output.txt")
    assert result.format == "state_listing"
    assert [(e.state, e.profiling_name) for e in result.entries] == [
        ("completed", "nccl:all_reduce"), ("started", "nccl:all_reduce"),
        ("scheduled", "nccl:all_reduce_barrier")]
    assert result.entries[2].frames[1].name == "<module>"
    assert result.entries[0].frames[0].line == 6


def test_refusals() -> None:
    with pytest.raises(ParseError, match="no Flight Recorder"):
        fr.parse("NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n")
    with pytest.raises(ParseError) as caught:
        fr.parse('$ cat dump\n{\n  "entries": [\n    {"record_id": 1,, }\n  ],\n  "pg_status": {\n')
    assert caught.value.line is not None


def test_detect() -> None:
    assert fr.detect((FIXTURES / "mlengineering-fr-pickle-analyze-output.txt").read_text()) > 0.5
    assert fr.detect("collective: x\nstate: completed\n") == 0.0
