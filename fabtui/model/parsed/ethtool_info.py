"""`ethtool -i NETDEV`: the driver, its version and the firmware of a network interface."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabtui.model.parsed import ParsedOutput


class EthtoolInfo(ParsedOutput):
    """The `key: value` lines ethtool prints (ethtool.c dump_drvinfo)."""

    kind: Literal["ethtool-info"] = "ethtool-info"
    driver: str
    """`mlx5_core`."""
    version: str | None = None
    """The driver's version: MLNX_OFED / DOCA-OFED's (`23.10-1.1.9`) when it is installed, the
    running kernel's release (`6.1.106-...`) for the in-box driver."""
    firmware_version: str | None = None
    """As printed: `28.39.3560 (MT_0000000838)`."""
    firmware: str | None = None
    """The firmware version alone (`28.39.3560`)."""
    psid: str | None = None
    """The board's PSID in brackets (`MT_0000000838`): which OEM firmware image it takes."""
    bus_info: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    """Every line as printed (`supports-statistics`: `yes`, ...)."""
