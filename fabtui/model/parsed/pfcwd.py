"""SONiC's PFC watchdog: its configuration per port and its state and counters per queue."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class PfcwdQueue(BaseModel):
    """One lossless queue the watchdog watches (`show pfcwd stats`)."""

    model_config = ConfigDict(extra="forbid")

    status: str | None = None
    """`operational`, `stormed` (a storm is in progress: the queue's PFC is ignored and its
    traffic dropped or forwarded by the action), or None where the tool printed N/A."""
    storms_detected: int | None = None
    storms_restored: int | None = None
    tx_ok: int | None = None
    tx_drop: int | None = None
    rx_ok: int | None = None
    rx_drop: int | None = None
    tx_last_ok: int | None = None
    tx_last_drop: int | None = None
    """Of the last storm only."""
    rx_last_ok: int | None = None
    rx_last_drop: int | None = None


class PfcwdPort(BaseModel):
    """The watchdog's settings on one port (`show pfcwd config`)."""

    model_config = ConfigDict(extra="forbid")

    action: str | None = None
    """`drop`, `forward` or `alert`: what a stormed queue does."""
    detection_time_ms: int | None = None
    restoration_time_ms: int | None = None
    history: str | None = None


class Pfcwd(ParsedOutput):
    """`show pfcwd stats` and/or `show pfcwd config`, as printed."""

    kind: Literal["pfcwd"] = "pfcwd"
    queues: dict[str, PfcwdQueue] = Field(default_factory=dict)
    """`Ethernet0:3` (port:queue) -> state and counters."""
    ports: dict[str, PfcwdPort] = Field(default_factory=dict)
    poll_interval_ms: int | None = None
    """From `Changed polling interval to 600ms`."""
