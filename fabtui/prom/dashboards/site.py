"""What the dashboards need to know about one site: the metric names and labels its exporters
use (the label mapping and `[prometheus.metrics]` of docs/prometheus.md, the catalog's names
for what the Prometheus source reads, and a few more only the dashboards read), and the
fabric's shape from the topology (which NIC devices and leaves make each rail, which leaf ports
are uplinks). Pure data and string building, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from fabtui.model.element import device_of
from fabtui.model.topology import Role, long_port_name
from fabtui.prom.catalog import BY_KEY
from fabtui.prom.labels import LabelMap
from fabtui.topology.graph import FabricGraph


@dataclass(frozen=True)
class Extra:
    """A metric the dashboards read that the Prometheus source does not judge."""

    key: str
    exporter: str
    metric: str
    source: str
    """Where the name comes from (the exporter's code or documentation)."""


EXTRAS: tuple[Extra, ...] = (
    Extra("ethtool.rx_bytes_phy", "node_exporter ethtool", "node_ethtool_received_bytes_phy",
          "mlx5 `rx_bytes_phy` (every byte on the wire, RoCE included; the netdev's own "
          "counters miss RDMA traffic), named as `buildEthtoolFQName` names it"),
    Extra("ethtool.tx_bytes_phy", "node_exporter ethtool", "node_ethtool_transmitted_bytes_phy",
          "mlx5 `tx_bytes_phy`, as above"),
    Extra("sonic.rx_bytes", "sonic-exporter", "sonic_interface_receive_bytes_total",
          "vinted/sonic-exporter interface_collector.go (SAI_PORT_STAT_IF_IN_OCTETS)"),
    Extra("sonic.tx_bytes", "sonic-exporter", "sonic_interface_transmit_bytes_total",
          "vinted/sonic-exporter interface_collector.go (SAI_PORT_STAT_IF_OUT_OCTETS)"),
    Extra("sonic.speed", "sonic-exporter", "sonic_interface_speed_bytes",
          "vinted/sonic-exporter interface_collector.go (speed x 10^6 / 8: bytes per second)"),
    Extra("dcgm.gpu_util", "dcgm-exporter", "DCGM_FI_DEV_GPU_UTIL",
          "dcgm-exporter default-counters.csv"),
    Extra("dcgm.sm_clock", "dcgm-exporter", "DCGM_FI_DEV_SM_CLOCK",
          "dcgm-exporter default-counters.csv"),
    Extra("nccl.busbw", "NCCL Inspector", "nccl_bus_bandwidth_gbs",
          "NVIDIA/nccl ext-profiler/inspector/inspector_prom.cc (textfile collector)"),
    Extra("nccl.algbw", "NCCL Inspector", "nccl_algorithm_bandwidth_gbs",
          "NVIDIA/nccl ext-profiler/inspector/inspector_prom.cc"),
    Extra("nccl.exec_time", "NCCL Inspector", "nccl_collective_exec_time_microseconds",
          "NVIDIA/nccl ext-profiler/inspector/inspector_prom.cc"),
)
EXTRA_BY_KEY = {e.key: e for e in EXTRAS}

JOB_LABEL = "hpc_job"
"""dcgm-exporter's HPC job mapping label (`--hpc-job-mapping-dir`): the job holding the GPU."""
NCCL_JOB = "slurm_job_id"
NCCL_RANK = "rank"
NCCL_HOST = "hostname"
"""The NCCL Inspector's labels for the Slurm job, the rank and the rank's host."""
QUANTA_BITS = 65535 * 512
"""Bit times one PFC frame at maximum quanta holds a priority paused (IEEE 802.1Qbb), as
`fabtui.topology.expected.pause_share` counts it."""


_SPECIAL = re.compile(r"[.^$*+?()\[\]{}|\\]")


def literal(name: str) -> str:
    """`name` as a PromQL regex inside a string literal (RE2's specials escaped, the escape
    doubled for the string)."""
    return _SPECIAL.sub(lambda m: "\\\\" + m.group(0), name)


def host_regex(names: list[str] | tuple[str, ...]) -> str:
    """A PromQL regex (inside a string literal) matching a label whose value is one of `names`
    followed by nothing, a `:port` or a domain (what the default `host_pattern` takes apart)."""
    return "(" + "|".join(literal(n) for n in names) + ")([:.].*)?"


def alternatives(names: list[str] | tuple[str, ...]) -> str:
    """A PromQL regex (inside a string literal) matching exactly one of `names`."""
    return "|".join(literal(n) for n in names)


@dataclass(frozen=True)
class Rail:
    """One rail: the NIC devices on it (netdevs and RDMA names) and the leaves it lands on."""

    number: int
    devices: tuple[str, ...]
    leaves: tuple[str, ...]


@dataclass(frozen=True)
class Site:
    """The names, labels and fabric shape the dashboards are generated for."""

    cluster: str
    labels: LabelMap
    names: Mapping[str, str]
    """Catalog key -> the metric's name here (`[prometheus.metrics]` applied)."""
    rails: tuple[Rail, ...]
    leaves: tuple[str, ...]
    uplinks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Leaf -> its ports cabled to a spine."""

    def metric(self, key: str) -> str:
        """The name of a catalog metric (`dcgm.temperature`) or a dashboards-only one."""
        if key in BY_KEY:
            return self.names.get(key, BY_KEY[key].metric)
        return EXTRA_BY_KEY[key].metric

    def series(self, key: str, *matchers: str) -> str:
        """The selector of a metric with the catalog's own matchers and `matchers`."""
        terms = [BY_KEY[key].matchers] if key in BY_KEY and BY_KEY[key].matchers else []
        terms += [m for m in matchers if m]
        return f"{self.metric(key)}{{{', '.join(terms)}}}"

    def rate(self, key: str, *matchers: str) -> str:
        """A counter's per-second rate over Grafana's `$__rate_interval`."""
        return f"rate({self.series(key, *matchers)}[$__rate_interval])"

    def named(self, expr: str, element: str = "node") -> str:
        """`expr` with a `node` (or `switch`) label holding the topology name its node (switch)
        label's value holds, taken out by `host_pattern`: legends and links between dashboards
        speak of `node001`, not `node001:9100`."""
        source = self.labels.node if element == "node" else self.labels.switch
        pattern = self.labels.host_pattern
        pattern = pattern if pattern.endswith("$") else pattern + ".*"
        pattern = pattern.replace("\\", "\\\\").replace('"', '\\"')
        return f'label_replace({expr}, "{element}", "$1", "{source}", "{pattern}")'

    # matchers on the dashboards' variables ------------------------------------------------
    def node_is(self, variable: str = "node") -> str:
        """node_exporter series of the nodes `$variable` names."""
        return f'{self.labels.node}=~"${{{variable}}}([:.].*)?"'

    def gpu_node_is(self, variable: str = "node") -> str:
        return f'{self.labels.gpu_node}=~"${{{variable}}}([:.].*)?"'

    def switch_is(self, variable: str = "switch") -> str:
        return f'{self.labels.switch}=~"${{{variable}}}([:.].*)?"'

    def port_is(self, variable: str = "port") -> str:
        return f'{self.labels.port}=~"${{{variable}}}"'

    def nic_is(self, variable: str = "rail") -> str:
        return f'{self.labels.nic}=~"${{{variable}}}"'

    def leaves_of(self, names: tuple[str, ...]) -> str:
        return f'{self.labels.switch}=~"{host_regex(names)}"'


class SiteError(ValueError):
    """The topology cannot be cut into rails by device name (see `site_of`)."""


def site_of(graph: FabricGraph, labels: LabelMap, names: Mapping[str, str]) -> Site:
    """The site of `graph` with the label mapping and metric names in effect.

    A rail's NICs are matched by device name (netdev and RDMA name), the label a NIC's series
    carry: a device name on different rails on different nodes cannot be told apart that way
    and is refused (SiteError names it)."""
    rail_of: dict[str, int] = {}
    devices: dict[int, dict[str, None]] = {}
    for node in graph.nodes.values():
        for nic in node.nics:
            if nic.rail is None:
                continue
            for name in (nic.netdev, nic.name):
                if not name:
                    continue
                seen = rail_of.setdefault(name, nic.rail)
                if seen != nic.rail:
                    raise SiteError(f"NIC device {name} is on rail {seen} on one node and rail "
                                    f"{nic.rail} on {node.hostname}: the dashboards' rail "
                                    "variable matches NICs by device name")
                devices.setdefault(nic.rail, {})[name] = None
    landed: dict[int, dict[str, None]] = {}
    for (_host, _nic), attachment in graph.attachments.items():
        if attachment.nic.rail is not None:
            landed.setdefault(attachment.nic.rail, {})[attachment.switch] = None
    leaves = tuple(sorted(s.name for s in graph.switches.values() if s.role is Role.LEAF))
    uplinks: dict[str, list[str]] = {}
    for a, b, index in graph.switch_edges:
        link = graph.topology.links[index]
        for end in (link.a, link.b):
            here, there = device_of(end), (b if device_of(end) == a else a)
            if here in leaves and graph.switches[there].role is not Role.LEAF:
                uplinks.setdefault(here, []).append(long_port_name(end.partition(":")[2]))
    rails = tuple(Rail(r, tuple(devices[r]), tuple(sorted(landed.get(r, {}))))
                  for r in sorted(devices))
    return Site(graph.topology.cluster.name, labels, dict(names), rails, leaves,
                {leaf: tuple(ports) for leaf, ports in sorted(uplinks.items())})
