"""The evidence chain across layers for one suspect (JSON schema: docs/triage-evidence.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Layer = Literal["job", "busbw", "rail", "pfc", "fec", "optic"]
LAYERS: tuple[Layer, ...] = ("job", "busbw", "rail", "pfc", "fec", "optic")
"""Top (what the job sees) to bottom (the light in the fibre)."""
Status = Literal["confirmed", "contradicted", "unknown"]


class ChainLink(BaseModel):
    """One layer's question, answered by one probe (or not answered, and why)."""

    model_config = ConfigDict(extra="forbid")

    layer: Layer
    question: str
    """What this link asks, e.g. `is the leaf port pausing (PFC)?`."""
    status: Status
    """`confirmed`: the probe saw the fault at this layer; `contradicted`: it looked and saw
    none; `unknown`: it could not look (no such component, a dead or slow device, no input)."""
    reason: str
    """Why, in one line, with the numbers that decided it."""
    probe: str | None = None
    target: str | None = None
    values: dict[str, float | int | str | bool | None] = Field(default_factory=dict)
    """The readings that decided it, by metric (and lane or port where it matters)."""


class EvidenceChain(BaseModel):
    """job step time -> NCCL busbw -> rail imbalance -> leaf PFC -> port FEC / BER -> optic DOM."""

    model_config = ConfigDict(extra="forbid")

    node: str
    nic: str | None
    port: str | None
    optic: str | None
    rank: int | None = None
    links: list[ChainLink]
    """In layer order, top to bottom."""
    confirmed: list[Layer]
    deepest: Layer | None
    """The lowest confirmed layer: where the evidence says the fault sits."""
    summary: str
