"""`rdma statistic show` (iproute2): RDMA hardware counters per link (device/port)."""

from __future__ import annotations

from typing import Literal

from fabtui.model.parsed import ParsedOutput


class RdmaStatisticOutput(ParsedOutput):
    """Counters by link, as the kernel names them (same set as sysfs `hw_counters`)."""

    kind: Literal["rdma-statistic"] = "rdma-statistic"
    links: dict[str, dict[str, int]]
    """Link `device/port` (e.g. `mlx5_0/1`) -> counter name -> value. Absent counters are
    "not reported", never zero."""
