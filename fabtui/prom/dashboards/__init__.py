"""Grafana dashboards generated from the topology with Grafana's foundation SDK
(`grafana-foundation-sdk`, the Grafana 11.6 build): GPU, NIC/RDMA, switch, NCCL, job and fabric
symmetry, sharing the job/node/rank/rail/switch/port variables and linked to each other
(docs/dashboards.md). Metric names and labels are the Prometheus source's (`fabtui.prom.catalog`,
the label mapping, `[prometheus.metrics]`) plus the few only dashboards read
(`site.EXTRAS`). Pure: SDK objects and JSON text, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard, Panel

from fabtui.prom.dashboards.gpu import gpu
from fabtui.prom.dashboards.job import job
from fabtui.prom.dashboards.nccl import nccl
from fabtui.prom.dashboards.nic import nic
from fabtui.prom.dashboards.sheet import Sheet
from fabtui.prom.dashboards.site import Site, SiteError, site_of
from fabtui.prom.dashboards.switch import switch
from fabtui.prom.dashboards.symmetry import symmetry
from fabtui.prom.labels import LabelMap
from fabtui.topology.graph import FabricGraph

__all__ = ["Board", "Site", "SiteError", "boards", "of_site", "site_of"]

BUILDERS = (gpu, nic, switch, nccl, job, symmetry)


@dataclass(frozen=True)
class Board:
    """One generated dashboard."""

    name: str
    """Its short name (`gpu`): the file is `fabtui-<name>.json`, the uid `fabtui-<name>`."""
    dashboard: Dashboard
    nonzero: frozenset[str]
    """Titles of its panels that must show a non-zero value on a fabric at work."""

    @property
    def panel_count(self) -> int:
        """Its panels, rows not counted."""
        return sum(1 for panel in self.dashboard.panels or [] if isinstance(panel, Panel))

    @property
    def filename(self) -> str:
        return f"fabtui-{self.name}.json"

    def json(self) -> str:
        """The dashboard as Grafana imports it (the JSON model of Grafana 11)."""
        return json.dumps(self.dashboard, cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def boards(graph: FabricGraph, labels: LabelMap | None = None,
           names: Mapping[str, str] | None = None) -> list[Board]:
    """Every dashboard for `graph` with the label mapping and metric names in effect (raises
    SiteError when the topology's rails cannot be told apart by device name)."""
    return of_site(site_of(graph, labels or LabelMap(), names or {}))


def of_site(site: Site) -> list[Board]:
    """Every dashboard for an already built site."""
    return [_board(build(site)) for build in BUILDERS]


def _board(sheet: Sheet) -> Board:
    return Board(sheet.name, sheet.builder.build(), frozenset(sheet.nonzero))
