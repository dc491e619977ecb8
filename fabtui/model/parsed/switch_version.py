"""`show version` of a switch (SONiC, Arista EOS): what it runs and on what hardware."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabtui.model.parsed import ParsedOutput


class SwitchVersion(ParsedOutput):
    """The network OS, its version and the platform, as printed."""

    kind: Literal["switch-version"] = "switch-version"
    os: str
    """`SONiC` or `EOS`."""
    version: str | None = None
    """SONiC: the image version after `SONiC.` (`202311.1-8c08d87`); EOS: `Software image
    version` (`4.31.1F`)."""
    model: str | None = None
    """SONiC `Model Number` (or `HwSKU` when none); EOS the model line (`DCS-7280SR3K-48YC8-F`)."""
    platform: str | None = None
    """SONiC `Platform` (`x86_64-mlnx_msn2700-r0`); EOS none."""
    hwsku: str | None = None
    serial: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    """Every `Key: value` line before the Docker image table."""
