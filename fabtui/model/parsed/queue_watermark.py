"""SONiC `show queue watermark unicast|multicast|all` and `show priority-group watermark
shared|headroom` (watermarkstat): the peak buffer occupancy per queue or priority group."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class WatermarkTable(BaseModel):
    """One table (`Egress shared pool occupancy per unicast queue: (Namespace asic0)`)."""

    model_config = ConfigDict(extra="forbid")

    what: Literal["queue-unicast", "queue-multicast", "queue-all", "pg-shared", "pg-headroom"]
    """Which buffer: egress shared pool per unicast / multicast / all queues, or ingress shared
    pool / headroom per priority group."""
    persistent: bool = False
    """Not told by the output (user and persistent watermarks print alike): true only when the
    command line in the text says `persistent-watermark`."""
    namespace: str | None = None
    """The ASIC namespace of a multi-ASIC switch (`asic0`); null on a single ASIC."""
    ports: dict[str, dict[str, int | None]]
    """Port -> column (`UC3`, `PG3`, `MC10`, `ALL8`) -> bytes; null where printed `N/A`."""


class QueueWatermark(ParsedOutput):
    """Every watermark table in the output, in order."""

    kind: Literal["queue-watermark"] = "queue-watermark"
    tables: list[WatermarkTable]
    """Tables in the order printed (one per namespace on a multi-ASIC switch)."""
