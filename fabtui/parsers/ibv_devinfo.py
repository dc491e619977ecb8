"""`ibv_devinfo [-v] [-d dev] [-i port]` (rdma-core / libibverbs).

    hca_id: mlx5_0
            transport:                      InfiniBand (0)
            fw_ver:                         20.31.1014
            ...
            phys_port_cnt:                  1
                    port:   1
                            state:                  PORT_ACTIVE (4)
                            max_mtu:                4096 (5)
                            active_mtu:             4096 (5)
                            ...
                            link_layer:             InfiniBand

`ibv_devinfo -l` (`2 HCAs found:` and one name per line) gives devices without fields.
`-v` adds device limits (`max_qp: ...`), capability flag lists (lines without a colon, skipped),
per-port `active_width`, `active_speed`, `phys_state` and `GID[  0]: ...` lines. Keys after a
`port:` line belong to that port until the next `port:` or `hca_id:`.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.ibv_devinfo import IbvDevice, IbvDevinfoOutput, IbvGid, IbvPort
from fabtui.model.table import Cell, Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines, int_or_hex, is_missing

KIND = "ibv_devinfo"
MODEL = IbvDevinfoOutput
DESCRIPTION = "ibv_devinfo [-v] [-d dev]: verbs devices, firmware, port state, MTU, link layer"

_HCA = re.compile(r"^\s*hca_id:\s*(\S+)\s*$")
_LIST = re.compile(r"^\s*\d+\s+HCAs?\s+found:\s*$", re.I)
_LISTED = re.compile(r"^\s+([A-Za-z][\w.-]*)\s*$")
_PORT = re.compile(r"^\s*port:\s*(\d+)\s*$")
_GID = re.compile(r"^\s*GID\[\s*(\d+)\]:\s*([0-9A-Fa-f:.]+)\s*(?:,\s*(.*?))?\s*$")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*:\s*(.*?)\s*$")
_CODED = re.compile(r"^(.*?)\s*\((-?\d+)\)\s*$")
_DEVICE_TEXT = ("fw_ver", "node_guid", "sys_image_guid", "vendor_id", "hw_ver", "board_id")
_PORT_INT = ("sm_lid", "port_lid", "port_lmc")


def detect(text: str) -> float:
    """How sure we are that `text` is ibv_devinfo output (0..1)."""
    head = "\n".join(clean_lines(text[:30000]))
    if re.search(r"(?mi)^\s*\d+\s+HCAs?\s+found:\s*\n\s+\S", head):
        return 0.9
    if not re.search(r"(?m)^\s*hca_id:\s*\S+\s*$", head):
        return 0.0
    if re.search(r"(?m)^\s*(?:transport|fw_ver|node_guid|phys_port_cnt|state):", head):
        return 0.95
    return 0.6


def _coded(value: str) -> tuple[str | None, int | None]:
    """`PORT_ACTIVE (4)` -> ("PORT_ACTIVE", 4); no parenthesis -> (value, None)."""
    match = _CODED.match(value)
    if match:
        return match.group(1).strip() or None, int(match.group(2))
    return (None if is_missing(value) else value), None


def _set_device(device: IbvDevice, key: str, value: str) -> bool:
    """Store one device-level value; False when it could not be used."""
    if key in _DEVICE_TEXT:
        setattr(device, key, None if is_missing(value) else value)
    elif key == "transport":
        device.transport, device.transport_code = _coded(value)
    elif key in ("vendor_part_id", "phys_port_cnt"):
        number = int_or_hex(value)
        if number is None:
            return is_missing(value)
        setattr(device, key, number)
    else:
        device.attributes[key] = value
    return True


def _set_mtu(port: IbvPort, key: str, value: str) -> bool:
    """`4096 (5)` -> port.<key> = 4096, port.<key>_code = 5."""
    text, code = _coded(value)
    setattr(port, f"{key}_code", code)
    number = int_or_hex(text or "")
    setattr(port, key, number)
    return number is not None or text is None or not text[:1].isdigit()


def _set_speed(port: IbvPort, value: str) -> None:
    """`25.0 Gbps (32)` -> active_speed "25.0 Gbps", active_speed_gbps 25.0, code 32."""
    port.active_speed, port.active_speed_code = _coded(value)
    match = re.match(r"^([0-9]+(?:\.[0-9]+)?)\s*Gbps", port.active_speed or "")
    port.active_speed_gbps = float(match.group(1)) if match else None


def _set_port(port: IbvPort, key: str, value: str) -> bool:
    """Store one port-level value; False when it could not be used."""
    if key in ("max_mtu", "active_mtu"):
        return _set_mtu(port, key, value)
    if key in _PORT_INT:
        number = int_or_hex(value)
        setattr(port, key, number)
        return number is not None or is_missing(value)
    if key == "state":
        port.state, port.state_code = _coded(value)
    elif key == "phys_state":
        port.phys_state, port.phys_state_code = _coded(value)
    elif key == "active_width":
        port.active_width, port.active_width_code = _coded(value)
    elif key == "active_speed":
        _set_speed(port, value)
    elif key == "link_layer":
        port.link_layer = None if is_missing(value) else value
    else:
        port.attributes[key] = value
    return True


def parse(text: str) -> IbvDevinfoOutput:
    """Parse ibv_devinfo output; raises `ParseError` when there is no `hca_id:` block."""
    devices: dict[str, IbvDevice] = {}
    device: IbvDevice | None = None
    port: IbvPort | None = None
    warnings: list[str] = []
    first: int | None = None
    listing = False
    orphans: list[int] = []
    """Field lines before the first `hca_id:`: a device whose header the capture lost."""
    for number, line in enumerate(clean_lines(text), start=1):
        if _LIST.match(line):
            listing = True
            continue
        listed = _LISTED.match(line) if listing and device is None else None
        if listed:
            devices.setdefault(listed.group(1), IbvDevice())
            continue
        hca = _HCA.match(line)
        if hca:
            first = first or number
            device = devices.setdefault(hca.group(1), IbvDevice())
            port = None
            continue
        if device is None and not listing and _KEY_VALUE.match(line):
            orphans.append(number)
            continue
        if device is None or not line.strip():
            continue
        port_header = _PORT.match(line)
        if port_header:
            port = device.ports.setdefault(str(int(port_header.group(1))), IbvPort())
            continue
        gid = _GID.match(line)
        if gid and port is not None:
            port.gids.append(IbvGid(index=int(gid.group(1)), gid=gid.group(2),
                                    type=gid.group(3) or None))
            continue
        match = _KEY_VALUE.match(line)
        if not match:
            continue
        key, value = match.group(1).strip(), match.group(2)
        ok = _set_port(port, key, value) if port is not None else _set_device(device, key, value)
        if not ok:
            warnings.append(f"line {number}: unusable value: {line.strip()[:80]}")
    if not devices:
        if re.search(r"No IB devices found", text, re.I):
            raise ParseError(KIND, None, "ibv_devinfo found no IB devices")
        raise ParseError(KIND, None, "no `hca_id:` block found")
    if not listing and not any(d.ports or d.fw_ver or d.transport for d in devices.values()):
        raise ParseError(KIND, first, "`hca_id:` without any device field (truncated?)")
    if orphans:
        warnings.insert(0, f"lines {orphans[0]}-{orphans[-1]}: fields of a device whose "
                           "`hca_id:` line is not in the input (the capture starts inside its "
                           "block): not read")
    name, last = next(reversed(devices.items()))
    if not listing and not last.ports and last.phys_port_cnt != 0:
        warnings.append(f"{name}: no port block: the capture ends inside this device's block")
    elif not listing and last.ports:
        port_number, port = next(reversed(last.ports.items()))
        if port.link_layer is None:
            # `link_layer` closes every port block of ibv_devinfo (with or without -v).
            warnings.append(f"{name} port {port_number}: no `link_layer`: the capture ends inside "
                            "this port's block, its later fields are not known")
    return IbvDevinfoOutput(devices=devices, warnings=warnings)


def tables(result: IbvDevinfoOutput) -> list[Table]:
    """One row per port: device, firmware, port, state, MTU, LID, link layer, width, speed."""
    columns = [left("device", "DEVICE"), left("fw", "FW"), left("port", "PORT"),
               left("state", "STATE"), right("mtu", "MTU"), left("lid", "LID"),
               left("link_layer", "LAYER"), left("width", "WIDTH"), left("speed", "SPEED")]
    rows: list[tuple[Cell, ...]] = []
    for name, device in result.devices.items():
        if not device.ports:
            rows.append((name, device.fw_ver, None, None, None, None, None, None, None))
        for number, port in device.ports.items():
            rows.append((name, device.fw_ver, number, port.state, port.active_mtu, port.port_lid,
                         port.link_layer, port.active_width, port.active_speed))
    return [Table.build(columns, rows)]
