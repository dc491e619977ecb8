"""Per-priority PFC pause frame counters of a switch (SONiC `show pfc counters`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class PfcHistory(BaseModel):
    """Pause history of one port and priority (`show pfc counters --history`)."""

    model_config = ConfigDict(extra="forbid")

    rx_pause_transitions: int | None = None
    """How many times the priority went from unpaused to paused (RX Pause Transitions)."""
    total_rx_pause_time_us: int | None = None
    """Total time paused, microseconds (converted from ms when the header says MS)."""
    recent_rx_pause_time_us: int | None = None
    """Length of the most recent pause, microseconds."""
    recent_rx_pause_timestamp: str | None = None
    """When the most recent pause happened, as printed (`01/10/2008, 21:20:00`)."""


class PfcCounters(ParsedOutput):
    """PFC frames received and sent per port and priority, and the pause history."""

    kind: Literal["pfc-counters"] = "pfc-counters"
    flavor: Literal["sonic"] = "sonic"
    """Which switch OS printed it."""
    rx: dict[str, dict[str, int | None]] = Field(default_factory=dict)
    """Port -> priority (`PFC0`..`PFC7`, as printed) -> PFC frames received (the peer paused
    this port). Empty when the capture has only the history view."""
    tx: dict[str, dict[str, int | None]] = Field(default_factory=dict)
    """Port -> priority -> PFC frames sent (this port paused its peer)."""
    history: dict[str, dict[str, PfcHistory]] = Field(default_factory=dict)
    """Port -> priority -> pause history (`--history`); empty otherwise."""
    last_cached: str | None = None
    """`Last cached time was ...`: the counters are deltas since that (cleared) snapshot."""
