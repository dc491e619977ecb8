"""RDMA port counters from sysfs: `show_counters <dev>` (mlnx-tools) or a dump of
`/sys/class/infiniband/<dev>/ports/<p>/hw_counters/` (and `counters/`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class RdmaCounterDevice(BaseModel):
    """The counters of one RDMA device, by port."""

    model_config = ConfigDict(extra="forbid")

    ports: dict[str, dict[str, int]]
    """Port number (string key, e.g. `"1"`) -> counter name -> value (hw_counters, and the IB
    `counters/` directory when dumped)."""
    cm_counters: dict[str, dict[str, int]] = {}
    """Port -> connection-manager counter -> value, from show_counters' `Port N cm counters:`
    blocks. Names are `<group>/<counter>` (e.g. `cm_tx_retries/req`); show_counters prints the
    groups unlabelled in `ls` order (cm_rx_duplicates, cm_rx_msgs, cm_tx_msgs, cm_tx_retries),
    so the group is inferred from that order."""


class RdmaHwCountersOutput(ParsedOutput):
    """Counters by device and port, named as the kernel names the sysfs files."""

    kind: Literal["rdma-hw-counters"] = "rdma-hw-counters"
    devices: dict[str, RdmaCounterDevice]
    """Device name (from the `show_counters <dev>` command line or the sysfs path; `unknown`
    when the capture does not say) -> counters."""
