"""An alert's labels -> the topology element it is about, and where that element sits.

The labels are mapped by the live view's own label mapping (`fabtui.prom.labels.Resolver`,
`[prometheus.labels]`): the rule pack (`fabtui prom rules`) keeps each series' element labels
and says which kind they name (`fabtui_element`); an alert from another rule pack is tried as
a switch port, a NIC, a GPU, then a device. Besides the element, `Located` gives what grouping
needs: the unit it belongs to (the cable of a port or NIC: both ends of one link are one unit),
the devices that unit touches (a host link touches its node and its leaf; an uplink its leaf and
its spine), and which end the alert accuses (`fabtui_suspect`: `self`, `far-end` or `link`).

Pure: reads the graph, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabtui.alerts.payload import Alert
from fabtui.model.element import device_of
from fabtui.prom.labels import LabelMap, Resolver
from fabtui.topology.graph import FabricGraph

ELEMENT = "fabtui_element"
ROLE = "fabtui_role"
FAULT = "fabtui_fault"
SUSPECT = "fabtui_suspect"


@dataclass(frozen=True)
class Located:
    """Where an alert's element sits in the fabric."""

    element: str
    """The element key (`leaf-g00-r4:Ethernet40`, `node006:mlx5_4`, `node001:gpu0`, a
    switch or node name)."""
    kind: str
    """`port`, `nic`, `gpu`, `switch` or `node`."""
    unit: str
    """The smallest thing its alerts share with others: `link:N` for a port or NIC (both ends
    of one cable), else the element itself."""
    devices: tuple[str, ...]
    """The nodes and switches the unit touches, lowest tier first."""
    ends: tuple[str, ...]
    """A link's two endpoints, switch side last (a port element: itself and its far end)."""
    rails: tuple[str, ...] = ()
    """The rail of a host cable's NIC (`rail:3`, `rail:3/b` in plane b of a multi-plane
    fabric): in a fabric of several groups, one rail's NICs land on several leaves."""


class Locator:
    """`locate(alert)` on one fabric and label mapping."""

    def __init__(self, graph: FabricGraph, labels: LabelMap) -> None:
        self.graph = graph
        self.labels = labels
        self.resolver = Resolver(graph, labels)

    def tier(self, device: str) -> int:
        """0 for a node, the switch's tier (1 leaf, 2 spine, 3 super-spine) for a switch."""
        return self.graph.tier(device) if device in self.graph.switches else 0

    def locate(self, alert: Alert) -> Located | None:
        """Where `alert` points, or None when its labels name nothing in the topology."""
        labels = alert.labels
        kind = labels.get(ELEMENT, "")
        tries = {"port": ("port",), "nic": ("nic",), "ibport": ("ibport",), "gpu": ("gpu",),
                 "target": ("device",)}.get(kind, ("port", "nic", "gpu", "device"))
        for attempt in tries:
            found = self._try(attempt, labels)
            if found is not None:
                return found
        return None

    def _try(self, attempt: str, labels: dict[str, str]) -> Located | None:
        graph = self.graph
        if attempt == "device":
            host = self.resolver.host(labels.get(self.labels.node, "") or
                                      labels.get(self.labels.switch, ""))
            if host in graph.nodes:
                return Located(host, "node", host, (host,), ())
            if host in graph.switches:
                return Located(host, "switch", host, (host,), ())
            return None
        if attempt == "gpu":
            if self.labels.gpu not in labels:
                return None
            key = self.resolver.element("gpu", labels)
            return Located(key, "gpu", key, (device_of(key),), ()) if key else None
        if attempt == "port" and self.labels.port not in labels:
            return None
        key = self.resolver.element(attempt, labels)  # type: ignore[arg-type]
        if key is None:
            return None
        index = graph.link_at(key)
        kind = "port" if attempt == "port" else "nic"
        if index is None:
            return Located(key, kind, key, (device_of(key),), (key,))
        link = graph.topology.links[index]
        ends = sorted((self._endpoint(link.a), self._endpoint(link.b)),
                      key=lambda e: self.tier(device_of(e)))
        devices = tuple(dict.fromkeys(device_of(e) for e in ends))
        return Located(key, kind, f"link:{index}", devices, tuple(ends), self._rails(ends))

    def _rails(self, ends: list[str]) -> tuple[str, ...]:
        """The rail of the NIC at a host end of the cable (none for a switch-to-switch one)."""
        found = []
        for end in ends:
            device = device_of(end)
            nic = self.graph.find_nic(device, end[len(device) + 1:]) \
                if device in self.graph.nodes else None
            if nic is not None:
                found.append(rail_key(nic.rail, nic.plane))
        return tuple(found)

    def _endpoint(self, endpoint: str) -> str:
        """A link end as element keys name it (a NIC by its RDMA device, not its netdev)."""
        device = device_of(endpoint)
        nic = self.graph.find_nic(device, endpoint[len(device) + 1:])
        return f"{device}:{nic.name}" if nic is not None else endpoint


def rail_key(rail: int, plane: str | None = None) -> str:
    """How a rail is named as a suspect: `rail:3`, or `rail:3/b` in plane b."""
    return f"rail:{rail}" + (f"/{plane}" if plane else "")
