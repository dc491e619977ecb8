"""`ethtool -S <netdev>`: NIC statistics as name -> integer."""

from __future__ import annotations

from typing import Literal

from fabtui.model.parsed import ParsedOutput


class EthtoolStats(ParsedOutput):
    """Counters exactly as the driver names them (they drift between kernel versions)."""

    kind: Literal["ethtool-stats"] = "ethtool-stats"
    interface: str | None = None
    """The netdev, when the output or the command line names it."""
    counters: dict[str, int]
    """Counter name -> value. Absent counters are "not reported", never zero."""
