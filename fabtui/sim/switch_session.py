"""An interactive session on a simulated switch: banner, prompt, echo, line editing and pager.

It behaves as a terminal session to the vendor CLI does for a program (or a person) on the other
end of `ssh -tt`: characters are echoed as typed, Enter runs the line, replies longer than a
screen stop at the vendor's pager prompt (space: next page, q: stop) until paging is turned off
(`terminal length 0` on EOS, `export PAGER=cat` on SONiC/NVUE), and `exit` or Ctrl-D ends it.
A state file that changes (a game-day `inject`) is picked up before the next command.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from fabtui.sim.state import SimState, build_sim, read_state, set_port_admin
from fabtui.sim.switch_cli import admin_command, prompt, reply

PAGE_LINES = 40


def _out(text: str) -> None:
    os.write(1, text.encode())


def _key() -> str:
    data = os.read(0, 1)
    return data.decode(errors="replace") if data else ""


def _banner(flavor: str, name: str) -> str:
    if flavor == "eos":
        return "Last login: Mon Nov 30 02:11:09 2026 from 10.0.0.2\r\n"
    if flavor == "nvue":
        return (f"Linux {name} 6.1.0-cl-1-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.38-4+cl5.9 "
                "x86_64\r\nWelcome to NVIDIA Cumulus (R) Linux (R)\r\n")
    return (f"Linux {name} 5.10.0-23-2-amd64 #1 SMP Debian 5.10.179-3 (2023-07-27) x86_64\r\n"
            "You are on\r\n  ____   ___  _   _ _  ____\r\n / ___| / _ \\| \\ | (_)/ ___|\r\n"
            " \\___ \\| | | |  \\| | | |\r\n  ___) | |_| | |\\  | | |___\r\n"
            " |____/ \\___/|_| \\_|_|\\____|\r\n\r\n-- Software for Open Networking in the Cloud "
            "--\r\n\r\n")


def _pager(flavor: str, shown: int, total: int) -> str:
    if flavor == "eos":
        return " --More-- "
    return f"lines {shown - PAGE_LINES + 1}-{shown}/{total} {shown * 100 // total}%"


def _show(text: str, flavor: str, paging: bool) -> None:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines, start=1):
        _out(line + "\r\n")
        if paging and i % PAGE_LINES == 0 and i < len(lines):
            more = _pager(flavor, i, len(lines))
            _out(more)
            key = _key()
            _out("\r" + " " * len(more) + "\r")
            if key in ("q", "Q", ""):
                return


def serve(path: Path, state: SimState, name: str, delay: float = 0.0) -> int:
    """Run the session for switch `name` until the user leaves. Returns the exit status.

    Every reply comes `delay` seconds after its command (a slow management network).
    """
    sim = build_sim(state)
    switch = sim.graph.switches.get(name)
    if switch is None:
        sys.stderr.write(f"ssh: Could not resolve hostname {name}: Name or service not known\n")
        return 255
    flavor = switch.flavor.value
    stamp = _mtime(path)
    with _raw_terminal():
        _out(_banner(flavor, name) + prompt(switch))
        paging = True
        line = ""
        while True:
            char = _key()
            if char in ("", "\x04") and not line:
                _out("logout\r\n")
                return 0
            if char == "\x03":
                _out("^C\r\n" + prompt(switch))
                line = ""
                continue
            if char in ("\x7f", "\x08"):
                if line:
                    line = line[:-1]
                    _out("\b \b")
                continue
            if char not in ("\r", "\n"):
                line += char
                _out(char)
                continue
            _out("\r\n")
            command, line = line.strip(), ""
            if command in ("exit", "logout", "quit"):
                return 0
            if delay:
                time.sleep(delay)
            if _mtime(path) != stamp:
                stamp = _mtime(path)
                fresh = read_state(path)
                if fresh is not None:
                    state, sim = fresh, build_sim(fresh)
                    switch = sim.graph.switches.get(name) or switch
            lowered = command.lower()
            if lowered in ("terminal length 0", "term len 0") or \
                    ("PAGER=cat" in command and lowered.startswith("export")):
                paging = False
            change = admin_command(sim, switch, command)
            if change is not None:
                fresh = set_port_admin(path, f"{name}:{change[0]}", change[1])
                if fresh is not None:
                    state, sim = fresh, build_sim(fresh)
                    stamp = _mtime(path)
                _out(prompt(switch))
                continue
            text, _rejected = reply(sim, switch, command, state.now())
            _show(text, flavor, paging)
            _out(prompt(switch))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


@contextlib.contextmanager
def _raw_terminal():  # type: ignore[no-untyped-def]
    """Keys one at a time and no terminal echo (the session echoes, as a switch does)."""
    try:
        import termios
        import tty

        saved = termios.tcgetattr(0)
    except (ImportError, OSError, Exception):  # not a terminal: a pipe in tests
        yield
        return
    try:
        tty.setraw(0)
        yield
    finally:
        termios.tcsetattr(0, termios.TCSADRAIN, saved)
