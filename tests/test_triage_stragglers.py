"""Straggler scores from each kind of input, and the sweep that finds the demo's slow node."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from fabtui.cli.app import cli
from fabtui.cli.triage_stragglers import register
from fabtui.config import load_settings
from fabtui.errors import InputError
from fabtui.model.probe import Metric, ProbeResult, Verdict
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.triage.stragglers import plan_sweep, read_samples, report, run_sweep, score
from fabtui.workspace import Workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "nccl-tests"


@pytest.fixture(scope="module")
def graph() -> FabricGraph:
    return FabricGraph(load_topology(ROOT / "topology" / "demo.yaml").topology)


def _workspace(tmp_path: Path, scenario: str) -> Workspace:
    settings = dataclasses.replace(load_settings(None), scenario=scenario, scenario_chosen=True,
                                   data_dir=tmp_path)
    return Workspace(settings)


def test_per_rank_timings_score_the_slow_rank(tmp_path: Path, graph: FabricGraph) -> None:
    table = tmp_path / "timings.txt"
    table.write_text("# rank seconds per step\n" + "".join(
        f"{r} {4.0 + r * 0.001:.3f} {4.01:.3f} {3.99 + r * 0.002:.3f}\n" if r != 13 else
        f"{r} 5.9 6.1 6.0\n" for r in range(16)))
    result = score(read_samples([table]), graph)
    assert result[0].rank == 13 and result[0].straggler
    assert result[0].nodes == ["node002"]  # the demo places rank 13 on node002
    assert result[0].score == pytest.approx(4.0 / 6.0, abs=0.01)
    assert [s.rank for s in result if s.straggler] == [13]
    assert max(s.score for s in result) == 1.0


def test_json_timings_and_the_threshold_edge(tmp_path: Path) -> None:
    data = tmp_path / "t.json"
    data.write_text(json.dumps({"0": [1.0, 1.0], "1": [1.32], "2": [1.34]}))
    scores = {s.rank: s for s in score(read_samples([data]))}
    assert not scores[1].straggler and scores[2].straggler  # 1/1.32 = 0.757, 1/1.34 = 0.746


def test_step_logs_per_rank_file(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for rank in range(4):
        ms = 9000.0 if rank == 2 else 4000.0
        (folder / f"rank-{rank}.log").write_text("".join(
            f"[2026-12-01 03:00:{i:02d}] iteration {i:>8d}/  500000 | elapsed time per "
            f"iteration (ms): {ms + i:.1f} | lm loss: 2.8E+00 |\n" for i in range(5)))
    (folder / "torchrun.log").write_text("[rank3]:step 7 loss 2.1 step_time 4.10s\n")
    result = score(read_samples([folder]))
    stragglers = [s.rank for s in result if s.straggler]
    assert stragglers == [2]
    assert {s.rank for s in result} == {0, 1, 2, 3}
    assert next(s for s in result if s.rank == 3).samples == 6  # file name and prefix agree


def test_nccl_tests_outputs_score_by_node_set() -> None:
    files = [FIXTURES / "superbench-allreduce-8xA100-c0.txt",
             FIXTURES / "deepops-allreduce-roce-k8s-oldformat-error-column.txt"]
    result = score(read_samples(files))
    assert [s.metric for s in result] == ["busbw", "busbw"]
    assert result[0].straggler and not result[1].straggler
    assert result[0].source.endswith("roce-k8s-oldformat-error-column.txt")
    assert result[1].score == 1.0


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "nothing.txt"
    empty.write_text("hello\n")
    with pytest.raises(InputError, match=r"nothing\.txt: no timings found"):
        read_samples([empty])
    broken = tmp_path / "b.json"
    broken.write_text("{\"0\": [1,\n")
    with pytest.raises(InputError, match=r"b.json:\d+: not JSON"):
        read_samples([broken])


def test_plan_pairs_every_node(graph: FabricGraph) -> None:
    plan = plan_sweep(["node001", "node002", "node003"], graph)
    assert [r.nodes for r in plan.runs] == [["node001", "node002"], ["node003", "node001"]]
    assert plan.runs[0].params == {"hosts": "node001:8,node002:8", "ranks": "16",
                                   "nccl_env": "NCCL_ALGO=Ring"}
    with pytest.raises(InputError):
        plan_sweep(["node001"], graph)


def test_sweep_finds_the_slow_node_on_the_demo(tmp_path: Path, graph: FabricGraph) -> None:
    with _workspace(tmp_path, "slow-node") as space:
        plan = plan_sweep(list(graph.nodes), graph)
        done = asyncio.run(run_sweep(plan, space, graph))
    assert done.executed and done.slow_nodes == ["node004"] and not done.slow_links
    slow = [r.nodes for r in done.runs if r.slow]
    assert ["node003", "node004"] in slow and ["node004", "node001"] in slow
    assert "node004" in done.conclusion


def test_sweep_on_a_healthy_demo_finds_nothing(tmp_path: Path, graph: FabricGraph) -> None:
    with _workspace(tmp_path, "healthy") as space:
        done = asyncio.run(run_sweep(plan_sweep(list(graph.nodes), graph), space, graph))
    assert not done.slow_nodes and not done.slow_links
    assert not any(r.slow for r in done.runs)
    assert done.conclusion.startswith("no slow node or link")


class _Scripted:
    """A probe runner answering each host set with a busbw (or hanging, or failing)."""

    def __init__(self, busbw: Mapping[frozenset[str], float | None], default: float = 380.0,
                 hang: frozenset[str] | None = None) -> None:
        self.busbw, self.default, self.hang = busbw, default, hang
        self.calls: list[str] = []

    async def run_probe(self, name: str, target: str | None, params: Mapping[str, str],
                        topology: Path | None = None) -> ProbeResult:
        hosts = frozenset(h.split(":")[0] for h in params["hosts"].split(","))
        self.calls.append(params["hosts"])
        if hosts == self.hang:
            await asyncio.sleep(30)
        now = datetime.now(UTC)
        value = self.busbw.get(hosts, self.default)
        if value is None:
            return ProbeResult(probe=name, target=target or "", command="", started_at=now,
                               ended_at=now, verdict=Verdict.ERROR, error="ssh: no route")
        return ProbeResult(probe=name, target=target or "", command="", started_at=now,
                           ended_at=now, verdict=Verdict.OK,
                           metrics=[Metric(name="busbw_max", value=value, component="x")])


def test_a_slow_link_between_two_fast_nodes(graph: FabricGraph) -> None:
    runner = _Scripted({frozenset({"node005", "node006"}): 150.0})
    done = asyncio.run(run_sweep(plan_sweep(list(graph.nodes), graph), runner, graph))
    assert done.slow_links == [["node005", "node006"]] and not done.slow_nodes


def test_halving_narrows_a_set_slow_only_at_scale(graph: FabricGraph) -> None:
    nodes = list(graph.nodes)
    slow = {frozenset(nodes): 200.0, frozenset(nodes[4:]): 200.0}
    done = asyncio.run(run_sweep(plan_sweep(nodes, graph), _Scripted(slow), graph))
    halving = [r for r in done.runs if r.kind == "halving"]
    assert [(r.nodes, r.slow) for r in halving] == [
        (nodes, True), (nodes[:4], False), (nodes[4:], True), (nodes[4:6], False),
        (nodes[6:], False)]
    assert not done.slow_nodes and not done.slow_links
    assert "+".join(nodes[4:]) + " are fast: the set is slow only as a whole" in \
        done.conclusion


def test_dead_and_hanging_runs_are_results(graph: FabricGraph) -> None:
    nodes = list(graph.nodes)[:4]
    runner = _Scripted({frozenset(nodes[:2]): None}, hang=frozenset(nodes[2:]))
    done = asyncio.run(run_sweep(plan_sweep(nodes, graph), runner, graph, timeout=0.2))
    assert [r.error for r in done.runs] == ["ssh: no route", "no answer in 0.2 s"]
    assert "2 run(s) failed" in done.conclusion


@pytest.fixture
def triage_cli() -> Iterator[click.Group]:
    group = click.Group("triage")
    register(group)
    cli.add_command(group)
    yield group
    cli.commands.pop("triage", None)


def test_cli_json_and_exit_codes(tmp_path: Path, triage_cli: click.Group) -> None:
    table = tmp_path / "t.txt"
    table.write_text("0 4.0\n1 4.0\n9 7.0\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["triage", "stragglers", str(table), "--json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert [s["rank"] for s in data["stragglers"]] == [9]
    assert data["plan"]["runs"][0]["nodes"] == ["node001", "node002"]
    text = runner.invoke(cli, ["triage", "stragglers", str(table)])
    assert "rank 9 (node002)" in text.output and "--run-plan" in text.output
    bad = runner.invoke(cli, ["triage", "stragglers", str(table), "--nodes", "nodeX"])
    assert bad.exit_code == 2 and "nodeX not in the topology" in bad.output


def test_report_without_nodes_sweeps_the_topology(tmp_path: Path, graph: FabricGraph) -> None:
    table = tmp_path / "t.txt"
    table.write_text("0 1.0\n")
    result = report([table])
    assert result.plan is None and result.warnings
    assert report([table], graph).plan is not None


def test_cli_runs_the_plan_on_the_slow_node_demo(tmp_path: Path, triage_cli: click.Group) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for rank in range(0, 64, 8):  # one rank per node; node004's (rank 24) is slow
        ms = 7300.0 if rank == 24 else 4000.0
        (folder / f"rank-{rank}.log").write_text(
            f"iteration 5 | elapsed time per iteration (ms): {ms} |\n")
    result = CliRunner().invoke(cli, ["--scenario", "slow-node", "triage", "stragglers",
                                      str(folder), "--run-plan", "--json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert [s["nodes"] for s in data["stragglers"]] == [["node004"]]
    assert data["plan"]["executed"] and data["plan"]["slow_nodes"] == ["node004"]
