"""Link health of a NIC port from `mlxlink`: state, mlxlink's own diagnosis, BER, link-down
counter and the module's lanes (judged as every optic is, `_optics.py`)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.parsers.mlxlink import fec_histogram
from fabtui.probes.evaluators._optics import lane_metrics, optic_type
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.probes.evaluators.fec_stats import MAX_T_FAIL, MAX_T_WARN, TAIL_SOURCE


@evaluator("mlxlink")
def mlxlink(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Link state, mlxlink's own diagnosis, BER, link-down counter and module lanes; with the
    FEC histogram (`--rx_fec_histogram --show_histogram`), the NIC end's tail (`fec_max_t`,
    judged as the switch end's `switch.fec_histogram` is: on its growth between two reads)."""
    where = ctx.component()
    metrics = _histogram_tail(before, after, where)
    if after.state is not None:
        active = after.state.lower() == "active"
        metrics.append(Metric(name="state", value=after.state, component=where,
                              verdict=Verdict.OK if active else Verdict.FAIL))
    if after.issue_observed:
        metrics.append(Metric(name="recommendation", value=after.recommendation or "",
                              component=where, verdict=Verdict.WARN))
    elif after.recommendation:  # "No issue was observed.": read, and clean (a report says so)
        metrics.append(Metric(name="recommendation", value=after.recommendation,
                              component=where, verdict=Verdict.OK))
    counters = after.counters
    if counters is not None:
        for name, value in (("raw_ber", counters.raw_physical_ber),
                            ("effective_ber", counters.effective_physical_ber),
                            ("symbol_ber", counters.symbol_ber),
                            ("link_down_counter", counters.link_down_counter),
                            ("fec_uncorrectable_blocks", counters.rs_fec_uncorrectable_blocks)):
            if value is not None:
                metrics.append(Metric(name=name, value=value, component=where))
    module = after.module
    thresholds: dict[str, float | None] = {}
    if module is not None:
        # mlxlink prints each measurement's [low..high] alarm range after its lanes.
        for ranged, name in ((module.rx_power_thresholds_dbm, "rx_power"),
                             (module.tx_power_thresholds_dbm, "tx_power"),
                             (module.bias_current_thresholds_ma, "tx_bias"),
                             (module.temperature_thresholds_c, "temperature")):
            if ranged and len(ranged) == 2:
                unit = {"tx_bias": "ma", "temperature": "c"}.get(name, "dbm")
                if name != "temperature":
                    thresholds[f"{name}_low_alarm_{unit}"] = ranged[0]
                thresholds[f"{name}_high_alarm_{unit}"] = ranged[1]
    spec = optic_type(module.compliance, module.vendor_part_number, module.cable_type) \
        if module is not None else None
    lanes = {str(lane.lane): lane for lane in after.lanes}
    if lanes:
        metrics += lane_metrics(
            lambda lane: where if lane is None else f"{where}/lane{lane}", spec, thresholds,
            rx={k: v.rx_power_dbm for k, v in lanes.items()},
            tx={k: v.tx_power_dbm for k, v in lanes.items()},
            bias={k: v.bias_current_ma for k, v in lanes.items()},
            dark={k for k, v in lanes.items() if "rx_los" in v.flags},
            temperature=module.temperature_c if module is not None else None,
            pre_fec_ber=counters.raw_physical_ber if counters is not None else None)
    if spec is not None:
        metrics.append(Metric(name="optic_type", value=spec.name, component=where))
    return metrics


def _histogram_tail(before: Any, after: Any, where: str) -> list[Metric]:
    """`fec_max_t`: the most symbols a codeword needed corrected among the bins that grew
    between the two reads (warn from 8, fail from 13 of RS(544,514)'s 15); with one read,
    `fec_max_t_total` since the counters were cleared, not judged."""
    now = fec_histogram(after)
    if not now:
        return []
    then = fec_histogram(before) if before is not None else None
    grew = {k: v - (then or {}).get(k, 0) if then is not None else v for k, v in now.items()}
    tail = max((k for k, n in grew.items() if n > 0), default=0)
    if then is None:
        return [Metric(name="fec_max_t_total", value=tail, component=where,
                       source="since the histogram was cleared: not judged")]
    verdict = Verdict.FAIL if tail >= MAX_T_FAIL else \
        Verdict.WARN if tail >= MAX_T_WARN else Verdict.OK
    return [Metric(name="fec_max_t", value=tail, component=where, verdict=verdict,
                   limit=MAX_T_FAIL, source=TAIL_SOURCE)]
