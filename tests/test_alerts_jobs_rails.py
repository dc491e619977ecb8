"""Grouping by job impact and by rail (issue 40, point 1): symptoms on nodes that share no
fabric element but run one job are one incident naming the job, saying the evidence cannot
tell which element and what to read next; alerts that share an element stay grouped by it, the
job listed; two faults in one job stay two incidents. Host cables of one rail behind different
leaves (a generated fabric of two groups) name the rail; on the demo (one leaf per rail) the
leaf. The jobs come from Slurm: on the demo, its simulated controller's `squeue --json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabtui.alerts.grouping import Jobs
from fabtui.alerts.incidents import IncidentBook
from fabtui.alerts.locate import Locator
from fabtui.alerts.payload import parse_notification
from fabtui.alerts.present import account
from fabtui.config import load_settings
from fabtui.journal.store import Journal
from fabtui.prom.labels import LabelMap
from fabtui.topology.generate import RailOptimizedParams, rail_optimized
from fabtui.topology.graph import FabricGraph
from fabtui.workspace import Workspace
from fabtui.workspace.alerting import JobsSource, Receiver
from tests.test_alerts_grouping import FLAP, GRAPH, STORM, nic, payload

DEMO_JOB = Jobs({"4242": {f"node{n:03d}": tuple(range(8 * (n - 1), 8 * n))
                          for n in range(1, 9)}}, "squeue", {"4242": "llm-pretrain"})
"""The demo's Slurm job: 8 ranks on each of its 8 nodes, in blocks."""
TWO_GROUPS = FabricGraph(rail_optimized(RailOptimizedParams(
    name="two-groups", nodes=8, nodes_per_leaf=4, spines=2, uplinks_per_leaf=4)))
"""Two groups of 4 nodes: rail r is leaf-g00-rR for node001-004, leaf-g01-rR for 005-008."""


def out_of_sequence(node: str, device: str) -> dict[str, Any]:
    return nic("FabricNicOutOfSequence", node, device, element="ibport", role="symptom")


def link_down(node: str, device: str) -> dict[str, Any]:
    return nic("FabricNicLinkDown", node, device, element="ibport", suspect="link")


def book_on(tmp_path: Path, graph: FabricGraph = GRAPH,
            jobs: Jobs | None = DEMO_JOB) -> IncidentBook:
    return IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(graph, LabelMap()),
                        jobs=(lambda: jobs) if jobs is not None else None)


def suspects(book: IncidentBook) -> list[str]:
    return sorted(i.suspect for i in book.open_incidents())


SPREAD = (out_of_sequence("node003", "mlx5_0"), out_of_sequence("node008", "mlx5_5"))
"""Symptoms on two nodes behind two leaves: no fabric element shared below the spines."""
APART = ["leaf-g00-r0:Ethernet16", "leaf-g00-r5:Ethernet56"]
"""Each alone: a lone symptom's cable names its switch port (the evidence accuses no end)."""


def test_symptoms_sharing_only_a_job_are_one_incident_naming_the_job(tmp_path: Path) -> None:
    book = book_on(tmp_path)
    book.receive(parse_notification(payload(*SPREAD)))
    (incident,) = book.open_incidents()
    assert (incident.suspect, incident.kind) == ("job:4242", "job")
    assert incident.reason.startswith("shared: job 4242 (llm-pretrain) (ranks 16-23 on "
                                      "node003, 56-63 on node008)")
    assert "the evidence cannot tell which element is at fault" in incident.reason
    assert "Read next: `fabtui triage slow --job 4242`" in incident.reason
    assert {a.element for a in incident.explains} == {"node003:mlx5_0", "node008:mlx5_5"}


def test_without_running_jobs_they_stay_apart(tmp_path: Path) -> None:
    book = book_on(tmp_path, jobs=None)
    book.receive(parse_notification(payload(*SPREAD)))
    assert suspects(book) == APART


def test_symptoms_in_two_jobs_stay_two(tmp_path: Path) -> None:
    jobs = Jobs({"11": {"node003": (0, 1)}, "12": {"node008": (0, 1)}})
    book = book_on(tmp_path, jobs=jobs)
    book.receive(parse_notification(payload(*SPREAD)))
    assert suspects(book) == APART


def test_a_symptom_arriving_later_moves_the_incident_to_the_job(tmp_path: Path) -> None:
    book = book_on(tmp_path)
    (first,) = book.receive(parse_notification(payload(SPREAD[0]))).opened
    assert suspects(book) == APART[:1]
    receipt = book.receive(parse_notification(payload(SPREAD[1])))
    assert receipt.opened == [] and receipt.updated == [first]
    assert suspects(book) == ["job:4242"]
    assert [e.kind for e in book.journal.events(first)][-1] == "suspect_changed"


def test_two_faults_in_one_job_stay_two_and_the_symptoms_point_at_them(
        tmp_path: Path) -> None:
    """A cause names its own element: a link flap on node005 and a PFC storm from node006,
    both in job 4242, are two incidents; symptoms on other nodes of the job are a third,
    which names the causes in the same job to read first."""
    book = book_on(tmp_path)
    book.receive(parse_notification(payload(*FLAP, *STORM, *SPREAD)))
    assert suspects(book) == ["job:4242", "leaf-g00-r1:Ethernet32", "node006:mlx5_4"]
    job = next(i for i in book.open_incidents() if i.kind == "job")
    assert "in the same job leaf-g00-r1:Ethernet32, node006:mlx5_4 alerts as a cause" in \
        job.reason


def test_alerts_sharing_an_element_and_a_job_stay_with_the_element(tmp_path: Path) -> None:
    book = book_on(tmp_path)
    book.receive(parse_notification(payload(
        out_of_sequence("node003", "mlx5_0"), out_of_sequence("node004", "mlx5_0"))))
    assert suspects(book) == ["leaf-g00-r0"]  # their shared leaf, not the job
    # A symptom elsewhere in the job does not pull the leaf's pair into a job incident.
    book.receive(parse_notification(payload(SPREAD[1])))
    assert suspects(book) == ["leaf-g00-r0", APART[1]]
    other = book_on(tmp_path / "b")
    other.receive(parse_notification(payload(link_down("node003", "mlx5_0"),
                                             link_down("node003", "mlx5_5"))))
    assert suspects(other) == ["node003"]


def test_the_demo_job_comes_from_slurm_and_is_listed_behind_an_element(
        tmp_path: Path) -> None:
    """Through the workspace, as `fabtui alerts serve` runs: the running jobs are the
    simulated Slurm's (`squeue --json`, job 4242 on every node); a storm's incident lists the
    job's ranks behind its NIC, and symptoms sharing only the job name it."""
    (tmp_path / "config.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n')
    ws = Workspace(load_settings(tmp_path / "config.toml"))
    lines: list[str] = []
    receiver = Receiver(ws, lines.append)
    assert receiver.receive(payload(*STORM))[0] == 200
    assert receiver.receive(payload(*SPREAD))[0] == 200
    jobs = receiver.book.jobs
    assert isinstance(jobs, JobsSource) and jobs.note == ""
    found = jobs()
    assert found is not None and found.source == \
        "`squeue --json --states=RUNNING` on node001"
    by_suspect = {i.suspect: i for i in receiver.book.open_incidents()}
    assert sorted(by_suspect) == ["job:4242", "node006:mlx5_4"]
    storm = account(by_suspect["node006:mlx5_4"])
    assert "behind it: job 4242 (llm-pretrain): ranks 40-47 on node006" in storm
    job = by_suspect["job:4242"]
    assert job.context.impact == ["job 4242 (llm-pretrain): ranks 16-23 on node003, "
                                  "56-63 on node008"]
    assert job.context.runbook  # the runbook the symptoms name
    ws.close()


def test_slurm_unreachable_is_said_once_and_grouping_goes_on(tmp_path: Path) -> None:
    from fabtui.errors import RequestError

    asked: list[int] = []

    def ask() -> Jobs:
        asked.append(1)
        raise RequestError("`squeue --json --states=RUNNING`: squeue: command not found")

    source = JobsSource(ask)
    book = IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()),
                        jobs=source)
    book.receive(parse_notification(payload(*SPREAD)))
    book.receive(parse_notification(payload(out_of_sequence("node001", "mlx5_2"))))
    assert suspects(book) == sorted([*APART, "leaf-g00-r2:Ethernet0"])
    assert len(asked) == 1  # asked again only after its time to live
    assert "running jobs unknown, alerts not grouped by job" in source.note


@pytest.mark.parametrize(("alerts", "suspect"), [
    ((link_down("node001", "mlx5_3"), link_down("node005", "mlx5_3")), "rail:3"),
    ((link_down("node001", "mlx5_3"), link_down("node002", "mlx5_3"),
      link_down("node006", "mlx5_3")), "rail:3"),
    ((link_down("node001", "mlx5_3"), link_down("node002", "mlx5_3")), "leaf-g00-r3"),
    ((link_down("node001", "mlx5_3"), link_down("node005", "mlx5_4")), None),
], ids=["one-rail-two-groups", "a-leaf-and-another-of-its-rail", "one-leaf", "two-rails"])
def test_one_rail_across_groups_names_the_rail(tmp_path: Path, alerts: tuple[Any, ...],
                                               suspect: str | None) -> None:
    book = book_on(tmp_path, TWO_GROUPS, jobs=None)
    book.receive(parse_notification(payload(*alerts)))
    if suspect is None:  # nothing shared below the spines: one incident per cable
        assert len(book.open_incidents()) == 2
        return
    (incident,) = book.open_incidents()
    assert incident.suspect == suspect and len(incident.alerts) == len(alerts)
    if suspect.startswith("rail:"):
        assert incident.kind == "rail"
        assert incident.reason.startswith(f"{len(alerts)} cable(s) of rail:3 alert at once "
                                          "behind 2 leaves (leaf-g00-r3, leaf-g01-r3)")


def test_on_the_demo_a_rail_is_its_leaf(tmp_path: Path) -> None:
    book = book_on(tmp_path, jobs=None)
    book.receive(parse_notification(payload(link_down("node001", "mlx5_3"),
                                            link_down("node007", "mlx5_3"))))
    assert suspects(book) == ["leaf-g00-r3"]
