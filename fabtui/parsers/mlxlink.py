"""`mlxlink` (NVIDIA MFT) on host NICs, switch ASICs and GPU NVLink ports.

    Operational Info
    ----------------
    State                           : Active
    Physical state                  : LinkUp
    Speed                           : 25GbE
    ...
    Troubleshooting Info
    --------------------
    Status Opcode                   : 0
    Recommendation                  : No issue was observed.

Sections are a title over a dashed rule (the rule is optional: `| grep` captures lose it), then
`Name : value` rows. Per-lane rows are comma-separated lists, some followed by the module's
`[low..high]` thresholds (`Rx Power Current [dBm] : 0.2,0.3 [-10.41..5.4]`). Captures of a loop
over ports (banners `==== dev ====`, several `Operational Info` sections) give several reports:
the first at the top level, the rest in `more_ports`. `mlxlink --json` output is read too.
`-E-`/`-W-` lines become warnings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from fabtui.model.parsed.mlxlink import (
    MlxlinkCounters,
    MlxlinkLane,
    MlxlinkModule,
    MlxlinkOutput,
    MlxlinkPort,
)
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed
from fabtui.parsers.text import (
    clean_line_list,
    clean_lines,
    is_missing,
    split_lines,
    to_float,
)

KIND = "mlxlink"
MODEL = MlxlinkOutput
DESCRIPTION = "mlxlink -d <dev> [-p port] [-m] [-c]: port state, FEC, BER counters, module DOM"

_RULE = re.compile(r"^\s*-{3,}\s*$")
_TITLE = re.compile(r"^\s*([A-Z][\w ()/.,&-]*?(?:Info|Information))\s*$")
_ROW = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(.*?)\s*$")
_BANNER = re.compile(r"^\s*={3,}\s*(.*?)\s*={3,}\s*$")
_COMMAND = re.compile(r"\bmlxlink\s+(.*)$")
_MESSAGE = re.compile(r"^\s*-([EWI])-\s*(.*?)\s*$")
_THRESHOLDS = re.compile(r"^(.*?)\s*\[\s*([^\]]*?)\s*\.\.\s*([^\]]*?)\s*\]\s*$")

_LANE_NUMBERS = {
    "rx power current [dbm]": "rx_power_dbm",
    "tx power current [dbm]": "tx_power_dbm",
    "bias current [ma]": "bias_current_ma",
    "raw physical ber per lane": "raw_physical_ber",
    "snr media lanes [db]": "snr_media_db",
    "snr host lanes [db]": "snr_host_db",
    "physical grade": "physical_grade",
    "height eye opening [mv]": "eye_height_mv",
    "phase eye opening [psec]": "eye_phase_psec",
}
_LANE_FLAGS = {"rx los": "rx_los", "tx los": "tx_los", "tx fault": "tx_fault",
               "rx cdr lol": "rx_cdr_lol", "tx cdr lol": "tx_cdr_lol",
               "tx adaptive eq fault": "tx_adaptive_eq_fault"}
_LANE_TEXT = ("cdr rx", "cdr tx")
_RANGE_FLAGS = {"rx_power_dbm": ("rx power current [dbm]", "rx_power_out_of_range"),
                "tx_power_dbm": ("tx power current [dbm]", "tx_power_out_of_range"),
                "bias_current_ma": ("bias current [ma]", "bias_current_out_of_range")}
_COUNTER_KEYS: dict[str, tuple[str, ...]] = {
    "time_since_last_clear_min": ("time since last clear [min]", "time since last clear"),
    "effective_physical_errors": ("effective physical errors", "effective errors"),
    "effective_physical_ber": ("effective physical ber", "effective ber"),
    "raw_physical_ber": ("raw physical ber", "raw ber"),
    "symbol_errors": ("symbol errors",),
    "symbol_ber": ("symbol ber",),
    "link_down_counter": ("link down counter",),
    "link_error_recovery_counter": ("link error recovery counter",),
    "phy_received_bits": ("phy received bits",),
    "phy_corrected_bits": ("phy corrected bits",),
    "rs_fec_corrected_blocks": ("rs-fec corrected blocks",),
    "rs_fec_uncorrectable_blocks": ("rs-fec uncorrectable blocks",),
    "rs_fec_no_error_blocks": ("rs-fec no-error blocks",),
    "rs_fec_corrected_symbols_total": ("rs-fec corrected symbols (total)",),
}
_INT_COUNTERS = {"effective_physical_errors", "symbol_errors", "link_down_counter",
                 "link_error_recovery_counter", "phy_received_bits", "phy_corrected_bits",
                 "rs_fec_corrected_blocks", "rs_fec_uncorrectable_blocks",
                 "rs_fec_no_error_blocks", "rs_fec_corrected_symbols_total"}
_MODULE_TEXT = {"identifier": "identifier", "compliance": "compliance",
                "cable technology": "cable_technology", "cable type": "cable_type", "oui": "oui",
                "vendor name": "vendor_name", "vendor part number": "vendor_part_number",
                "vendor serial number": "vendor_serial_number", "rev": "revision",
                "fw version": "fw_version", "module state": "module_state"}
_MODULE_NUMBERS = {"wavelength [nm]": "wavelength_nm",
                   "transfer distance [m]": "transfer_distance_m"}
_MODULE_RANGED = {"temperature [c]": ("temperature_c", "temperature_thresholds_c"),
                  "voltage [mv]": ("voltage_mv", "voltage_thresholds_mv")}
_MODULE_THRESHOLDS = {"bias current [ma]": "bias_current_thresholds_ma",
                      "rx power current [dbm]": "rx_power_thresholds_dbm",
                      "tx power current [dbm]": "tx_power_thresholds_dbm"}
_TOP_TEXT = {"state": "state", "physical state": "physical_state", "speed": "speed",
             "width": "width", "fec": "fec", "loopback mode": "loopback_mode",
             "auto negotiation": "auto_negotiation", "group opcode": "group_opcode",
             "recommendation": "recommendation", "firmware version": "firmware_version",
             "mft version": "mft_version", "amber version": "amber_version",
             "enabled link speed": "enabled_link_speed",
             "supported cable speed": "supported_cable_speed",
             # `--port_type PCIE`: the PCIe link's active speed and width.
             "link speed active (enabled)": "speed", "link width active (enabled)": "width"}


def detect(text: str) -> float:
    """How sure we are that `text` is mlxlink output (0..1)."""
    head = "\n".join(clean_lines(text[:40000]))
    if head.lstrip().startswith("{") and '"Operational Info"' in head:
        return 0.9
    operational = re.search(r"(?m)^\s*(?:\S+: )?(?:PCIe )?Operational (?:\(Enabled\) )?Info\s*$",
                            head)
    rows = re.findall(r"(?m)^\s*(?:\S+: )?(State|Physical state|Speed|FEC|Status Opcode|"
                      r"Recommendation|Effective Physical BER|Raw Physical BER|"
                      r"Link Speed Active \(Enabled\)|Link Width Active \(Enabled\))\s+:", head)
    if operational and len(set(rows)) >= 2:
        return 0.95
    if len(set(rows)) >= 3 or ("Physical Counters and BER Info" in head and rows):
        return 0.7
    return 0.0


class _Report:
    """Rows of one mlxlink report while reading."""

    def __init__(self, device: str | None, port: str | None, label: str | None) -> None:
        self.device, self.port, self.label = device, port, label
        self.sections: dict[str, dict[str, str | None]] = {}
        self.rows = 0

    def add(self, section: str, key: str, value: str) -> None:
        """Record one row (N/A -> None)."""
        self.sections.setdefault(section, {})[key] = None if is_missing(value) else value
        self.rows += 1


def _command(line: str) -> tuple[str | None, str | None] | None:
    """`mlxlink -d mlx5_0 -p 1 ...` -> (device, port); None when the line is not a command."""
    match = _COMMAND.search(line)
    if not match or re.search(r"\s:\s", line):
        return None
    device = re.search(r"(?:^|\s)(?:-d|--device)[\s=]+(\S+)", match.group(1))
    port = re.search(r"(?:^|\s)(?:-p|--port)[\s=]+(\S+)", match.group(1))
    return (_argument(device.group(1)) if device else None,
            _argument(port.group(1)) if port else None)


def _argument(value: str) -> str | None:
    """A command-line argument, or None when it is a shell variable (a loop's template)."""
    value = value.strip("'\";")
    return None if "$" in value or not value else value


def _read_text(lines: list[str], warnings: list[str]) -> list[_Report]:
    """Split the text into reports of section -> rows."""
    reports: list[_Report] = []
    current: _Report | None = None
    pending: dict[str, str | None] = {"device": None, "port": None, "label": None}
    section = ""
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or _RULE.match(line):
            continue
        message = _MESSAGE.match(line)
        if message:
            warnings.append(f"line {index + 1}: mlxlink -{message.group(1)}- {message.group(2)}")
            continue
        banner = _BANNER.match(line)
        command = None if banner else _command(line)
        if banner or command:
            if banner:
                pending["label"] = banner.group(1) or None
            elif command:
                pending["device"], pending["port"] = command
            if current is not None and current.rows:
                current = None
            elif current is not None:
                current.label = pending["label"] or current.label
                current.device, current.port = pending["device"], pending["port"]
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        title = _TITLE.match(line)
        ruled = _RULE.match(following) is not None and ":" not in stripped
        if ruled or (title and ":" not in stripped):
            section = title.group(1) if title else stripped
            if current is not None and section in current.sections and \
                    section == "Operational Info":
                current = None
            if current is None:
                current = _Report(pending["device"], pending["port"], pending["label"])
                pending = {"device": None, "port": None, "label": None}
                reports.append(current)
            current.sections.setdefault(section, {})
            continue
        row = _ROW.match(line)
        if row and not re.search(r"[@$#/]", row.group(1)):
            if current is None:
                current = _Report(pending["device"], pending["port"], pending["label"])
                pending = {"device": None, "port": None, "label": None}
                reports.append(current)
            current.add(section, row.group(1), row.group(2))
    return reports


def _flatten_json(value: Any) -> str:
    """A JSON cell as mlxlink would print it (`{"values": [...]}` -> comma list)."""
    if isinstance(value, dict) and "values" in value and isinstance(value["values"], list):
        return ",".join(str(v) for v in value["values"])
    return str(value)


def _read_json(text: str, warnings: list[str]) -> list[_Report] | None:
    """`mlxlink --json` output, or None when the text is not JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    reports: list[_Report] = []
    for item in data if isinstance(data, list) else [data]:
        if not isinstance(item, dict):
            continue
        status = item.get("status")
        if isinstance(status, dict) and status.get("code") not in (0, None):
            warnings.append(f"mlxlink status {status.get('code')}: {status.get('message')}")
        result = item.get("result")
        output = result.get("output") if isinstance(result, dict) else None
        if not isinstance(output, dict):
            continue
        report = _Report(None, None, None)
        for section, rows in output.items():
            if isinstance(rows, dict):
                for key, value in rows.items():
                    report.add(str(section), str(key), _flatten_json(value))
        reports.append(report)
    return reports


def _split(value: str | None) -> tuple[list[str], list[float | None] | None]:
    """`1.2,1.3 [-10..5]` -> (["1.2", "1.3"], [-10.0, 5.0])."""
    if value is None:
        return [], None
    thresholds = None
    match = _THRESHOLDS.match(value)
    if match:
        value = match.group(1)
        thresholds = [_number(match.group(2)), _number(match.group(3))]
    items = [item.strip() for item in value.split(",")] if value.strip() else []
    return items, thresholds


def _number(value: str | None) -> float | None:
    """A float, or None for N/A / -inf / text."""
    if value is None:
        return None
    try:
        return to_float(value)
    except ValueError:
        return None


def _integer(value: str | None) -> int | None:
    """An int (a float that is whole is accepted), or None."""
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


def _key(name: str) -> str:
    """A row name for matching: lower case, blanks collapsed (MFT prints `Phase  Eye Opening
    [psec]` with two), without a trailing ` (Ext.)`."""
    name = re.sub(r"\s+", " ", name.strip().lower())
    return re.sub(r"\s*\(ext\.?\)$", "", name)


def _flat(report: _Report) -> dict[str, str | None]:
    """Row name (`_key`) -> value; the first occurrence wins."""
    flat: dict[str, str | None] = {}
    for rows in report.sections.values():
        for key, value in rows.items():
            flat.setdefault(_key(key), value)
    return flat


def _speeds(value: str | None) -> list[str]:
    """`0x3c007011 (25G,10G,1G)` -> ["25G", "10G", "1G"]."""
    match = re.search(r"\(([^)]*)\)", value or "")
    return [s.strip() for s in match.group(1).split(",") if s.strip()] if match else []


def _issue(recommendation: str | None, opcode: int | None) -> bool | None:
    """Whether the troubleshooting section reports a problem."""
    if recommendation:
        return "no issue" not in recommendation.lower()
    return None if opcode is None else opcode != 0


def _counters(flat: dict[str, str | None], report: _Report) -> MlxlinkCounters | None:
    """The BER/counters section, when any of it was printed."""
    found = {field: next((flat[k] for k in keys if k in flat), None)
             for field, keys in _COUNTER_KEYS.items()
             if any(k in flat for k in keys)}
    raw_lanes = flat.get("raw physical errors per lane")
    if not found and raw_lanes is None and "Physical Counters and BER Info" not in report.sections:
        return None
    counters = MlxlinkCounters()
    for field, value in found.items():
        setattr(counters, field, _integer(value) if field in _INT_COUNTERS else _number(value))
    counters.raw_physical_errors_per_lane = [_integer(v) for v in _split(raw_lanes)[0]]
    return counters


def _module(flat: dict[str, str | None], report: _Report) -> MlxlinkModule | None:
    """The module section, when printed."""
    keys = set(_MODULE_TEXT) | set(_MODULE_NUMBERS) | set(_MODULE_RANGED)
    if "Module Info" not in report.sections and not keys & set(flat):
        return None
    module = MlxlinkModule()
    for key, field in _MODULE_TEXT.items():
        setattr(module, field, flat.get(key))
    for key, field in _MODULE_NUMBERS.items():
        items = _split(flat.get(key))[0]
        setattr(module, field, _number(items[0]) if items else None)
    for key, (field, limits) in _MODULE_RANGED.items():
        items, thresholds = _split(flat.get(key))
        setattr(module, field, _number(items[0]) if len(items) == 1 else None)
        setattr(module, limits, thresholds)
    for key, limits in _MODULE_THRESHOLDS.items():
        setattr(module, limits, _split(flat.get(key))[1])
    return module


def _lane_rows(flat: dict[str, str | None]) -> dict[str, list[str]]:
    """Per-lane rows (name -> items); single `N/A` rows are left out."""
    rows: dict[str, list[str]] = {}
    for key, value in flat.items():
        per_lane = "per lane" in key or key in _LANE_NUMBERS or key in _LANE_TEXT
        items = _split(value)[0]
        if per_lane and items and not (len(items) == 1 and is_missing(items[0])):
            rows[key] = items
    return rows


def _in_range(value: float | None, limits: list[float | None] | None) -> bool:
    """True unless `value` lies outside usable [low..high] thresholds."""
    if value is None or not limits or len(limits) != 2:
        return True
    low, high = limits
    if low is None or high is None:
        return True
    return low >= high or low <= value <= high


def _lanes(flat: dict[str, str | None], report: _Report) -> list[MlxlinkLane]:
    """One entry per lane with its values and flags."""
    rows = _lane_rows(flat)
    count = max((len(items) for items in rows.values()), default=0)
    names = {_key(k): k for rows_ in report.sections.values() for k in rows_}
    lanes = [MlxlinkLane(lane=i) for i in range(count)]
    for key, items in rows.items():
        base = key.replace("[per lane]", "").strip()
        for lane, item in zip(lanes, items, strict=False):
            if key in _LANE_NUMBERS:
                setattr(lane, _LANE_NUMBERS[key], _number(item))
            elif key == "raw physical errors per lane":
                lane.raw_physical_errors = _integer(item)
            elif key == "rs-fec corrected symbols per lane":
                lane.rs_fec_corrected_symbols = _integer(item)
            else:
                lane.values[names.get(key, key)] = None if is_missing(item) else item
                if base in _LANE_FLAGS and item.strip().lower() in ("1", "yes", "true"):
                    lane.flags.append(_LANE_FLAGS[base])
    for lane in lanes:
        for field, (key, flag) in _RANGE_FLAGS.items():
            if not _in_range(getattr(lane, field), _split(flat.get(key))[1]):
                lane.flags.append(flag)
    return lanes


def _build(report: _Report) -> MlxlinkPort:
    """Typed fields of one report."""
    flat = _flat(report)
    port = MlxlinkPort(device=report.device, port=report.port, label=report.label,
                       sections=report.sections)
    for key, field in _TOP_TEXT.items():
        if getattr(port, field) is None:
            setattr(port, field, flat.get(key))
    width = re.match(r"^\s*(\d+)\s*x", port.width or "", re.I)
    port.width_lanes = int(width.group(1)) if width else None
    port.enabled_link_speeds = _speeds(port.enabled_link_speed)
    port.supported_cable_speeds = _speeds(port.supported_cable_speed)
    port.status_opcode = _integer(flat.get("status opcode"))
    port.issue_observed = _issue(port.recommendation, port.status_opcode)
    port.counters = _counters(flat, report)
    port.module = _module(flat, report)
    port.lanes = _lanes(flat, report)
    return port


def parse(text: str) -> MlxlinkOutput:
    """Parse mlxlink output; raises `ParseError` when no mlxlink report is in it."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[MlxlinkOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way). The lines are held only
    while reading (rows look one line ahead); the ports after the first are built one at a
    time when written."""
    lines = lines if isinstance(lines, list) else list(lines)
    warnings: list[str] = []
    opening = next((line.lstrip()[:1] for line in lines if line.strip()), "")
    reports = _read_json("\n".join(lines), warnings) if opening in ("{", "[") else None
    cleaned: list[str] | None = None
    if reports is None:
        cleaned = clean_line_list(lines)
        reports = _read_text(cleaned, warnings)
    reports = [r for r in reports if any(rows for rows in r.sections.values())]
    known = set(_TOP_TEXT) | set(_MODULE_TEXT) | {k for ks in _COUNTER_KEYS.values() for k in ks}
    reports = [r for r in reports if known & set(_flat(r))]
    if not reports:
        errors = [w.split("-E- ", 1)[1] for w in warnings if "-E- " in w]
        detail = f": {errors[0]}" if errors else ""
        title = next((n for n, line in enumerate(cleaned or clean_line_list(lines), start=1)
                      if line.strip() == "Operational Info"), None)
        if title is not None:
            raise ParseError(KIND, title,
                             f"`Operational Info` without its rows (truncated?){detail}")
        raise ParseError(KIND, None, f"no mlxlink report (`Operational Info` ...) found{detail}")
    del lines, cleaned
    first, rest = _build(reports[0]), reports[1:]
    head = MlxlinkOutput(**first.model_dump(), more_ports=[], warnings=warnings)
    return Streamed(head, {"more_ports": lambda: (_build(report) for report in rest)})


_HIST_SECTION = "Histogram of FEC Errors"
_HIST_BIN = re.compile(r"^\s*\[(\d+)(?::(\d+))?\]\s*[,\s]\s*(\d+)\s*$")


def fec_histogram(port: MlxlinkPort) -> dict[int, int]:
    """`--rx_fec_histogram --show_histogram`: codewords per number of symbol errors the FEC
    corrected, keyed by each bin's lowest count (`Bin 3 : [3]  12` or `[16:31]`; the `--json`
    form `["[3]","12"]` reads the same). Empty when the section was not printed; a row that
    is not `[range] count` is left out (mstflint `MlxlinkPortInfo::showHistogram`)."""
    found: dict[int, int] = {}
    for key, value in port.sections.get(_HIST_SECTION, {}).items():
        if not key.lower().startswith("bin") or value is None:
            continue
        row = _HIST_BIN.match(value)
        if row:
            found[int(row.group(1))] = int(row.group(3))
    return found


def tables(result: MlxlinkOutput) -> list[Table]:
    """One row per port (state, speed, width, FEC, issue), then each port's lanes."""
    ports = [result, *result.more_ports]
    names = [" ".join(x for x in (p.label, p.device, p.port) if x) or None for p in ports]
    out = [Table.build(
        [left("port"), left("state"), left("physical_state", "phys"), left("speed"),
         left("width"), left("fec"), left("issue_observed", "issue")],
        [(name, p.state, p.physical_state, p.speed, p.width, p.fec, p.issue_observed)
         for name, p in zip(names, ports, strict=True)])]
    for name, port in zip(names, ports, strict=True):
        if port.lanes:
            out.append(Table.build(
                [left("lane"), right("rx_power_dbm"), right("tx_power_dbm"),
                 right("bias_current_ma"), right("raw_physical_errors"), left("flags")],
                [(lane.lane, lane.rx_power_dbm, lane.tx_power_dbm, lane.bias_current_ma,
                  lane.raw_physical_errors, ",".join(lane.flags) or None)
                 for lane in port.lanes],
                title=[f"lanes of {name or 'the port'}"]))
    return out
