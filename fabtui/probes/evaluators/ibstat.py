"""Port state, physical state and rate of HCAs from `ibstat`.

A port that is not Active/LinkUp carries nothing; one that came up at a lower rate than the
topology says (a 400G NIC at 200G) halves its rail for every GPU behind it (fabric-diagnostics
6.1 rule 3: `check_hw_ib 400 mlx5_ibN:1`, Azure/azurehpc-health-checks conf/*.conf).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators._hca_ports import hca_ports, state_metric
from fabtui.probes.evaluators.base import EvalContext, evaluator

_LINK_UP = {"linkup", "link_up", "5: linkup"}


@evaluator("ibstat")
def ibstat(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """State, physical state and rate of each port (the rate judged against the topology's
    speed of the NIC the port is, when it is one)."""
    metrics = []
    for where, port, active, nic in hca_ports(ctx, after.cas):
        expected = float(nic.speed) if nic is not None else None
        metrics.append(state_metric(where, port, active))
        if port.physical_state is not None:
            up = port.physical_state.lower() in _LINK_UP
            metrics.append(Metric(name="port.physical_state", value=port.physical_state,
                                  component=where, verdict=Verdict.OK if up else Verdict.FAIL))
        if port.rate is not None:
            slow = expected is not None and active and port.rate < expected
            metrics.append(Metric(name="port.rate_gbps", value=port.rate, unit="Gb/s",
                                  component=where, limit=expected,
                                  verdict=Verdict.FAIL if slow else Verdict.OK))
    return metrics
