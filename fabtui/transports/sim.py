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

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from fabtui.model.transport import TransportResult
from fabtui.transports.cli_session import CliTransport
from fabtui.transports.local import result_from
from fabtui.transports.output import LineCallback
from fabtui.transports.process import run_process
from fabtui.transports.ssh import SSH_FAILED, SshOptions, SshTarget, SshTransport, classify

_CLIENT = Path(__file__).resolve().parent.parent / "sim" / "client.py"


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
        outcome = await run_process([*self.base_argv(target, batch=True), "--", *argv],
                                    timeout=timeout, cap=self.options.cap, on_line=on_line,
                                    stdin=stdin)
        verdict = classify(outcome, target) if outcome.exit_status == SSH_FAILED else None
        return result_from(outcome, target=target.name, transport=self.name, command=remote,
                           timeout=timeout, error=verdict.error if verdict else None,
                           error_message=verdict.message if verdict else None)

    async def close(self) -> None:
        """Nothing is held open between commands."""


class SimCliTransport(CliTransport):
    """CLI sessions to simulated switches, driven by the real pexpect session code."""

    name = "cli"

    def __init__(self, state: Path, *, max_workers: int = 64, login_timeout: float = 20.0) -> None:
        super().__init__(max_workers=max_workers, login_timeout=login_timeout)
        self.ssh = SimSshTransport(state)
