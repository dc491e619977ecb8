"""SONiC `mmuconfig -l` (`show buffer` pools and profiles): the buffer pools and the buffer
profiles, among them the lossless PGs' headroom (xon, xoff, size)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class BufferEntry(BaseModel):
    """One pool or profile as printed: its fields, numbers as integers."""

    model_config = ConfigDict(extra="forbid")

    namespace: str | None = None
    """The ASIC namespace of a multi-ASIC switch (`Profile for namespace asic1: ...`)."""
    fields: dict[str, int | str]
    """Field -> value: `size`, `xon`, `xoff`, `dynamic_th`, `static_th` (bytes or the alpha
    exponent) as integers; `pool`, `mode`, `type`, `headroom_type` as text."""


class BufferProfiles(ParsedOutput):
    """Pools and profiles in the order printed."""

    kind: Literal["buffer-profiles"] = "buffer-profiles"
    pools: dict[str, BufferEntry]
    """Pool name -> entry (`ingress_lossless_pool`: mode, size, type); a multi-ASIC switch
    prints one per namespace, keyed `asic0/ingress_lossless_pool`."""
    profiles: dict[str, BufferEntry]
    """Profile name -> entry (`pg_lossless_400000_5m_profile`: dynamic_th, pool, xon, xoff,
    size), keyed `asicN/name` on a multi-ASIC switch."""
    lossless_pattern: dict[str, int | str] = Field(default_factory=dict)
    """`Lossless traffic pattern:` (default_dynamic_th, over_subscribe_ratio) where printed."""
