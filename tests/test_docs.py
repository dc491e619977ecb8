"""The documentation stays true: examples load, commands are documented, CI runs the README."""

from __future__ import annotations

import re
from pathlib import Path

from fabtui.cli.topo import topo
from fabtui.config import Config
from fabtui.topology.loader import load_topology
from fabtui.topology.validate import validate

REPO = Path(__file__).resolve().parent.parent


def test_readme_template_example_is_a_clean_fabric(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    (block,) = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    path = tmp_path / "example.yaml"
    path.write_text(block)
    loaded = load_topology(path)
    assert len(loaded.topology.nodes) == 95
    assert validate(loaded) == []


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    commands = re.findall(r"^(python3 -m venv .*)$", readme, re.M)
    assert len(commands) == 2
    assert commands[1] in (REPO / ".ci" / "run").read_text().splitlines()


def test_every_topo_command_is_documented() -> None:
    doc = (REPO / "docs" / "topology.md").read_text()
    for name in topo.commands:
        assert f"fabtui topo {name}" in doc, name


def test_every_setting_is_documented() -> None:
    doc = (REPO / "docs" / "configuration.md").read_text()
    for name in Config.model_fields:
        assert re.search(rf"^{name} = ", doc, re.M), name


def test_the_as_built_section_names_real_modules_and_every_package() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text()
    built = doc[doc.index("## As built"):]
    package = REPO / "fabtui"
    # each bullet opens with its package (`cli/`); it names that package's modules (`app.py`)
    folders = re.findall(r"(?m)^- `([a-z_]+)/", built)
    for folder in folders:
        assert (package / folder).is_dir(), folder
    for line in built.split("\n- "):
        head = re.match(r"`([a-z_]+)/", line.strip())
        for name in re.findall(r"`([a-z_/]+\.py)`", line):
            candidates = [package / name, REPO / name] + \
                ([package / head.group(1) / name] if head else [])
            assert any(c.exists() for c in candidates), name
    packages = {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    assert packages - {"_data"} <= set(folders), packages - set(folders)


def _readme_commands() -> list[str]:
    """The command lines of the README's "What you can do today" block, comments cut."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("## What you can do today", 1)[1]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match is not None
    block = re.sub(r"\\\n\s*", "", match.group(1))
    return [line.split(" #", 1)[0].strip() for line in block.splitlines()
            if line.split(" #", 1)[0].strip()]


FINDS_SOMETHING = {
    "fabtui topo check topology/examples/faulty.yaml",
    "fabtui --scenario nccl-hang probe run logs.nccl --target node001 "
    "--param path=/var/log/fabtui-sim/job.log",
    "fabtui --scenario nccl-hang runbook run nccl-hang-triage --answer cordon=node003 "
    "--answer restart=yes",
    "fabtui --scenario optic-degrading runbook run customer-acceptance --answer idle=yes",
    "fabtui --scenario nccl-hang probe run nic.ibstat --target leaf:leaf-g00-r5",
    "fabtui triage nccl examples/hung-job/",
    "fabtui --scenario slow-spine-optic triage slow",
    "fabtui --scenario ib-bad-cable runbook run ib-fabric-triage",
    "fabtui --scenario qos-misconfig drift",
    "fabtui drift --since-good --job 4242",
    "fabtui --scenario miscabled-swap topo cabling",
}
"""README lines that find a problem on purpose: exit 1, as the README says; the rest exit 0."""
WAITS_AT_A_GATE = {
    "fabtui runbook run nccl-hang-triage --answer cordon=node003 --answer restart=no",
}
"""README lines whose session waits at a gate answered "no" (not yet): exit 5."""


def test_every_readme_command_exits_as_documented(tmp_path: Path) -> None:
    """Run the README's commands in order, from the checkout, on a fresh demo fabric.

    Each is a process of its own, forked from the tests' fork server (tests/support/fabtui_fork.py):
    what the commands do is the test, not the interpreter's start-up (the packaging and
    import-hygiene tests start real ones), which was two thirds of this test's 28 s."""
    import os
    import shlex

    from tests.support import fabtui_fork

    commands = _readme_commands()
    assert len(commands) >= 25 and set(FINDS_SOMETHING) <= set(commands)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABTUI_")}
    env.update(PYTHONPATH=str(REPO), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), HOME=str(tmp_path))
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "fabtui", command
        if ">" in argv:  # `> my.yaml`: the output is captured here instead
            argv = argv[:argv.index(">")]
        if argv[1:3] == ["runbook", "test"]:
            # Every runbook's cases take minutes (test_runbook_library runs them all); the
            # command is the same with one runbook named.
            argv.append("rank-mapping-check")
        result = fabtui_fork.run(["fabtui", *argv[1:]], cwd=REPO, env=env, input="exit\n",
                                 timeout=300)
        expected = 1 if command in FINDS_SOMETHING else 5 if command in WAITS_AT_A_GATE else 0
        assert result.returncode == expected, f"{command}: exit {result.returncode}\n" \
            f"{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr, command
    assert "demo fabric:" not in result.stderr  # the last line returned it to healthy


def test_every_command_takes_json_as_the_readme_says() -> None:
    import click

    from fabtui.cli import cli

    readme = (REPO / "README.md").read_text()
    assert "Every command takes `--json` for scripts, except `sim switch` and `sim node`" in \
        readme and "and `tui`, which is the app" in readme
    missing = []

    ctx = click.Context(cli)

    def walk(group: click.Group, prefix: list[str]) -> None:
        for name in group.list_commands(ctx):  # the root group loads its commands lazily
            command = group.get_command(ctx, name)
            assert command is not None, name
            if isinstance(command, click.Group):
                walk(command, [*prefix, name])
            elif not any("--json" in p.opts for p in command.params):
                missing.append(" ".join([*prefix, name]))

    walk(cli, [])
    assert sorted(missing) == ["sim node", "sim switch", "tui"]
