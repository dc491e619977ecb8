"""From a series' labels to the topology element it is about (the label mapping).

Exporters name things their own way: dcgm-exporter puts the node in `Hostname` and the GPU index
in `gpu`; node_exporter's node is the scrape target (`instance`, `node001:9100`), its ethtool
`device` is the netdev (`enp23s0f0np0`) and its infiniband `device` the RDMA device (`mlx5_0`);
a switch exporter's switch is its `instance` and the port its `device` or `interface`. Which label
holds what is configurable (`[prometheus.labels]`); `host_pattern` takes the topology name out of
the label's value (its first group; by default what precedes a `:port` or a domain).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabtui.model.topology import long_port_name
from fabtui.prom.catalog import Element
from fabtui.topology.graph import FabricGraph


@dataclass(frozen=True)
class LabelMap:
    """Which label names the node, GPU, NIC, switch and port (see the module docstring)."""

    node: str = "instance"
    gpu_node: str = "Hostname"
    gpu: str = "gpu"
    nic: str = "device"
    switch: str = "instance"
    port: str = "device"
    host_pattern: str = r"^([^:.]+)"

    def grouping(self, element: Element) -> tuple[str, ...]:
        """The labels a query keeps (`sum by (...)`) for series about `element`."""
        if element == "gpu":
            return tuple(dict.fromkeys((self.gpu_node, self.node, self.gpu)))
        if element in ("nic", "ibport"):
            return tuple(dict.fromkeys((self.node, self.nic)))
        return tuple(dict.fromkeys((self.switch, self.port)))

    def device_grouping(self, element: Element) -> tuple[str, ...]:
        """The labels that name only the device (node or switch) of series about `element`:
        one sample per scrape target dates all of its elements."""
        if element == "gpu":
            return tuple(dict.fromkeys((self.gpu_node, self.node)))
        if element in ("nic", "ibport"):
            return (self.node,)
        return (self.switch,)


class Resolver:
    """Element keys (`fabtui.views.fabricmap` names) for series labels, on one fabric."""

    def __init__(self, graph: FabricGraph, labels: LabelMap) -> None:
        self.labels = labels
        self._host = re.compile(labels.host_pattern)
        self._nodes = set(graph.nodes)
        self._switches = set(graph.switches)
        self._nic_of: dict[tuple[str, str], str] = {}
        for hostname, node in graph.nodes.items():
            for nic in node.nics:
                self._nic_of[(hostname, nic.name)] = nic.name
                if nic.netdev:
                    self._nic_of[(hostname, nic.netdev)] = nic.name
        self._cache: dict[tuple[str, ...], str | None] = {}
        self._port_cache: dict[tuple[str, str], str | None] = {}
        self._gpu_cache: dict[tuple[str, str], str | None] = {}

    def host(self, value: str) -> str:
        match = self._host.match(value)
        return match.group(1) if match and match.groups() else value

    def device(self, element: Element, labels: dict[str, str]) -> str | None:
        """The node or switch the labels of a `device_grouping` series name, or None."""
        m = self.labels
        if element == "port":
            switch = self.host(labels.get(m.switch, ""))
            return switch if switch in self._switches else None
        value = (labels.get(m.gpu_node) if element == "gpu" else None) or labels.get(m.node, "")
        node = self.host(value)
        return node if node in self._nodes else None

    def element(self, element: Element, labels: dict[str, str]) -> str | None:
        """The element key the labels name, or None when they name nothing in the topology."""
        m = self.labels
        if element == "gpu":
            gpu_key = (labels.get(m.gpu_node) or labels.get(m.node, ""), labels.get(m.gpu, ""))
            found = self._gpu_cache.get(gpu_key, "")
            if found == "":
                node, index = self.host(gpu_key[0]), gpu_key[1]
                found = self._gpu_cache[gpu_key] = f"{node}:gpu{int(index)}" \
                    if node in self._nodes and index.isdigit() else None
            return found
        if element in ("nic", "ibport"):
            key = (labels.get(m.node, ""), labels.get(m.nic, ""))
            found = self._cache.get(key, "")
            if found == "":
                node = self.host(key[0])
                nic = self._nic_of.get((node, key[1]))
                found = self._cache[key] = f"{node}:{nic}" if nic else None
            return found
        where = (labels.get(m.switch, ""), labels.get(m.port, ""))
        found = self._port_cache.get(where, "")
        if found == "":
            switch = self.host(where[0])
            found = self._port_cache[where] = f"{switch}:{long_port_name(where[1])}" \
                if switch in self._switches and where[1] else None
        return found
