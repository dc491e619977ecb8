"""A NIC's driver and firmware from `ethtool -i`: recorded, not judged here (the selection
database judges the combination: `fabtui fleet check`)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("ethtool-info")
def ethtool_info(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """The driver version and the firmware, as values."""
    where = ctx.component()
    return [Metric(name="driver_version", value=after.version, component=where),
            Metric(name="firmware", value=after.firmware, component=where)]
