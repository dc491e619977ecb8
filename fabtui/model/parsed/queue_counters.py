"""Per-queue egress counters of a switch (SONiC `show queue counters`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class QueueStats(BaseModel):
    """One queue's counters; null where the tool printed N/A (not supported)."""

    model_config = ConfigDict(extra="forbid")

    packets: int | None = None
    """Packets sent from the queue (Counter/pkts)."""
    bytes: int | None = None
    """Bytes sent from the queue (Counter/bytes)."""
    drop_packets: int | None = None
    """Packets dropped at the queue (Drop/pkts): on a lossless (PFC) queue these point to a
    misconfiguration or a PFC storm."""
    drop_bytes: int | None = None
    """Bytes dropped at the queue (Drop/bytes)."""
    other: dict[str, int | float | None] = {}
    """Other columns by header in snake case: `trim_pkts`, `trimsent_pkts`, `trimdrop_pkts`,
    `wreddrp_pkts`, `ecnmarked_pkts`, `credit_wd_del_pkts` (VOQ), rates `pkts_s`, ..."""


class QueueCounters(ParsedOutput):
    """Queue counters per port and queue, as printed."""

    kind: Literal["queue-counters"] = "queue-counters"
    flavor: Literal["sonic"] = "sonic"
    """Which switch OS printed it."""
    voq: bool = False
    """True for `show queue counters --voq` (virtual output queues of a chassis)."""
    ports: dict[str, dict[str, QueueStats]]
    """Port as printed -> queue as printed (`UC0`, `MC10`, `ALL20`, `VOQ0`) -> counters."""
    namespaces: list[str] = Field(default_factory=list)
    """Namespaces named in `For namespace <ns>:` headers or `Last cached time for <ns>` lines
    (multi-ASIC), in order; empty names (single-ASIC switches print `For namespace :`) are left
    out."""
    last_cached: dict[str, str] = Field(default_factory=dict)
    """Port -> `Last cached time was ...` (the counters are deltas since that snapshot)."""
