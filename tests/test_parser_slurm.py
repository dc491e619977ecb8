"""The Slurm parsers beyond their fixtures: schema drift across releases and the faults users hit.

The captures under tests/fixtures/{scontrol-job,squeue-json,sacct} are checked by the generic
fixture test; here are the forms no capture shows at once (each named where it comes from).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from fabtui.parsers import sacct, scontrol_job, squeue_json
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
APEL_FIELDS = ["JobID", "JobName", "User", "Group", "Start", "End", "Elapsed", "CPUTimeRAW",
               "Partition", "NCPUS", "NNodes", "NodeList", "MaxRSS", "MaxVMSize", "State"]
"""apel/apel scripts/slurm_acc.sh's `sacct -P -n --format=...` list (its test's header comment)."""


def test_headerless_sacct_rows_read_with_the_field_list_that_printed_them() -> None:
    text = (FIXTURES / "sacct" / "apel-sacct-P-n-15fields-noheader.txt").read_text()
    result = sacct.parse_rows(text, APEL_FIELDS)
    assert [(r.job_id, r.step, r.state, r.nodes) for r in result.rows] == [
        ("278952.batch", "batch", "COMPLETED", ["wn36"]),
        ("297720.batch", "batch", "COMPLETED", ["wn37"]),
        ("321439.batch", "batch", "COMPLETED", ["wn16"]),
        ("320816.batch", "batch", "COMPLETED", ["wn33"])]
    assert result.rows[0].fields["MaxRSS"] == "438.50M"


def test_sacct_with_fabtuis_own_fields_needs_no_header_and_parsable_keeps_its_pipe() -> None:
    row = "4242|llm-pretrain|RUNNING|node[001-004]|4|32|64|gpu|2026-12-01T10:00:00|Unknown"
    for text in (row + "\n", row + "|\n"):
        result = sacct.parse(text)
        assert result.columns == list(sacct.FIELDS)
        assert result.rows[0].nodes == ["node001", "node002", "node003", "node004"]
    header = "JobID|JobName|State|NodeList|\n"
    parsed = sacct.parse(header + "7|x|CANCELLED by 1000|gpu-a[01-02]-b[1-2]|\n")
    assert parsed.rows[0].state == "CANCELLED" and len(parsed.rows[0].nodes) == 4


def test_sacct_row_with_the_wrong_width_names_its_line() -> None:
    with pytest.raises(ParseError, match="row has 3 fields, expected 4") as caught:
        sacct.parse("JobID|JobName|State|NodeList\n1|a|RUNNING|n1\n2|b|RUNNING\n")
    assert caught.value.line == 3


def _squeue(job: Mapping[str, object], meta: Mapping[str, object] | None = None) -> str:
    return json.dumps({"meta": meta or {}, "jobs": [job], "errors": []})


def test_squeue_21_08_allocated_nodes_object_and_plain_numbers() -> None:
    # Slurm 21.08 (data_parser v0.0.37): allocated_nodes keyed by index, counts as plain ints.
    job = {"job_id": 77, "job_state": "RUNNING", "nodes": "gpu[01-02]", "node_count": 2,
           "tasks": 16, "cpus_per_task": 0, "tasks_per_node": 8,
           "gres_detail": ["gpu:8(IDX:0-7)", "gpu:8(IDX:0-7)"],
           "job_resources": {"nodes": "gpu[01-02]", "allocated_nodes": {
               "0": {"nodename": "gpu01", "cpus": 64, "memory": 1000},
               "1": {"nodename": "gpu02", "cpus": 64, "memory": 1000}}}}
    meta = {"plugin": {"type": "openapi/v0.0.37"},
            "Slurm": {"release": "21.08.8-2"}}
    result = squeue_json.parse(_squeue(job, meta))
    parsed = result.jobs[0]
    assert result.slurm_release == "21.08.8-2" and result.data_parser is None
    assert (parsed.nodes, parsed.num_tasks, parsed.tasks_per_node, parsed.cpus_per_task) == \
        (["gpu01", "gpu02"], 16, 8, None)
    assert [(a.nodes, a.cpus, a.gpu_ids[-1]) for a in parsed.allocations] == \
        [("gpu01", 64, 7), ("gpu02", 64, 7)]


def test_squeue_23_11_state_list_keeps_flags_and_unset_numbers_are_null() -> None:
    job = {"job_id": {"set": True, "infinite": False, "number": 5},
           "job_state": ["RUNNING", "COMPLETING"], "nodes": "node[001-002]",
           "tasks": {"set": False, "infinite": False, "number": 0},
           "array_job_id": {"set": True, "number": 4}, "array_task_id": {"set": True, "number": 1}}
    parsed = squeue_json.parse(_squeue(job, {"slurm": {"release": "23.11.1"}})).jobs[0]
    assert (parsed.job_id, parsed.state, parsed.state_flags) == ("5", "RUNNING", ["COMPLETING"])
    assert parsed.nodes == ["node001", "node002"]
    as_object = squeue_json.parse(_squeue({**job, "nodes": {"list": "gpu[1-2]"}})).jobs[0]
    assert as_object.nodes == ["gpu1", "gpu2"]
    assert parsed.num_tasks is None and (parsed.array_job_id, parsed.array_task_id) == ("4", "1")


@pytest.mark.parametrize("text, message, line", [
    ('{\n  "jobs": [\n    {"job_id": 1,,}\n  ]\n}', "not JSON", 3),
    ('{"jobs": {}}', 'no "jobs" list', None),
    ('{"jobs": [3]}', "jobs[0] is not an object", None),
    ('{"jobs": [{"name": "x"}]}', "jobs[0] has no job_id", None),
])
def test_bad_squeue_json_is_refused_with_where(text: str, message: str, line: int | None) -> None:
    with pytest.raises(ParseError, match=message.replace("[", r"\[")) as caught:
        squeue_json.parse(text)
    assert caught.value.line == line


@pytest.mark.parametrize("text, message, line", [
    ("slurm_load_jobs error: Invalid job id specified\n", "scontrol says: slurm_load_jobs", 1),
    ("hello\nJobId=1 JobName=a\n", "expected a job record starting with JobId=", 1),
    ("JobId=1 JobName=a\n   NumTasks=many\n", "NumTasks=many: not a number", 2),
])
def test_bad_scontrol_output_names_its_line(text: str, message: str, line: int) -> None:
    with pytest.raises(ParseError, match=message) as caught:
        scontrol_job.parse(text)
    assert caught.value.line == line


def test_scontrol_oneliner_records_and_values_with_blanks() -> None:
    text = ("JobId=9 JobName=REX REST JOB UserId=bob(1) JobState=RUNNING NodeList=n[1-2] "
            "NumNodes=2 NumTasks=4 NtasksPerN:B:S:C=2:0:*:* Command=/bin/run a b\n")
    job = scontrol_job.parse(text).jobs[0]
    assert (job.name, job.user, job.nodes, job.tasks_per_node) == \
        ("REX REST JOB", "bob", ["n1", "n2"], 2)


def test_a_node_list_that_does_not_expand_is_kept_and_noted() -> None:
    result = scontrol_job.parse("JobId=3 JobState=RUNNING\n   NodeList=node[3-1]\n")
    assert result.jobs[0].nodelist == "node[3-1]" and result.jobs[0].nodes == []
    assert "runs backwards" in result.warnings[0]


def test_a_name_with_an_undecodable_character_reads_back_as_printed() -> None:
    # Text decoded with surrogateescape keeps a lone surrogate; the job is kept as its JSON
    # and must read back whole, not fail as invalid Unicode.
    job = scontrol_job.parse("JobId=1 JobName=a\udcffb JobState=RUNNING\n").jobs[0]
    assert (job.job_id, job.name, job.state) == ("1", "a\udcffb", "RUNNING")


def test_a_node_list_nodeset_refuses_is_noted_and_a_width_error_comes_first() -> None:
    # NodeSet refuses some ranges with a ValueError of its own, not a NodeSetException.
    parsed = sacct.parse("JobID|NodeList\n2|%a1[--]1\n")
    assert parsed.rows[0].nodes == [] and "not expanded" in parsed.warnings[0]
    with pytest.raises(ParseError, match="row has 3 fields, expected 2") as caught:
        sacct.parse("JobID|NodeList\n1|a|\n2|%a1[--]1\n")
    assert caught.value.line == 2
