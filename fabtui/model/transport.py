"""What every transport returns: the raw output, how it ended, and a readable reason if it failed.

Probes, the runbook engine and the journal all consume this one shape, whether the command ran
locally, over ssh, in a switch CLI session, through NVML or in the simulated fabric.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


class ErrorKind(StrEnum):
    """Why a transport call did not produce a normal result, in words an operator acts on."""

    TIMEOUT = "timeout"
    """The command or the connection took longer than allowed; partial output is kept."""
    UNREACHABLE = "unreachable"
    """The target could not be reached or the connection dropped."""
    AUTH = "auth"
    """The target refused our credentials, or asked for one we do not have."""
    HOST_KEY = "host-key"
    """The target's host key is unknown or has changed; we refuse to talk to it."""
    COMMAND = "command"
    """The command ran and failed (non-zero exit, or the switch CLI rejected it)."""
    CANCELLED = "cancelled"
    """The caller cancelled the call (operator abort, TUI closed)."""
    NO_DRIVER = "no-driver"
    """NVML: no NVIDIA driver on this machine."""
    UNSUPPORTED = "unsupported"
    """The target or transport cannot do what was asked (e.g. an unknown CLI flavor)."""


class TransportResult(BaseModel):
    """One command (or API call) against one target."""

    model_config = ConfigDict(frozen=True)

    target: str
    """The host, switch or GPU addressed, as the topology names it."""
    transport: str
    """local, ssh, cli, nvml or sim."""
    command: str
    """The command as rendered (what an operator would type); secrets never appear here."""
    output: str = ""
    """Standard output (for CLI sessions: the reply without echo and prompt), possibly capped."""
    stderr: str = ""
    exit_status: int | None = None
    """Process exit status; None when the command never finished (timeout, dropped link)."""
    started_at: datetime
    ended_at: datetime
    error: ErrorKind | None = None
    error_message: str | None = None
    """One line an operator can act on, e.g. "leaf03: host key changed; ..."."""
    truncated: bool = False
    """True when output exceeded the cap: the head and the tail are kept, the middle dropped."""
    output_bytes: int = 0
    """Bytes of output the command produced in total (kept or not)."""
    values: dict[str, Any] | None = None
    """Structured values for API transports (NVML) instead of text."""
    attempts: int = 1
    """How many tries it took (a dropped connection is retried once where that is safe)."""

    @property
    def ok(self) -> bool:
        """True when the command ran to completion and succeeded."""
        return self.error is None and (self.exit_status in (0, None) or self.values is not None)

    @property
    def duration_s(self) -> float:
        """Wall time of the call in seconds."""
        return (self.ended_at - self.started_at).total_seconds()

    def describe(self) -> str:
        """One line for logs and the TUI: target, outcome, duration."""
        if self.error is not None:
            return f"{self.target}: {self.error.value}: {self.error_message or ''}".rstrip()
        return f"{self.target}: exit {self.exit_status} in {self.duration_s:.2f}s"
