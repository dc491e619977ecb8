"""`mlnx_qos -i NETDEV` (NVIDIA MLNX_OFED / DOCA-Host mlnx-tools): a NIC's QoS state."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabtui.model.parsed import ParsedOutput


class MlnxQos(ParsedOutput):
    """Trust state, PFC per priority and the priority -> traffic class groups."""

    kind: Literal["mlnx-qos"] = "mlnx-qos"
    dcbx_mode: str | None = None
    """`OS controlled` / `Firmware controlled`; null when not printed."""
    trust: str | None = None
    """`Priority trust state`: `dscp` or `pcp`."""
    pfc_enabled: list[int] = Field(default_factory=list)
    """The priorities whose PFC `enabled` column is 1, ascending."""
    dscp2prio: dict[int, int] = Field(default_factory=dict)
    """DSCP -> priority (`dscp2prio mapping`, printed only under DSCP trust)."""
    tc_priorities: dict[int, list[int]] = Field(default_factory=dict)
    """Traffic class -> the priorities it carries (`tc: N ...` / `priority: P` lines)."""
