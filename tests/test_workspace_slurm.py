"""Slurm jobs in the workspace: job -> nodes and ranks, the Fabric view's job filter, triage."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.config import SlurmConfig, load_settings
from fabtui.errors import RequestError
from fabtui.views.fabricmap import FabricMap, parse_filter
from fabtui.workspace.core import Workspace
from fabtui.workspace.slurm import follow_job, job_placement

FIXTURES = Path(__file__).parent / "fixtures"
TRIAGE = Path(__file__).parent / "triage_fixtures"
# The layout `scontrol show job -d` prints (tests/fixtures/scontrol-job), on two demo nodes.
TWO_NODE_JOB = """JobId=5150 JobName=pretrain
   UserId=alice(1001) GroupId=ml(1001) MCS_label=N/A
   JobState=RUNNING Reason=None Dependency=(null)
   NodeList=node[003-004]
   BatchHost=node003
   NumNodes=2 NumCPUs=64 NumTasks=16 CPUs/Task=4 ReqB:S:C:T=0:0:*:*
   Socks/Node=* NtasksPerN:B:S:C=8:0:*:* CoreSpec=*
     Nodes=node[003-004] CPU_IDs=0-31 Mem=0 GRES=gpu:8(IDX:0-7)
   Command=/shared/pretrain.sbatch
"""


def _ws(**slurm: object) -> Workspace:
    settings = load_settings()
    return Workspace(dataclasses.replace(settings, slurm=SlurmConfig(**slurm)))


def test_the_demo_job_is_asked_of_the_simulated_slurm_and_placed_in_blocks() -> None:
    ws = _ws()
    placement = job_placement(ws, "4242")
    assert placement.source == "`scontrol show job -d 4242` on node001"
    assert placement.nodes == [f"node{i:03d}" for i in range(1, 9)]
    assert (placement.distribution, placement.distribution_known) == ("block", False)
    assert len(placement.slots) == 64
    assert placement.slots[8][1:] == ("node002", 0) and placement.ranks_on("node008")[0] == 56


def test_cyclic_goes_round_the_nodes() -> None:
    placement = job_placement(_ws(distribution="cyclic"), "4242")
    assert [s.node for s in placement.slots[:3]] == ["node001", "node002", "node003"]
    assert placement.ranks_on("node001")[:3] == [0, 8, 16]
    assert placement.slots[8][1:] == ("node001", 1)


def test_a_followed_job_filters_the_fabric_to_its_nodes(tmp_path: Path) -> None:
    saved = tmp_path / "job.txt"
    saved.write_text(TWO_NODE_JOB)
    ws = _ws()
    placement = job_placement(ws, "5150", source=saved)
    follow_job(ws, placement)
    graph = ws.graph()
    assert list(graph.ranks_by_node) == ["node003", "node004"]
    assert graph.placement(9).node == "node004" and graph.placement(9).gpu == 1
    fabric = FabricMap.build(graph)
    view = parse_filter(fabric, graph, "job")
    assert view.nodes == frozenset({"node003", "node004"})
    assert ws.graph() is graph  # built once


@pytest.mark.parametrize("job_id, source, message", [
    ("4242; rm -rf /", None, "is not a Slurm job id"),
    ("77", None, "Slurm does not describe job 77: `scontrol show job -d 77` on node001: "),
    ("2120448", FIXTURES / "scontrol-job" / "tgcc-scontrol-show-job-d-4node-512tasks.txt",
     "runs on nodes the topology does not have: inti6012, inti6015"),
    ("1", FIXTURES / "scontrol-job" / "tgcc-scontrol-show-job-d-4node-512tasks.txt",
     "tgcc-scontrol-show-job-d-4node-512tasks.txt: no job 1"),
    ("134238037", FIXTURES / "scontrol-job" / "cshuji-scontrol-show-job-d-9jobs-gres.txt",
     "job 134238037 holds no nodes (it is PENDING)"),
])
def test_a_job_that_cannot_be_placed_says_why(job_id: str, source: Path | None,
                                              message: str) -> None:
    with pytest.raises(RequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        job_placement(_ws(), job_id, source=source)


def test_triage_takes_its_rank_placement_from_the_slurm_job(
        run: Callable[..., Result], tmp_path: Path) -> None:
    saved = tmp_path / "job.txt"
    saved.write_text(TWO_NODE_JOB.replace("node[003-004]", "node004").replace(
        "NumNodes=2", "NumNodes=1").replace("NumTasks=16", "NumTasks=8"))
    result = run("triage", "nccl", "--json", "--job", "5150", "--job-file", str(saved),
                 str(TRIAGE / "missing-log"))
    first = json.loads(result.output)["suspects"][0]
    assert (first["rank"], first["node"], first["gpu"], first["nic"]) == \
        (7, "node004", 7, "mlx5_7")
    demo = json.loads(run("triage", "nccl", "--json", "--job", "4242",
                          str(TRIAGE / "missing-log")).output)["suspects"][0]
    assert (demo["rank"], demo["node"], demo["gpu"]) == (7, "node001", 7)


def test_the_app_places_a_triage_by_the_followed_job_as_the_command_line_does(
        tmp_path: Path) -> None:
    """One placement rule: the Triage screen's `Workspace.triage` trusts a followed job as
    `fabtui triage nccl --job` does (a rank with no log is placed by the job, not guessed)."""
    saved = tmp_path / "job.txt"
    saved.write_text(TWO_NODE_JOB.replace("node[003-004]", "node004").replace(
        "NumNodes=2", "NumNodes=1").replace("NumTasks=16", "NumTasks=8"))
    with _ws() as ws:
        assert not ws.placement_known()
        follow_job(ws, job_placement(ws, "5150", source=saved))
        assert ws.placement_known()
        report = ws.triage([TRIAGE / "missing-log"], similar=False)
    first = report.suspects[0]
    assert (first.rank, first.node, first.gpu, first.nic) == (7, "node004", 7, "mlx5_7")


def test_job_options_refuse_bad_input_in_one_line(run: Callable[..., Result],
                                                  tmp_path: Path) -> None:
    for argv in (("tui", "--job", "-1"), ("triage", "nccl", "--job", "x;y", "somewhere"),
                 ("triage", "nccl", "--job", "1", "--ranks", __file__, "somewhere")):
        result = run(*argv)
        assert result.exit_code == 2 and result.output.count("\n") == 1, result.output


def test_the_app_opened_on_a_job_starts_with_the_fabric_filtered_to_it(tmp_path: Path) -> None:
    import asyncio

    from fabtui.tui.app import FabtuiApp
    from fabtui.tui.widgets.matrix import FabricMatrix
    from tests.support.tui_support import NOW, screen_text

    saved = tmp_path / "job.txt"
    saved.write_text(TWO_NODE_JOB)
    ws = _ws()
    follow_job(ws, job_placement(ws, "5150", source=saved))

    async def check() -> None:
        app = FabtuiApp(ws, live=False, clock=lambda: NOW, view="job")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert app.screen.query_one(FabricMatrix).view.nodes == \
                frozenset({"node003", "node004"})
            text = screen_text(app)
            assert "filter job" in text.splitlines()[1]  # the header, under the tab bar
            assert "node003" in text and "node001" not in text

    asyncio.run(check())


@pytest.mark.parametrize("text, line, message", [
    ('poll_interval = 5\n\n[slurm]\nlauncher = "srun"\nhost = "-oProxyCommand=x"\n', 5,
     "slurm.host: String should match pattern"),
    ('[slurm]\nhots = "login01"\n', 2, "unknown setting slurm.hots (known: host,"),
    ('slurm = { launcher = "pbs" }\n', 1, "slurm.launcher: Input should be 'mpirun' or 'srun'"),
])
def test_bad_slurm_settings_name_their_line(tmp_path: Path, text: str, line: int,
                                            message: str) -> None:
    from fabtui.errors import InputError

    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(InputError) as caught:
        load_settings(config)
    assert f"config.toml:{line}: {message}" in str(caught.value)


def test_a_saved_sacct_or_squeue_output_places_the_job_too(tmp_path: Path) -> None:
    from fabtui.parsers.sacct import FIELDS

    ws = _ws()
    saved = tmp_path / "sacct.txt"
    saved.write_text("|".join(FIELDS) + "\n"
                     "6001|train|COMPLETED|node[005-006]|2||16|gpu|2026-11-30T01:00:00|"
                     "2026-11-30T02:00:00\n6001.batch|batch|COMPLETED|node005|1|1|8|||\n")
    placement = job_placement(ws, "6001", source=saved)
    assert placement.nodes == ["node005", "node006"]
    assert len(placement.slots) == 16 and placement.ranks_on("node006") == list(range(8, 16))
    queued = tmp_path / "squeue.json"
    queued.write_text('{"jobs": [{"job_id": 7, "job_state": ["RUNNING"], "nodes": "node007",'
                      ' "tasks": {"set": true, "number": 8}}]}')
    assert job_placement(ws, "7", source=queued).nodes == ["node007"]
    broken = tmp_path / "broken.json"
    broken.write_text('{"jobs": [\n  {"job_id": 7,,}]}')
    with pytest.raises(RequestError, match=r"broken\.json:2: not JSON"):
        job_placement(ws, "7", source=broken)
