"""Running one child process under asyncio: timeout, capped output, streaming, clean teardown.

Shared by the local and ssh transports. The child gets its own process group so that a timeout or
a cancellation kills everything it started (an `mpirun` and its ranks, an `ssh` and its helpers),
not just the first process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from fabtui.transports.output import DEFAULT_CAP, LineCallback, OutputCollector

STDERR_CAP = 256 * 1024
_CHUNK = 64 * 1024
_DRAIN_GRACE_S = 0.5
"""After the child exits, how long to keep reading pipes that a grandchild may hold open
(an ssh ControlPersist master inherits them, and would otherwise keep us waiting)."""


@dataclass
class ProcessOutcome:
    """How a child process ended and what it printed."""

    stdout: str
    stderr: str
    exit_status: int | None
    timed_out: bool
    truncated: bool
    output_bytes: int
    started_at: datetime
    ended_at: datetime
    spawn_error: str | None = None
    """Set when the program could not be started at all (not found, not executable)."""


async def run_process(argv: Sequence[str], *, timeout: float, cap: int = DEFAULT_CAP,
                      on_line: LineCallback | None = None, stdin: bytes | None = None,
                      env: Mapping[str, str] | None = None,
                      cwd: str | None = None) -> ProcessOutcome:
    """Run `argv` (no shell), wait at most `timeout` seconds, and collect its output.

    Note: starts a child process (and its process group), killed on timeout or cancellation.
    """
    started = datetime.now(UTC)
    spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        start_new_session=True, env=dict(env) if env is not None else None, cwd=cwd))
    try:
        # Shielded: a cancel that lands while the child is being set up must still kill its
        # whole group (asyncio alone would kill only the first process, and the grandchildren
        # holding the pipes would keep the cancel waiting and outlive the run).
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await _kill(await spawn)
        raise
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        now = datetime.now(UTC)
        return ProcessOutcome("", "", None, False, False, 0, started, now,
                              spawn_error=f"cannot run {argv[0]}: {exc.strerror}")
    out = OutputCollector(cap, on_line)
    err = OutputCollector(STDERR_CAP)
    assert proc.stdout is not None and proc.stderr is not None
    readers = [asyncio.create_task(_pump(proc.stdout, out)),
               asyncio.create_task(_pump(proc.stderr, err))]
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        with contextlib.suppress(ConnectionError):
            await proc.stdin.drain()
        proc.stdin.close()
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await _kill(proc)
        _done, pending = await asyncio.wait(readers, timeout=_DRAIN_GRACE_S)
        for task in pending:
            task.cancel()
    except asyncio.CancelledError:
        await _kill(proc)
        for task in readers:
            task.cancel()
        raise
    out.finish()
    _close_pipes(proc)
    return ProcessOutcome(
        stdout=out.text(), stderr=err.text(),
        exit_status=None if timed_out else proc.returncode, timed_out=timed_out,
        truncated=out.truncated, output_bytes=out.total,
        started_at=started, ended_at=datetime.now(UTC))


async def _pump(stream: asyncio.StreamReader, sink: OutputCollector) -> None:
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            return
        sink.feed(chunk)


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close our ends of the pipes now, not when the loop is gone (a grandchild may hold them)."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """Kill the child's whole process group, let go of its pipes, and reap it.

    The pipes are closed on our side at once: another process may hold their other end (an ssh
    ControlMaster writes straight into the pipes its clients hand it), and asyncio does not
    report the child as finished while they are open.
    """
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    _close_pipes(proc)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), 5)
