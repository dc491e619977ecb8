"""Building one transceiver-dom entry: lane values, thresholds, flags. Not a parser.

All readers (SONiC, EOS, NX-OS) fill a `DomBuilder` with measurements named the same way, so
`-inf` handling, threshold names and alarm flags are decided in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fabtui.model.parsed.transceiver_dom import DomAlarm, TransceiverDom

LANE_FIELDS = ("rx_power_dbm", "tx_power_dbm", "tx_bias_ma")
MODULE_FIELDS = ("temperature_c", "voltage_v")
THRESHOLD_UNITS = {"temperature": "c", "voltage": "v", "tx_bias": "ma", "tx_power": "dbm",
                   "rx_power": "dbm"}
FLAGS = {"++": "high-alarm", "+": "high-warning", "-": "low-warning", "--": "low-alarm"}


def threshold_name(measurement: str, side: str, level: str) -> str:
    """`("rx_power", "low", "alarm")` -> `rx_power_low_alarm_dbm`."""
    return f"{measurement}_{side}_{level}_{THRESHOLD_UNITS[measurement]}"


def measurement_field(measurement: str) -> str:
    """`rx_power` -> `rx_power_dbm` (the entry field holding the live value)."""
    return f"{measurement}_{THRESHOLD_UNITS[measurement]}"


@dataclass
class DomBuilder:
    """Collects one port's readings; `build()` makes the model entry."""

    values: dict[str, Any] = field(default_factory=dict)
    lanes: dict[str, dict[str, float | None]] = field(
        default_factory=lambda: {name: {} for name in LANE_FIELDS})
    los: list[str] = field(default_factory=list)
    tx_off: list[str] = field(default_factory=list)
    thresholds: dict[str, float | None] = field(default_factory=dict)
    alarms: list[DomAlarm] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)
    threshold_conflict: bool = False

    def lane(self, field_name: str, lane: str, value: float | None, infinite: bool = False) -> None:
        """A per-lane reading; `infinite` marks a printed `-inf` (dark lane)."""
        self.lanes[field_name][lane] = value
        if infinite and field_name == "rx_power_dbm" and lane not in self.los:
            self.los.append(lane)
        if infinite and field_name == "tx_power_dbm" and lane not in self.tx_off:
            self.tx_off.append(lane)

    def module(self, field_name: str, value: float | None) -> None:
        """A module-level reading (temperature, voltage); the first one printed wins."""
        if self.values.get(field_name) is None:
            self.values[field_name] = value

    def threshold(self, name: str, value: float | None) -> None:
        """A limit; a later different value for the same limit (another lane's) is noted."""
        if name in self.thresholds:
            if self.thresholds[name] != value:
                self.threshold_conflict = True
            return
        self.thresholds[name] = value

    def flag(self, field_name: str, lane: str | None, flag: str) -> None:
        """An alarm flag (`++`, `+`, `-`, `--`) printed next to a value."""
        if flag in FLAGS:
            self.alarms.append(DomAlarm.model_validate(
                {"measurement": field_name, "lane": lane, "level": FLAGS[flag]}))

    def build(self) -> TransceiverDom:
        """The finished entry."""
        return TransceiverDom(**self.values, **self.lanes, los_lanes=self.los,
                              tx_off_lanes=self.tx_off, thresholds=self.thresholds,
                              alarms=self.alarms, details=self.details)
