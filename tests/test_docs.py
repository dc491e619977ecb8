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
