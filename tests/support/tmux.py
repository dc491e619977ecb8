"""The real `fabtui` in a real terminal: a tmux server of the test's own (`tmux`, a fixture) and
a wait for the pane's text (`wait_for`).

A test module that takes the `tmux` fixture imports it from here (pytest finds a fixture in the
test module's namespace) and names it in `__all__`, so that the import reads as used.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fabtui.workspace.simfabric import IN_PROCESS_VAR


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Run tmux on a socket of this test's own; the server is killed afterwards."""
    socket = f"fabtui-test-{os.getpid()}-{tmp_path.name}"
    # The server's locale decides how wide it takes each character to be: UTF-8, as a user's.
    # COLUMNS / LINES (set by some test runners) would override the pane's size in the app.
    # The real app talks to the demo fabric through device processes, as a user's does.
    dropped = ("COLUMNS", "LINES", IN_PROCESS_VAR)
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(LANG="C.UTF-8", LC_ALL="C.UTF-8")

    def run(*args: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True,
                              check=False, env=env).stdout

    yield run
    run("kill-server")


def wait_for(screen: Callable[[], str], wanted: str | Callable[[str], bool],
             seconds: float = 40, *, step: str = "") -> str:
    """The pane's text once it shows `wanted` — a substring, or a test of the whole pane for
    what must show together, since the app draws its widgets one refresh apart (polled; fails
    after `seconds`, naming `step`, what it waited for, and the pane as last seen)."""
    shows = wanted if callable(wanted) else (lambda text: wanted in text)
    deadline = time.monotonic() + seconds
    text = ""
    while time.monotonic() < deadline:
        text = screen()
        if shows(text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"{f'step {step!r}: ' if step else ''}{wanted!r} never showed in "
                         f"{seconds:g} s; the pane:\n{text}")
