"""The local transport: commands on this machine."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.transports.output import DEFAULT_CAP, LineCallback
from fabtui.transports.process import ProcessOutcome, run_process


class LocalTransport:
    """Runs argv lists as child processes of fabtui (never through a shell)."""

    name = "local"

    def __init__(self, target: str = "localhost", *, cap: int = DEFAULT_CAP) -> None:
        self.target = target
        self.cap = cap

    async def run(self, argv: Sequence[str], *, timeout: float = 60.0,
                  on_line: LineCallback | None = None, stdin: bytes | None = None,
                  env: Mapping[str, str] | None = None) -> TransportResult:
        """Run `argv`; failures come back as `error` / `error_message`, not exceptions."""
        outcome = await run_process(argv, timeout=timeout, cap=self.cap, on_line=on_line,
                                    stdin=stdin, env=env)
        return result_from(outcome, target=self.target, transport=self.name,
                           command=shlex.join(argv), timeout=timeout)


def result_from(outcome: ProcessOutcome, *, target: str, transport: str, command: str,
                timeout: float, error: ErrorKind | None = None,
                error_message: str | None = None, attempts: int = 1) -> TransportResult:
    """A `TransportResult` for a finished process, classifying the generic failures."""
    if error is None:
        if outcome.spawn_error is not None:
            error, error_message = ErrorKind.COMMAND, outcome.spawn_error
        elif outcome.timed_out:
            error = ErrorKind.TIMEOUT
            error_message = f"no answer within {timeout:g}s (partial output kept)"
        elif outcome.exit_status not in (0, None):
            error = ErrorKind.COMMAND
            last = _last_line(outcome.stderr) or _last_line(outcome.stdout)
            error_message = f"exit status {outcome.exit_status}" + (f": {last}" if last else "")
    return TransportResult(
        target=target, transport=transport, command=command, output=outcome.stdout,
        stderr=outcome.stderr, exit_status=outcome.exit_status, started_at=outcome.started_at,
        ended_at=outcome.ended_at, error=error, error_message=error_message,
        truncated=outcome.truncated, output_bytes=outcome.output_bytes, attempts=attempts)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
