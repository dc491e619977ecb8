"""A plain `pip install .` (a wheel, not an editable install) finds the shipped data folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built as a wheel and installed (without dependencies) into a bare folder."""
    out = tmp_path_factory.mktemp("wheel")
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(REPO)], check=True, capture_output=True)
    (wheel,) = out.glob("fabtui-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True)
    return target


def _run(target: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(target), HOME=str(cwd))
    env.pop("FABTUI_CONFIG", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=env, check=False)


def test_the_wheel_carries_the_shipped_folders(installed: Path, tmp_path: Path) -> None:
    data = installed / "fabtui" / "_data"
    for name in ("topology", "runbooks", "cases", "probes", "examples"):
        assert (data / name).is_dir(), name
    assert (data / "examples" / "all_reduce.log").is_file()  # the README's parse example
    assert (data / "topology" / "demo.yaml").is_file()
    assert (data / "topology" / "templates" / "h100-1024gpu-rail.yaml").is_file()
    located = _run(installed, "-c", "from fabtui.paths import demo_topology; "
                   "print(demo_topology())", cwd=tmp_path)
    assert located.stdout.strip() == str(data / "topology" / "demo.yaml")


def test_the_installed_command_runs_the_demo_and_templates(installed: Path,
                                                           tmp_path: Path) -> None:
    overview = _run(installed, "-m", "fabtui", cwd=tmp_path)
    assert overview.returncode == 0, overview.stderr
    assert "8 nodes, 64 GPUs" in overview.stdout
    generated = _run(installed, "-m", "fabtui", "topo", "generate", "h100-32gpu", cwd=tmp_path)
    assert generated.returncode == 0, generated.stderr
    assert "name: h100-32gpu" in generated.stdout
