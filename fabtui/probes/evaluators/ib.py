"""Port state and link health of HCAs: ibstat, ibv_devinfo, ibdev2netdev, mlxlink.

A port that is not Active/LinkUp carries nothing; one that came up at a lower rate than the
topology says (a 400G NIC at 200G) halves its rail for every GPU behind it (fabric-diagnostics
6.1 rule 3: `check_hw_ib 400 mlx5_ibN:1`, Azure/azurehpc-health-checks conf/*.conf).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.probes.evaluators.optics import lane_metrics, optic_type

_ACTIVE = {"active", "port_active"}
_LINK_UP = {"linkup", "link_up", "5: linkup"}


def _wanted(ctx: EvalContext, device: str) -> bool:
    """On a NIC target only that NIC's device counts; on a node, all of them."""
    nic = ctx.target.nic
    return nic is None or device == nic.name


def _expected_rate(ctx: EvalContext) -> float | None:
    return float(ctx.target.nic.speed) if ctx.target.nic is not None else None


def _ports(ctx: EvalContext, devices: dict[str, Any]) -> Iterator[tuple[str, Any, bool]]:
    """(component, port, active) for each port of the wanted devices, with its state metric
    left to the caller (`port.state`: ok when Active, fail otherwise)."""
    for device, data in devices.items():
        if not _wanted(ctx, device):
            continue
        for number, port in data.ports.items():
            where = ctx.component() if ctx.target.nic else ctx.component(f"{device}/{number}")
            yield where, port, (port.state or "").lower() in _ACTIVE


def _state(where: str, port: Any, active: bool) -> Metric:
    return Metric(name="port.state", value=port.state, component=where,
                  verdict=Verdict.OK if active else Verdict.FAIL)


@evaluator("ibstat")
def ibstat(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """State, physical state and rate of each port."""
    metrics = []
    expected = _expected_rate(ctx)
    for where, port, active in _ports(ctx, after.cas):
        metrics.append(_state(where, port, active))
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


@evaluator("ibv_devinfo")
def ibv_devinfo(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Port state and active MTU (NCCL over RDMA wants 4096)."""
    metrics = []
    for where, port, active in _ports(ctx, after.devices):
        metrics.append(_state(where, port, active))
        if port.active_mtu is not None:
            small = active and port.active_mtu < 4096
            metrics.append(Metric(name="port.active_mtu", value=port.active_mtu,
                                  component=where, limit=4096,
                                  verdict=Verdict.WARN if small else Verdict.OK))
    return metrics


@evaluator("ibdev2netdev")
def ibdev2netdev(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Every RDMA device the topology expects on this node must be Up."""
    node = ctx.target.node
    expected = {nic.name for nic in node.nics} if node is not None else set()
    metrics = []
    for device, entry in sorted(after.devices.items()):
        up = (entry.state or "").lower() == "up"
        relevant = not expected or device in expected
        metrics.append(Metric(name="device.state", value=entry.state or "unknown",
                              component=ctx.component(device),
                              verdict=Verdict.FAIL if relevant and not up else Verdict.OK))
    for missing in sorted(expected - set(after.devices)):
        metrics.append(Metric(name="device.present", value=False,
                              component=ctx.component(missing), verdict=Verdict.FAIL))
    return metrics


@evaluator("mlxlink")
def mlxlink(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Link state, mlxlink's own diagnosis, BER, link-down counter and module lanes."""
    where = ctx.component()
    metrics = []
    if after.state is not None:
        active = after.state.lower() == "active"
        metrics.append(Metric(name="state", value=after.state, component=where,
                              verdict=Verdict.OK if active else Verdict.FAIL))
    if after.issue_observed:
        metrics.append(Metric(name="recommendation", value=after.recommendation or "",
                              component=where, verdict=Verdict.WARN))
    counters = after.counters
    if counters is not None:
        for name, value in (("raw_ber", counters.raw_physical_ber),
                            ("effective_ber", counters.effective_physical_ber),
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
            temperature=module.temperature_c if module is not None else None)
    return metrics
