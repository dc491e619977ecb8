"""Where fabtui finds its shipped data and keeps the user's files.

The shipped folders (`topology/`, `runbooks/`, `cases/`, `probes/`, `examples/`) sit at the top
of the source tree. A wheel carries them inside the package as `fabtui/_data/<name>` (see
pyproject.toml), so both a source checkout (editable install) and a plain `pip install .` find
them.
"""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP_NAME = "fabtui"
SHIPPED = ("topology", "runbooks", "cases", "probes", "examples")

_PACKAGE = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path:
    """The shipped data folder `name` (one of `SHIPPED`), installed or in the source tree."""
    if name not in SHIPPED:
        raise ValueError(f"unknown shipped folder {name!r}")
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def demo_topology() -> Path:
    """The built-in demo fabric every other part of the product runs on by default."""
    return shipped_dir("topology") / "demo.yaml"


def shipped_templates() -> Path:
    """Folder of the shipped topology templates."""
    return shipped_dir("topology") / "templates"


def user_config_file() -> Path:
    """The per-user configuration file (it need not exist)."""
    return platformdirs.user_config_path(APP_NAME) / "config.toml"


def default_data_dir() -> Path:
    """Where journals and the case database live unless configured otherwise."""
    return platformdirs.user_data_path(APP_NAME)


def display_path(path: Path) -> str:
    """The path as messages show it: relative to the working folder when below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
