"""`ibstat` and `ibstatus` (infiniband-diags).

ibstat::

    CA 'mlx5_0'
            CA type: MT4123
            Number of ports: 1
            Firmware version: 20.31.1014
            ...
            Port 1:
                    State: Active
                    Physical state: LinkUp
                    Rate: 40 (FDR10)
                    Base lid: 7
                    ...

`ibstat mlx5_0 1` prints `CA: 'mlx5_0'` and one port block; a switch prints `Switch 'name'`.

ibstatus (a shell script over sysfs)::

    Infiniband device 'mlx5_7' port 1 status:
            default gid:     fe80:0000:0000:0000:...
            base lid:        0x6c
            state:           4: ACTIVE
            phys state:      5: LinkUp
            rate:            200 Gb/sec (2X NDR)
            link_layer:      InfiniBand

Keys are matched by name rather than by indentation, so captures whose tabs were lost still parse.

A port whose link has not trained prints a rate all the same: ibstat `Rate: 10` and ibstatus
`rate: 10 Gb/sec (4X SDR)` on a port that is Down / Polling or Disabled (the real B300 capture
in tests/fixtures/ibstat shows it). That figure is the port's reset value, not a speed, so the
rate (with its width and generation text) is left unknown (None) unless the physical state is
LinkUp; the states themselves say what is wrong with the port.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.ibstat import IbstatCa, IbstatOutput, IbstatPort
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines, int_or_hex, is_missing

KIND = "ibstat"
MODEL = IbstatOutput
DESCRIPTION = "ibstat / ibstatus: InfiniBand CA and port state, rate, LIDs, GUIDs"

_CA = re.compile(r"^\s*(CA|Switch):?\s+'([^']*)'\s*$")
_PORT = re.compile(r"^\s*Port\s+(\d+):\s*$")
_IBSTATUS = re.compile(r"^\s*Infiniband device\s+'([^']*)'\s+port\s+(\d+)\s+status:\s*$", re.I)
_KEY_VALUE = re.compile(r"^\s*([A-Za-z][A-Za-z_ ]*?)\s*:\s*(.*?)\s*$")
_CODED = re.compile(r"^(\d+)\s*:\s*(.*)$")
_RATE = re.compile(r"^([\d.]+)\s*(?:Gb/sec|Gbps|Gb/s)?\s*(?:\((.*)\))?\s*$", re.I)
_WIDTH = re.compile(r"^(\d+X)\b", re.I)

_CA_KEYS = {
    "ca type": "ca_type",
    "number of ports": "number_of_ports",
    "firmware version": "firmware_version",
    "hardware version": "hardware_version",
    "node guid": "node_guid",
    "system image guid": "system_image_guid",
}
_STATE_WORDS = {"DOWN": "Down", "INIT": "Initializing", "INITIALIZE": "Initializing",
                "ARMED": "Armed", "ACTIVE": "Active", "ACTIVE_DEFER": "ActiveDefer",
                "NOP": "NoStateChange"}


def detect(text: str) -> float:
    """How sure we are that `text` is ibstat or ibstatus output (0..1)."""
    head = "\n".join(clean_lines(text[:30000]))
    if re.search(r"(?mi)^\s*Infiniband device\s+'[^']*'\s+port\s+\d+\s+status:", head):
        return 0.95
    if re.search(r"(?m)^\s*(?:CA|Switch):?\s+'[^']*'\s*$", head):
        if re.search(r"(?m)^\s*(?:CA type|Number of ports|Firmware version|Physical state):", head):
            return 0.95
        return 0.5
    return 0.0


def _coded(value: str) -> tuple[int | None, str | None]:
    """`4: ACTIVE` -> (4, "ACTIVE"); `Active` -> (None, "Active")."""
    match = _CODED.match(value)
    if match:
        return int(match.group(1)), match.group(2).strip() or None
    return None, (None if is_missing(value) else value)


def _set_rate(port: IbstatPort, value: str) -> bool:
    """`40 (FDR10)`, `2.5`, `200 Gb/sec (2X NDR)` -> rate, rate_info, width."""
    match = _RATE.match(value)
    if not match:
        return False
    try:
        port.rate = float(match.group(1))
    except ValueError:
        return False
    info = (match.group(2) or "").strip() or None
    port.rate_info = info
    width = _WIDTH.match(info) if info else None
    port.width = width.group(1).upper() if width else None
    return True


def _set_port_field(port: IbstatPort, key: str, value: str, ibstatus: bool) -> bool:
    """Store one port `key: value`; False when the key is unknown or the value unusable."""
    missing = is_missing(value)
    if key == "state":
        code, word = _coded(value)
        port.state_code = code
        port.state = _STATE_WORDS.get(word.upper(), word) if word and code is not None else word
    elif key in ("physical state", "phys state"):
        port.physical_state_code, port.physical_state = _coded(value)
    elif key == "rate":
        return missing or _set_rate(port, value)
    elif key in ("base lid", "sm lid", "lmc"):
        number = int_or_hex(value)
        if number is None and not missing:
            return False
        setattr(port, {"base lid": "base_lid", "sm lid": "sm_lid", "lmc": "lmc"}[key], number)
    elif key == "capability mask":
        port.capability_mask = None if missing else value
    elif key == "port guid":
        port.port_guid = None if missing else value
    elif key in ("link layer", "link_layer"):
        port.link_layer = None if missing else value
    elif key == "default gid":
        port.default_gid = None if missing else value
    else:
        return ibstatus  # ibstatus may grow keys; ibstat's set is fixed
    return True


def _set_ca_field(ca: IbstatCa, field: str, value: str) -> bool:
    """Store one CA-level value."""
    if field == "number_of_ports":
        number = int_or_hex(value)
        if number is None:
            return is_missing(value)
        ca.number_of_ports = number
    else:
        setattr(ca, field, None if is_missing(value) else value)
    return True


def _trained(port: IbstatPort) -> bool:
    """Whether the port's link trained, so that its printed rate is a speed: its physical
    state is LinkUp, or (no physical state printed) its logical state is not Down."""
    if port.physical_state is not None:
        return port.physical_state.lower() == "linkup"
    return (port.state or "").lower() != "down"


class _State:
    """Where the reader is: the current CA and port."""

    def __init__(self) -> None:
        self.cas: dict[str, IbstatCa] = {}
        self.ca: IbstatCa | None = None
        self.port: IbstatPort | None = None
        self.ibstatus = False
        self.ibstat = False
        self.first_header: int | None = None


def _header(state: _State, line: str) -> bool:
    """Handle a CA, port or ibstatus header line; True when the line was one."""
    match = _IBSTATUS.match(line)
    if match:
        state.ibstatus = True
        state.ca = state.cas.setdefault(match.group(1), IbstatCa())
        state.port = state.ca.ports.setdefault(match.group(2), IbstatPort())
        return True
    match = _CA.match(line)
    if match:
        state.ibstat = True
        state.ca = state.cas.setdefault(match.group(2), IbstatCa())
        state.ca.node_type = match.group(1)
        state.port = None
        return True
    match = _PORT.match(line)
    if match and state.ca is not None:
        state.port = state.ca.ports.setdefault(str(int(match.group(1))), IbstatPort())
        return True
    return False


def parse(text: str) -> IbstatOutput:
    """Parse ibstat or ibstatus output; raises `ParseError` when no CA header is found."""
    state = _State()
    warnings: list[str] = []
    for number, line in enumerate(clean_lines(text), start=1):
        if not line.strip():
            continue
        if _header(state, line):
            state.first_header = state.first_header or number
            continue
        match = _KEY_VALUE.match(line)
        if not match or state.ca is None:
            continue
        key, value = match.group(1).lower(), match.group(2)
        if key in _CA_KEYS and not state.ibstatus:
            ok = _set_ca_field(state.ca, _CA_KEYS[key], value)
        elif state.port is not None:
            ok = _set_port_field(state.port, key, value, state.ibstatus)
        else:
            continue
        if not ok:
            warnings.append(f"line {number}: unusable value: {line.strip()[:80]}")
    if not state.cas:
        raise ParseError(KIND, None, "no `CA 'name'` or `Infiniband device ... status:` header "
                                     "found")
    if not any(ca.ports or ca.ca_type for ca in state.cas.values()):
        raise ParseError(KIND, state.first_header,
                         "CA header without any CA or port field (truncated?)")
    for ca in state.cas.values():
        for port in ca.ports.values():
            if not _trained(port):
                port.rate = port.rate_info = port.width = None
    tool = "ibstatus" if state.ibstatus and not state.ibstat else "ibstat"
    return IbstatOutput(tool=tool, cas=state.cas, warnings=warnings)


def tables(result: IbstatOutput) -> list[Table]:
    """One row per port: CA, port, state, physical state, rate, LID, link layer."""
    columns = [left("ca", "CA"), left("port", "PORT"), left("state", "STATE"),
               left("physical_state", "PHYS"), right("rate", "RATE"), left("rate_info", "INFO"),
               left("lid", "LID"), left("link_layer", "LAYER")]
    rows = [(name, number, port.state, port.physical_state, port.rate, port.rate_info,
             port.base_lid, port.link_layer)
            for name, ca in result.cas.items() for number, port in ca.ports.items()]
    return [Table.build(columns, rows)]
