"""Multi-node launches: the site's launcher line, values quoted by construction, shown first."""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable

import pytest
from click.testing import Result

from fabtui.config import SlurmConfig, load_settings
from fabtui.errors import RequestError
from fabtui.probes.launcher import TEMPLATES, LaunchError, launch, program_argv, shown
from fabtui.workspace.core import Workspace
from fabtui.workspace.launching import plan_launch

HOSTILE = ["/opt/x; rm -rf /", "$(reboot)", "`id`", "a b", "--help", "x' \"y", "{ranks}"]


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_value_stays_one_argument_in_the_shown_line(value: str) -> None:
    plan = launch(TEMPLATES["srun"], ["node001", "node002"], 8,
                  program_argv({"bindir": value}))
    assert f"{value}/all_reduce_perf" in plan.argv  # one element, not split, not expanded
    assert shlex.split(plan.shown) == list(plan.argv)  # what is shown is what runs


def test_srun_and_mpirun_lines_carry_the_nodes_and_ranks() -> None:
    program = program_argv({"collective": "alltoall", "max_bytes": "1G"})
    srun = launch(TEMPLATES["srun"], ["gpu-a01-b1", "gpu-a01-b2", "gpu-a02-b1"], 4, program)
    assert srun.argv[:7] == ("srun", "-l", "-N", "3", "--ntasks-per-node=4",
                             "--gpus-per-node=4", "--nodelist=gpu-a01-b[1-2],gpu-a02-b1")
    assert srun.argv[7].endswith("/alltoall_perf") and srun.ranks == 12
    mpirun = launch(TEMPLATES["mpirun"], ["n1", "n2"], 8, program)
    assert mpirun.argv[4:7] == ("16", "-H", "n1:8,n2:8") and mpirun.host == "n1"


@pytest.mark.parametrize("template, message", [
    (["{nodes}", "{program}"], "first element must be the launcher program"),
    (["srun", "-N", "{nodes}"], "needs `{program}` exactly once"),
    (["srun", "--x={program}", "{program}"], "must be an element of its own"),
    (["srun", "--mpi={mpi}", "{program}"], "unknown placeholder {mpi}"),
])
def test_a_bad_launcher_template_is_refused(template: list[str], message: str) -> None:
    with pytest.raises(LaunchError, match=message.replace("{", r"\{").replace("}", r"\}")):
        launch(template, ["n1", "n2"], 8, ["prog"])


@pytest.mark.parametrize("nodes, params, message", [
    (["n1", "-oProxyCommand=x"], {}, "is not a node name"),
    (["n1"], {}, "at least two nodes"),
    (["n1", "n2"], {"iters": "5; id"}, "a whole number"),
    (["n1", "n2"], {"max_bytes": "lots"}, "a size such as"),
    (["n1", "n2"], {"collective": "rm"}, "one of all_reduce"),
    (["n1", "n2"], {"env": "X=1"}, "unknown parameter 'env'"),
])
def test_bad_nodes_and_parameters_are_refused(nodes: list[str], params: dict[str, str],
                                              message: str) -> None:
    with pytest.raises(LaunchError, match=message):
        launch(TEMPLATES["mpirun"], nodes, 8, program_argv(params))


def test_the_configured_template_and_launcher_are_used() -> None:
    template = ("srun", "--mpi=pmix", "-N", "{nodes}", "--nodelist={nodelist}", "{program}")
    settings = dataclasses.replace(load_settings(), slurm=SlurmConfig(
        launcher="srun", launcher_template=template))
    ws = Workspace(settings)
    plan = plan_launch(ws, job_id="4242")
    assert plan.argv[:5] == ("srun", "--mpi=pmix", "-N", "8", "--nodelist=node[001-008]")
    assert plan_launch(ws, nodes="node[001-002]", launcher="mpirun").argv[0] == "mpirun"
    with pytest.raises(RequestError, match="name the nodes"):
        plan_launch(ws)


def test_the_cli_shows_the_line_first_and_dry_run_runs_nothing(
        run: Callable[..., Result]) -> None:
    dry = run("probe", "launch", "--nodes", "node[001-002]", "--launcher", "srun",
              "--param", "bindir=/opt/a b", "--dry-run")
    assert dry.exit_code == 0 and dry.output.count("\n") == 1
    assert dry.output.startswith("command (on node001, 16 ranks): srun -l -N 2 ")
    assert "'/opt/a b/all_reduce_perf'" in dry.output
    ran = run("probe", "launch", "--job", "4242", "--param", "max_bytes=1M")
    first, second = ran.output.splitlines()[:2]
    assert first == "command (on node001, 64 ranks): " + shown(
        plan_launch(Workspace(load_settings()), job_id="4242",
                    params={"max_bytes": "1M"}).argv)
    assert second.startswith("all_reduce: ok; busbw peak ") and second.endswith("64 ranks")
    bad = run("probe", "launch", "--nodes", "node001", "--dry-run")
    assert bad.exit_code == 2 and "at least two nodes" in bad.output


def test_json_dry_run_gives_the_argv_for_scripts(run: Callable[..., Result]) -> None:
    import json

    out = json.loads(run("probe", "launch", "--nodes", "node[001-002]", "--dry-run",
                         "--json").output)
    assert out["argv"][0] == "mpirun" and out["command"] == shown(out["argv"])
    assert (out["host"], out["ranks"]) == ("node001", 16)
