"""What the HCA port evaluators share (`ibstat.py`, `ibv_devinfo.py`): the ports that count on
the target and their state metric. A port that is not Active carries nothing.

On a NIC target only that NIC's device counts, named as the NIC (`node001:mlx5_3`). On a node
target every device counts (`ibstat` with no argument lists them all, one command per node):
a device the topology lists as one of the node's NICs is named as that NIC, so its reading
lands on the NIC in the live view; any other (a storage or management HCA, a second port)
keeps `node001:mlx5_9/1`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.model.topology import Nic
from fabtui.probes.evaluators.base import EvalContext

_ACTIVE = {"active", "port_active"}


def _wanted(ctx: EvalContext, device: str) -> bool:
    """On a NIC target only that NIC's device counts; on a node, all of them."""
    nic = ctx.target.nic
    return nic is None or device == nic.name


def topology_nic(ctx: EvalContext, device: str, number: str, ports: int) -> Nic | None:
    """The topology's NIC that port `number` of `device` is: the target's own NIC, or on a
    node target the node's NIC of that name when this is its port (port 1, or the device's
    only port: a topology NIC is one RDMA device port)."""
    if ctx.target.nic is not None:
        return ctx.target.nic
    node = ctx.target.node
    if node is None or (number != "1" and ports > 1):
        return None
    return next((n for n in node.nics if n.name == device), None)


def hca_ports(ctx: EvalContext,
              devices: dict[str, Any]) -> Iterator[tuple[str, Any, bool, Nic | None]]:
    """(component, port, active, topology NIC or None) for each port of the wanted devices,
    with its state metric left to the caller (`port.state`: ok when Active, fail otherwise)."""
    for device, data in devices.items():
        if not _wanted(ctx, device):
            continue
        for number, port in data.ports.items():
            nic = topology_nic(ctx, device, number, len(data.ports))
            if ctx.target.nic is not None:
                where = ctx.component()
            elif nic is not None and ctx.target.node is not None:
                where = f"{ctx.target.node.hostname}:{nic.name}"
            else:
                where = ctx.component(f"{device}/{number}")
            yield where, port, (port.state or "").lower() in _ACTIVE, nic


def state_metric(where: str, port: Any, active: bool) -> Metric:
    return Metric(name="port.state", value=port.state, component=where,
                  verdict=Verdict.OK if active else Verdict.FAIL)
