"""`ibswinfo` (stanford-rc/ibswinfo): inventory and vitals of an unmanaged Mellanox IB switch."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class SwitchPsu(BaseModel):
    """One power supply, as ibswinfo reports it."""

    model_config = ConfigDict(extra="forbid")

    status: str | None = None
    """Presence status as printed (`OK` / `ERROR`)."""
    dc_power: str | None = None
    """DC output status as printed (`OK` / `ERROR`)."""
    fan_status: str | None = None
    """PSU fan status as printed (`OK` / `ERROR`)."""
    power_w: int | None = None
    """Power drawn, watts."""
    part_number: str | None = None
    """PSU part number (P/N)."""
    serial: str | None = None
    """PSU serial number (S/N)."""


class IbSwitchInfo(ParsedOutput):
    """Identity, PSUs, temperatures and fans of one unmanaged switch (any ibswinfo output)."""

    kind: Literal["ibswinfo"] = "ibswinfo"
    view: Literal["full", "inventory", "vitals", "status"]
    """`full` (default table with `|`), or the `-o inventory|vitals|status` key `:` value forms."""
    node_description: str | None = None
    """Node description (the banner line, or `node_desription` in `-o inventory`)."""
    part_number: str | None = None
    """Switch part number, e.g. `MSB7790-ES2F`."""
    serial_number: str | None = None
    """Switch serial number."""
    product_name: str | None = None
    """Product name, e.g. `Scorpion IB EDR Unmanaged`."""
    revision: str | None = None
    """Hardware revision."""
    ports: int | None = None
    """Number of ports."""
    psid: str | None = None
    """Firmware PSID."""
    guid: str | None = None
    """Node GUID as printed (`0x...`)."""
    firmware_version: str | None = None
    """Firmware version, e.g. `11.2008.2102`."""
    cpld: str | None = None
    """CPLD version, where printed."""
    uptime: str | None = None
    """Uptime as printed (`160d-10:38:53`)."""
    uptime_s: int | None = None
    """Uptime in seconds (from `d-h:m:s`, or `uptime (sec)` in `-o vitals`)."""
    psus: dict[str, SwitchPsu] = Field(default_factory=dict)
    """PSU index as printed (`0`, `1`) -> PSU."""
    temperature_c: float | None = None
    """ASIC temperature now, °C."""
    max_temperature_c: float | None = None
    """Highest ASIC temperature recorded, °C."""
    temperature_warn_low_c: float | None = None
    """Low warning threshold, °C (`warn threshold (C) | 5/75 (low/high)`)."""
    temperature_warn_high_c: float | None = None
    """High warning threshold, °C."""
    module_temperatures_c: dict[str, float] = Field(default_factory=dict)
    """QSFP module number as printed (`01`) -> temperature, °C (`-T`)."""
    fan_status: str | None = None
    """Overall fan status as printed (`OK`, or `ERROR` when a fan is out of range)."""
    fans_rpm: dict[str, int] = Field(default_factory=dict)
    """Fan number as printed (`1`) -> speed, rpm."""
    problems: list[str] = Field(default_factory=list)
    """Every status printed as something other than OK, e.g. `fan status: ERROR`,
    `PSU1 dc_power: ERROR`, and fans reading 0 rpm (`fan#5: 0 rpm`): what the red LED would
    have said."""
