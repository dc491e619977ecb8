"""The commands fabtui prints as next steps run as printed.

An on-call engineer copies `Confirm: fabtui probe run ...`, `(details: fabtui topo check)` or
`hand over with: fabtui runbook run ...` into a shell. Each journey below runs on the demo
fabric as a user would, collects every fabtui command its output names, and runs each one
through the CLI exactly as printed (`shlex.split`): none may end in a usage error (exit 2: a
missing argument, a target of the wrong kind, a runbook input left out). What the commands find
is their own tests' subject; here only that they run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.cli import cli
from tests.support import REPO

EXIT_USAGE = 2
_COMMAND = re.compile(r"(?<![\w./-])fabtui((?: [^\s;`()]+)*)")
"""`fabtui` and its words up to what ends a command in prose: two spaces (the description
column), `;`, a bracket or a backtick."""
_PLACEHOLDER = re.compile(r"\b(?:NAME|FILE|WHY|SESSION|JOBID)\b|\.\.\.|<[a-z-]+>|‹")
"""Words the user is meant to fill in: such a line is a template, not a command."""


def printed_commands(text: str) -> list[str]:
    """Every fabtui command line `text` prints, in order, once each; templates left out."""
    import click

    subcommands = set(cli.list_commands(click.Context(cli)))
    found: list[str] = []
    for match in _COMMAND.finditer(text):
        words = match.group(1).strip().rstrip(".,:")
        first = words.split(" ", 1)[0]
        if not words or not (first in subcommands or first.startswith("--")):
            continue  # prose ("fabtui - no fabric configured"), not a command
        line = f"fabtui {words}"
        if not _PLACEHOLDER.search(line) and line not in found:
            found.append(line)
    return found


def _run_as_printed(run: Callable[..., Result], command: str) -> Result:
    words = shlex.split(command)
    assert words[0] == "fabtui"
    return run(*words[1:])


def _all_run(run: Callable[..., Result], commands: list[str]) -> None:
    """Run each command as printed; fail naming every one that ended in a usage error."""
    broken = []
    for command in commands:
        result = _run_as_printed(run, command)
        if result.exit_code == EXIT_USAGE:
            broken.append(f"{command}\n    -> exit 2: {result.stderr.strip()[:300]}")
    assert not broken, "printed commands that fail as printed:\n" + "\n".join(broken)


def _output(result: Result) -> str:
    return result.stdout + result.stderr


@pytest.fixture
def run(sim_in_process: None) -> Callable[..., Result]:
    """The CLI in-process, on the demo fabric answering in this process (fast, same answers);
    a test's scenario keeps playing for the commands run after it, as it does for a user."""
    from click.testing import CliRunner

    runner = CliRunner()

    def _run(*args: str) -> Result:
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return _run


def test_the_summary_next_steps_run(run: Callable[..., Result]) -> None:
    result = run()  # piped: the summary
    assert result.exit_code == 0, result.stderr
    commands = printed_commands(_output(result))
    assert "fabtui topo check" in commands  # "(details: fabtui topo check)"
    assert "fabtui topo show" in commands and "fabtui sim list" in commands
    _all_run(run, commands)


def test_the_topology_summary_names_the_file_it_summarised(run: Callable[..., Result]) -> None:
    faulty = REPO / "topology" / "examples" / "faulty.yaml"
    result = run("topo", "show", "-t", str(faulty))
    (check,) = [c for c in printed_commands(result.stdout) if " topo check" in c]
    assert shlex.split(check)[-1] == str(faulty)
    assert _run_as_printed(run, check).exit_code == 1  # its findings, not the demo's


@pytest.mark.parametrize("scenario, probe", [
    ("slow-spine-optic", "switch.dom --target spine-01:Ethernet13/1"),
    ("slow-node", "gpu.smi_q --target node004"),
])
def test_triage_slow_confirmations_run(run: Callable[..., Result], scenario: str,
                                       probe: str) -> None:
    result = run("--scenario", scenario, "triage", "slow")
    assert result.exit_code == 1, result.stderr
    commands = printed_commands(_output(result))
    assert f"fabtui probe run {probe}" in commands
    _all_run(run, commands)


def test_triage_nccl_next_steps_run(run: Callable[..., Result]) -> None:
    """The runbooks and past cases a hang's report points at (examples/hung-job)."""
    result = run("triage", "nccl", str(REPO / "examples" / "hung-job"))
    assert result.exit_code == 1, result.stderr
    commands = printed_commands(_output(result))
    assert any(c.startswith("fabtui runbook run nccl-hang-triage ") for c in commands)
    assert any(c.startswith("fabtui cases show ") for c in commands)
    _all_run(run, commands)


def _hand_over(result: Result) -> str:
    lines = [line.split(": ", 1)[1] for line in _output(result).splitlines()
             if line.startswith("hand over with: ")]
    assert len(lines) == 1, _output(result)[-2000:]
    return lines[0]


@pytest.mark.parametrize("scenario, runbook, args, target, carried", [
    # a failed acceptance hands its failing port to the optic replacement
    ("optic-degrading", "customer-acceptance", ["--answer", "idle=yes"], "optic-replacement",
     "port=leaf-g00-r3:Ethernet16"),
    # busbw-low hands the congested leaf to multi-job-interference (its required input)
    ("multi-job-interference", "busbw-low", [], "multi-job-interference", "leaf=leaf-g00-r2"),
    # the hang triage hands the dead optic's port over
    ("nccl-hang", "nccl-hang-triage", ["--answer", "cordon=node003", "--answer", "restart=yes"],
     "optic-replacement", "port=leaf-g00-r5:Ethernet16"),
    # ... and the NIC it suspects to the RDMA error triage (its required input)
    ("mtu-mismatch", "nccl-hang-triage", ["--input", "suspect_nic=node005:mlx5_2", "--answer",
                                          "cordon=node005", "--answer", "restart=yes"],
     "rdma-error-triage", "nic=node005:mlx5_2"),
])
def test_runbook_hand_overs_run(run: Callable[..., Result], scenario: str, runbook: str,
                                args: list[str], target: str, carried: str) -> None:
    result = run("--scenario", scenario, "runbook", "run", runbook, *args)
    assert result.exit_code == 1, _output(result)[-2000:]
    command = _hand_over(result)
    after = _run_as_printed(run, command)
    assert after.exit_code != EXIT_USAGE, f"{command}\n{after.stderr}"
    assert "== handed over from session" in after.stdout
    words = shlex.split(command)
    assert words[:4] == ["fabtui", "runbook", "run", target] and carried in words


def test_prose_and_templates_are_not_taken_for_commands() -> None:
    text = ("fabtui - no fabric configured, showing the demo\n"
            "  fabtui sim list                  fault scenarios (fabtui --scenario NAME ...)\n"
            "Confirm: fabtui probe run switch.dom --target spine-01:Ethernet13/1; then runbook\n"
            "or end it for good: fabtui runbook abandon 2026 --reason WHY\n"
            "  findings    0 errors (details: fabtui topo check)\n"
            "see `fabtui.workspace.slowprom`\n")
    assert printed_commands(text) == [
        "fabtui sim list", "fabtui probe run switch.dom --target spine-01:Ethernet13/1",
        "fabtui topo check"]


def test_a_path_in_a_printed_command_is_kept_whole(tmp_path: Path) -> None:
    assert printed_commands(f"(details: fabtui topo check {tmp_path}/a.yaml)") == [
        f"fabtui topo check {tmp_path}/a.yaml"]
