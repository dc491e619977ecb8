"""What every simulated switch CLI flavor shares: the reply type, the cabled ports and their
counters, port arguments and LLDP neighbors (`switch_cli.py` dispatches to the flavors)."""

from __future__ import annotations

from collections.abc import Iterator

from fabtui.model.topology import Switch, long_port_name
from fabtui.sim.core import PortCounters, Sim

Reply = tuple[str, bool]
"""(text, rejected): what the CLI printed and whether it refused the command."""


def ports(sim: Sim, switch: str) -> list[str]:
    """The switch's cabled ports, in the order the switch lists them."""
    return sim.switch_ports(switch)


def counters(sim: Sim, switch: Switch, t: float,
             only: str | None = None) -> Iterator[tuple[str, PortCounters]]:
    """(port, its counters at t) for every cabled port, or just `only`."""
    for port in ports(sim, switch.name):
        if only is not None and port != only:
            continue
        found = sim.port_counters(switch, port, t)
        if found is not None:
            yield port, found


def port_arg(sim: Sim, switch: Switch, name: str) -> str | None:
    """The cabled port `name` names (`Eth40` or `Ethernet40`), or None."""
    wanted = long_port_name(name)
    return wanted if wanted in ports(sim, switch.name) else None


def neighbors(sim: Sim, switch: Switch, t: float) -> list[tuple[str, str, str, str]]:
    """(local port, neighbor device, neighbor port id, its description) per cabled port."""
    rows = []
    for port in ports(sim, switch.name):
        seen = sim.neighbor(switch.name, port, t)
        if seen is None:
            continue
        device, far_port = seen
        node = sim.graph.nodes.get(device)
        if node is not None:
            nic = next((n for n in node.nics if far_port in (n.netdev, n.name)), None)
            rows.append((port, device, far_port, nic.name if nic else far_port))
        else:
            rows.append((port, device, far_port, far_port))
    return rows
