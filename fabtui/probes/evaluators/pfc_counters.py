"""PFC pause frames per port, direction and priority, and the share of time they hold a
priority paused."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.model.topology import long_port_name
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.expected import pause_share


@evaluator("pfc-counters")
def pfc_counters(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Pause frames per second per port, direction and priority (`rate.rx.PFC3`), and the
    share of time they hold the priority paused at that port's speed (`pause_share.rx.PFC3`):
    a frame count alone misses a storm on a slower port (a fully paused 400G port receives
    ~11.9k frames/s, a 100G one ~3k)."""
    metrics = _pause_time(before, after, ctx)
    for direction in ("rx", "tx"):
        table = getattr(after, direction)
        for name in target_ports(ctx, table):
            old = getattr(before, direction).get(name) if before is not None else None
            if before is not None and old is None:
                continue
            where = port_component(ctx, name)
            found = counter_metrics(old, table[name], where, ctx.interval, rates=("PFC*",),
                                    deltas=("PFC*",), prefix=f"{direction}.")
            metrics += found
            speed = _port_speed(ctx, name)
            if speed is None:
                continue
            for metric in found:
                if metric.name.startswith("rate.") and isinstance(metric.value, int | float):
                    metrics.append(Metric(
                        name=metric.name.replace("rate.", "pause_share.", 1),
                        value=round(pause_share(float(metric.value), speed), 4),
                        component=where,
                        source=f"frames/s x 65535 quanta x 512 bit times at {speed} Gb/s"))
    return metrics


def _pause_time(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """From `show pfc counters --history`: the share of the window each port and priority
    was held paused (`pause_time_share.rx.PFC3`), measured by the switch itself, so it
    needs no assumption about the port's speed (a 100G port fully paused is 1.0 too)."""
    if before is None or not after.history:
        return []
    metrics = []
    window_us = ctx.interval * 1e6
    for name in target_ports(ctx, after.history):
        old = before.history.get(name)
        if old is None:
            continue
        for priority, now in after.history[name].items():
            then = old.get(priority)
            if then is None or now.total_rx_pause_time_us is None or \
                    then.total_rx_pause_time_us is None or window_us <= 0:
                continue
            paused = now.total_rx_pause_time_us - then.total_rx_pause_time_us
            if paused < 0:  # cleared in between: nothing to say about this window
                continue
            metrics.append(Metric(name=f"pause_time_share.rx.{priority}",
                                  value=round(min(paused / window_us, 1.0), 4),
                                  component=port_component(ctx, name),
                                  source="Total RX Pause Time US over the window"))
    return metrics


def _port_speed(ctx: EvalContext, name: str) -> int | None:
    """Gb/s of `name` on the target switch: its port config, else the cabled link's speed."""
    switch = ctx.target.switch
    if switch is None:
        return None
    for port in (name, long_port_name(name)):
        speed = switch.port_speed_of(port)
        if ctx.graph is not None:
            index = ctx.graph.port_links.get(f"{switch.name}:{port}")
            if index is not None:
                speed = ctx.graph.topology.links[index].speed or speed
        if speed:
            return speed
    return None
