"""`ibv_devinfo [-v] [-d dev]` (rdma-core / libibverbs): verbs devices and their ports."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class IbvGid(BaseModel):
    """One GID table entry (`ibv_devinfo -v`: `GID[  0]: fe80:..., RoCE v2`)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """GID index."""
    gid: str
    """The GID as printed."""
    type: str | None = None
    """GID type when printed, e.g. `RoCE v2`, `IB/RoCE v1`."""


class IbvPort(BaseModel):
    """One port block (`port: 1`)."""

    model_config = ConfigDict(extra="forbid")

    state: str | None = None
    """Port state as printed, e.g. `PORT_ACTIVE`, `PORT_DOWN`."""
    state_code: int | None = None
    """Numeric state in parentheses (`PORT_ACTIVE (4)` -> 4)."""
    max_mtu: int | None = None
    """Largest MTU the port supports, bytes (`4096 (5)` -> 4096)."""
    max_mtu_code: int | None = None
    """The IBV MTU enum in parentheses (`4096 (5)` -> 5)."""
    active_mtu: int | None = None
    """Active MTU, bytes (`4096 (5)` -> 4096)."""
    active_mtu_code: int | None = None
    """The IBV MTU enum of the active MTU."""
    sm_lid: int | None = None
    """LID of the subnet manager (0 on Ethernet/RoCE)."""
    port_lid: int | None = None
    """This port's LID (0 on Ethernet/RoCE)."""
    port_lmc: int | None = None
    """LID mask control (printed in hex, e.g. `0x00`)."""
    link_layer: str | None = None
    """`InfiniBand` or `Ethernet`."""
    active_width: str | None = None
    """Active link width (`-v`), e.g. `4X`."""
    active_width_code: int | None = None
    """Width enum in parentheses (`4X (2)` -> 2)."""
    active_speed: str | None = None
    """Active per-lane speed as printed (`-v`), e.g. `25.0 Gbps`."""
    active_speed_gbps: float | None = None
    """Active per-lane speed in Gb/s when printed as a number."""
    active_speed_code: int | None = None
    """Speed enum in parentheses (`25.0 Gbps (32)` -> 32)."""
    phys_state: str | None = None
    """Physical state (`-v`, InfiniBand only), e.g. `LINK_UP`."""
    phys_state_code: int | None = None
    """Physical state enum in parentheses (`LINK_UP (5)` -> 5)."""
    gids: list[IbvGid] = []
    """GID table (`-v`)."""
    attributes: dict[str, str] = {}
    """Every other `name: value` of the port block (`-v`: max_msg_sz, port_cap_flags, ...)."""


class IbvDevice(BaseModel):
    """One device block (`hca_id: mlx5_0`)."""

    model_config = ConfigDict(extra="forbid")

    transport: str | None = None
    """Transport, e.g. `InfiniBand` (RoCE devices also say InfiniBand)."""
    transport_code: int | None = None
    """Transport enum in parentheses (`InfiniBand (0)` -> 0)."""
    fw_ver: str | None = None
    """Firmware version."""
    node_guid: str | None = None
    """Node GUID as printed (`0002:c903:00ea:9940`)."""
    sys_image_guid: str | None = None
    """System image GUID as printed."""
    vendor_id: str | None = None
    """Vendor id as printed (hex, e.g. `0x02c9`)."""
    vendor_part_id: int | None = None
    """Vendor part id (decimal, e.g. 4123 for ConnectX-6)."""
    hw_ver: str | None = None
    """Hardware version as printed (hex)."""
    board_id: str | None = None
    """Board id (PSID), e.g. `MT_0000000223`."""
    phys_port_cnt: int | None = None
    """Number of physical ports."""
    ports: dict[str, IbvPort] = {}
    """Port number (string key, e.g. `"1"`) -> port."""
    attributes: dict[str, str] = {}
    """Every other device-level `name: value` (`-v`: max_qp, max_cqe, device_cap_flags, ...)."""


class IbvDevinfoOutput(ParsedOutput):
    """Devices by name (`hca_id`)."""

    kind: Literal["ibv_devinfo"] = "ibv_devinfo"
    devices: dict[str, IbvDevice]
    """Device name -> device, in the order printed."""
