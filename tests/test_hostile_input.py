"""Hostile and broken input through the real `fabtui` command: refused as `file:line`, exit 2.

Each command is a `fabtui` process of its own (`real` of tests/support/cli.py, forked from the
tests' fork server: the command's own reading of the input is the test, not the interpreter's
start-up).

Every YAML the tool reads goes through one reader (fabtui.yamldoc), so an alias bomb is refused the
same way in a topology, a scenario and a runbook's front matter; the config file and the runbook
library report what is wrong with them when they are read, not when a value is first used.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.cli import real


def _laughs(levels: int = 9, width: int = 9) -> list[str]:
    """The lines of a "billion laughs": 9**9 values once its aliases are expanded."""
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]"
              for i in range(1, levels)]
    return lines


def _refused(result: subprocess.CompletedProcess[str], where: str, words: str) -> None:
    """Exit 2 and a one-line message at `where` saying `words`; no traceback."""
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stderr
    assert any(line.startswith(where) and words in line
               for line in result.stderr.splitlines()), result.stderr


BOMB_WORDS = "aliases expand to more than 100,000 values"


def test_topo_check_refuses_an_alias_bomb(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("cluster: {name: lol}\n" + "\n".join(_laughs()) + "\n")
    # Refused after measuring the aliases, before anything is expanded (9**9 values would take
    # minutes and gigabytes): `real` would time out long before that.
    _refused(real("topo", "check", str(bomb)), f"{bomb}:7:", BOMB_WORDS)


def test_topo_show_refuses_a_configured_bomb(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text("\n".join(_laughs()) + "\n")
    config = tmp_path / "fabtui.toml"
    config.write_text('topology = "bomb.yaml"\n')
    _refused(real("--config", str(config), "topo", "show"), f"{tmp_path / 'bomb.yaml'}:6:",
             BOMB_WORDS)


def test_a_scenario_bomb_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "laughs.yaml"
    bomb.write_text("name: laughs\n" + "\n".join(_laughs()) + "\n")
    _refused(real("sim", "show", str(bomb)), f"{bomb}:7:", BOMB_WORDS)


def test_runbook_front_matter_bomb_is_refused_at_its_file_line(tmp_path: Path) -> None:
    book = tmp_path / "laughs.md"
    book.write_text("---\nid: laughs\ntitle: Laughs\n" + "\n".join(_laughs()) +
                    "\n---\n# Laughs\n\n## Step\n\nprose\n")
    _refused(real("runbook", "show", str(book)), f"{book}:9:", BOMB_WORDS)
    linted = real("runbook", "lint", str(book))  # lint's verdict: exit 1, the error listed
    assert linted.returncode == 1 and f"{book}:9: error: {BOMB_WORDS}" in linted.stdout


@pytest.mark.parametrize("text", ["- " * 20_000 + "x\n", "a: " + "[" * 500 + "]" * 500 + "\n"])
def test_topo_check_refuses_absurd_nesting(tmp_path: Path, text: str) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text(text)
    _refused(real("topo", "check", str(deep)), f"{deep}:1:", "nesting deeper than 100 levels")


def test_topo_check_refuses_host_names_and_addresses_ssh_must_not_see(tmp_path: Path) -> None:
    topo = tmp_path / "inject.yaml"
    topo.write_text("""\
cluster: {name: x}
nodes:
  - hostname: "n2;touch${IFS}/tmp/pwned"
  - hostname: n3
    mgmt: "-oProxyCommand=touch /tmp/pwned"
  - hostname: n4
    mgmt: "$(reboot)"
  - hostname: n5
    mgmt: admin@10.0.0.5
switches:
  - {name: "leaf;id", role: leaf}
  - {name: spine1, role: spine, mgmt: "10.0.0.9:2222"}
""")
    result = real("topo", "check", str(topo))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert [line.split(": ", 1)[0] for line in result.stderr.splitlines()] == [
        f"{topo}:{n}" for n in (3, 5, 7, 11, 12)]  # admin@10.0.0.5 is fine
    assert "hostname 'n2;touch${IFS}/tmp/pwned' is not a host name" in result.stderr
    assert "n3 mgmt '-oProxyCommand=touch /tmp/pwned' is not a host name or address" \
        in result.stderr
    assert "switch name 'leaf;id' is not a host name" in result.stderr
    assert "spine1 mgmt '10.0.0.9:2222' names port 2222" in result.stderr


def test_a_template_override_with_a_bad_host_is_refused_at_its_line(tmp_path: Path) -> None:
    topo = tmp_path / "over.yaml"
    topo.write_text("""\
template: h100-32gpu
overrides:
  nodes:
    - hostname: spare01
      mgmt: "`reboot`"
""")
    _refused(real("topo", "check", str(topo)), f"{topo}:5:",
             "spare01 mgmt '`reboot`' is not a host name or address")


@pytest.mark.parametrize("name", ["demo", "h100-1024gpu-rail", "h100-32gpu", "b300-64gpu-2plane"])
def test_shipped_fabrics_still_pass_the_address_checks(name: str, tmp_path: Path) -> None:
    from fabtui.paths import demo_topology, shipped_templates

    path = demo_topology() if name == "demo" else shipped_templates() / f"{name}.yaml"
    assert real("topo", "check", str(path)).returncode == 0
    out = tmp_path / "explicit.yaml"  # the generator's explicit output reads back clean too
    assert real("topo", "generate", str(path) if name != "demo" else "h100-64gpu",
                "-o", str(out)).returncode == 0
    assert real("topo", "check", str(out)).returncode == 0


# item 6: a broken runbook says why; the config says what is wrong when it is read ------------

BROKEN_RUNBOOK = """\
---
id: {id}
title: Broken
summary: a runbook whose front matter does not validate
inputs:
  - name: port
    type: strng
---
# Broken

## Step

prose
"""


def test_running_a_broken_runbook_says_why_with_file_line(tmp_path: Path) -> None:
    (tmp_path / "rb").mkdir()
    (tmp_path / "rb" / "broken.md").write_text(BROKEN_RUNBOOK.format(id="broken-one"))
    (tmp_path / "fabtui.toml").write_text('runbook_dirs = ["rb"]\n')
    config = ("--config", "fabtui.toml")
    for command in (("run", "broken-one", "--dry-run"), ("show", "broken-one")):
        _refused(real(*config, "runbook", *command, cwd=tmp_path),
                 "rb/broken.md:7: runbook 'broken-one' cannot be read: inputs[0].type:", "strng")
    for listing in (("list",), ("list", "--json")):
        listed = real(*config, "runbook", *listing, cwd=tmp_path)
        assert listed.returncode == 0 and "unreadable: rb/broken.md:7: error: inputs[0].type" \
            in listed.stderr
    linted = real(*config, "runbook", "lint", cwd=tmp_path)
    assert linted.returncode == 1 and "rb/broken.md:7: error: inputs[0].type" in linted.stdout


def test_a_broken_team_copy_is_not_silently_replaced_by_the_shipped_runbook(
        tmp_path: Path) -> None:
    (tmp_path / "rb").mkdir()
    (tmp_path / "rb" / "link-flap.md").write_text(BROKEN_RUNBOOK.format(id="link-flap"))
    (tmp_path / "fabtui.toml").write_text('runbook_dirs = ["rb"]\n')
    result = real("--config", "fabtui.toml", "runbook", "show", "link-flap", cwd=tmp_path)
    _refused(result, "rb/link-flap.md:7: runbook 'link-flap' cannot be read", "strng")
    assert result.stdout == ""  # the shipped link-flap was not shown in its place


@pytest.mark.parametrize(("lines", "line", "words"), [
    (['topology = "clusters/prod-a.yaml"'], 1,
     "topology: {dir}/clusters/prod-a.yaml: no such file"),
    (['ranks = "jobs"'], 1, "ranks: {dir}/jobs: is a folder, not a file"),
    (['data_dir = "d"', 'scenario = "pfc-strom"'], 2,
     "scenario: unknown scenario 'pfc-strom' (did you mean 'pfc-storm'?)"),
    (['scenario = "mine.yaml"'], 1, "scenario: {dir}/mine.yaml: no such file"),
    (['simulate = "yes"'], 1, "simulate: expected true or false (without quotes), got 'yes'"),
    (['redact = ["corp-[unclosed"]'], 1, "redact: 'corp-[unclosed' is not a valid regular"),
    (['redact = [', '  "corp-[A-Z0-9]{24}",', '  ".*",', ']'], 3,
     "redact: '.*' matches empty text"),
    (["redact = ['\\S+']"], 1, "redact: '\\\\S+' would mask most of ordinary output"),
    (["redact = ['(\\w+\\s?)+$']"], 1, "risks catastrophic backtracking"),
])
def test_the_config_reports_what_it_names_wrongly_when_read(
        tmp_path: Path, lines: list[str], line: int, words: str) -> None:
    (tmp_path / "jobs").mkdir()
    config = tmp_path / "fabtui.toml"
    config.write_text("\n".join(lines) + "\n")
    expected = words.format(dir=tmp_path)
    for command in (("config",), ("topo", "show")):
        _refused(real("--config", str(config), *command), f"{config}:{line}: ", expected)


def test_a_valid_config_still_reads(tmp_path: Path) -> None:
    from fabtui.paths import shipped_templates

    config = tmp_path / "fabtui.toml"
    config.write_text(f'topology = "{shipped_templates() / "h100-32gpu.yaml"}"\n'
                      'scenario = "pfc-storm"\nsimulate = true\n'
                      "redact = ['corp-[A-Za-z0-9]{24}', '(?i)token=(\\S+)']\n")
    assert real("--config", str(config), "topo", "show").returncode == 0
