"""The ssh exec transport: the system `ssh` client, driven so that failures read well.

Using the system client means users' ~/.ssh/config, keys, the agent, ProxyJump and ControlMaster
work exactly as when they type `ssh` by hand. fabtui adds:

- strict host keys: an unknown or changed key is refused with a message saying what to do, unless
  the target is configured as trusted (then a *new* key is accepted, a changed one never);
- batch mode for key logins (ssh never prompts), and pexpect to answer a password prompt when, and
  only when, a credentials reference is configured; a password prompt without one is an auth error;
- connection reuse through a fabtui-owned ControlMaster socket per host, and a per-host limit on
  concurrent sessions;
- one retry when the connection drops mid-command (for idempotent, read-only commands);
- argv quoted by construction: the remote shell sees each argument as one word, whatever it holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import stat
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import pexpect

from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.transports import credentials
from fabtui.transports.local import result_from
from fabtui.transports.output import DEFAULT_CAP, LineCallback, OutputCollector
from fabtui.transports.process import ProcessOutcome, run_process

SSH_FAILED = 255
"""ssh's own exit status when it (not the remote command) failed."""


@dataclass(frozen=True)
class SshTarget:
    """Where to log in: the topology name, and how ssh should reach it."""

    name: str
    """The node or switch as the topology names it (used in results)."""
    host: str
    """Address or ssh config Host alias."""
    user: str | None = None
    port: int | None = None
    credentials: str | None = None
    """A credentials reference (never a secret); None means the user's own ssh setup."""
    trusted: bool = False
    """Accept this host's key on first contact (a changed key is still refused)."""

    def __post_init__(self) -> None:
        if not self.host or self.host.startswith("-") or any(c.isspace() for c in self.host):
            raise ValueError(f"{self.host!r} is not a host name ssh can be given safely")


@dataclass
class SshOptions:
    """How fabtui drives ssh; defaults suit on-call use against a real fabric."""

    config_file: Path | None = None
    """`ssh -F`: None uses the user's ~/.ssh/config."""
    known_hosts: Path | None = None
    """UserKnownHostsFile override; None uses the user's."""
    identity: Path | None = None
    connect_timeout: float = 10.0
    multiplex: bool = True
    """Reuse one connection per host through a ControlMaster socket owned by fabtui."""
    control_dir: Path | None = None
    control_persist_s: int = 120
    max_sessions_per_host: int = 8
    """Concurrent commands per host (sshd's MaxSessions defaults to 10)."""
    extra_options: tuple[str, ...] = ()
    """More `-o Key=Value` options, passed as given."""
    cap: int = DEFAULT_CAP


@dataclass
class _Classified:
    error: ErrorKind | None
    message: str | None
    dropped: bool = False


_HOST_KEY_CHANGED = re.compile(r"REMOTE HOST IDENTIFICATION HAS CHANGED|"
                               r"Host key for .* has changed")
_HOST_KEY_UNKNOWN = re.compile(r"No \S+ host key is known for|Host key verification failed")
_AUTH = re.compile(r"Permission denied|Too many authentication failures|"
                   r"no more authentication methods", re.I)
_UNREACHABLE = re.compile(r"Could not resolve hostname|Connection refused|No route to host|"
                          r"Network is unreachable|Connection timed out|Operation timed out|"
                          r"kex_exchange_identification|Connection closed by .* port|"
                          r"banner exchange", re.I)
_DROPPED = re.compile(r"closed by remote host|Connection reset|Broken pipe|"
                      r"Timeout, server .* not responding|client_loop: send disconnect|"
                      r"read from master failed|Control socket connect|"
                      r"mux_client_request_session", re.I)


def classify(outcome: ProcessOutcome, target: SshTarget) -> _Classified:
    """Map ssh's exit status and stderr to an error kind and an actionable message."""
    if outcome.exit_status != SSH_FAILED:
        return _Classified(None, None)
    text = outcome.stderr
    where = f"{target.name} ({target.host}{f':{target.port}' if target.port else ''})"
    if _HOST_KEY_CHANGED.search(text):
        return _Classified(ErrorKind.HOST_KEY, f"{where}: host key CHANGED since it was last "
                           "seen: refusing to connect. If the host was reinstalled, verify the "
                           f"new key out of band, then `ssh-keygen -R {target.host}`")
    if _HOST_KEY_UNKNOWN.search(text):
        return _Classified(ErrorKind.HOST_KEY, f"{where}: host key not known: refusing to "
                           "connect. Verify it and add it to known_hosts (connect once by hand), "
                           "or mark the target trusted")
    if _AUTH.search(text):
        methods = re.search(r"Permission denied \(([^)]*)\)", text)
        offered = methods.group(1) if methods else ""
        if "password" in offered and not credentials.is_password(target.credentials):
            return _Classified(ErrorKind.AUTH, f"{where}: key login refused and the host wants a "
                               "password, but no credentials reference is configured for it "
                               "(set `credentials = env:VAR` or similar on the target)")
        return _Classified(ErrorKind.AUTH, f"{where}: authentication refused "
                           f"({offered or 'no accepted method'})")
    if _DROPPED.search(text):
        return _Classified(ErrorKind.UNREACHABLE, f"{where}: connection dropped during the "
                           "command", dropped=True)
    if _UNREACHABLE.search(text):
        return _Classified(ErrorKind.UNREACHABLE, f"{where}: {_first_line(text)}")
    if text.strip().startswith("ssh:") or not text.strip():
        # Empty stderr with 255: the connection vanished without a word (killed mid-command).
        return _Classified(ErrorKind.UNREACHABLE, f"{where}: {_first_line(text) or 'ssh failed'}",
                           dropped=not text.strip())
    return _Classified(None, None)  # the remote command itself exited 255


def private_dir(path: Path) -> Path:
    """`path`, made if missing, when it is a real folder (not a symlink) owned by this user
    that neither group nor others may write; otherwise a new private folder beside it.

    The ControlMaster sockets live there, and a command runs through whichever socket sits at
    its host's name: in a shared temporary folder another user could create the folder first
    (or a symlink, or make it writable to all) and plant a socket of their own, so such a
    folder is never used."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    try:
        found = os.lstat(path)
    except OSError:
        found = None
    if found is not None and stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() \
            and not found.st_mode & 0o022:
        return path
    return Path(tempfile.mkdtemp(prefix=f"{path.name}-", dir=path.parent))


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip() and not line.startswith("@@@"):
            return line.strip()[:200]
    return ""


class SshTransport:
    """Runs commands on remote hosts through the system ssh client."""

    name = "ssh"

    def __init__(self, options: SshOptions | None = None) -> None:
        self.options = options or SshOptions()
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._master_locks: dict[str, asyncio.Lock] = {}
        self._masters: set[tuple[str, int | None, str | None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._control_dir = self.options.control_dir

    # argv ---------------------------------------------------------------------------------------
    def control_dir(self) -> Path:
        """Folder of the ControlMaster sockets (short path: unix sockets have a length limit):
        `$TMPDIR/fabtui-ssh-<uid>`, or the configured one, when it is a folder of this user's
        that nobody else may write (`private_dir`)."""
        if self._control_dir is None:
            self._control_dir = Path(tempfile.gettempdir()) / f"fabtui-ssh-{os.getuid()}"
        self._control_dir = private_dir(self._control_dir)
        return self._control_dir

    def base_argv(self, target: SshTarget, *, batch: bool, tty: bool = False,
                  master: bool = False) -> list[str]:
        """The ssh command line up to and including the destination.

        With multiplexing, commands are clients of a master connection that `_ensure_master`
        starts separately: a master started by a command would inherit (and hold open) that
        command's output pipes for as long as the remote side runs.
        """
        o = self.options
        argv = ["ssh", "-tt" if tty else "-T"]
        if o.config_file is not None:
            argv += ["-F", str(o.config_file)]
        options = [f"BatchMode={'yes' if batch else 'no'}",
                   f"StrictHostKeyChecking={'accept-new' if target.trusted else 'yes'}",
                   f"ConnectTimeout={max(1, round(o.connect_timeout))}",
                   "ServerAliveInterval=10", "ServerAliveCountMax=3", "LogLevel=ERROR"]
        if o.known_hosts is not None:
            options.append(f"UserKnownHostsFile={o.known_hosts}")
        if o.multiplex and batch:
            options.append(f"ControlPath={self.control_dir()}/%C")
            options += (["ControlMaster=yes", f"ControlPersist={o.control_persist_s}"] if master
                        else ["ControlMaster=no"])
        if not batch:
            options += ["PreferredAuthentications=password,keyboard-interactive",
                        "PubkeyAuthentication=no", "NumberOfPasswordPrompts=1"]
        for option in (*options, *o.extra_options):
            argv += ["-o", option]
        identity = credentials.identity_file(target.credentials) or o.identity
        if identity is not None:
            argv += ["-i", str(identity)]
        if target.port is not None:
            argv += ["-p", str(target.port)]
        if target.user is not None:
            argv += ["-l", target.user]
        if master:
            argv += ["-f", "-N"]
        return [*argv, "--", target.host]

    def _limit(self, host: str) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._limits, self._master_locks, self._loop = {}, {}, loop
        if host not in self._limits:
            self._limits[host] = asyncio.Semaphore(self.options.max_sessions_per_host)
        return self._limits[host]

    # running ------------------------------------------------------------------------------------
    async def let_pass(self, seconds: float) -> None:
        """Let `seconds` pass on the devices (between two readings): real time, slept."""
        await asyncio.sleep(seconds)

    async def run(self, target: SshTarget, argv: Sequence[str], *, timeout: float = 60.0,
                  on_line: LineCallback | None = None, retry_on_drop: bool = True,
                  stdin: bytes | None = None) -> TransportResult:
        """Run `argv` on `target`. Each element reaches the remote program as one argument."""
        remote = shlex.join(argv)
        async with self._limit(target.host):
            if credentials.is_password(target.credentials):
                return await self._password_run(target, remote, timeout)
            attempts = 0
            while True:
                attempts += 1
                if self.options.multiplex:
                    failure = await self._ensure_master(target, remote)
                    if failure is not None:
                        return failure
                outcome = await run_process([*self.base_argv(target, batch=True), remote],
                                            timeout=timeout, cap=self.options.cap,
                                            on_line=on_line, stdin=stdin)
                verdict = classify(outcome, target)
                message = verdict.message
                if verdict.dropped:
                    self._masters.discard(_key(target))
                    if retry_on_drop and attempts == 1:
                        continue
                    if not retry_on_drop:
                        message = (f"{message}; it may or may not have completed (not sent "
                                   "again: a command that is not safe to repeat is sent once)")
                return result_from(outcome, target=target.name, transport=self.name,
                                   command=remote, timeout=timeout, error=verdict.error,
                                   error_message=message, attempts=attempts)

    async def _ensure_master(self, target: SshTarget, remote: str) -> TransportResult | None:
        """Start the shared connection to `target` unless it runs; a failure is the result."""
        key = _key(target)
        if key in self._masters:
            return None
        lock = self._master_locks.setdefault(target.host, asyncio.Lock())
        async with lock:
            if key in self._masters:
                return None
            started = datetime.now(UTC)
            with tempfile.TemporaryFile() as errors:
                proc = await asyncio.create_subprocess_exec(
                    *self.base_argv(target, batch=True, master=True),
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                    stderr=errors)
                limit = self.options.connect_timeout + 5
                try:
                    status = await asyncio.wait_for(proc.wait(), limit)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
                    return _failed(target, remote, started, ErrorKind.TIMEOUT,
                                   f"{target.name}: no connection within {limit:g}s")
                errors.seek(0)
                stderr = errors.read().decode("utf-8", errors="replace")
            if status == 0:
                self._masters.add(key)
                return None
            outcome = ProcessOutcome("", stderr, SSH_FAILED, False, False, 0, started,
                                     datetime.now(UTC))
            verdict = classify(outcome, target)
            return _failed(target, remote, started, verdict.error or ErrorKind.UNREACHABLE,
                           verdict.message or f"{target.name}: {_first_line(stderr)}")

    async def close(self) -> None:
        """Stop the shared connections this transport started."""
        for host, port, user in list(self._masters):
            target = SshTarget(name=host, host=host, port=port, user=user)
            argv = self.base_argv(target, batch=True)
            await run_process([*argv[:-2], "-O", "exit", "--", host], timeout=10)
        self._masters.clear()

    async def _password_run(self, target: SshTarget, remote: str,
                            timeout: float) -> TransportResult:
        """`_run_with_password` in a thread; a cancellation ends its session before it returns."""
        cancel = threading.Event()
        work = asyncio.ensure_future(asyncio.to_thread(self._run_with_password, target, remote,
                                                       timeout, cancel))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            cancel.set()
            await asyncio.wait([work], timeout=10)
            raise

    def _run_with_password(self, target: SshTarget, remote: str, timeout: float,
                           cancel: threading.Event | None = None) -> TransportResult:
        """Password login through pexpect: answer the prompt once, refuse unknown host keys."""
        started = datetime.now(UTC)
        argv = self.base_argv(target, batch=False)
        assert target.credentials is not None
        try:
            secret = credentials.resolve(target.credentials)
        except credentials.CredentialError as exc:
            return _failed(target, remote, started, ErrorKind.AUTH, str(exc))
        redact = credentials.Redactor()
        redact.add(secret)
        collector = OutputCollector(self.options.cap)
        child = without_pauses(pexpect.spawn(argv[0], [*argv[1:], remote], timeout=timeout,
                                             echo=False))
        deadline = time.monotonic() + timeout
        try:
            first = _login(child, secret, target, deadline)
            if isinstance(first, tuple):
                return _failed(target, remote, started, first[0], first[1])
            collector.feed(first)
            while child.isalive() or not child.eof():
                if cancel is not None and cancel.is_set():
                    return _failed(target, remote, started, ErrorKind.CANCELLED, "cancelled",
                                   collector, redact)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return _failed(target, remote, started, ErrorKind.TIMEOUT,
                                   f"no answer within {timeout:g}s", collector, redact)
                try:
                    collector.feed(child.read_nonblocking(65536, timeout=min(remaining, 1.0)))
                except pexpect.TIMEOUT:
                    continue
                except pexpect.EOF:
                    break
        finally:
            child.close(force=True)
        status = child.exitstatus
        text = redact(collector.text())
        outcome = ProcessOutcome(text, "", status, False, collector.truncated, collector.total,
                                 started, datetime.now(UTC))
        # Through a pty, ssh's own complaints arrive mixed into the output.
        verdict = classify(ProcessOutcome("", text, status, False, False, 0, started, started),
                           target)
        if verdict.error is ErrorKind.AUTH:
            verdict.message = f"{target.name} ({target.host}): password refused"
        return result_from(outcome, target=target.name, transport=self.name, command=remote,
                           timeout=timeout, error=verdict.error, error_message=verdict.message)


_SECRET_PAUSE_S = 0.05
"""pexpect's own default pause, kept only before a password: a program that prints its
prompt before turning echo off would otherwise echo the secret."""


def without_pauses(child: pexpect.spawn[bytes]) -> pexpect.spawn[bytes]:
    """`child` without pexpect's fixed waits: 50 ms before every send, 0.1 s on close.

    Nothing fabtui sends needs them (replies are awaited by their prompt, and a password by
    `send_secret`); on a switch they cost 50 ms per command. `close()` still terminates a
    child that has not exited (SIGHUP, then SIGKILL, with ptyprocess's own short waits).
    """
    child.delaybeforesend = None
    child.delayafterclose = 0.0
    process = getattr(child, "ptyproc", None)  # ptyprocess does the closing, with its own copy
    if process is not None:
        process.delayafterclose = 0.0
    return child


class _Typed(Protocol):
    """Where a secret is typed: a pexpect session (or what talks as one)."""

    def sendline(self, s: str | bytes) -> int: ...


def send_secret(child: _Typed, secret: str) -> None:
    """Answer a password prompt, after the pause that lets the program turn echo off."""
    time.sleep(_SECRET_PAUSE_S)
    child.sendline(secret)


def _key(target: SshTarget) -> tuple[str, int | None, str | None]:
    return target.host, target.port, target.user


def _login(child: pexpect.spawn[bytes], secret: str, target: SshTarget,
           deadline: float) -> tuple[ErrorKind, str] | bytes:
    """Drive the login dialogue. Returns an error, or the first output bytes once logged in."""
    password = r"(?i)password[^:\n]*:\s*$"
    host_key = r"\(yes/no(/\[fingerprint\])?\)\?|REMOTE HOST IDENTIFICATION HAS CHANGED|" \
               r"Host key verification failed"
    denied = r"(?i)permission denied"
    where = f"{target.name} ({target.host})"
    answered = False
    while True:
        # Before the password: wait for a prompt. After it, the first whole line that is not
        # blank means we are in: not the first byte, which is the newline ssh echoes for the
        # password, and may come apart from the "Permission denied" or prompt after it.
        patterns: list[Any] = [password, host_key, denied, pexpect.EOF, pexpect.TIMEOUT]
        if answered:
            patterns.append(r"[^\r\n]*\S[^\r\n]*\r*\n")
        index = child.expect(patterns, timeout=max(0.1, deadline - time.monotonic()))
        if index == 0:
            if answered:
                return ErrorKind.AUTH, f"{where}: password refused"
            send_secret(child, secret)
            answered = True
        elif index == 1:
            child.sendline("no")
            return ErrorKind.HOST_KEY, f"{where}: host key not known or changed: refusing " \
                                       "to connect; verify it and add it to known_hosts"
        elif index == 2:
            return ErrorKind.AUTH, f"{where}: password refused"
        elif index == 4:
            return ErrorKind.TIMEOUT, f"{where}: no answer within the timeout"
        elif index == 3:
            return _bytes(child.before)
        else:  # what follows the line in pexpect's buffer is output too: the reads skip it
            rest, child.buffer = _bytes(child.buffer), b""
            return _bytes(child.before) + _bytes(child.after) + rest


def _bytes(value: object) -> bytes:
    return value if isinstance(value, bytes) else b""


def _failed(target: SshTarget, remote: str, started: datetime, error: ErrorKind, message: str,
            collector: OutputCollector | None = None,
            redact: credentials.Redactor | None = None) -> TransportResult:
    text = collector.text() if collector is not None else ""
    return TransportResult(target=target.name, transport="ssh", command=remote,
                           output=redact(text) if redact else text, started_at=started,
                           ended_at=datetime.now(UTC), error=error, error_message=message)
