"""Every panel of every generated dashboard, run against a real Prometheus scraping the demo.

One Prometheus per module (scrape_interval 1 s) scrapes `fabtui.sim.exporter` serving the demo
fabric playing multi-job-interference: the training job runs (traffic, NCCL collectives, busy
GPUs) while another tenant congests leaf-g00-r2, so its ports and rail 2's NICs see PFC pause,
ECN marks and CNPs, and FEC corrects on every link. Each variable query (`label_values`) must
offer values; each panel's queries, their variables set to real values of the demo (job 4242,
a node of it, rail 2, leaf-g00-r2 and one of its ports, a rank), must be valid and return
series, and the panels that watch traffic, pause or FEC must show a non-zero value.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabtui.paths import demo_topology, shipped_templates
from fabtui.prom.dashboards import Board, boards
from fabtui.sim.exporter import Exporter, scrape_config
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import fresh_state, state_file, write_state
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from tests.support.grafana import (
    instant,
    interpolate,
    label_values,
    panel_values,
    targets,
    variables,
)
from tests.support.prom_server import PrometheusServer, require_prometheus

SCENARIO = "multi-job-interference"
CONGESTED_LEAF = "leaf-g00-r2"
CONGESTED_RAIL = 2


class Running:
    """The exporter and the Prometheus scraping it."""

    def __init__(self, folder: Path) -> None:
        self.state = state_file(folder / "data")
        write_state(self.state, fresh_state(demo_topology(), find_scenario(SCENARIO),
                                            [shipped_templates()]))
        self.exporter = Exporter(self.state).start()
        self.prometheus = PrometheusServer(
            folder, scrape_config("sim", f"127.0.0.1:{self.exporter.port}"))

    def stop(self) -> None:
        self.prometheus.stop()
        self.exporter.stop()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    require_prometheus()
    fabric = Running(tmp_path_factory.mktemp("dashboards"))
    try:
        fabric.prometheus.wait_ready()
        # Several scrapes of every family: each counter has a rate over the window.
        fabric.prometheus.wait_for(
            'count_over_time(sonic_interface_transmit_bytes_total{device="Ethernet0",'
            'instance="leaf-g00-r0"}[1m]) > 4 and on() '
            'count_over_time(node_ethtool_transmitted_bytes_phy{device="enp23s0f0np0",'
            'instance="node001:9100"}[1m]) > 4 and on() '
            'count_over_time(DCGM_FI_DEV_GPU_UTIL{Hostname="node001",gpu="0"}[1m]) > 4', 90)
        yield fabric
    finally:
        fabric.stop()


@pytest.fixture(scope="module")
def generated() -> list[Board]:
    return boards(FabricGraph(load_topology(demo_topology()).topology))


def _dashboard(board: Board) -> dict[str, Any]:
    return dict(json.loads(board.json()))


def _offered(url: str, dashboard: dict[str, Any],
             chosen: dict[str, str | list[str]]) -> dict[str, list[str]]:
    """Each query variable's values, its own query's variables set from `chosen` (filled in
    dashboard order, as Grafana resolves chained variables)."""
    defined = variables(dashboard)
    offered: dict[str, list[str]] = {}
    for name, variable in defined.items():
        if variable["type"] != "query":
            continue
        query = interpolate(variable["query"], chosen, defined)
        offered[name] = label_values(url, query, variable.get("regex", ""))
    return offered


def _choose(name: str, values: list[str], rail: dict[str, Any] | None) -> str:
    """The demo value a variable is set to for the panels' queries."""
    wanted = {"job": "4242", "switch": CONGESTED_LEAF, "node": "node003", "rank": "17"}
    if name in wanted:
        assert wanted[name] in values, f"${name} does not offer {wanted[name]}: {values}"
        return wanted[name]
    return values[0]


def _chosen(url: str, dashboard: dict[str, Any]) -> tuple[dict[str, str | list[str]],
                                                           dict[str, list[str]]]:
    defined = variables(dashboard)
    chosen: dict[str, str | list[str]] = {}
    offered: dict[str, list[str]] = {}
    for name, variable in defined.items():
        if variable["type"] == "query":
            query = interpolate(variable["query"], chosen, defined)
            offered[name] = label_values(url, query, variable.get("regex", ""))
            assert offered[name], f"{dashboard['uid']}: variable ${name} ({query}) offers " \
                                  "nothing on the demo"
            chosen[name] = _choose(name, offered[name], None)
        elif variable["type"] == "custom":  # the rail: the congested one
            option = next(o for o in variable["options"]
                          if o["text"] == f"rail {CONGESTED_RAIL}")
            chosen[name] = option["value"]
    return chosen, offered


@pytest.mark.parametrize("name", ["gpu", "nic", "switch", "nccl", "job", "symmetry"])
def test_every_panel_returns_data_on_the_demo(running: Running, generated: list[Board],
                                              name: str) -> None:
    board = next(b for b in generated if b.name == name)
    dashboard = _dashboard(board)
    url = running.prometheus.url
    chosen, _offered_values = _chosen(url, dashboard)
    defined = variables(dashboard)
    empty: list[str] = []
    invalid: list[str] = []
    flat: dict[str, float] = {}
    asked = 0
    for panel, target in targets(dashboard):
        expr = interpolate(target["expr"], chosen, defined)
        answer = instant(url, expr)
        asked += 1
        where = f"{panel['title']!r} {target['refId']}: {expr}"
        if answer.get("status") != "success":
            invalid.append(f"{where}: {answer.get('error')}")
            continue
        result = answer["data"]["result"]
        if not result:
            empty.append(where)
        values = [abs(float(s["value"][1])) for s in result]
        flat[panel["title"]] = max([flat.get(panel["title"], 0.0), *values])
    assert asked >= 5
    assert not invalid, "invalid queries:\n" + "\n".join(invalid)
    assert not empty, "queries with no series on the demo:\n" + "\n".join(empty)
    zero = sorted(t for t in board.nonzero if flat.get(t, 0.0) <= 0.0)
    assert not zero, f"panels that should show a non-zero value show none: {zero}"


def test_the_rank_variable_follows_the_job(running: Running, generated: list[Board]) -> None:
    """The NCCL dashboard's ranks are the job's 64 ranks; a job that does not exist offers
    none (the variable is chained to $job, not a list of every rank anywhere)."""
    dashboard = _dashboard(next(b for b in generated if b.name == "nccl"))
    url = running.prometheus.url
    assert _offered(url, dashboard, {"job": "4242"})["rank"] == sorted(str(r) for r in range(64))
    assert _offered(url, dashboard, {"job": "9999"})["rank"] == []


def test_the_congested_rail_stands_out_in_the_symmetry_dashboard(
        running: Running, generated: list[Board]) -> None:
    """Another tenant congests leaf-g00-r2: its ports pause their hosts, so rail 2 is the one
    rail whose NICs are paused and whose leaf pauses (docs/dashboards.md, fabric symmetry)."""
    dashboard = _dashboard(next(b for b in generated if b.name == "symmetry"))
    chosen: dict[str, str | list[str]] = {"switch": CONGESTED_LEAF, "job": "4242"}
    nics = panel_values(running.prometheus.url, dashboard, "Most paused NIC per rail", chosen)
    assert len(nics) == 8
    assert {rail for rail, share in nics.items() if share > 0} == {f"rail {CONGESTED_RAIL}"}
    leaves = panel_values(running.prometheus.url, dashboard, "Most paused leaf port per rail",
                          chosen)
    assert {line for line, share in leaves.items() if share > 0} == \
        {f"rail {CONGESTED_RAIL} pausing its peer"}
