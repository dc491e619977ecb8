"""`mlxlink -d <dev> [-p port] [-m] [-c] [-e] [--amber_collect]` (NVIDIA MFT): port link state,
FEC, troubleshooting verdict, BER counters, module DOM and per-lane data."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class MlxlinkLane(BaseModel):
    """Per-lane values gathered from every per-lane row (comma-separated lists), lane 0 first."""

    model_config = ConfigDict(extra="forbid")

    lane: int
    """Lane index, 0-based, in the order mlxlink lists the values."""
    rx_power_dbm: float | None = None
    """Receive optical power, dBm (`Rx Power Current [dBm]`)."""
    tx_power_dbm: float | None = None
    """Transmit optical power, dBm (`Tx Power Current [dBm]`)."""
    bias_current_ma: float | None = None
    """Laser bias current, mA (`Bias Current [mA]`)."""
    raw_physical_errors: int | None = None
    """Pre-FEC errors on this lane (`Raw Physical Errors Per Lane`), since the last clear."""
    raw_physical_ber: float | None = None
    """Pre-FEC BER of this lane (`Raw Physical BER Per Lane`)."""
    rs_fec_corrected_symbols: int | None = None
    """RS-FEC corrected symbols on this lane (`RS-FEC Corrected Symbols Per Lane`)."""
    snr_media_db: float | None = None
    """Media-side SNR, dB (`SNR Media Lanes [dB]`)."""
    snr_host_db: float | None = None
    """Host-side SNR, dB (`SNR Host Lanes [dB]`)."""
    physical_grade: float | None = None
    """Eye grade (`Physical Grade`, `-e`)."""
    eye_height_mv: float | None = None
    """Eye height, mV (`Height Eye Opening [mV]`)."""
    eye_phase_psec: float | None = None
    """Eye width, ps (`Phase Eye Opening [psec]`)."""
    values: dict[str, str | None] = {}
    """This lane's entry of every other per-lane row, by row name as printed (e.g.
    `Rx LOS [per lane]`, `DataPath state [per lane]`, `CDR RX`); N/A -> null."""
    flags: list[str] = []
    """Problems seen on this lane: `rx_power_out_of_range`, `tx_power_out_of_range`,
    `bias_current_out_of_range` (outside the module's printed [low..high] thresholds), and
    asserted module flags `rx_los`, `tx_los`, `tx_fault`, `rx_cdr_lol`, `tx_cdr_lol`,
    `tx_adaptive_eq_fault`. Empty when nothing is wrong (or nothing per-lane was printed)."""


class MlxlinkCounters(BaseModel):
    """`Physical Counters and BER Info` (`-c` / `--show_counters`)."""

    model_config = ConfigDict(extra="forbid")

    time_since_last_clear_min: float | None = None
    """Minutes since the counters were last cleared."""
    effective_physical_errors: int | None = None
    """Errors left after FEC (post-FEC); should be 0."""
    effective_physical_ber: float | None = None
    """Post-FEC BER (mlxlink prints e.g. `15E-255` for "none")."""
    raw_physical_errors_per_lane: list[int | None] = []
    """Pre-FEC errors per lane, lane 0 first."""
    raw_physical_ber: float | None = None
    """Pre-FEC BER of the port."""
    symbol_errors: int | None = None
    """Symbol errors (InfiniBand)."""
    symbol_ber: float | None = None
    """Symbol BER (InfiniBand)."""
    link_down_counter: int | None = None
    """Times the link went down."""
    link_error_recovery_counter: int | None = None
    """Link error recoveries (retraining without going down)."""
    phy_received_bits: int | None = None
    """Bits received since the last clear (`PHY Received Bits`), when printed."""
    phy_corrected_bits: int | None = None
    """Bits corrected by FEC since the last clear (`PHY Corrected Bits`), when printed."""
    rs_fec_corrected_blocks: int | None = None
    """`RS-FEC Corrected Blocks`, when printed."""
    rs_fec_uncorrectable_blocks: int | None = None
    """`RS-FEC Uncorrectable Blocks` (post-FEC loss; should be 0), when printed."""
    rs_fec_no_error_blocks: int | None = None
    """`RS-FEC No-Error Blocks`, when printed."""
    rs_fec_corrected_symbols_total: int | None = None
    """`RS-FEC Corrected Symbols (Total)`, when printed."""


class MlxlinkModule(BaseModel):
    """`Module Info` (`-m` / `--show_module`): the cable or transceiver and its DOM."""

    model_config = ConfigDict(extra="forbid")

    identifier: str | None = None
    """Form factor, e.g. `QSFP28`, `OSFP`."""
    compliance: str | None = None
    """Compliance code text, e.g. `100GBASE-SR4`, `IB NDR`."""
    cable_technology: str | None = None
    """e.g. `850 nm VCSEL`, `Copper cable, passive, unequalized`."""
    cable_type: str | None = None
    """e.g. `Optical Module (separated)`, `Passive copper cable`."""
    oui: str | None = None
    """Vendor OUI name as printed."""
    vendor_name: str | None = None
    """Module vendor."""
    vendor_part_number: str | None = None
    """Module part number."""
    vendor_serial_number: str | None = None
    """Module serial number."""
    revision: str | None = None
    """Module hardware revision (`Rev`)."""
    fw_version: str | None = None
    """Module firmware (`FW Version`), not the adapter's."""
    wavelength_nm: float | None = None
    """Wavelength, nm."""
    transfer_distance_m: float | None = None
    """Rated reach, m."""
    temperature_c: float | None = None
    """Module temperature, °C."""
    temperature_thresholds_c: list[float | None] | None = None
    """[low, high] alarm thresholds printed after the temperature, °C."""
    voltage_mv: float | None = None
    """Supply voltage, mV."""
    voltage_thresholds_mv: list[float | None] | None = None
    """[low, high] voltage thresholds, mV."""
    bias_current_thresholds_ma: list[float | None] | None = None
    """[low, high] bias current thresholds, mA (per-lane values are in `lanes`)."""
    rx_power_thresholds_dbm: list[float | None] | None = None
    """[low, high] receive power thresholds, dBm (per-lane values are in `lanes`)."""
    tx_power_thresholds_dbm: list[float | None] | None = None
    """[low, high] transmit power thresholds, dBm (per-lane values are in `lanes`)."""
    module_state: str | None = None
    """CMIS module state, e.g. `Ready state`."""


class MlxlinkPort(BaseModel):
    """One mlxlink report (one device/port)."""

    model_config = ConfigDict(extra="forbid")

    device: str | None = None
    """The `-d` device from the command line when captured, e.g. `mlx5_0`, `/dev/mst/...`."""
    port: str | None = None
    """The `-p` port from the command line when captured, as printed (`0x2`, `1/1`)."""
    label: str | None = None
    """A banner printed before this report by a loop (`===== mt4123_pciconf1 =====`)."""
    state: str | None = None
    """Logical state, e.g. `Active`, `Polling`, `Disable`."""
    physical_state: str | None = None
    """Physical state, e.g. `LinkUp`, `Polling`; null when printed N/A."""
    speed: str | None = None
    """Operational speed as printed, e.g. `IB-NDR`, `100G`, `25GbE`, `NVLink-XDR`; for
    `--port_type PCIE`, `Link Speed Active (Enabled)` as printed (`8G-Gen 3 (16G-Gen 4)`)."""
    width: str | None = None
    """Operational width as printed, e.g. `4x`; for `--port_type PCIE`, `Link Width Active
    (Enabled)` as printed (`16X (16X)`)."""
    width_lanes: int | None = None
    """Number of lanes from `width` (`4x` -> 4)."""
    fec: str | None = None
    """Active FEC as printed, e.g. `Standard RS-FEC - RS(528,514)`."""
    loopback_mode: str | None = None
    """e.g. `No Loopback`."""
    auto_negotiation: str | None = None
    """`ON` / `OFF`."""
    enabled_link_speed: str | None = None
    """Enabled speeds as printed, e.g. `0x38000000 (25G)`."""
    enabled_link_speeds: list[str] = []
    """Enabled speeds from the parenthesis, e.g. [`25G`]."""
    supported_cable_speed: str | None = None
    """Speeds the cable supports, as printed."""
    supported_cable_speeds: list[str] = []
    """Cable-supported speeds from the parenthesis."""
    status_opcode: int | None = None
    """Troubleshooting status opcode; 0 means no issue."""
    group_opcode: str | None = None
    """Troubleshooting group opcode, e.g. `PHY FW`; null when N/A."""
    recommendation: str | None = None
    """Troubleshooting recommendation as printed."""
    issue_observed: bool | None = None
    """False when the recommendation says no issue was observed (or the status opcode is 0),
    True for another recommendation or a non-zero opcode, null when neither was printed."""
    firmware_version: str | None = None
    """Adapter/switch firmware (`Tool Information`)."""
    mft_version: str | None = None
    """MFT version, e.g. `mft 4.32.0-120`."""
    amber_version: str | None = None
    """amBER version, when printed."""
    counters: MlxlinkCounters | None = None
    """`Physical Counters and BER Info`, when printed (`-c`)."""
    module: MlxlinkModule | None = None
    """`Module Info`, when printed (`-m`)."""
    lanes: list[MlxlinkLane] = []
    """Per-lane data and flags, one entry per lane; empty when nothing per-lane was printed."""
    sections: dict[str, dict[str, str | None]] = {}
    """Every `name : value` row as printed, by section title (`Operational Info`, ...);
    rows before any section title go under `""`. N/A -> null."""


class MlxlinkOutput(MlxlinkPort, ParsedOutput):
    """The first mlxlink report at the top level, further reports of the capture in `more_ports`.

    A capture of a loop over ports holds several reports; each has the fields of `MlxlinkPort`.
    """

    kind: Literal["mlxlink"] = "mlxlink"
    more_ports: list[MlxlinkPort] = []
    """Further reports in the same capture, in order (empty for a single mlxlink run)."""
