"""`ibdev2netdev [-v]` (MLNX_OFED / mlnx-tools): RDMA device port -> netdev and link state."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class Ibdev2netdevEntry(BaseModel):
    """One line: `mlx5_0 port 1 ==> ib0 (Up)`."""

    model_config = ConfigDict(extra="forbid")

    device: str
    """RDMA device, e.g. `mlx5_0`."""
    port: int
    """Port number."""
    netdev: str | None
    """Network interface, e.g. `ib0`, `enp25s0np0`, `bond0`; null when printed as N/A."""
    state: str | None
    """Netdev link state as printed: `Up` / `Down`."""
    pci_address: str | None = None
    """PCI address (`-v`), e.g. `0000:3b:00.0`."""
    part_id: str | None = None
    """Device part id (`-v`), e.g. `MT4123`."""
    board_id: str | None = None
    """Board id / part number (`-v`), e.g. `MCX653105A-HDAT`; null when `NA`."""
    description: str | None = None
    """Adapter description (`-v`), e.g. `ConnectX-6 VPI adapter card, ...`."""
    fw_version: str | None = None
    """Firmware version (`-v`)."""
    port_state: str | None = None
    """RDMA port state (`-v`), e.g. `ACTIVE`, `DOWN`."""


class Ibdev2netdevOutput(ParsedOutput):
    """Devices by name, plus every printed line in order."""

    kind: Literal["ibdev2netdev"] = "ibdev2netdev"
    devices: dict[str, Ibdev2netdevEntry]
    """Device name -> its entry (the lowest port when a device has several)."""
    entries: list[Ibdev2netdevEntry]
    """Every line in the order printed (one per device port)."""
