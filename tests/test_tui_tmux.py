"""End to end: the real `fabtui` process in a real terminal (tmux), on the demo fabric playing
pfc-storm. Bare `fabtui` on a terminal opens the app; the storm shows; find and quit work."""

from __future__ import annotations

import os
import re
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


# --- journeys 1 and 3, end to end ------------------------------------------------------------
SIM_TIME = "960"
"""16 minutes into the nccl-hang scenario: the optic behind rank 21 is dead."""


def fabtui_env(tmp_path: Path, poll: str) -> dict[str, str]:
    """The real process's environment: its own config, home and data, a pinned demo clock."""
    config = tmp_path / "config.toml"
    config.write_text(f'poll = ["{poll}"]\npoll_interval = 5\n', encoding="utf-8")
    return {"PYTHONPATH": str(REPO), "FABTUI_CONFIG": str(config), "HOME": str(tmp_path),
            "XDG_DATA_HOME": str(tmp_path / "data"), "TERM": "xterm-256color",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PATH": os.environ.get("PATH", ""),
            "FABTUI_SIM_TIME": SIM_TIME, "TZ": "UTC"}


def start(tmux: Callable[..., str], tmp_path: Path, env: dict[str, str],
          *args: str) -> Callable[[], str]:
    """`fabtui ARGS` in a 120x40 tmux pane in tmp_path; returns the pane's capture."""
    settings = [shlex.quote(f"{k}={v}") for k, v in env.items()]
    command = " ".join(["cd", shlex.quote(str(tmp_path)), "&&", "env", "-u", "COLUMNS", "-u",
                        "LINES", *settings, shlex.quote(sys.executable), "-m", "fabtui",
                        *map(shlex.quote, args)])
    tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", command)
    return lambda: tmux("capture-pane", "-p", "-t", "e2e")


def step(what: str, text: str, began: float) -> None:
    """What the closing note quotes: the pane at a step of a journey, and when."""
    print(f"\n=== {what} (+{time.monotonic() - began:.1f} s) ===\n{text.rstrip()}")


def test_journey_1_in_tmux_from_hang_logs_to_the_hand_over_and_the_filed_case(
        tmux: Callable[..., str], tmp_path: Path) -> None:
    """`fabtui sim hang-logs`, `fabtui triage nccl logs --open`: the culprit; `s`: marked on
    the Fabric screen; `4`, `o`: nccl-hang-triage pre-filled, run by keyboard through its
    gates to "next: runbook optic-replacement"; `o`: the hand-over opens pre-filled; the
    triage session filed (`f`), its root cause typed, saved."""
    began = time.monotonic()
    env = fabtui_env(tmp_path, "switch.dom@leaf-g00-r5:Ethernet16")
    made = subprocess.run([sys.executable, "-m", "fabtui", "--scenario", "nccl-hang", "sim",
                           "hang-logs", "logs", "--case", "optic", "--ranks", "64"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    screen = start(tmux, tmp_path, env, "--scenario", "nccl-hang", "triage", "nccl", "logs",
                   "--open")

    def keys(*pressed: str) -> None:
        for key in pressed:  # one at a time: a burst reads as one paste
            tmux("send-keys", "-t", "e2e", key)
            time.sleep(0.5 if key == "Escape" else 0.15)  # esc then a key reads as alt+key

    def shown(wanted: str) -> str:
        """The pane once `wanted` shows, and the screen a moment to focus its first field (a
        key typed before that goes to the screen below)."""
        text = wait_for(screen, wanted)
        time.sleep(0.4)
        return text

    text = wait_for(screen, "deepest confirmed: optic")
    assert "culprit rank 21 node003 mlx5_5 leaf-g00-r5:Ethernet16 optic MT24000043" in text
    step("triage: the culprit", text, began)
    keys("s")
    text = wait_for(screen, "marked by triage")
    step("s: the suspect marked on the Fabric screen", text, began)
    keys("4")
    wait_for(screen, "deepest confirmed: optic")
    keys("o")
    text = shown("nccl-hang-triage: inputs")
    text = wait_for(screen, "enter: next / submit")  # the form has the focus: keys go in
    assert "node003:mlx5_5" in text
    step("o: the runbook's inputs, pre-filled from the suspect", text, began)
    keys(*["Enter"] * 6)
    wait_for(screen, "session (not started)")
    keys("g")
    text = shown("Type node003 to run it.")
    step("g: the cordon gate (typed confirmation)", text, began)
    tmux("send-keys", "-t", "e2e", "-l", "node003")
    keys("Enter")
    wait_for(screen, "cordon: accepted")
    keys("g")
    text = shown("restarted")
    step("g: restarted?", text, began)
    keys("y")
    wait_for(screen, "restart: accepted")
    keys("g")  # the rest: the decision, the hand-over step
    text = wait_for(screen, "next: runbook optic-replacement (o opens it)")
    step("g: the session ends on the hand-over", text, began)
    keys("o")
    text = shown("optic-replacement: inputs")
    text = wait_for(screen, "enter: next / submit")
    assert "leaf-g00-r5:Ethernet16" in text
    step("o: optic-replacement's inputs, carried from the session", text, began)
    keys("Enter", "Enter", "Enter")
    text = wait_for(screen, "optic-replacement ·")
    step("the optic replacement session, pre-filled", text, began)
    keys("Escape")
    wait_for(screen, "next: runbook optic-replacement (o opens it)")
    keys("f")
    shown("root cause")
    filed = text = wait_for(screen, "(draft) ─")  # drawn whole: its title names the case
    step("f: the case editor on the filed draft", text, began)
    tmux("send-keys", "-t", "e2e", "-l", "optic MT24000043 dead on leaf-g00-r5:Ethernet16")
    keys("C-s")
    deadline = time.monotonic() + 20
    while "edit session-" in (text := screen()):  # the editor closes on the saved case
        assert time.monotonic() < deadline, text
        time.sleep(0.1)
    text = wait_for(screen, "links · similar")  # the case view, on the saved case
    step("ctrl+s: the case saved, shown from the library", text, began)
    case_id = re.search(r"edit (session-[0-9a-f-]+) \(draft\)", filed)
    assert case_id is not None, filed
    shown = subprocess.run([sys.executable, "-m", "fabtui", "cases", "show", case_id.group(1)],
                           env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert shown.returncode == 0, shown.stderr
    assert "optic MT24000043 dead on leaf-g00-r5:Ethernet16" in shown.stdout
    assert "optic-replacement" in shown.stdout  # the hand-over, among its runbooks
    keys("C-q")
    print(f"\njourney 1 in tmux: {time.monotonic() - began:.1f} s")


def test_journey_3_in_tmux_a_symptom_in_english_then_chinese_a_case_and_its_runbook(
        tmux: Callable[..., str], tmp_path: Path) -> None:
    """Bare `fabtui`, `3`: "pfc storm pause" finds the PFC storm case with why it matched;
    open it, `b`: its runbook pre-filled from the case; back, "光模块 误码" finds the Chinese
    optic case; open it."""
    began = time.monotonic()
    env = fabtui_env(tmp_path, "switch.pfc@leaf-g00-r4")
    screen = start(tmux, tmp_path, env)

    def keys(*pressed: str, literal: bool = False) -> None:
        for key in pressed:
            tmux("send-keys", "-t", "e2e", *(["-l"] if literal else []), key)
            time.sleep(0.5 if key == "Escape" else 0.15)  # esc then a key reads as alt+key

    wait_for(screen, "^p palette")
    time.sleep(0.4)
    keys("3")
    text = wait_for(screen, "cases in the library")
    step("3: the case library", text, began)
    keys("pfc storm pause", literal=True)
    text = wait_for(screen, "pfc-storm-node006-nic-stall-prevention")
    assert "matched" in text
    step('"pfc storm pause": the matching cases, with why', text, began)
    keys("Enter", "Enter")
    text = wait_for(screen, "runbook: pfc-storm")
    step("enter, enter: the case", text, began)
    keys("b")
    text = wait_for(screen, "pfc-storm: inputs")
    assert "leaf-g00-r4" in text  # the case's leaf, carried into the runbook's input
    step("b: its runbook, pre-filled from the case", text, began)
    keys("Escape", "3")
    wait_for(screen, "runbook: pfc-storm")
    keys("Escape", "Escape", "C-u")  # back to the results, to the search field, cleared
    wait_for(screen, "cases in the library")
    keys("光模块 误码", literal=True)
    text = wait_for(screen, "optic-fec-ber-fr4-spine-zh")
    assert "matched" in text
    step('"光模块 误码": the Chinese case', text, began)
    keys("Enter", "Enter")
    text = wait_for(screen, "optic-fec-ber-fr4-spine-zh · resolved")
    assert "巡检发现" in text  # its symptom, as written
    step("enter, enter: the Chinese case", text, began)
    keys("C-q")
    print(f"\njourney 3 in tmux: {time.monotonic() - began:.1f} s")
