"""Cumulus Linux `l1-show <swp>`: one port's module, configured and operational layer-1 state."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class L1Port(BaseModel):
    """One port as `l1-show` reports it; every value as printed unless said otherwise."""

    model_config = ConfigDict(extra="forbid")

    vendor: str | None = None
    """Module vendor (`Vendor Name`)."""
    part_number: str | None = None
    """Module part number (`PN`)."""
    identifier: str | None = None
    """Module identifier, e.g. `0x03 (SFP)`."""
    module_type: str | None = None
    """Module type, e.g. `25g-cr`."""
    admin: str | None = None
    """Configured admin state, e.g. `Admin Up`."""
    configured_speed: str | None = None
    """Configured speed, e.g. `25G`."""
    mtu: int | None = None
    """Configured MTU, bytes."""
    configured_autoneg: str | None = None
    """Configured autonegotiation."""
    configured_fec: str | None = None
    """Configured FEC, e.g. `Auto`."""
    link_kernel: str | None = None
    """Link status seen by the kernel: `up`/`down` where clear."""
    link_hardware: str | None = None
    """Link status seen by the ASIC: `up`/`down` where clear."""
    speed_kernel: str | None = None
    """Operational speed seen by the kernel."""
    speed_hardware: str | None = None
    """Operational speed seen by the ASIC."""
    autoneg: str | None = None
    """Operational autonegotiation, e.g. `On (Autodetect enabld)`."""
    fec: str | None = None
    """Operational FEC, e.g. `None`, `RS`."""
    tx_power_mw: list[float] = Field(default_factory=list)
    """Transmit power per lane, mW (empty when printed as `None`, e.g. copper)."""
    rx_power_mw: list[float] = Field(default_factory=list)
    """Receive power per lane, mW (empty when printed as `None`)."""
    topo_neighbor: str | None = None
    """Neighbor from the topology file (`Topo File Neighbor`)."""
    lldp_neighbor: str | None = None
    """Neighbor learned by LLDP."""
    compliance_code: str | None = None
    """Module compliance code."""
    cable_type: str | None = None
    """Cable type, e.g. `Passive copper cable`."""
    hardware_speed: str | None = None
    """Speed in the Port Hardware State section."""
    autodetect: str | None = None
    """Autodetect state."""
    eyes: list[int] = Field(default_factory=list)
    """SerDes eye values per lane (higher is better)."""
    grade: list[int] = Field(default_factory=list)
    """SerDes grade per lane."""
    troubleshooting_info: str | None = None
    """The tool's verdict, e.g. `No issue was observed.`."""
    sections: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Every `key: value` as printed, by section title (nested keys joined with `/`, e.g.
    `Link Status/Kernel`)."""


class SwitchL1(ParsedOutput):
    """`l1-show` output for one or more ports."""

    kind: Literal["switch-l1"] = "switch-l1"
    ports: dict[str, L1Port]
    """Port name as printed (`swp43`) -> layer-1 state."""
