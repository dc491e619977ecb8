"""Hostile and broken input through the real `fabtui` command: refused as `file:line`, exit 2.

Every YAML the tool reads goes through one reader (fabtui.yamldoc), so an alias bomb is refused the
same way in a topology, a scenario and a runbook's front matter; the config file and the runbook
library report what is wrong with them when they are read, not when a value is first used.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_cli import real


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
