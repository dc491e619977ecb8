"""`ibdiagnet` (ibutils2, NVIDIA): the fabric sweep's standard output (stages, fabric summary,
the warnings/errors table, port-counter errors)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class IbdiagnetStage(BaseModel):
    """One row of the closing `Summary` table."""

    model_config = ConfigDict(extra="forbid")

    warnings: int
    errors: int
    comment: str = ""


class IbdiagnetPortError(BaseModel):
    """A port counter that grew during the run (`-E- S.../N.../Pn - "counter" increased during
    the run (difference value=V,difference allowed threshold=T)`)."""

    model_config = ConfigDict(extra="forbid")

    port: str
    """The port as ibdiagnet names it: `S<system GUID>/N<node GUID>/P<port>` (`P1/27/2` on a
    split port)."""
    node_guid: str | None
    """`0x` + the node GUID, for matching with ibnetdiscover."""
    port_number: int | None
    """The port number (the first number after `P`)."""
    counter: str
    """ibdiagnet's counter name (`symbol_error_counter`, `link_down_counter`, ...)."""
    difference: int
    threshold: int | None = None
    line: int


class IbdiagnetMessage(BaseModel):
    """A `-W-` or `-E-` line that is not a port-counter increase (kept as printed)."""

    model_config = ConfigDict(extra="forbid")

    level: Literal["warning", "error"]
    stage: str | None
    text: str
    line: int


class IbdiagnetOutput(ParsedOutput):
    """One ibdiagnet run."""

    kind: Literal["ibdiagnet"] = "ibdiagnet"
    version: str | None = None
    """`IBDIAGNET 2.7.0.MLNX...` from `Running version:`."""
    stages: dict[str, IbdiagnetStage]
    """The `Summary` table: stage name -> warnings, errors."""
    total_nodes: int | None = None
    switches: int | None = None
    channel_adapters: int | None = None
    links: int | None = None
    links_by_speed: dict[str, int] = Field(default_factory=dict)
    """`Links at 4x100 : 6` -> {"4x100": 6}."""
    master_sm: str | None = None
    """The `Master SM:` line's value as printed."""
    master_sm_lid: int | None = None
    master_sm_description: str | None = None
    standby_sm: str | None = None
    port_errors: list[IbdiagnetPortError] = Field(default_factory=list)
    messages: list[IbdiagnetMessage] = Field(default_factory=list)
