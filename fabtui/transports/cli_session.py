"""Interactive switch CLI sessions: log in once, then send commands and read replies to the prompt.

A session is `ssh -tt` to the switch (optionally running a command that enters the CLI, such as
`sonic-cli`), driven with pexpect: wait for the flavor's prompt, turn paging off (and answer any
`--More--` anyway), send a command, read until the prompt comes back, strip the echo, and
recognise the flavor's error replies. Sessions stay open between polls; a session that dropped is
reconnected once and the command resent. Output is streamed into a capped collector while the
last bytes are held back to find the prompt, so a 50 MB reply does not grow memory.

A command is one line (`cli_line`): one holding a control character or longer than a CLI line is
refused before anything is sent, whoever built it. Reading a reply is linear in its size: the
prompt is looked for only in the end of the last line (where it must be), a long command is
typed in chunks while its echo is read (so neither side of the terminal blocks the other), and
the reply is cleaned line by line.

pexpect is synchronous: each session runs its commands in a worker thread of a pool sized for
many switches at once, so polling 64 switches does not wait on each other. Cancelling a command
(asyncio cancellation of `CliTransport.run`) is seen by its thread within half a second: the
session is closed (its process killed), the switch's lock let go, and only then does the
cancellation reach the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import os
import re
import select
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn, Protocol

import pexpect

from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.transports import cli_line, credentials
from fabtui.transports.cli_flavors import MORE, CliFlavor, flavor
from fabtui.transports.output import DEFAULT_CAP, OutputCollector
from fabtui.transports.process import ProcessOutcome
from fabtui.transports.ssh import (
    SshOptions,
    SshTarget,
    SshTransport,
    classify,
    send_secret,
    without_pauses,
)

_HOLD_BACK = 2048
"""Bytes kept back from the collector while reading: where a prompt may be forming."""
_READ = 65536
_PROMPT_TAIL = 512
"""Bytes at the end of the last line in which a prompt is looked for (prompts are short)."""
_SEND_CHUNK = 512
"""Bytes typed at a time; the echo is read in between so the terminal's buffers never fill."""
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_PASSWORD = re.compile(rb"(?i)password[^:\r\n]*: ?\Z")
_HOST_KEY = re.compile(rb"\(yes/no(/\[fingerprint\])?\)\?|REMOTE HOST IDENTIFICATION HAS CHANGED|"
                       rb"Host key verification failed")


@dataclass(frozen=True)
class CliTarget:
    """A switch to hold a CLI session with."""

    ssh: SshTarget
    flavor: str
    cli_command: str | None = None
    """Run this after login to enter the CLI (e.g. `sonic-cli`); None: the login shell is it."""

    @property
    def name(self) -> str:
        """The switch as the topology names it."""
        return self.ssh.name


class Child(Protocol):
    """What a session drives: a `pexpect.spawn` of ssh, or what talks as one (the in-process
    simulated switch's end of a socket pair)."""

    @property
    def before(self) -> bytes | None: ...
    @property
    def after(self) -> object: ...
    @property
    def child_fd(self) -> int: ...
    @property
    def linesep(self) -> bytes: ...
    @property
    def delaybeforesend(self) -> float | None: ...
    def expect(self, pattern: Any, timeout: float | None = -1) -> int: ...
    def read_nonblocking(self, size: int = 1, timeout: float | None = -1) -> bytes: ...
    def send(self, s: str | bytes) -> int: ...
    def sendline(self, s: str | bytes) -> int: ...
    def sendcontrol(self, char: str) -> int: ...
    def isalive(self) -> bool: ...
    def close(self, force: bool = True) -> None: ...


class _Failure(Exception):
    """A session-level failure, already classified."""

    def __init__(self, kind: ErrorKind, message: str, output: str = "") -> None:
        super().__init__(message)
        self.kind, self.message, self.output = kind, message, output


_POLL_S = 0.5
"""How often a waiting session thread looks whether its command was cancelled."""
_CANCEL_WAIT_S = 10.0
"""How long a cancelled `run` waits for its thread to close the session and let go."""
_LOGOUT_S = 0.5
"""How long a session gets to end by itself after `exit` before it is killed."""


class _Cancelled(Exception):
    """The caller cancelled the command; the session has been closed."""


class _Dropped(Exception):
    def __init__(self, partial: OutputCollector) -> None:
        super().__init__("connection dropped")
        self.partial = partial


class CliSession:
    """One logged-in CLI session (synchronous; use from one thread at a time)."""

    def __init__(self, target: CliTarget, ssh: SshTransport, *, login_timeout: float = 20.0,
                 cap: int = DEFAULT_CAP) -> None:
        self.target = target
        self.flavor: CliFlavor = flavor(target.flavor)
        self.ssh = ssh
        self.login_timeout = login_timeout
        self.cap = cap
        self.child: Child | None = None
        self.redact = credentials.Redactor()
        self.prompt = ""
        """The prompt as the switch printed it after login."""

    # connection ---------------------------------------------------------------------------------
    def connect(self, cancel: threading.Event | None = None) -> None:
        """Log in, wait for the prompt, turn paging off. Raises `_Failure` (`_Cancelled`)."""
        self.close()
        password = credentials.is_password(self.target.ssh.credentials)
        secret = None
        if password:
            assert self.target.ssh.credentials is not None
            try:
                secret = credentials.resolve(self.target.ssh.credentials)
            except credentials.CredentialError as exc:
                raise _Failure(ErrorKind.AUTH, str(exc)) from None
            self.redact.add(secret)
        argv = self.ssh.base_argv(self.target.ssh, batch=not password, tty=True)
        if self.target.cli_command:
            argv.append(self.target.cli_command)
        child = self.child = self._spawn(argv)
        deadline = time.monotonic() + self.login_timeout
        answered = False
        seen = bytearray()
        while True:
            patterns: list[Any] = [_PASSWORD, _HOST_KEY, MORE, self.flavor.prompt, pexpect.EOF,
                                   pexpect.TIMEOUT]
            remaining = deadline - time.monotonic()
            index = child.expect(patterns, timeout=max(0.1, min(remaining, _POLL_S)))
            if cancel is not None and cancel.is_set():
                self.close()
                raise _Cancelled
            if index == 5 and remaining > _POLL_S:
                continue  # not yet: looked for a cancellation, keep waiting for the prompt
            seen += _bytes(child.before) + _bytes(child.after)
            if index == 0:
                if secret is None:
                    self._fail_login(ErrorKind.AUTH, "asks for a password, but no credentials "
                                     "reference is configured for it")
                if answered:
                    self._fail_login(ErrorKind.AUTH, "password refused")
                send_secret(child, secret)
                answered = True
            elif index == 1:
                if b"yes/no" in _bytes(child.after):
                    child.sendline("no")
                    self._fail_login(ErrorKind.HOST_KEY, "host key not known: refusing to "
                                     "connect; verify it and add it to known_hosts")
                with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):
                    child.expect(pexpect.EOF, timeout=5)
                self._login_eof(seen + _bytes(child.before))
            elif index == 2:
                child.send(b"q" if b"END" in _bytes(child.after) else b" ")
            elif index == 3:
                self.prompt = _last_line(_bytes(child.after))
                break
            elif index == 4:
                self._login_eof(seen)
            else:
                self._fail_login(ErrorKind.TIMEOUT, f"no {self.flavor.name} prompt within "
                                 f"{self.login_timeout:g}s (is the flavor right?)")
        for command in self.flavor.paging_off:
            self._exchange(command, time.monotonic() + 10, cancel)

    def _spawn(self, argv: list[str]) -> Child:
        """The session's process: `argv` (ssh) on a terminal of its own."""
        return without_pauses(pexpect.spawn(argv[0], argv[1:], echo=False,
                                            dimensions=(200, 250)))

    def _fail_login(self, kind: ErrorKind, message: str) -> NoReturn:
        self.close()
        raise _Failure(kind, f"{self.target.name}: {message}")

    def _login_eof(self, seen: bytearray) -> NoReturn:
        text = self.redact(seen.decode("utf-8", errors="replace"))
        now = datetime.now(UTC)
        verdict = classify(ProcessOutcome("", text, 255, False, False, 0, now, now),
                           self.target.ssh)
        self.close()
        raise _Failure(verdict.error or ErrorKind.UNREACHABLE,
                       verdict.message or f"{self.target.name}: the session ended during login"
                       + (f": {_last_line(seen)}" if seen.strip() else ""))

    def alive(self) -> bool:
        """True if the session process is still running."""
        return self.child is not None and self.child.isalive()

    def close(self) -> None:
        """Log out (politely if possible) and end the session."""
        child, self.child = self.child, None
        if child is None:
            return
        if child.isalive():
            with contextlib.suppress(OSError, pexpect.ExceptionPexpect):
                child.sendline("exit")
                child.expect(pexpect.EOF, timeout=_LOGOUT_S)  # left by itself: no kill needed
        child.close(force=True)

    # commands -----------------------------------------------------------------------------------
    def run(self, command: str, timeout: float,
            cancel: threading.Event | None = None) -> tuple[OutputCollector, str | None]:
        """Send `command`; return the reply and the CLI's error line, if it rejected it.

        Raises `_Dropped` if the session ends mid-command, `_Failure` on timeout, or before
        logging in or sending anything if `command` is not one CLI line (`cli_line`);
        `_Cancelled` (after closing the session) once `cancel` is set.
        """
        problem = cli_line.line_problem(command)
        if problem:
            raise _Failure(ErrorKind.UNSUPPORTED, f"{self.target.name}: refused to send a "
                           f"command that {problem} (a CLI takes one line at a time)")
        if not self.alive():
            self.connect(cancel)
        return self._exchange(command, time.monotonic() + timeout, cancel)

    def _exchange(self, command: str, deadline: float,
                  cancel: threading.Event | None = None) -> tuple[OutputCollector, str | None]:
        child = self.child
        assert child is not None
        collector = OutputCollector(self.cap)
        pending = bytearray()
        if not self._type(child, command, pending, deadline, cancel):
            self.close()  # cancelled mid-line: never press Enter on what was cancelled
            raise _Cancelled
        unseen = bool(pending)  # typing may already have read the whole reply
        while True:
            if cancel is not None and cancel.is_set():
                self.close()  # mid-command: only a fresh session is in a known state
                raise _Cancelled
            if unseen:
                window = bytes(pending[-_HOLD_BACK:])
                offset = len(pending) - len(window)
                # A prompt is the end of the last line; searching only there keeps each read's
                # work bounded (a prompt regex over a long echoed line is quadratic).
                tail = max(window.rfind(b"\n") + 1, len(window) - _PROMPT_TAIL)
                prompt = self.flavor.prompt.search(window[tail:])
                if prompt is not None:
                    collector.feed(bytes(pending[: offset + tail + prompt.start()]))
                    break
                more = MORE.search(window)
                if more is not None:
                    collector.feed(bytes(pending[: offset + more.start()]))
                    pending.clear()
                    child.send(b"q" if b"END" in more.group(0) else b" ")
                elif len(pending) > _HOLD_BACK:
                    collector.feed(bytes(pending[:-_HOLD_BACK]))
                    del pending[:-_HOLD_BACK]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                collector.feed(bytes(pending))
                self._abandon()
                raise _Failure(ErrorKind.TIMEOUT, f"{self.target.name}: no prompt within the "
                               "timeout (partial output kept)", _clean(collector, command))
            try:
                pending += child.read_nonblocking(_READ, timeout=min(remaining, _POLL_S))
                unseen = True
            except pexpect.TIMEOUT:
                unseen = False
            except pexpect.EOF:
                collector.feed(bytes(pending))
                raise _Dropped(collector) from None
        reply = _clean(collector, command)
        return collector, self._error_line(reply)

    @staticmethod
    def _type(child: Child, command: str, pending: bytearray,
              deadline: float, cancel: threading.Event | None = None) -> bool:
        """Type `command` and Enter, reading what the switch sends meanwhile into `pending`.

        The terminal is written without blocking and read whenever it has something: a switch
        echoes what it is typed, and a blocking write of a long line while nobody reads the echo
        fills both directions of the terminal and stops both sides for good. Returns at the
        deadline or the end of the session with the rest untyped (the caller's reading loop
        reports either); False, with the rest untyped, once `cancel` is set.
        """
        data = command.encode("utf-8") + _bytes(child.linesep)
        if child.delaybeforesend:
            time.sleep(child.delaybeforesend)  # pexpect's pause before the first key
        fd = child.child_fd
        blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        poller = select.poll()  # not select(): session descriptors may be above 1024
        poller.register(fd, select.POLLIN | select.POLLOUT)
        try:
            while data and time.monotonic() < deadline:
                if cancel is not None and cancel.is_set():
                    return False
                events = 0
                for _, event in poller.poll(int(_POLL_S * 1000)):
                    events |= event
                if events & (select.POLLHUP | select.POLLERR | select.POLLNVAL) and \
                        not events & select.POLLIN:
                    return True
                if events & select.POLLIN:
                    with contextlib.suppress(BlockingIOError):
                        chunk = os.read(fd, _READ)
                        if not chunk:
                            return True
                        pending += chunk
                if events & select.POLLOUT:
                    with contextlib.suppress(BlockingIOError):
                        data = data[os.write(fd, data[:_SEND_CHUNK]):]
        except OSError:
            return True  # EIO: the session ended; the reading loop sees EOF
        finally:
            os.set_blocking(fd, blocking)
        return True

    def _error_line(self, reply: str) -> str | None:
        data = reply.encode()
        for pattern in self.flavor.errors:
            match = pattern.search(data)
            if match:
                return match.group(0).decode("utf-8", errors="replace").strip()
        return None

    def _abandon(self) -> None:
        """After a timeout the CLI is mid-command: interrupt it, or drop the session."""
        child = self.child
        if child is None:
            return
        child.sendcontrol("c")
        try:
            child.expect([self.flavor.prompt], timeout=2)
        except (pexpect.TIMEOUT, pexpect.EOF):
            self.close()


def _bytes(value: object) -> bytes:
    return value if isinstance(value, bytes) else b""


def _last_line(data: bytes | bytearray) -> str:
    lines = [line for line in bytes(data).replace(b"\r", b"\n").split(b"\n") if line.strip()]
    return lines[-1].decode("utf-8", errors="replace").strip() if lines else ""


def _clean(collector: OutputCollector, command: str) -> str:
    """Terminal output to plain text: CRLF, pager erasures and the echoed command removed."""
    text = _ANSI.sub(b"", collector.text().encode("utf-8", errors="replace"))
    lines = []
    for raw in text.split(b"\n"):
        # A carriage return inside a line means "overwrite": keep what was written last; a
        # pager prompt erased with backspaces goes with everything before the last backspace.
        last = raw.rstrip(b"\r").rpartition(b"\r")[2]
        lines.append(last.rpartition(b"\x08")[2])
    decoded = [line.decode("utf-8", errors="replace") for line in lines]
    if decoded and decoded[0].strip().endswith(command.strip()):
        decoded = decoded[1:]
    return "\n".join(decoded)


class CliTransport:
    """Keeps one CLI session per switch and runs commands on them concurrently."""

    name = "cli"
    session_class: type[CliSession] = CliSession
    """What a session is (the simulated fabric's adds its clock to each command)."""

    def __init__(self, ssh_options: SshOptions | None = None, *, max_workers: int = 64,
                 login_timeout: float = 20.0, cap: int = DEFAULT_CAP) -> None:
        options = dataclasses.replace(ssh_options or SshOptions(), multiplex=False)
        self.ssh = SshTransport(options)
        self.login_timeout = login_timeout
        self.cap = cap
        self._sessions: dict[str, CliSession] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="fabtui-cli")

    async def let_pass(self, seconds: float) -> None:
        """Let `seconds` pass on the switches (between two readings), as the ssh transport."""
        await self.ssh.let_pass(seconds)

    async def run(self, target: CliTarget, command: str, *, timeout: float = 60.0,
                  retry_on_drop: bool = True) -> TransportResult:
        """Run one CLI command on `target`, logging in first if needed.

        Cancellable: the session thread stops, closes the session and lets go of the switch
        before the cancellation is passed on.
        """
        cancel = threading.Event()
        # The caller's context goes with the command into its thread (the sim clock's skew).
        work = asyncio.wrap_future(self._pool.submit(contextvars.copy_context().run,
                                                     self._run_sync, target, command, timeout,
                                                     retry_on_drop, cancel))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            cancel.set()
            await asyncio.wait([work], timeout=_CANCEL_WAIT_S)
            raise

    def _session(self, target: CliTarget) -> tuple[CliSession, threading.Lock]:
        with self._guard:
            session = self._sessions.get(target.name)
            if session is None or session.target != target:
                if session is not None:
                    session.close()
                session = self.session_class(target, self.ssh,
                                             login_timeout=self.login_timeout, cap=self.cap)
                self._sessions[target.name] = session
            return session, self._locks.setdefault(target.name, threading.Lock())

    def _run_sync(self, target: CliTarget, command: str, timeout: float, retry_on_drop: bool,
                  cancel: threading.Event) -> TransportResult:
        started = datetime.now(UTC)
        session, lock = self._session(target)
        attempts = 0
        while not lock.acquire(timeout=_POLL_S):
            if cancel.is_set():
                return self._cancelled(target, command, started, attempts)
        try:
            while True:
                attempts += 1
                if cancel.is_set():
                    return self._cancelled(target, command, started, attempts)
                try:
                    collector, error_line = session.run(command, timeout, cancel)
                except _Cancelled:
                    return self._cancelled(target, command, started, attempts)
                except _Dropped as dropped:
                    session.close()
                    if retry_on_drop and attempts == 1:
                        continue
                    return self._result(target, command, started, attempts,
                                        _clean(dropped.partial, command), dropped.partial,
                                        ErrorKind.UNREACHABLE,
                                        f"{target.name}: session dropped during the command")
                except _Failure as failure:
                    return self._result(target, command, started, attempts, failure.output,
                                        None, failure.kind, failure.message)
                reply = session.redact(_clean(collector, command))
                if error_line is not None:
                    return self._result(target, command, started, attempts, reply, collector,
                                        ErrorKind.COMMAND,
                                        f"{target.name} rejected `{command}`: {error_line}")
                return self._result(target, command, started, attempts, reply, collector)
        finally:
            lock.release()

    def _cancelled(self, target: CliTarget, command: str, started: datetime,
                   attempts: int) -> TransportResult:
        """What a cancelled command's thread returns (nobody reads it: the caller has gone)."""
        return self._result(target, command, started, attempts, "", None, ErrorKind.CANCELLED,
                            f"{target.name}: cancelled")

    def _result(self, target: CliTarget, command: str, started: datetime, attempts: int,
                output: str, collector: OutputCollector | None, error: ErrorKind | None = None,
                message: str | None = None) -> TransportResult:
        return TransportResult(
            target=target.name, transport=self.name, command=command, output=output,
            exit_status=None, started_at=started, ended_at=datetime.now(UTC), error=error,
            error_message=message, truncated=collector.truncated if collector else False,
            output_bytes=collector.total if collector else len(output), attempts=attempts)

    def sessions(self) -> dict[str, bool]:
        """Switch name -> whether its session is alive (for status views)."""
        with self._guard:
            return {name: session.alive() for name, session in self._sessions.items()}

    async def close(self) -> None:
        """Log out of every session and stop the worker threads."""
        loop = asyncio.get_running_loop()
        with self._guard:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        await asyncio.gather(*(loop.run_in_executor(self._pool, s.close) for s in sessions))
        self._pool.shutdown(wait=False)
