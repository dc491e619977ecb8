"""mlxlink: operational/troubleshooting fields, counters, module DOM, per-lane flags, loops,
JSON, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed.mlxlink import MlxlinkOutput
from fabtui.parsers import mlxlink
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "mlxlink"


def _parse(name: str) -> MlxlinkOutput:
    return mlxlink.parse((FIXTURES / name).read_text())


def test_switch_asic_port_with_single_space_blank_lines() -> None:
    result = _parse("sonic-doc-mlxlink-sn2700-25gbe-port.txt")
    assert (result.device, result.port) == ("/dev/mst/mt52100_pci_cr0", "0x2")
    assert (result.state, result.physical_state, result.speed) == ("Active", "LinkUp", "25GbE")
    assert result.width == "1x" and result.width_lanes == 1
    assert result.fec == "Firecode FEC"
    assert result.enabled_link_speeds == ["25G"]
    assert result.supported_cable_speeds == ["25G", "10G", "1G"]
    assert result.status_opcode == 0 and result.group_opcode is None
    assert result.recommendation == "No issue was observed."
    assert result.issue_observed is False
    assert result.counters is None and result.module is None and result.lanes == []


def test_nvlink_port_physical_state_na_is_null() -> None:
    result = _parse("gce-bug-report-mlxlink-nvlink-xdr.txt")
    assert result.physical_state is None
    assert (result.speed, result.width) == ("NVLink-XDR", "2x")
    assert result.fec == "Interleaved_Standard_RS_FEC_PLR - (544,514)"
    assert result.supported_cable_speed is None
    assert (result.firmware_version, result.amber_version) == ("36.2014.1676", "4.8")
    assert result.mft_version == "mft 4.32.0-120"


def test_counters_module_and_lane_flags() -> None:
    result = _parse("synthetic-mlxlink-m-c-e-cx5-100g-optical-lane-fault.txt")
    counters = result.counters
    assert counters is not None
    assert counters.time_since_last_clear_min == 1234.5
    assert counters.effective_physical_errors == 0
    assert counters.effective_physical_ber == pytest.approx(15e-255)
    assert counters.raw_physical_errors_per_lane == [10, 2000, 3, 1]
    assert counters.raw_physical_ber == pytest.approx(1e-11)
    assert (counters.link_down_counter, counters.link_error_recovery_counter) == (2, 0)
    module = result.module
    assert module is not None
    assert module.temperature_c == 41 and module.temperature_thresholds_c == [-5, 75]
    assert module.voltage_mv == 3256.9
    assert module.rx_power_thresholds_dbm == [-10.41, 5.4]
    assert (module.vendor_name, module.vendor_part_number) == ("Mellanox", "MMA1B00-C100D")
    assert module.vendor_serial_number == "MT1234FT12345"
    assert len(result.lanes) == 4
    bad = result.lanes[1]
    assert bad.rx_power_dbm == -12.374 and bad.raw_physical_errors == 2000
    assert bad.flags == ["rx_los", "rx_power_out_of_range"]
    assert bad.values["Rx LOS [per lane]"] == "1"
    assert all(not lane.flags for i, lane in enumerate(result.lanes) if i != 1)
    assert result.lanes[0].eye_height_mv == 250
    assert result.enabled_link_speeds[0] == "100G_2X"


def test_loop_over_two_ports_with_banners_and_error_lines() -> None:
    result = _parse("synthetic-mlxlink-loop-2-hcas-one-polling.txt")
    assert result.label == "mt4123_pciconf0" and result.device is None
    assert result.issue_observed is False
    assert len(result.more_ports) == 1
    second = result.more_ports[0]
    assert (second.label, second.state, second.speed) == ("mt4123_pciconf1", "Polling", None)
    assert (second.status_opcode, second.group_opcode) == (1024, "PHY FW")
    assert second.issue_observed is True
    assert any("show_ber_monitor" in w for w in result.warnings)


def test_json_output() -> None:
    result = _parse("synthetic-mlxlink-json-cx7-ndr.json")
    assert (result.speed, result.width_lanes) == ("IB-NDR", 4)
    assert result.counters is not None
    assert result.counters.raw_physical_errors_per_lane == [1102, 87, 3401, 12]
    assert result.counters.link_down_counter == 1


def test_module_minus_inf_and_na_lanes_are_null() -> None:
    text = ("Operational Info\n----------------\nState : Active\nSpeed : 400G\n\n"
            "Module Info\n-----------\nTemperature [C] : N/A\n"
            "Rx Power Current [dBm] : -inf,1.0,N/A,0.5 [-8..4]\n")
    result = mlxlink.parse(text)
    assert result.module is not None and result.module.temperature_c is None
    assert [lane.rx_power_dbm for lane in result.lanes] == [None, 1.0, None, 0.5]
    assert all(not lane.flags for lane in result.lanes)


def test_refusals() -> None:
    with pytest.raises(ParseError, match="Failed to open device"):
        _parse("synthetic-mlxlink-error-only-no-device.txt")
    with pytest.raises(ParseError) as caught:
        mlxlink.parse("$ mlxlink -d mlx5_0\n\nOperational Info\n----------------\n")
    assert caught.value.line == 3
    with pytest.raises(ParseError):
        mlxlink.parse("NIC statistics:\n     rx_packets: 1\n")
