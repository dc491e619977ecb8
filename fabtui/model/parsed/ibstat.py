"""`ibstat` and `ibstatus` (infiniband-diags): HCA and port state, rate, LIDs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class IbstatPort(BaseModel):
    """One port of a CA, as `ibstat` (`Port 1:`) or `ibstatus` (`... port 1 status:`) prints it."""

    model_config = ConfigDict(extra="forbid")

    state: str | None = None
    """Logical port state as a word: `Active`, `Down`, `Initializing`, `Armed` (ibstatus
    `4: ACTIVE` is normalised to `Active`)."""
    state_code: int | None = None
    """Numeric state code when printed (ibstatus `4: ACTIVE` -> 4)."""
    physical_state: str | None = None
    """Physical port state as a word: `LinkUp`, `Polling`, `Disabled`, `Sleep`, ..."""
    physical_state_code: int | None = None
    """Numeric physical state code when printed (ibstatus `5: LinkUp` -> 5)."""
    rate: float | None = None
    """Link rate in Gb/s (`Rate: 40 (FDR10)` -> 40.0; `rate: 200 Gb/sec (2X NDR)` -> 200.0);
    None on a port whose link has not trained (physical state other than LinkUp), where ibstat
    prints its reset value `Rate: 10`: the speed is unknown then, not 10."""
    rate_info: str | None = None
    """The width/generation text printed next to the rate, e.g. `FDR10`, `2X NDR` (None with
    the rate on a link that has not trained)."""
    width: str | None = None
    """Link width when the rate text names it, e.g. `2X` from `(2X NDR)`."""
    base_lid: int | None = None
    """Base LID (ibstatus prints it in hex; converted to an integer)."""
    lmc: int | None = None
    """LID mask control."""
    sm_lid: int | None = None
    """LID of the subnet manager this port sees (hex in ibstatus, converted)."""
    capability_mask: str | None = None
    """Port capability mask as printed, e.g. `0x0251486a`."""
    port_guid: str | None = None
    """Port GUID as printed, e.g. `0x0002c90300ea9941`."""
    link_layer: str | None = None
    """`InfiniBand` or `Ethernet` (RoCE)."""
    default_gid: str | None = None
    """Default GID (ibstatus only), as printed."""


class IbstatCa(BaseModel):
    """One channel adapter (or switch) and its ports."""

    model_config = ConfigDict(extra="forbid")

    node_type: str | None = None
    """`CA` or `Switch` as ibstat prints the header; null for ibstatus."""
    ca_type: str | None = None
    """Device type, e.g. `MT4123`."""
    number_of_ports: int | None = None
    """Number of ports the CA reports."""
    firmware_version: str | None = None
    """Firmware version, e.g. `20.31.1014`."""
    hardware_version: str | None = None
    """Hardware revision as printed."""
    node_guid: str | None = None
    """Node GUID as printed."""
    system_image_guid: str | None = None
    """System image GUID as printed."""
    ports: dict[str, IbstatPort] = {}
    """Port number (as a string key, e.g. `"1"`) -> port."""


class IbstatOutput(ParsedOutput):
    """CAs by name (`mlx5_0`), each with its ports."""

    kind: Literal["ibstat"] = "ibstat"
    tool: Literal["ibstat", "ibstatus"] = "ibstat"
    """Which of the two tools printed the input."""
    cas: dict[str, IbstatCa]
    """CA name -> CA, in the order printed."""
