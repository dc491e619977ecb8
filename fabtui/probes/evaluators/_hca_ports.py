"""What the HCA port evaluators share (`ibstat.py`, `ibv_devinfo.py`): the ports that count on
the target and their state metric. A port that is not Active carries nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext

_ACTIVE = {"active", "port_active"}


def _wanted(ctx: EvalContext, device: str) -> bool:
    """On a NIC target only that NIC's device counts; on a node, all of them."""
    nic = ctx.target.nic
    return nic is None or device == nic.name


def hca_ports(ctx: EvalContext, devices: dict[str, Any]) -> Iterator[tuple[str, Any, bool]]:
    """(component, port, active) for each port of the wanted devices, with its state metric
    left to the caller (`port.state`: ok when Active, fail otherwise)."""
    for device, data in devices.items():
        if not _wanted(ctx, device):
            continue
        for number, port in data.ports.items():
            where = ctx.component() if ctx.target.nic else ctx.component(f"{device}/{number}")
            yield where, port, (port.state or "").lower() in _ACTIVE


def state_metric(where: str, port: Any, active: bool) -> Metric:
    return Metric(name="port.state", value=port.state, component=where,
                  verdict=Verdict.OK if active else Verdict.FAIL)
