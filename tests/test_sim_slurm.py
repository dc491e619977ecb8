"""The demo fabric answers Slurm: its running job, read back by the real Slurm parsers."""

from __future__ import annotations

from fabtui.parsers import sacct, scontrol_job, squeue_json
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim import node_commands
from fabtui.sim.core import Sim
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state


def _sim() -> Sim:
    return build_sim(fresh_state(demo_topology(), find_scenario("healthy"),
                                 [shipped_templates()]))


def _run(sim: Sim, *argv: str) -> tuple[str, str, int]:
    return node_commands.run(sim, "node001", list(argv), 10.0)


def test_the_three_slurm_views_of_the_demo_job_agree_with_its_rank_placement() -> None:
    sim = _sim()
    nodes = list(dict.fromkeys(slot.node for slot in sim.graph.ranks))
    out, _, code = _run(sim, "scontrol", "show", "job", "-d", "4242")
    job = scontrol_job.parse(out).jobs[0]
    assert code == 0 and job.nodes == nodes and job.num_tasks == len(sim.graph.ranks)
    assert job.state == "RUNNING" and job.allocations[0].hosts == nodes
    assert job.allocations[0].gpu_ids == list(range(8)) and job.tasks_per_node == 8
    queued = squeue_json.parse(_run(sim, "squeue", "--json", "-j", "4242")[0]).jobs[0]
    assert (queued.job_id, queued.nodes, queued.num_tasks) == ("4242", nodes, job.num_tasks)
    assert [a.nodes for a in queued.allocations] == nodes
    accounted = sacct.parse(_run(sim, "sacct", "-P", "-o", "JobID,State,NodeList", "-j",
                                 "4242")[0])
    assert [(r.job_id, r.nodes) for r in accounted.rows] == [("4242", nodes),
                                                               ("4242.batch", nodes[:1])]
    headerless = _run(sim, "sacct", "-X", "-n", "-P", "-o", ",".join(sacct.FIELDS), "-j", "4242")
    assert sacct.parse(headerless[0]).rows[0].nodes == nodes


def test_an_unknown_job_is_refused_as_slurm_refuses_it() -> None:
    sim = _sim()
    out, err, code = _run(sim, "scontrol", "show", "job", "99")
    assert (out, code) == ("", 1) and "Invalid job id" in err
    assert squeue_json.parse(_run(sim, "squeue", "--json", "-j", "99")[0]).jobs == []
    assert sacct.parse(_run(sim, "sacct", "-P", "-o", "JobID,State", "-j", "99")[0]).rows == []
