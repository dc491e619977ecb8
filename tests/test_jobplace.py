"""Rank layout of a Slurm job: block and cyclic, uneven counts, GPUs from the -d detail."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed._slurm_common import SlurmJob, SlurmNodeAlloc
from fabtui.parsers import scontrol_job
from fabtui.topology.jobplace import (
    PlacementError,
    distribution_of,
    job_slots,
    tasks_per_node,
)

FIXTURES = Path(__file__).parent / "fixtures"


def _job(nodes: list[str], tasks: int | None, per_node: int | None = None,
         **more: object) -> SlurmJob:
    return SlurmJob(job_id="1", nodes=nodes, num_tasks=tasks, tasks_per_node=per_node,
                    **more)


def test_uneven_tasks_go_one_more_to_the_first_nodes_as_slurm_spreads_them() -> None:
    assert tasks_per_node(_job(["a", "b", "c"], 10)) == [4, 3, 3]
    assert tasks_per_node(_job(["a", "b", "c"], 10, per_node=4)) == [4, 4, 2]
    block = job_slots(_job(["a", "b", "c"], 10))
    assert [s.node for s in block] == ["a"] * 4 + ["b"] * 3 + ["c"] * 3
    cyclic = job_slots(_job(["a", "b", "c"], 10), "cyclic")
    assert [s.node for s in cyclic] == ["a", "b", "c"] * 3 + ["a"]
    assert [s.gpu for s in cyclic if s.node == "a"] == [0, 1, 2, 3]


def test_a_rank_gets_the_gpu_slurm_allocated_at_its_slot() -> None:
    job = _job(["n1", "n2"], 4, allocations=[
        SlurmNodeAlloc(nodes="n1", hosts=["n1"], gpu_ids=[4, 5]),
        SlurmNodeAlloc(nodes="n2", hosts=["n2"], gpu_ids=[0, 2])])
    assert [(s.rank, s.node, s.gpu) for s in job_slots(job)] == [
        (0, "n1", 4), (1, "n1", 5), (2, "n2", 0), (3, "n2", 2)]


def test_the_real_tgcc_job_places_128_ranks_per_node() -> None:
    text = (FIXTURES / "scontrol-job" / "tgcc-scontrol-show-job-d-4node-512tasks.txt").read_text()
    slots = job_slots(scontrol_job.parse(text).jobs[0])
    assert len(slots) == 512 and slots[128].node == "inti6015" and slots[511].node == "inti6019"


def test_distribution_named_by_the_job_wins_and_others_fall_back() -> None:
    assert distribution_of(_job(["a"], 1, distribution="cyclic:block")) == ("cyclic", True)
    assert distribution_of(_job(["a"], 1, distribution="plane=4"), "block") == ("block", False)
    assert distribution_of(_job(["a"], 1)) == ("block", False)


@pytest.mark.parametrize("job, message", [
    (_job([], 8, state="PENDING"), "holds no nodes \\(it is PENDING\\)"),
    (_job(["a"], None), "no task count"),
])
def test_a_job_slurm_says_too_little_about_is_refused(job: SlurmJob, message: str) -> None:
    with pytest.raises(PlacementError, match=message):
        job_slots(job)
    with pytest.raises(PlacementError, match="block or cyclic"):
        job_slots(_job(["a"], 1), "plane")
