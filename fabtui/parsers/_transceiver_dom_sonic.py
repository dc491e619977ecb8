"""SONiC `show interfaces transceiver eeprom [--dom]` (sfpshow / sfputil) for transceiver-dom.
Not a parser.

    Ethernet8: SFP EEPROM detected
            Vendor Name: INNOLIGHT
            ...
            ChannelMonitorValues:
                    RX1Power: -3.8595dBm
                    TX1Bias: 17.4760mA
            ChannelThresholdValues:
                    RxPowerHighAlarm  : 6.9999dBm
            ModuleMonitorValues:
                    Temperature: 44.9883C
                    Vcc: 3.2999Volts
            ModuleThresholdValues:
                    TempHighAlarm  : 80.0000C
    Ethernet12: SFP EEPROM Not detected

SFP (SFF-8472) modules print `MonitorData:` (RXPower, TXBias, TXPower, Temperature, Vcc) and
`ThresholdData:` instead. A lane without light prints `-inf` (`RX3Power: -infdBm`). The old
`sfputil --dom` form (`Ethernet0: SFP detected`, `VendorName : ...`, `key : value`) also has a
`ChannelStatus` section whose `RxNLOS : On` lines mark lanes in loss of signal.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.transceiver_dom import TransceiverDom
from fabtui.parsers._switch_common import split_unit
from fabtui.parsers._transceiver_dom_common import DomBuilder, threshold_name

PORT = re.compile(r"^(?P<port>\S+?):\s+SFP (?:EEPROM )?(?P<status>detected|Not detected|is not "
                  r"applicable.*?|\S.*?)\s*$")
_KEYED = re.compile(r"^(?P<indent>\s+)(?P<key>[^:]+?)\s*:\s*(?P<value>.*?)\s*$")
_LANE_KEY = re.compile(r"^(RX|TX)(\d*)(Power|Bias)$", re.IGNORECASE)
_THRESHOLD_KEY = re.compile(
    r"^(RxPower|TxPower|TxBias|Temp|Temperature|Vcc|Voltage)(High|Low)(Alarm|Warning)$",
    re.IGNORECASE)
_MEASUREMENT = {"rxpower": "rx_power", "txpower": "tx_power", "txbias": "tx_bias",
                "temp": "temperature", "temperature": "temperature", "vcc": "voltage",
                "voltage": "voltage"}
_IDENTITY = {"vendorname": "vendor", "vendorpn": "part_number", "vendorsn": "serial",
             "vendorrev": "revision", "identifier": "identifier", "typeoftransceiver": "identifier"}
_DOM_SECTIONS = ("channelmonitorvalues", "channelthresholdvalues", "modulemonitorvalues",
                 "modulethresholdvalues", "monitordata", "thresholddata")
_COMPLIANCE_SECTIONS = ("specificationcompliance", "transceivercodes")
_LOS = re.compile(r"^Rx(\d+)LOS$", re.IGNORECASE)


class _Port:
    """Reading state for one port block."""

    def __init__(self, status: str) -> None:
        self.builder = DomBuilder()
        lowered = status.lower()
        self.builder.values["present"] = (True if lowered.startswith("detected")
                                          else False if "not detected" in lowered else None)
        self.section: str | None = None
        self.base_indent: int | None = None
        self.last_key: str | None = None
        self.compliance: list[str] = []


def parse(lines: list[str]) -> tuple[dict[str, TransceiverDom], list[str]]:
    """Every `<port>: SFP EEPROM ...` block."""
    ports: dict[str, _Port] = {}
    warnings: list[str] = []
    current: _Port | None = None
    for number, line in enumerate(lines, start=1):
        header = PORT.match(line)
        if header:
            current = _Port(header.group("status"))
            ports[header.group("port")] = current
            continue
        if current is None or not line.strip():
            continue
        problem = _line(current, line)
        if problem:
            warnings.append(f"line {number}: {problem}")
    result: dict[str, TransceiverDom] = {}
    for name, port in ports.items():
        if port.builder.values.get("media_type") is None and port.compliance:
            port.builder.values["media_type"] = port.compliance[0]
        if port.builder.threshold_conflict:
            warnings.append(f"{name}: thresholds differ between lanes; the first are kept")
        result[name] = port.builder.build()
    return result, warnings


def _line(port: _Port, line: str) -> str | None:
    """Read one indented line of a port block; returns a warning text if unusable."""
    indent = len(line) - len(line.lstrip())
    keyed = _KEYED.match(line)
    if port.base_indent is None:
        port.base_indent = indent
    if indent <= port.base_indent:
        port.section = None
        if not keyed:
            return None
        key, value = keyed.group("key").strip(), keyed.group("value")
        port.last_key = key
        if not value:
            port.section = key.lower().replace(" ", "")
            return None
        _identity(port, key, value)
        return None
    if not keyed:
        if port.section is None and port.last_key is not None:
            details = port.builder.details
            details[port.last_key] = f"{details.get(port.last_key, '')}; {line.strip()}".strip("; ")
        return None
    key, value = keyed.group("key").strip(), keyed.group("value")
    if port.section in _DOM_SECTIONS:
        return _dom_value(port, key, value)
    # QSFP28 `10/40G Ethernet Compliance Code: Extended` points at the `Extended Specification
    # Compliance` line below it, which names the media.
    if port.section in _COMPLIANCE_SECTIONS and value \
            and value.lower() not in ("unknown", "n/a", "not supported for cmis cables",
                                      "extended"):
        port.compliance.append(value)
    los = _LOS.match(key)
    if port.section == "channelstatus" and los and value.strip().lower() == "on":
        lane = str(int(los.group(1)))
        if lane not in port.builder.los:
            port.builder.los.append(lane)
    port.builder.details[key] = value
    return None


def _identity(port: _Port, key: str, value: str) -> None:
    field = _IDENTITY.get(key.lower().replace(" ", ""))
    if field:
        port.builder.values[field] = value
    elif key.lower() in ("media interface code", "media type"):
        port.builder.values["media_type"] = value
    else:
        port.builder.details[key] = value


def _dom_value(port: _Port, key: str, value: str) -> str | None:
    """One DOM reading or threshold inside a monitor/threshold section."""
    try:
        number, _unit, infinite = split_unit(value)
    except ValueError:
        port.builder.details[key] = value
        return None
    lane = _LANE_KEY.match(key)
    threshold = _THRESHOLD_KEY.match(key)
    builder = port.builder
    if lane:
        direction, index, what = lane.group(1).lower(), lane.group(2) or "1", lane.group(3)
        field = "tx_bias_ma" if what.lower() == "bias" else f"{direction}_power_dbm"
        builder.lane(field, str(int(index)), number, infinite)
    elif threshold:
        measurement = _MEASUREMENT[threshold.group(1).lower()]
        builder.threshold(threshold_name(measurement, threshold.group(2).lower(),
                                         threshold.group(3).lower()), number)
    elif key.lower() in ("temperature", "temp"):
        builder.module("temperature_c", number)
    elif key.lower() in ("vcc", "voltage"):
        builder.module("voltage_v", number)
    else:
        builder.details[key] = value
    return None
