"""Configuration: where it is found, how paths resolve, and clear errors for a bad file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui import paths
from fabtui.config import load_settings
from fabtui.errors import InputError


def test_no_config_means_the_demo_fabric() -> None:
    settings = load_settings(environ={})
    assert settings.source is None
    assert settings.topology == paths.demo_topology() and settings.topology_is_default
    assert settings.scenario == "healthy"
    assert settings.runbook_dirs == (paths.shipped_dir("runbooks"),)
    assert settings.find_template("h100-64gpu") == paths.shipped_templates() / "h100-64gpu.yaml"


def test_user_config_file_is_read(tmp_path: Path) -> None:
    user = paths.user_config_file()
    user.parent.mkdir(parents=True)
    user.write_text('topology = "prod.yaml"\nrunbook_dirs = ["~/rb"]\n')
    (user.parent / "prod.yaml").write_text("cluster: {name: prod}\n")  # named files must exist
    settings = load_settings(environ={})
    assert settings.source == user
    assert settings.topology == user.parent / "prod.yaml"
    assert settings.runbook_dirs[0] == Path("~/rb").expanduser()
    assert settings.runbook_dirs[-1] == paths.shipped_dir("runbooks")


def test_explicit_beats_environment_beats_user_file(write: Callable[[str, str], Path]) -> None:
    explicit = write("a.toml", 'scenario = "pfc-storm"\n')
    env = write("b.toml", 'scenario = "link-flap"\n')
    assert load_settings(explicit, {"FABTUI_CONFIG": str(env)}).scenario == "pfc-storm"
    assert load_settings(None, {"FABTUI_CONFIG": str(env)}).scenario == "link-flap"


def test_a_named_config_must_exist(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="config file not found"):
        load_settings(None, {"FABTUI_CONFIG": str(tmp_path / "none.toml")})


@pytest.mark.parametrize("text, expected", [
    ('topology = "x.yaml"\ntoplogy = "y"\n', "c.toml:2: unknown setting 'toplogy' "
                                            "(did you mean 'topology'?)"),
    ('scenario = 3\n', "c.toml:1: scenario: Input should be a valid string"),
    ('topology = "x.yaml\n', "c.toml:1: invalid TOML"),
])
def test_bad_config_is_reported_by_line(write: Callable[[str, str], Path], text: str,
                                        expected: str) -> None:
    with pytest.raises(InputError) as caught:
        load_settings(write("c.toml", text), {})
    assert str(caught.value.problems[0]).endswith(expected) or \
        expected in str(caught.value.problems[0])


def test_cli_uses_the_configured_topology(run: Callable[..., Result],
                                          write: Callable[[str, str], Path],
                                          template: Callable[[str], Path]) -> None:
    config = write("c.toml", f'topology = "{template("h100-32gpu")}"\n')
    result = run("--config", str(config), "topo", "show", "--json")
    assert result.exit_code == 0
    assert '"cluster": "h100-32gpu"' in result.stdout
    shown = run("--config", str(config), "config")
    assert "h100-32gpu.yaml" in shown.stdout


def test_cli_bad_config_exits_2(run: Callable[..., Result],
                                write: Callable[[str, str], Path]) -> None:
    config = write("c.toml", "colour = 1\n")
    result = run("--config", str(config), "topo", "show")
    assert result.exit_code == 2
    assert "c.toml:1: unknown setting 'colour'" in result.stderr
