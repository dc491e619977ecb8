"""OpenSM's log (`/var/log/opensm.log`): SM state changes, sweeps, traps and port state
changes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class OpensmEvent(BaseModel):
    """One event line the parser recognised."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["master", "standby", "heavy_sweep", "subnet_up", "trap", "port_state"]
    stamp: str
    """`Jun 17 17:21:28` as printed (OpenSM logs no year)."""
    seconds: int
    """Seconds since midnight of that stamp, for windows and ordering within a day."""
    trap: int | None = None
    """Trap number (128 link state change, 129 local link integrity, 130 buffer overrun,
    131 flow control watchdog, 144/145 ...)."""
    lid: int | None = None
    """The LID the trap came from."""
    node: str | None = None
    """The node whose port changed state (its description, e.g. `leaf-g00-r3`)."""
    guid: str | None = None
    port: int | None = None
    old_state: str | None = None
    new_state: str | None = None
    line: int


class OpensmLog(ParsedOutput):
    """Events in the order logged."""

    kind: Literal["opensm-log"] = "opensm-log"
    events: list[OpensmEvent]
    masters: int = 0
    """`Entering MASTER state` lines: the SM became master (start, or a handover to it)."""
    standbys: int = 0
    """`Entering STANDBY state` lines: it lost mastership to another SM."""
    heavy_sweeps: int = 0
    subnet_ups: int = 0
    traps: dict[str, int] = Field(default_factory=dict)
    """Trap number -> how many were received."""
