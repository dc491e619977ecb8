"""Switch counters, PFC, FEC, queues and optics, per port, named `switch:port[/laneN]`.

Sources (shared/reference/fabric-diagnostics.md section 4): sonic-net/sonic-utilities
doc/Command-Reference.md and tests; post-FEC (uncorrectable) codewords must be 0; a lane at
`-inf` dBm has no light (loss of signal); each lane is judged against the module's own alarm and
warning thresholds first (Arista/NX-OS/SONiC print them), then the probe's fallback limits.
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.model.topology import long_port_name
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.probes.evaluators.counters import counter_metrics
from fabtui.probes.evaluators.optics import lane_metrics, optic_type
from fabtui.topology.expected import pause_share

_ERRORS = ("rx_err", "rx_drp", "rx_ovr", "tx_err", "tx_drp", "tx_ovr", "crc", "fcs",
           "symbol_errors", "runts", "giants", "link_flaps")
_FLOWS = ("rx_ok", "tx_ok", "rx_pause", "tx_pause")


def _ports(ctx: EvalContext, names: Any) -> list[str]:
    """All ports on a switch target; only the target's port on a port target."""
    port = ctx.target.port
    return [n for n in names if port is None or long_port_name(n) == long_port_name(port)]


def _where(ctx: EvalContext, name: str) -> str:
    return ctx.component(long_port_name(name))


@evaluator("switch-counters")
def switch_counters(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per port: error/drop deltas, packet and pause rates, and ports that are down."""
    metrics = []
    for name in _ports(ctx, after.interfaces):
        now = after.interfaces[name]
        where = _where(ctx, name)
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


@evaluator("pfc-counters")
def pfc(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Pause frames per second per port, direction and priority (`rate.rx.PFC3`), and the
    share of time they hold the priority paused at that port's speed (`pause_share.rx.PFC3`):
    a frame count alone misses a storm on a slower port (a fully paused 400G port receives
    ~11.9k frames/s, a 100G one ~3k)."""
    metrics = _pause_time(before, after, ctx)
    for direction in ("rx", "tx"):
        table = getattr(after, direction)
        for name in _ports(ctx, table):
            old = getattr(before, direction).get(name) if before is not None else None
            if before is not None and old is None:
                continue
            where = _where(ctx, name)
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
    for name in _ports(ctx, after.history):
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
                                  component=_where(ctx, name),
                                  source="Total RX Pause Time US over the window"))
    return metrics


@evaluator("pfcwd")
def pfcwd(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """SONiC's PFC watchdog per queue: a queue `stormed` now (its PFC is being ignored and
    its traffic dropped), storms detected and not yet restored, and its drops."""
    metrics = []
    for name, queue in after.queues.items():
        port, _, index = name.rpartition(":")
        if not port or _ports(ctx, [port]) == []:
            continue
        where = _where(ctx, f"{port}/q{index}")
        if queue.status is not None:
            metrics.append(Metric(name="stormed", value=int(queue.status == "stormed"),
                                  component=where))
        if queue.storms_detected is not None:
            metrics.append(Metric(name="storms_detected", value=queue.storms_detected,
                                  component=where))
        if queue.tx_drop is not None or queue.rx_drop is not None:
            metrics.append(Metric(name="drops", value=(queue.tx_drop or 0) +
                                  (queue.rx_drop or 0), component=where))
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


@evaluator("fec-stats")
def fec(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Uncorrectable codewords (must stay 0), corrected rate, and pre-FEC BER per port."""
    metrics = []
    for name in _ports(ctx, after.interfaces):
        now = after.interfaces[name]
        where = _where(ctx, name)
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


@evaluator("queue-counters")
def queues(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Dropped packets per queue over the window."""
    metrics = []
    for name in _ports(ctx, after.ports):
        old_port = before.ports.get(name) if before is not None else None
        if before is not None and old_port is None:
            continue
        for queue, stats in after.ports[name].items():
            old = old_port.get(queue) if old_port is not None else None
            if before is not None and old is None:
                continue
            metrics += counter_metrics(
                {"drop_packets": old.drop_packets} if old is not None else None,
                {"drop_packets": stats.drop_packets}, _where(ctx, f"{name}/{queue}"),
                ctx.interval, deltas=("drop_packets",))
    return metrics


@evaluator("transceiver-dom")
def dom(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per lane: light, rx and tx power, bias against the module's thresholds and its type's
    spec (optics.py); lane spread, temperature and module alarms per port."""
    metrics = []
    for name in _ports(ctx, after.interfaces):
        module = after.interfaces[name]
        spec = optic_type(module.media_type, module.part_number, module.identifier,
                          *module.details.values())

        def where(lane: str | None, port: str = name) -> str:
            return _where(ctx, port if lane is None else f"{port}/lane{lane}")

        metrics += lane_metrics(where, spec, module.thresholds, rx=module.rx_power_dbm,
                                tx=module.tx_power_dbm, bias=module.tx_bias_ma,
                                dark=set(module.los_lanes), temperature=module.temperature_c)
        for alarm in module.alarms:
            lane = f"/lane{alarm.lane}" if alarm.lane else ""
            metrics.append(Metric(name=f"alarm.{alarm.measurement}", value=alarm.level,
                                  component=_where(ctx, f"{name}{lane}"),
                                  verdict=Verdict.FAIL if "alarm" in alarm.level
                                  else Verdict.WARN))
        if module.serial:
            metrics.append(Metric(name="optic_serial", value=module.serial,
                                  component=_where(ctx, name)))
        if spec is not None:
            metrics.append(Metric(name="optic_type", value=spec.name,
                                  component=_where(ctx, name)))
    return metrics
