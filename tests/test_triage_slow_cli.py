"""`fabtui triage slow` on the demo fabric and on inputs read from a file (issue 39): the on-call
note, `--json` as docs/triage-slow.md documents it, the exit codes, and the same answer from
the JSON inputs as from the simulator's arrays."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.model.slowjob import SCHEMA, SlowJobReport
from fabtui.sim.slowjob import play_slow_job
from fabtui.workspace.triaging import read_slow_inputs, slow_job
from tests.support.slowjob_scoreboard import report_of, sim_of


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "fabtui.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    return path


def test_on_the_demo_a_slow_host_reads_not_the_fabric(run: Callable[..., Result],
                                                      config: Path) -> None:
    result = run("--config", str(config), "--scenario", "slow-host", "triage", "slow")
    assert result.exit_code == 1, result.stderr
    out = result.stdout
    assert "NOT THE FABRIC: host (node006)" in out
    assert "ranks 40-47 reach the collectives late" in out
    assert "> fabtui probe run logs.dmesg --target node006 (runbook slow-node)" in out
    line, marks = out.splitlines()[1:3]  # the step time drawn, the episode marked under it
    assert line.startswith("  step time 4.00-") and "▁" in line and "█" in line
    assert marks.strip() and set(marks.strip()) == {"^"}
    first = marks.index("^")  # the marks start where the bars rise
    assert line[first] != "▁" and line[first - 1] == "▁"


def test_json_follows_the_documented_schema(run: Callable[..., Result], config: Path) -> None:
    result = run("--config", str(config), "--scenario", "slow-tenant-pfc", "triage", "slow",
                 "--json")
    assert result.exit_code == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == SCHEMA and data["job"] == "4242" and data["ranks"] == 64
    report = SlowJobReport.model_validate(data)
    (chain,) = report.chains
    assert chain.verdict.kind == "fabric" and chain.verdict.element == "leaf-g00-r5"
    timeline = report.timeline
    assert timeline is not None and len(timeline.t) == len(timeline.v) > 100
    inside = [v for t, v in zip(timeline.t, timeline.v, strict=True)
              if chain.episode.start <= t < chain.episode.end]
    assert report.baseline_s is not None and min(inside) > report.baseline_s
    documented = (Path(__file__).parents[1] / "docs" / "triage-slow.md").read_text()
    for field in ("baseline_s", "episodes", "chains", "healthy", "counter_evidence",
                  "confidence", "runbook", "magnitude", "cause"):
        assert field in documented
    output = documented[documented.index("## Output"):]
    for name in data:  # every top-level field has its row
        assert f"| `{name}`" in output or f"| `{name}[]`" in output, name


def test_a_healthy_demo_job_exits_0(run: Callable[..., Result], config: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # an hour into the healthy scenario (FABTUI_SIM_TIME): a 30-minute window of step times;
    # seconds into it, one sample, which is no verdict (cannot tell yet), not "healthy"
    fresh = run("--config", str(config), "--scenario", "healthy", "triage", "slow",
                "--since", "30m")
    assert fresh.exit_code == 0, fresh.stderr
    assert "cannot tell yet" in fresh.stdout and "healthy" not in fresh.stdout
    monkeypatch.setenv("FABTUI_SIM_TIME", "3600")
    result = run("--config", str(config), "triage", "slow", "--since", "30m")
    assert result.exit_code == 0, result.stderr
    assert "healthy: the step time held" in result.stdout


def test_bad_requests_are_one_line_errors(run: Callable[..., Result], config: Path,
                                          tmp_path: Path) -> None:
    other = run("--config", str(config), "--scenario", "healthy", "triage", "slow",
                "--job", "99")
    assert other.exit_code == 2 and "the demo fabric runs job 4242, not 99" in other.stderr
    since = run("--config", str(config), "triage", "slow", "--since", "soon")
    assert since.exit_code == 2 and "--since: 'soon' is not a duration" in since.stderr
    broken = tmp_path / "inputs.json"
    broken.write_text('{"job": "1", "start": 0, "end": 10, "steps": [{"rank": -1, "t": [1],'
                      ' "step_s": [4]}, {"rank": 2, "t": [1], "step_s": []}]}')
    bad = run("--config", str(config), "triage", "slow", "--inputs", str(broken))
    assert bad.exit_code == 2
    assert f"{broken}: steps.0.rank:" in bad.stderr and "Traceback" not in bad.stderr
    assert f"{broken}: steps.1: Value error, t has 1 samples but step_s has 0" in bad.stderr
    broken.write_text("{not json")
    bad = run("--config", str(config), "triage", "slow", "--inputs", str(broken))
    assert bad.exit_code == 2 and f"{broken}:1: not JSON" in bad.stderr


def test_inputs_as_json_give_the_answer_the_arrays_give(tmp_path: Path) -> None:
    sim = sim_of("slow-gpu-and-optic")
    direct = report_of(sim)
    inputs = play_slow_job(sim).to_inputs()
    path = tmp_path / "inputs.json"
    path.write_text(inputs.model_dump_json())
    read = slow_job(sim.graph, inputs=read_slow_inputs(path))
    assert [(c.verdict.kind, c.verdict.cause, c.verdict.element) for c in read.chains] == \
        [(c.verdict.kind, c.verdict.cause, c.verdict.element) for c in direct.chains]
    assert {("not the fabric", "gpu", "node002"), ("fabric", None, "MT24000020")} == \
        {(c.verdict.kind, c.verdict.cause, c.verdict.element) for c in read.chains}


def test_step_times_alone_cannot_tell_and_say_what_is_missing(tmp_path: Path) -> None:
    sim = sim_of("slow-nic-optic")
    inputs = play_slow_job(sim).to_inputs().model_copy(update={"busbw": [], "fabric": {}})
    report = slow_job(sim.graph, inputs=inputs)
    (chain,) = report.chains
    assert chain.verdict.kind == "cannot tell"
    assert "no busbw was read" in chain.verdict.summary
    assert "NCCL_IB_HCA==mlx5_0" in chain.verdict.summary  # the pair test that would split it
    assert [h.layer for h in chain.hops] == ["job"]


def test_a_trainer_that_logs_on_its_last_rank_only_still_reaches_the_optic() -> None:
    sim = sim_of("slow-nic-optic")
    inputs = play_slow_job(sim).to_inputs()
    last = inputs.model_copy(update={"steps": [s for s in inputs.steps if s.rank == 63]})
    report = slow_job(sim.graph, inputs=last)
    assert report.ranks == 1
    assert [(c.verdict.kind, c.verdict.element) for c in report.chains] == \
        [("fabric", "MT24000014")]


def test_values_in_probe_commands_are_quoted_for_a_shell() -> None:
    import shlex

    from fabtui.triage.slowjob import probes

    probe = probes.port_dom("leaf 1:Ethernet$(reboot)")
    assert shlex.split(probe.command)[-1] == "leaf 1:Ethernet$(reboot)"
    pair = probes.rail_pair(["node;1", "node2"], "mlx5_3")
    words = shlex.split(pair.command)
    assert "hosts=node;1:8,node2:8" in words and "nccl_env=NCCL_IB_HCA==mlx5_3" in words


def _printed_rail_pair(run: Callable[..., Result], config: Path, scenario: str) -> list[str]:
    """The rail-pinned pair test `triage slow` prints for `scenario`, as argv after `fabtui`."""
    import shlex

    out = run("--config", str(config), "--scenario", scenario, "triage", "slow").stdout
    line = next(x for x in out.splitlines() if "> fabtui probe run nccl.mpirun" in x)
    words = shlex.split(line.split("> ", 1)[1].split(" (runbook", 1)[0])
    assert words[0] == "fabtui" and "nccl_env=NCCL_IB_HCA==mlx5_1" in words
    return words[1:]


def test_the_printed_rail_pair_passes_on_a_healthy_fabric(run: Callable[..., Result],
                                                          config: Path) -> None:
    # issue 39: the pair is pinned to one NIC; judged against all 8 NICs' worth it failed on a
    # healthy fabric (48 GB/s against 384) and "confirmed" a rail that was fine.
    words = _printed_rail_pair(run, config, "slow-nic-optic")
    result = run("--config", str(config), "--scenario", "healthy", *words)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert ": OK" in result.stdout.splitlines()[0]
    expected = next(x for x in result.stdout.splitlines() if " busbw_expected " in x)
    assert "48 GB/s" in expected  # one 400G NIC: 400/8 x 0.96


def test_the_printed_rail_pair_fails_on_the_degraded_rail_only(run: Callable[..., Result],
                                                               config: Path) -> None:
    # slow-nic-optic: node006's mlx5_1 optic loses frames; the pair pinned to rail 1 fails, the
    # same pair pinned to a sibling rail passes (the sim costs go-back-N on the lossy link only)
    words = _printed_rail_pair(run, config, "slow-nic-optic")
    bad = run("--config", str(config), "--scenario", "slow-nic-optic", *words)
    assert bad.exit_code != 0 and ": FAIL" in bad.stdout.splitlines()[0], bad.stdout
    sibling = [w.replace("NCCL_IB_HCA==mlx5_1", "NCCL_IB_HCA==mlx5_2") for w in words]
    good = run("--config", str(config), "--scenario", "slow-nic-optic", *sibling)
    assert good.exit_code == 0 and ": OK" in good.stdout.splitlines()[0], good.stdout


def _hop(out: str, head: str) -> list[str]:
    """The evidence lines (`+`) of the note's hop whose first line contains `head`."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if head in line)
    return [x.strip()[2:] for x in itertools.takewhile(
        lambda x: x.strip().startswith(("+", "-")), lines[start + 1:])]


def test_a_hop_that_shows_a_few_gpus_names_the_ones_it_left_out(run: Callable[..., Result],
                                                                config: Path) -> None:
    # slow-node: all 8 GPUs of node004 throttle; the hop details 4, the others must be named.
    out = run("--config", str(config), "--scenario", "slow-node", "triage", "slow").stdout
    evidence = _hop(out, "[gpu] node004:")
    gpus = [f"node004:gpu{n}" for n in range(8)]
    detailed = [line.split(": ", 1)[0] for line in evidence if line.startswith("node004:gpu")]
    assert 0 < len(detailed) < len(gpus)
    rest = [g for g in gpus if g not in detailed]
    assert f"... and {len(rest)} more GPU(s) moving at the same moments: " \
           f"{', '.join(rest)}" in evidence


def test_a_leaf_hop_names_every_port_the_rail_hop_counted(run: Callable[..., Result],
                                                         config: Path) -> None:
    # slow-tenant-pfc: another tenant fills leaf-g00-r5; the rail hop counts its ports that
    # move, the leaf hop details 4 and must name the rest.
    out = run("--config", str(config), "--scenario", "slow-tenant-pfc", "triage", "slow").stdout
    counted = next(line for line in _hop(out, "[rail] rail 5") if "port(s) moving" in line)
    moving = int(counted.split(": ", 1)[1].split(" ", 1)[0])
    evidence = _hop(out, "[leaf] leaf-g00-r5")
    detailed = [line.split(": ", 1)[0] for line in evidence
                if line.split(": ", 1)[0].count(":") == 1]
    more = next(line for line in evidence if line.startswith("... and "))
    named = more.split("pausing or marking: ", 1)[1].split(", ")
    assert more.startswith(f"... and {len(named)} more port(s) of leaf-g00-r5 pausing or marking")
    assert len(set(detailed + named)) == moving
