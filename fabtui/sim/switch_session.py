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
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from fabtui.sim.client import SKEW_ESCAPE
from fabtui.sim.core import Sim
from fabtui.sim.state import SimState, set_port_admin
from fabtui.sim.switch_cli import admin_command, prompt, reply

PAGE_LINES = 40


class Terminal:
    """The far end of the session: where output goes and keys come from (fd 0/1/2 here)."""

    def write(self, text: str) -> None:
        """Show `text` on the terminal."""
        os.write(1, text.encode())

    def error(self, text: str) -> None:
        """Write `text` to stderr (what ssh itself would complain)."""
        os.write(2, text.encode())

    def pause(self, seconds: float) -> bool:
        """Wait `seconds` before a reply; False when the other end has gone meanwhile."""
        time.sleep(seconds)
        return True

    def key(self) -> str:
        """The next key typed ('' at end of input)."""
        data = os.read(0, 1)
        return data.decode(errors="replace") if data else ""


class StreamTerminal(Terminal):
    """A terminal whose keys arrive one byte at a time from another program (`read`).

    It takes the clock escape (`SKEW_ESCAPE`, typed by `SimCliSession` before a command when
    its probe's skew changed) silently: the commands after it run `skew` seconds ahead on the
    simulated clock.
    """

    def __init__(self) -> None:
        self.skew = 0.0
        self._back = b""

    def read(self) -> bytes:
        """The next byte from the other end (b'' at its end)."""
        raise NotImplementedError

    def key(self) -> str:
        """The next key typed; clock escapes are taken, not returned."""
        while True:
            data = self._next()
            if data != b"\x1b":
                return data.decode(errors="replace") if data else ""
            follow = self._next()
            if follow != b"]":
                self._back = follow
                return "\x1b"
            sequence = b""
            while (byte := self._next()) not in (b"\x07", b"") and len(sequence) < 80:
                sequence += byte
            name, _, value = sequence.decode(errors="replace").partition(";")
            if name == _SKEW_NAME:
                with contextlib.suppress(ValueError):
                    self.skew = float(value)

    def _next(self) -> bytes:
        if self._back:
            data, self._back = self._back, b""
            return data
        return self.read()


_SKEW_NAME = SKEW_ESCAPE.split("]", 1)[1].split(";", 1)[0]


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


def _show(term: Terminal, text: str, flavor: str, paging: bool) -> None:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # A page at a time, in one write (the same bytes): a write a line woke the reader
    # (pexpect) once a line, to search its whole buffer again each time.
    step = PAGE_LINES if paging else max(len(lines), 1)
    for start in range(0, len(lines), step):
        shown = min(start + step, len(lines))
        page = "".join(line + "\r\n" for line in lines[start:shown])
        if shown == len(lines):  # the last page: no pager prompt after it
            term.write(page)
            return
        more = _pager(flavor, shown, len(lines))
        term.write(page + more)
        key = term.key()
        term.write("\r" + " " * len(more) + "\r")
        if key in ("q", "Q", ""):
            return


Fabric = Callable[[], "tuple[SimState, Sim] | None"]


def serve(path: Path, term: Terminal, name: str, delay: float = 0.0, *, fabric: Fabric,
          now: Callable[[SimState], float], lock: AbstractContextManager[Any],
          shut_clock: Callable[[SimState], float] | None = None) -> int:
    """Run the session for switch `name` on `term` until the user leaves; the exit status.

    `fabric()` gives the state and simulation as they are now (a game-day `inject` or a port
    shut from another session shows at the next command); `now(state)` the simulation time of
    a command; `lock` is held while a reply is computed. Every reply comes `delay` seconds
    after its command (a slow management network). A port shut here is written to `path`, at
    `shut_clock(state)`: the client's clock without a probe's skew (a reading skewed ahead
    must not put the shut ahead of other tasks' readings), `state.now()` when not given.
    """
    current = fabric()
    switch = current[1].graph.switches.get(name) if current else None
    if current is None or switch is None:
        term.error(f"ssh: Could not resolve hostname {name}: Name or service not known\n")
        return 255
    if current[1].switch_dead(name, now(current[0])):  # a switch-down fault: no answer at all
        term.error(f"ssh: connect to host {name} port 22: No route to host\n")
        return 255
    flavor = switch.flavor.value
    term.write(_banner(flavor, name) + prompt(switch))
    paging = True
    line = ""
    while True:
        char = term.key()
        if char in ("", "\x04") and not line:
            term.write("logout\r\n")
            return 0
        if char == "\x03":
            term.write("^C\r\n" + prompt(switch))
            line = ""
            continue
        if char in ("\x7f", "\x08"):
            if line:
                line = line[:-1]
                term.write("\b \b")
            continue
        if char not in ("\r", "\n"):
            line += char
            term.write(char)
            continue
        term.write("\r\n")
        command, line = line.strip(), ""
        if command in ("exit", "logout", "quit"):
            return 0
        if delay and not term.pause(delay):
            return 255
        lowered = command.lower()
        if lowered in ("terminal length 0", "term len 0") or \
                ("PAGER=cat" in command and lowered.startswith("export")):
            paging = False
        with lock:
            state, sim = fabric() or current
            current = state, sim
            switch = sim.graph.switches.get(name) or switch
            change = admin_command(sim, switch, command)
            if change is not None:
                set_port_admin(path, f"{name}:{change[0]}", change[1], shut_clock)
                text = None
            else:
                text, _rejected = reply(sim, switch, command, now(state))
        if text is not None:
            _show(term, text, flavor, paging)
        term.write(prompt(switch))
