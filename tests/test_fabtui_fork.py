"""The tests' fork server (tests/support/fabtui_fork.py) runs a command as a real `fabtui`
process would: the same output and exit status, the request's own environment, a traceback for
a bug, a kill on timeout, and nothing left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import fabtui_fork
from tests.support.processes import descendants

REPO = Path(__file__).resolve().parent.parent


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABTUI_")}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"))
    env.update(extra)
    return env


def _real(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**env, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "fabtui", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120, check=False)


def test_a_fork_answers_as_a_new_process_does(tmp_path: Path) -> None:
    """Exit 0, 1 (findings) and 2 (bad input), and the config a command finds from the
    request's XDG_CONFIG_HOME, HOME and working folder: the same, byte for byte."""
    config = tmp_path / "config" / "fabtui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('scenario = "nccl-hang"\n')
    env = _env(tmp_path)
    faulty = str(REPO / "topology" / "examples" / "faulty.yaml")
    commands = [["config", "--json"], ["topo", "check", faulty], ["topo", "check", "missing.yaml"]]
    for args in commands:
        forked = fabtui_fork.run(["fabtui", *args], env=env, cwd=tmp_path, timeout=120)
        real = _real(args, env, tmp_path)
        assert (forked.returncode, forked.stdout, forked.stderr) == \
            (real.returncode, real.stdout, real.stderr), args
    assert [fabtui_fork.run(["fabtui", *a], env=env, cwd=tmp_path).returncode
            for a in commands] == [0, 1, 2]
    shown = json.loads(fabtui_fork.run(["fabtui", "config", "--json"], env=env).stdout)
    assert shown["config_file"] == str(config) and shown["scenario"] == "nccl-hang"
    assert shown["data_dir"] == str(tmp_path / "data" / "fabtui")


def test_each_fork_sees_its_own_environment(tmp_path: Path) -> None:
    """Nothing the zygote imported kept its own (neutral) HOME or XDG_* folders, nor an earlier
    request's: FABTUI_CONFIG, XDG_DATA_HOME and the folder change from one command to the next."""
    seen = []
    for name in ("one", "two"):
        folder = tmp_path / name
        (folder / "data").mkdir(parents=True)
        config = folder / "mine.toml"
        config.write_text(f'data_dir = "{folder / "data"}"\n')
        env = _env(folder, FABTUI_CONFIG=str(config))
        done = fabtui_fork.run(["fabtui", "config", "--json"], env=env, cwd=folder)
        assert done.returncode == 0, done.stderr
        seen.append(json.loads(done.stdout))
        assert seen[-1]["config_file"] == str(config)
        assert seen[-1]["data_dir"] == str(folder / "data")
        assert fabtui_fork.NEUTRAL not in done.stdout
    default = json.loads(fabtui_fork.run(["fabtui", "config", "--json"],
                                         env=_env(tmp_path)).stdout)
    assert default["config_file"] is None
    assert default["data_dir"] == str(tmp_path / "data" / "fabtui")


def test_a_bug_prints_its_traceback_and_exits_1(tmp_path: Path) -> None:
    """An exception nothing catches (FABTUI_DEBUG lets fabtui's own handler re-raise it) ends the
    fork as it ends the interpreter: a Python traceback on stderr, exit 1."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = _env(tmp_path, XDG_DATA_HOME=str(blocker / "data"), FABTUI_DEBUG="1")
    forked = fabtui_fork.run(["fabtui", "runbook", "sessions"], env=env, cwd=tmp_path)
    assert forked.returncode == 1
    assert forked.stderr.startswith("Traceback (most recent call last):")
    assert forked.stderr.rstrip().splitlines()[-1].startswith("NotADirectoryError: ")
    del env["FABTUI_DEBUG"]
    handled = fabtui_fork.run(["fabtui", "runbook", "sessions"], env=env, cwd=tmp_path)
    real = _real(["runbook", "sessions"], env, tmp_path)
    assert (handled.returncode, handled.stderr) == (real.returncode, real.stderr)
    # handled, it is named (a data folder whose path runs through a file), with exit 2
    assert "Traceback" not in handled.stderr and handled.returncode == 2
    assert handled.stderr.startswith("fabtui: not a folder: ")


def test_the_zygote_is_one_thread_that_preloaded_the_cli() -> None:
    ready = fabtui_fork.info()
    assert ready["threads"] == 1  # a fork copies no lock another thread holds
    assert {"fabtui.cli.app", "fabtui.cli.runbook", "numpy"} <= set(ready["preloaded"])
    assert "fabtui.sim.server" not in ready["preloaded"]  # reads the environment at import


def test_a_timeout_kills_the_command_and_leaves_nothing(tmp_path: Path) -> None:
    zygote = fabtui_fork.info()["pid"]
    before = descendants(zombies=False)
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        fabtui_fork.run(["fabtui", "sim", "exporter", "--port", "0"], env=_env(tmp_path),
                        cwd=tmp_path, timeout=3)
    assert "serving" in str(raised.value.stderr)  # it ran, until killed
    assert descendants(zombies=False) - before == set()
    assert zygote in descendants(zombies=False)  # and the zygote serves on
    assert fabtui_fork.run(["fabtui", "--version"], cwd=tmp_path).returncode == 0


def test_a_dead_zygote_is_replaced_and_close_stops_it(tmp_path: Path) -> None:
    first = fabtui_fork.info()["pid"]
    os.kill(first, signal.SIGKILL)
    done = fabtui_fork.run(["fabtui", "topo", "check", str(REPO / "topology/demo.yaml")],
                           cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    second = fabtui_fork.info()["pid"]
    assert second != first and second in descendants(zombies=False)
    fabtui_fork.close()
    deadline = time.monotonic() + 10
    while second in descendants() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert second not in descendants()


def test_without_a_zygote_commands_run_as_new_processes(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A zygote that cannot start (here: its script is missing; in life, fabtui failing to
    import) leaves each command to a new `python -m fabtui` process, which says what is wrong."""
    monkeypatch.setattr(fabtui_fork, "__file__", str(tmp_path / "missing.py"))
    zygote = fabtui_fork._Zygote()
    request = {"argv": ["fabtui", "topo", "check", "missing.yaml"], "env": _env(tmp_path),
               "cwd": str(tmp_path)}
    done = zygote.run(request, None, 120, False)
    assert (done.returncode, done.stderr) == (2, "missing.yaml: no such file\n")
    assert done.args == ["fabtui", "topo", "check", "missing.yaml"]
    assert zygote._broken  # and the next command does not try again
    zygote.close()
