"""Each reader's cap on what it builds, at its limit and one past it (the review's H4 and kin).

tests/test_bounded_input.py runs the review's attacks through `fabtui` under a memory cap; these
check the caps themselves, in-process, with inputs that cost little whichever way they go: what
a real input needs still reads, and one step past a limit is refused with a message that says
which.
"""

from __future__ import annotations

import json
import pickle
import re
from typing import Any

import pytest

from fabtui import yamldoc
from fabtui.errors import InputError
from fabtui.model.parsed._slurm_common import SlurmJob
from fabtui.parsers import _slurm_common, flight_recorder, sacct, scontrol_job, squeue_json
from fabtui.parsers.errors import ParseError
from fabtui.redact_check import redact_problem
from fabtui.runbooks.redact import PATTERNS
from fabtui.topology import jobplace
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


# Slurm ---------------------------------------------------------------------------------------

SCONTROL = """JobId=7 JobName=x
   JobState=RUNNING Reason=None
   NodeList=n[0-599]
   NumNodes=600 NumTasks=600
     Nodes=n[0-599] CPU_IDs=0 Mem=0 GRES={gres}
"""


def test_a_node_may_list_up_to_the_gpu_index_cap() -> None:
    limit = _slurm_common.MAX_GPU_INDEXES
    assert _slurm_common.gpu_ids(f"gpu:{limit}(IDX:0-{limit - 1})") == list(range(limit))
    with pytest.raises(_slurm_common.TooLarge, match=f"lists {limit + 1:,} GPU indexes"):
        _slurm_common.gpu_ids(f"gpu:a100:8(IDX:0-7),gpu:h100:{limit - 7}(IDX:8-{limit})")


def test_scontrol_refuses_a_gres_past_the_cap_at_its_line() -> None:
    gres = "gpu:1025(IDX:0-1024)"
    with pytest.raises(ParseError, match=re.escape(f"GRES={gres}: lists 1,025 GPU")) as raised:
        scontrol_job.parse(SCONTROL.format(gres=gres))
    assert raised.value.line == 5


def test_squeue_refuses_a_gres_past_the_cap_naming_the_job() -> None:
    job = {"job_id": 7, "job_state": "RUNNING", "nodes": "n1",
           "job_resources": {"allocated_nodes": [{"nodename": "n1"}]},
           "gres_detail": ["gpu:1025(IDX:0-1024)"]}
    with pytest.raises(ParseError, match=r"jobs\[0\]: gres_detail 'gpu:1025\(IDX:0-1024\)'"):
        squeue_json.parse(json.dumps({"jobs": [job]}))


@pytest.fixture
def thousand_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The node lists of one output may stand for 1,000 names (instead of a million)."""
    monkeypatch.setattr(_slurm_common, "MAX_LISTED_HOSTS", 1_000)


NOT_EXPANDED = "node list not expanded: the output's node lists stand for more than 1,000"


@pytest.mark.usefixtures("thousand_hosts")
def test_scontrol_expands_node_lists_up_to_the_outputs_budget() -> None:
    result = scontrol_job.parse(SCONTROL.format(gres="gpu:1(IDX:0)"))
    job = result.jobs[0]
    assert len(job.nodes) == 600 and job.allocations[0].hosts == []
    assert job.allocations[0].nodes == "n[0-599]"
    assert result.warnings == [f"line 5: {NOT_EXPANDED} host names together"]


@pytest.mark.usefixtures("thousand_hosts")
def test_squeue_expands_node_lists_up_to_the_outputs_budget() -> None:
    jobs = [{"job_id": i, "job_state": "RUNNING", "nodes": "n[0-399]"} for i in range(3)]
    result = squeue_json.parse(json.dumps({"jobs": jobs}))
    assert [len(job.nodes) for job in result.jobs] == [400, 400, 0]
    assert result.warnings == [f"jobs[2]: {NOT_EXPANDED} host names together"]


@pytest.mark.usefixtures("thousand_hosts")
def test_sacct_expands_the_same_lists_when_its_rows_are_read_again() -> None:
    text = "JobID|JobName|State|NodeList\n" + "".join(
        f"{i}|j|RUNNING|n[0-399]\n" for i in range(3))
    result = sacct.parse(text)  # the rows are checked once, then read again for the result
    assert [len(row.nodes) for row in result.rows] == [400, 400, 0]
    assert result.warnings == [f"line 4: {NOT_EXPANDED} host names together"]


def _job(nodes: list[str], tasks: int | None, per_node: int | None = None,
         **more: Any) -> SlurmJob:
    return SlurmJob(job_id="7", nodes=nodes, num_tasks=tasks, tasks_per_node=per_node, **more)


def test_a_job_of_up_to_the_task_cap_is_laid_out() -> None:
    assert jobplace.tasks_per_node(_job(["a", "b"], jobplace.MAX_TASKS)) == \
        [jobplace.MAX_TASKS // 2] * 2


@pytest.mark.parametrize(("job", "words"), [
    (_job(["a", "b"], 1_000_001), "job 7 runs 1,000,001 tasks: more than any job"),
    (_job(["a", "b"], None, per_node=10**9),
     "job 7 runs 1,000,000,000 tasks per node on 2 nodes (2,000,000,000 tasks)"),
])
def test_a_job_past_the_task_cap_is_refused_before_any_is_laid_out(job: SlurmJob,
                                                                   words: str) -> None:
    with pytest.raises(jobplace.PlacementError, match=re.escape(words)):
        jobplace.tasks_per_node(job)


def test_cyclic_placement_of_uneven_counts_goes_round_the_nodes_that_have_tasks() -> None:
    slots = jobplace.job_slots(_job(["a", "b", "c"], 7, per_node=4), "cyclic")
    assert [(s.node, s.gpu) for s in slots] == [("a", 0), ("b", 0), ("a", 1), ("b", 1),
                                                ("a", 2), ("b", 2), ("a", 3)]


def test_a_node_list_that_was_not_read_says_why_not_that_the_job_has_none() -> None:
    job = SlurmJob(job_id="7", state="RUNNING", nodelist="node[0-99999999]")
    with pytest.raises(jobplace.PlacementError, match=re.escape(
            "job 7: its node list is not read: 'node[0-99999999]': stands for more than")):
        jobplace.tasks_per_node(job)


# YAML ----------------------------------------------------------------------------------------

BIG = "x" * 100_000


@pytest.mark.parametrize(("anchor", "each"), [
    (f'"{BIG}"', len(BIG)),
    (f'["{BIG[:50_000]}", {{k: "{BIG[:50_000]}"}}]', len(BIG) + 1),  # a collection: its text
])
def test_aliases_may_add_text_up_to_the_cap(anchor: str, each: int) -> None:
    fits = yamldoc.MAX_ALIAS_TEXT // each
    doc = yamldoc.parse_yaml(f"s: &s {anchor}\nl: [" + ",".join(["*s"] * fits) + "]\n", "t.yaml")
    assert len(doc.data["l"]) == fits
    with pytest.raises(InputError, match=f"t.yaml:2: aliases expand to more than "
                                         f"{yamldoc.MAX_ALIAS_TEXT:,} characters of text"):
        yamldoc.parse_yaml(f"s: &s {anchor}\nl: [" + ",".join(["*s"] * (fits + 1)) + "]\n",
                           "t.yaml")


def test_merge_keys_of_a_real_shape_are_not_weighed_out() -> None:
    text = "defaults: &d {model: H100-SXM5-80GB, numa: 0, pcie_switch: pex0}\ngpus:\n" + "".join(
        f"  - {{<<: *d, index: {i}}}\n" for i in range(8_192))
    assert yamldoc.parse_yaml(text, "t.yaml").data["gpus"][-1]["model"] == "H100-SXM5-80GB"


# redact patterns -----------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", [
    "(a|a?)+b", "(a|aa)+$", "(?:a|b|ab)+$", r"(\d|\d\d)+x", "(?:key|keys)+=\\S+",
    "(a|a?){5}b", "(?:a|a)+x",
])
def test_an_alternation_that_can_match_one_text_two_ways_in_a_repeat_is_refused(
        pattern: str) -> None:
    assert (redact_problem(pattern) or "").startswith(
        "risks catastrophic backtracking (an alternation inside a repeat")


@pytest.mark.parametrize("pattern", [
    r"((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)",  # bounded: three rounds
    "(ab|ac)+$", "(?>a|aa)+$", "(?:a|aa)++$", "(a|a?){4}b", r"(?:\w|-)+x",
    r"(?i)(?:tok|pass)=\S+", r"(?:[0-9a-f]{2}:){5}[0-9a-f]{2}", "corp-[A-Za-z0-9]{24}",
    *(p.pattern for p in PATTERNS),
])
def test_alternations_that_cannot_go_two_ways_are_accepted(pattern: str) -> None:
    assert redact_problem(pattern) is None
