"""End to end: the real `fabtui` process in a real terminal (tmux), on the demo fabric playing
pfc-storm. Bare `fabtui` on a terminal opens the app; the storm shows; find and quit work."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="tmux is not installed (apt-get install tmux)")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Run tmux on a socket of this test's own; the server is killed afterwards."""
    socket = f"fabtui-test-{os.getpid()}-{tmp_path.name}"
    # The server's locale decides how wide it takes each character to be: UTF-8, as a user's.
    # COLUMNS / LINES (set by some test runners) would override the pane's size in the app.
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(LANG="C.UTF-8", LC_ALL="C.UTF-8")

    def run(*args: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True,
                              check=False, env=env).stdout

    yield run
    run("kill-server")


def wait_for(screen: Callable[[], str], wanted: str, seconds: float = 40) -> str:
    """The pane's text once it shows `wanted` (polled; fails after `seconds`)."""
    deadline = time.monotonic() + seconds
    text = ""
    while time.monotonic() < deadline:
        text = screen()
        if wanted in text:
            return text
        time.sleep(0.1)
    raise AssertionError(f"{wanted!r} never showed; the pane:\n{text}")


def test_fabtui_on_a_terminal_opens_the_app_and_shows_the_storm(
        tmux: Callable[..., str], tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('poll = ["nic.ethtool@node*:*", "switch.pfc@leaf-*"]\n'
                      'poll_interval = 1\n', encoding="utf-8")
    env = {"PYTHONPATH": str(REPO), "FABTUI_CONFIG": str(config), "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "data"), "TERM": "xterm-256color",
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PATH": os.environ.get("PATH", "")}
    settings = [shlex.quote(f"{k}={v}") for k, v in env.items()]
    command = " ".join(["env", "-u", "COLUMNS", "-u", "LINES", *settings,
                        shlex.quote(sys.executable), "-m", "fabtui", "--scenario", "pfc-storm"])
    tmux("new-session", "-d", "-s", "e2e", "-x", "100", "-y", "40", command)

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "e2e")

    wait_for(screen, "NICs ✗1/64")
    text = wait_for(screen, "leaves ✗1/8")  # the NICs are swept first, then the leaves
    assert "scenario pfc-storm" in text
    node = next(line for line in text.splitlines() if line.startswith("node006"))
    assert node.split()[:7] == ["node006", "✗", "✓", "✓", "✓", "✓", "✗"]
    tmux("send-keys", "-t", "e2e", "/")
    wait_for(screen, "find")
    tmux("send-keys", "-t", "e2e", "-l", "leaf-g00-r4:Ethernet40")
    tmux("send-keys", "-t", "e2e", "Enter")
    text = wait_for(screen, "rate.rx.PFC3")
    assert "leaf-g00-r4:Ethernet40" in text
    print(text)  # what the closing note quotes
    tmux("send-keys", "-t", "e2e", "q")
    deadline = time.monotonic() + 10
    while "e2e" in tmux("list-sessions") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "e2e" not in tmux("list-sessions")
