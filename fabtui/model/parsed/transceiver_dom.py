"""Optical transceiver inventory and DOM (digital optical monitoring) from switch CLIs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class DomAlarm(BaseModel):
    """One alarm/warning flag printed next to a DOM value (NX-OS `++`, `+`, `-`, `--`)."""

    model_config = ConfigDict(extra="forbid")

    measurement: Literal["temperature_c", "voltage_v", "tx_bias_ma", "tx_power_dbm",
                         "rx_power_dbm"]
    """Which value is flagged (the name of the field holding it)."""
    lane: str | None = None
    """Lane as printed, for per-lane values; null for module values."""
    level: Literal["high-alarm", "high-warning", "low-warning", "low-alarm"]
    """`++` high alarm, `+` high warning, `-` low warning, `--` low alarm."""


class TransceiverDom(BaseModel):
    """One port's module: identity and the live optical readings with their thresholds."""

    model_config = ConfigDict(extra="forbid")

    present: bool | None = None
    """Whether a module is plugged in, where the tool says (`transceiver is present`, `SFP
    EEPROM detected` / `Not detected`)."""
    vendor: str | None = None
    """Vendor name (SONiC `Vendor Name`, NX-OS `name is`)."""
    part_number: str | None = None
    """Vendor part number."""
    serial: str | None = None
    """Vendor serial number."""
    revision: str | None = None
    """Vendor revision."""
    media_type: str | None = None
    """Module/media type as printed (NX-OS `type is 10Gbase-SR`, SONiC compliance code)."""
    identifier: str | None = None
    """Form factor as printed (SONiC `Identifier`, e.g. `QSFP-DD Double Density 8X ...`)."""
    temperature_c: float | None = None
    """Module temperature, °C."""
    voltage_v: float | None = None
    """Module supply voltage (Vcc), V."""
    rx_power_dbm: dict[str, float | None] = {}
    """Receive optical power per lane ("1".."8" as printed), dBm; `-inf`/N/A is null."""
    tx_power_dbm: dict[str, float | None] = {}
    """Transmit optical power per lane, dBm."""
    tx_bias_ma: dict[str, float | None] = {}
    """Laser bias current per lane, mA."""
    los_lanes: list[str] = []
    """Lanes in loss of signal: receive power printed as `-inf` (no light), or a LOS flag
    printed as on (old SONiC `sfputil` `ChannelStatus`: `Rx4LOS : On`)."""
    tx_off_lanes: list[str] = []
    """Lanes whose transmit power was printed as `-inf` (laser off or failed)."""
    thresholds: dict[str, float | None] = {}
    """The module's own alarm/warning limits, flat:
    `{measurement}_{high|low}_{alarm|warning}_{unit}` with measurement `temperature` (c),
    `voltage` (v), `tx_bias` (ma), `tx_power` (dbm), `rx_power` (dbm), e.g.
    `rx_power_low_alarm_dbm`. Where a tool prints limits per lane and they differ, lane 1's
    (the first printed) are kept and a warning says so."""
    alarms: list[DomAlarm] = []
    """Alarm/warning flags printed next to values."""
    last_update: str | None = None
    """EOS `Last Update` column, as printed (`0:00:06 ago`)."""
    details: dict[str, str] = {}
    """Every other inventory field as printed (key as printed -> value), e.g. `Vendor OUI`,
    `CMIS Rev`, `nominal bitrate`, `cisco product id`."""


class TransceiverDomReport(ParsedOutput):
    """Transceiver DOM per port, from SONiC, Arista EOS or Cisco NX-OS."""

    kind: Literal["transceiver-dom"] = "transceiver-dom"
    flavor: Literal["sonic", "eos", "nxos"]
    """Which switch OS printed it (detected from the output's shape)."""
    view: str
    """Which command form: `eeprom` (SONiC `show interfaces transceiver eeprom [--dom]`),
    `eos-table` (`show interfaces transceiver`), `eos-detail` (`... detail`), `nxos-details`
    (`show interface transceiver details`), `nxos-inventory` (`show interface transceiver`,
    no DOM: entries carry identity only and empty DOM maps)."""
    command: str | None = None
    """The command line, when the capture shows it after a prompt."""
    interfaces: dict[str, TransceiverDom]
    """Port name as printed -> module. EOS prints one row per lane-interface (Et3/17/1,
    Et3/17/2, ...): each is its own entry with lane "1"."""
