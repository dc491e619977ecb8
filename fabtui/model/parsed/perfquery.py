"""`perfquery` (infiniband-diags): IB port counters (`-x` extended, `-E` PortRcvErrorDetails,
`-D` PortXmitDiscardDetails, plain = basic PortCounters)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class PerfqueryPort(BaseModel):
    """One `# ... counters: Lid N port M` block."""

    model_config = ConfigDict(extra="forbid")

    lid: int | None
    """LID of the queried node (a switch's LID for switch ports); null when the header gives a
    directed route or GUID instead."""
    port: int | None
    """Port number from the header (255 = all ports summed, `-a`); null when not printed."""
    counter_set: str
    """Which counter set: `extended` (`-x`), `basic` (PortCounters), `rcv_error_details`
    (`-E`), `xmit_discard_details` (`-D`), or the header's name in snake case for others."""
    header: str | None = None
    """The block's header line as printed (without `# `); null for a capture that lost it."""
    cap_mask: str | None = None
    """`CapMask` from the header, as printed (e.g. `0x5300`)."""
    cap_mask2: str | None = None
    """`CapMask2` from the header, as printed."""
    counters: dict[str, int]
    """Counter name (as printed, e.g. `PortXmitData`, `SymbolErrorCounter`) -> value. Hex values
    (`CounterSelect: 0x0000`) are converted. PortXmitData/PortRcvData count 4-byte words."""


class PerfqueryOutput(ParsedOutput):
    """Counter blocks in the order printed."""

    kind: Literal["perfquery"] = "perfquery"
    ports: list[PerfqueryPort]
    """One entry per counter block."""
