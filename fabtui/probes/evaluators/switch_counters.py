"""Switch interface counters per port: error and drop deltas, packet and pause rates, ports
that are down."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator

_ERRORS = ("rx_err", "rx_drp", "rx_ovr", "tx_err", "tx_drp", "tx_ovr", "crc", "fcs",
           "symbol_errors", "runts", "giants", "link_flaps")
_FLOWS = ("rx_ok", "tx_ok", "rx_pause", "tx_pause")


@evaluator("switch-counters")
def switch_counters(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per port: error/drop deltas, packet and pause rates, and ports that are down."""
    metrics = []
    for name in target_ports(ctx, after.interfaces):
        now = after.interfaces[name]
        where = port_component(ctx, name)
        if now.state is not None and now.state.lower() == "down" and \
                (now.admin_state or "up").lower() != "down":
            metrics.append(Metric(name="state_down", value=1, component=where))
        if before is not None and name not in before.interfaces:
            continue
        old = before.interfaces[name] if before is not None else None
        values = {k: getattr(now, k) for k in (*_ERRORS, *_FLOWS)}
        previous = {k: getattr(old, k) for k in values} if old is not None else None
        metrics += counter_metrics(previous, values, where, ctx.interval, deltas=_ERRORS,
                                   rates=_FLOWS)
    return metrics
