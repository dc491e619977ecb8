"""Shared fixtures: the shipped fabrics, a CLI runner, a writer for throw-away topology files."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fabtui.cli import cli
from fabtui.paths import demo_topology, shipped_dir, shipped_templates

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory: pytest.TempPathFactory,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's own ~/.config/fabtui or FABTUI_CONFIG."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv("FABTUI_CONFIG", raising=False)
    monkeypatch.delenv("FABTUI_DEBUG", raising=False)
    monkeypatch.delenv("FABTUI_SIM_STATE", raising=False)
    monkeypatch.delenv("FABTUI_SIM_TIME", raising=False)


@pytest.fixture
def demo() -> Path:
    return demo_topology()


@pytest.fixture
def faulty() -> Path:
    return shipped_dir("topology") / "examples" / "faulty.yaml"


@pytest.fixture
def template() -> Callable[[str], Path]:
    return lambda name: shipped_templates() / f"{name}.yaml"


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write dedented text to a file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def run() -> Callable[..., Result]:
    """Invoke the fabtui CLI in-process; stdout and stderr are kept apart."""
    runner = CliRunner()

    def _run(*args: str) -> Result:
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return _run
