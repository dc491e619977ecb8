"""FEC per port: post-FEC (uncorrectable) codewords must be 0; corrected codewords as a rate,
and the pre-FEC BER."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("fec-stats")
def fec_stats(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Uncorrectable codewords (must stay 0), corrected rate, and pre-FEC BER per port."""
    metrics = []
    for name in target_ports(ctx, after.interfaces):
        now = after.interfaces[name]
        where = port_component(ctx, name)
        if now.fec_pre_ber is not None:
            metrics.append(Metric(name="fec_pre_ber", value=now.fec_pre_ber, component=where))
        old = before.interfaces.get(name) if before is not None else None
        if before is not None and old is None:
            continue
        values = {"fec_uncorr": now.fec_uncorr, "fec_corr": now.fec_corr,
                  "fec_symbol_err": now.fec_symbol_err}
        previous = None if old is None else {"fec_uncorr": old.fec_uncorr,
                                             "fec_corr": old.fec_corr,
                                             "fec_symbol_err": old.fec_symbol_err}
        metrics += counter_metrics(previous, values, where, ctx.interval,
                                   deltas=("fec_uncorr", "fec_symbol_err"), rates=("fec_corr",))
    return metrics
