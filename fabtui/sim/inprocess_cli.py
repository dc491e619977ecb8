"""Simulated switch CLI sessions answered in this process: `SimCliTransport` without a child.

For runs that are not about the transport (`fabtui runbook test`): the session is the real
pexpect session code (`CliSession`: login, prompt, paging off, typing, pager, timeouts,
cancellation, redaction) talking to the real simulated switch (`switch_session.serve`); only
the device client and the sim server between them are gone. The switch runs in a thread of this
process on one end of a socket pair and the session drives the other end (`pexpect.fdpexpect`).
What the switch reads, writes and waits is what the server's would: the same clock (pinned by
`FABTUI_SIM_TIME` or the state's own, plus the probe's skew the session types in-band), the
same latency (`FABTUI_SIM_LATENCY`, both read when the session starts, as a client's
environment is), the same port shuts written to the state file, and the same failed login for
an unknown switch, a bad setting or a missing state.

Side effects: a daemon thread per open session, ended when the session is closed. The simulator
is not thread-safe: fabrics and replies are computed under the lock the in-process node commands
take (`inprocess.LOCK`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from pexpect import EOF
from pexpect.fdpexpect import fdspawn

from fabtui.sim.inprocess import LOCK, Unavailable, device, sim_fabric
from fabtui.sim.state import TIME_VAR, SimState, sim_time
from fabtui.sim.switch_session import StreamTerminal, serve
from fabtui.sim.transports import SimCliSession, SimCliTransport, SimSshTransport
from fabtui.transports.cli_session import Child

if TYPE_CHECKING:
    _Spawn = fdspawn[bytes]
else:
    _Spawn = fdspawn

_CLOSE_WAIT_S = 5.0
"""How long closing a session waits for its switch's thread (which ends at once: its keys and
its latency both see the hang-up)."""


class _SwitchTerminal(StreamTerminal):
    """The switch's end of the socket pair: keys from it, stdout and stderr to it (both show on
    the terminal of `ssh -tt`)."""

    def __init__(self, connection: socket.socket, hung_up: threading.Event) -> None:
        super().__init__()
        self.connection = connection
        self.hung_up = hung_up
        self._keys = connection.makefile("rb")

    def write(self, text: str) -> None:
        """Output to the session."""
        self.connection.sendall(text.encode())

    def error(self, text: str) -> None:
        """What the device client writes to stderr: on the same terminal."""
        self.write(text)

    def pause(self, seconds: float) -> bool:
        """The device's latency; False as soon as the session hangs up."""
        return not self.hung_up.wait(seconds)

    def read(self) -> bytes:
        """One byte typed (b'' once the session has hung up)."""
        return self._keys.read(1)

    def close(self) -> None:
        """End the session: the other end reads its end at once."""
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        self._keys.close()  # the socket's descriptor is released with its last file
        self.connection.close()


def _switch(connection: socket.socket, hung_up: threading.Event, state: str, name: str,
            pinned: str | None, delay: float | Unavailable) -> None:
    """The simulated switch's session on `connection` (a thread's body), as the sim server
    serves a device client's: `delay` is the device's latency, or why it cannot answer."""
    term = _SwitchTerminal(connection, hung_up)
    try:
        if isinstance(delay, Unavailable):
            term.error(delay.stderr)
            return

        def clock(now: SimState) -> float:
            """The session's clock without a probe's skew (the server's `Request.now`)."""
            return sim_time(now, pinned, 0.0)

        serve(Path(state), term, name, delay, fabric=lambda: sim_fabric(state),
              now=lambda now: clock(now) + term.skew, lock=LOCK, shut_clock=clock)
    except OSError:
        pass  # hung up on mid-reply (a cancelled command): nobody reads the rest
    except Exception:  # a bug in the simulator: on the device's stderr, as the server says
        with contextlib.suppress(OSError):
            term.error(traceback.format_exc())
    finally:
        term.close()


class _SwitchLine(_Spawn):
    """The session's end of the socket pair, driven as pexpect drives a terminal.

    Alive while the switch's thread runs. Closing it hangs up: the switch's session ends (a
    latency it was waiting out included) and its thread is waited for. The switch ending with
    keys unread (typed ahead of its `exit`) is the end of the session, not an error, as on a
    terminal.
    """

    def __init__(self, fd: int, thread: threading.Thread, hung_up: threading.Event) -> None:
        super().__init__(fd, use_poll=True)  # poll: descriptors may be above 1024
        self.delaybeforesend = None  # as `without_pauses`: the replies are awaited, not timed
        self.thread = thread
        self.hung_up = hung_up

    def isalive(self) -> bool:
        """True while the switch's session runs."""
        return super().isalive() and self.thread.is_alive()

    def close(self, force: bool = True) -> None:
        """Hang up and wait for the switch's thread to end."""
        self.hung_up.set()
        super().close()
        self.thread.join(_CLOSE_WAIT_S)

    def send(self, s: str | bytes) -> int:
        """Type `s`; nothing once the switch has gone (the reading side sees the end)."""
        try:
            return super().send(s)
        except (BrokenPipeError, ConnectionResetError):
            return 0

    def sendcontrol(self, char: str) -> int:
        """Ctrl-`char` (a letter)."""
        return self.send(bytes([ord(char.lower()) - ord("a") + 1]))

    def read_nonblocking(self, size: int = 1, timeout: float | None = -1) -> bytes:
        """What the switch wrote; `pexpect.EOF` once it has gone."""
        try:
            return super().read_nonblocking(size, timeout)
        except ConnectionResetError:
            self.flag_eof = True
            raise EOF("the switch ended the session") from None


class InProcessSimCliSession(SimCliSession):
    """A session whose simulated switch runs in a thread of this process (see the module)."""

    def _spawn(self, argv: list[str]) -> Child:
        """The switch `self.target` in a thread, on a socket pair (`argv`, the device client's
        command line, is not run)."""
        assert isinstance(self.ssh, SimSshTransport)
        state, name = os.path.abspath(self.ssh.state), self.target.name
        delay: float | Unavailable
        try:
            delay = device(state, name)[0]
        except Unavailable as exc:
            delay = exc
        here, there = socket.socketpair()
        hung_up = threading.Event()
        thread = threading.Thread(target=_switch, name=f"fabtui-sim-switch-{name}", daemon=True,
                                  args=(there, hung_up, state, name, os.environ.get(TIME_VAR),
                                        delay))
        thread.start()
        return _SwitchLine(here.detach(), thread, hung_up)


class InProcessSimCliTransport(SimCliTransport):
    """CLI sessions to simulated switches answered in this process (see the module)."""

    session_class = InProcessSimCliSession
