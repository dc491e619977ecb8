"""Transports to the simulated fabric: the real ones, with the simulated device programs at the end.

`SimSshTransport` runs a node command as the simulated device client `fabtui/sim/client.py
--state F node --name N -- argv` in a child process (real timeouts, output caps and exit
statuses, as over ssh); `SimCliTransport` is the pexpect CLI-session transport unchanged, except
that the session it spawns is the client's `switch --name S` instead of `ssh -tt S`. The client
is answered by the long-lived sim server (`fabtui.sim.server`), so a command costs milliseconds.
Everything above the transport (rendering commands, parsing, judging) is the code that runs
against real devices.
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from fabtui.model.transport import TransportResult
from fabtui.sim.client import SKEW_ESCAPE, SKEW_VAR
from fabtui.transports import clock
from fabtui.transports.cli_session import CliSession, CliTransport
from fabtui.transports.local import result_from
from fabtui.transports.output import LineCallback, OutputCollector
from fabtui.transports.process import run_process
from fabtui.transports.ssh import SSH_FAILED, SshOptions, SshTarget, SshTransport, classify

_CLIENT = Path(__file__).resolve().parent / "client.py"


def device_argv(state: Path, device: str, name: str) -> list[str]:
    """The command line of a simulated device program: the thin client of the sim server.

    `-I -S`: the client needs only the standard library, so it starts in ~20 ms.
    """
    return [sys.executable, "-I", "-S", str(_CLIENT), "--state", str(state), device,
            "--name", name]


class SimSshTransport(SshTransport):
    """`ssh node cmd`, answered by the simulated node program."""

    name = "sim"

    def __init__(self, state: Path, options: SshOptions | None = None) -> None:
        super().__init__(options)
        self.state = state

    def base_argv(self, target: SshTarget, *, batch: bool, tty: bool = False,
                  master: bool = False) -> list[str]:
        """The simulated switch or node program in place of `ssh host`."""
        kind = "switch" if tty else "node"
        return device_argv(self.state, kind, target.name)

    async def run(self, target: SshTarget, argv: Sequence[str], *, timeout: float = 60.0,
                  on_line: LineCallback | None = None, retry_on_drop: bool = True,
                  stdin: bytes | None = None) -> TransportResult:
        """Run `argv` on the simulated node `target.name`."""
        remote = shlex.join(argv)
        skew = clock.SKEW.get()
        env = {**os.environ, SKEW_VAR: repr(skew)} if skew else None
        outcome = await run_process([*self.base_argv(target, batch=True), "--", *argv],
                                    timeout=timeout, cap=self.options.cap, on_line=on_line,
                                    stdin=stdin, env=env)
        verdict = classify(outcome, target) if outcome.exit_status == SSH_FAILED else None
        return result_from(outcome, target=target.name, transport=self.name, command=remote,
                           timeout=timeout, error=verdict.error if verdict else None,
                           error_message=verdict.message if verdict else None)

    async def let_pass(self, seconds: float) -> None:
        """The simulated clock moves on for this task's next commands; no real time passes."""
        clock.advance(seconds)

    async def close(self) -> None:
        """Nothing is held open between commands."""


class SimCliSession(CliSession):
    """A CLI session to a simulated switch: each command carries the task's clock skew.

    The skew travels in-band as an escape sequence the simulated terminal takes silently
    (`SKEW_ESCAPE`, never echoed), sent before a command whenever it changed.
    """

    _skew = 0.0

    def connect(self, cancel: threading.Event | None = None) -> None:
        """Log in; the new session's clock starts without skew."""
        self._skew = 0.0
        super().connect(cancel)

    def _exchange(self, command: str, deadline: float,
                  cancel: threading.Event | None = None) -> tuple[OutputCollector, str | None]:
        skew = clock.SKEW.get()
        if skew != self._skew and self.child is not None:
            self.child.send(SKEW_ESCAPE.format(seconds=repr(skew)).encode())
            self._skew = skew
        return super()._exchange(command, deadline, cancel)


class SimCliTransport(CliTransport):
    """CLI sessions to simulated switches, driven by the real pexpect session code."""

    name = "cli"
    session_class = SimCliSession

    def __init__(self, state: Path, *, max_workers: int = 64, login_timeout: float = 20.0) -> None:
        super().__init__(max_workers=max_workers, login_timeout=login_timeout)
        self.ssh = SimSshTransport(state)
