"""Switch optics (DOM) per port and lane: a lane at `-inf` dBm has no light (loss of signal);
each lane is judged against the module's own alarm and warning thresholds first
(Arista/NX-OS/SONiC print them), then the probe's fallback limits and its type's spec
(`_optics.py`)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators._optics import lane_metrics, optic_type
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("transceiver-dom")
def transceiver_dom(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per lane: light, rx and tx power, bias against the module's thresholds and its type's
    spec (_optics.py); lane spread, temperature and module alarms per port."""
    metrics = []
    for name in target_ports(ctx, after.interfaces):
        module = after.interfaces[name]
        spec = optic_type(module.media_type, module.part_number, module.identifier,
                          *module.details.values())

        def where(lane: str | None, port: str = name) -> str:
            return port_component(ctx, port if lane is None else f"{port}/lane{lane}")

        metrics += lane_metrics(where, spec, module.thresholds, rx=module.rx_power_dbm,
                                tx=module.tx_power_dbm, bias=module.tx_bias_ma,
                                dark=set(module.los_lanes), temperature=module.temperature_c)
        for alarm in module.alarms:
            lane = f"/lane{alarm.lane}" if alarm.lane else ""
            metrics.append(Metric(name=f"alarm.{alarm.measurement}", value=alarm.level,
                                  component=port_component(ctx, f"{name}{lane}"),
                                  verdict=Verdict.FAIL if "alarm" in alarm.level
                                  else Verdict.WARN))
        if module.serial:
            metrics.append(Metric(name="optic_serial", value=module.serial,
                                  component=port_component(ctx, name)))
        if spec is not None:
            metrics.append(Metric(name="optic_type", value=spec.name,
                                  component=port_component(ctx, name)))
    return metrics
