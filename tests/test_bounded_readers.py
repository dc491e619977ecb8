"""Each reader's cap on what it builds, at its limit and one past it (the review's H4 and kin).

tests/test_bounded_input.py runs the review's attacks through `fabtui` under a memory cap; these
check the caps themselves, in-process, with inputs that cost little whichever way they go: what
a real input needs still reads, and one step past a limit is refused with a message that says
which.
"""

from __future__ import annotations

import pickle
import re
from typing import Any

import pytest

from fabtui.parsers import flight_recorder
from fabtui.parsers.errors import ParseError
from fabtui.triage import frpickle

# Flight Recorder -----------------------------------------------------------------------------


def _entry(record: int, frames: list[dict[str, Any]]) -> dict[str, Any]:
    return {"frames": frames, "record_id": record, "pg_id": 0, "process_group": ("0", "pg"),
            "collective_seq_id": record, "p2p_seq_id": 0, "op_id": record,
            "profiling_name": "nccl:all_reduce", "time_created_ns": 1_700_000_000_000_000_000,
            "input_sizes": [[1024, 1024]], "input_dtypes": ["BFloat16"],
            "output_sizes": [[1024, 1024]], "output_dtypes": ["BFloat16"], "state": "completed",
            "time_discovered_started_ns": None, "time_discovered_completed_ns": None,
            "retired": True, "timeout_ms": 600_000, "is_p2p": False}


def test_a_large_dump_whose_entries_share_their_frames_reads_whole() -> None:
    # As PyTorch builds a dump: every entry's stack lists the same frame dicts, which the
    # pickle holds once and refers to (2,000 entries is the default trace buffer).
    frames = [{"name": f"f{i}", "filename": f"train/step_{i}.py", "line": i} for i in range(80)]
    dump = {"version": "2.5", "rank": 3, "pg_config": {"0": {"name": "0", "desc": "pg",
                                                             "ranks": "[0, 1]"}},
            "pg_status": {}, "entries": [_entry(i, frames) for i in range(2_000)]}
    data = pickle.dumps(dump)
    stands_for = 2_000 * (len(_entry(0, [])) + 80 * 4)
    assert stands_for < frpickle.value_budget(len(data))
    read = frpickle.read_dump(data)
    assert len(read.entries) == 2_000 and len(read.entries[-1].frames) == 80


def test_the_value_budget_grows_with_the_pickle_up_to_its_cap() -> None:
    assert frpickle.value_budget(324) == frpickle.MIN_VALUES + 16 * 324
    assert frpickle.value_budget(frpickle.MAX_BYTES) == frpickle.MAX_VALUES


def test_one_value_past_the_budget_is_refused() -> None:
    data = pickle.dumps({"entries": [["frame"] * 1_000] * 1_000})
    with pytest.raises(frpickle.UnsafePickle, match=r"stands for more than .* values once "
                                                    r"its shared references are copied"):
        frpickle.read_dump(data)


@pytest.mark.parametrize(("dump", "words"), [
    ({"entries": [], "pg_config": {(1, 2): "x"}}, "has a tuple as a dict key"),
    ({"entries": [], "pg_config": {10**5000: "x"}}, "has a dict key too long to print"),
    ({"entries": [{"record_id": 2**64}]}, "holds a 65-bit integer"),
])
def test_what_no_dump_holds_is_refused_not_printed(dump: dict[Any, Any], words: str) -> None:
    with pytest.raises(frpickle.UnsafePickle, match=re.escape(words)):
        frpickle.read_dump(pickle.dumps(dump))


@pytest.mark.parametrize(("text", "words"), [
    ('{"version": "2.5", "entries": ' + "[" * 5_000 + "]" * 5_000 + "}",
     "the dump nests too deep to read"),
    ('{"version": "2.5", "entries": [{"record_id": 1' + "0" * 5_000 + "}]}",
     "the dump holds a number of more than 4,300 digits"),
])
def test_a_json_dump_no_reader_could_hold_is_a_parse_error(text: str, words: str) -> None:
    with pytest.raises(ParseError, match=words) as raised:
        flight_recorder.parse("some preamble\n" + text + "\n")
    assert raised.value.line == 2
