"""Host NIC counters (ethtool -S on mlx5): pauses, discards, post-FEC errors, flaps, pre-FEC BER.

Meanings follow torvalds/linux Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
counters.rst (see shared/reference/fabric-diagnostics.md section 3). With one sample only the
absolute values are reported (never judged: absolute counters say nothing about now); with two,
deltas and rates over the window are.
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.counters import changes, ratio
from fabtui.probes.evaluators.base import EvalContext, evaluator

_PRIO_PAUSE = re.compile(r"^(rx|tx)_prio(\d)_pause$")
_PRIO_DURATION = re.compile(r"^(rx|tx)_prio(\d)_pause_duration$")
_DELTAS = ("rx_discards_phy", "rx_crc_errors_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy",
           "link_down_events_phy", "rx_out_of_buffer", "tx_pause_storm_warning_events",
           "tx_pause_storm_error_events", "rx_buffer_passed_thres_phy",
           "rx_pci_signal_integrity", "tx_pci_signal_integrity", "module_unplug",
           "module_high_temp", "module_bad_shorted", "module_bus_stuck")
_DISCARDS = re.compile(r"^rx_prio\d_(?:buf|cong)_discard$")
_MARKED = re.compile(r"^rx_prio\d_marked$")


@evaluator("ethtool-stats")
def ethtool_stats(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Window metrics from two `ethtool -S` samples; absolute values from one."""
    component = ctx.component()
    counters: dict[str, int] = after.counters
    if before is None:
        return [Metric(name=f"total.{name}", value=counters[name], component=component)
                for name in _DELTAS if name in counters]
    moved = changes(before.counters, counters, ctx.interval)
    metrics: list[Metric] = []
    window_us = ctx.interval * 1e6
    for name, change in sorted(moved.items()):
        if _PRIO_PAUSE.match(name) or _MARKED.match(name):
            metrics.append(Metric(name=f"rate.{name}", value=round(change.rate, 3),
                                  unit="/s", component=component))
        elif match := _PRIO_DURATION.match(name):
            metrics.append(Metric(name=f"pause_ratio.{match.group(1)}_prio{match.group(2)}",
                                  value=round(min(change.delta / window_us, 1.0), 4),
                                  component=component))
        elif name in _DELTAS or _DISCARDS.match(name):
            metrics.append(Metric(name=f"delta.{name}", value=change.delta,
                                  component=component))
    ber = ratio(moved.get("rx_corrected_bits_phy"), moved.get("rx_bits_phy"))
    if ber is not None:
        metrics.append(Metric(name="pre_fec_ber", value=ber, component=component))
    resets = sorted(n for n, c in moved.items() if c.event == "reset")
    if resets:
        metrics.append(Metric(name="counters_reset", value=len(resets), component=component))
    return metrics
