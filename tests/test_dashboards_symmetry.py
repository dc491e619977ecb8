"""The fabric symmetry dashboard answers "is one rail (leaf) out of line with its siblings?" on a
fabric where one is: the demo playing leaf-uplink-down (leaf-g00-r6's uplink Ethernet80 down),
scraped by a real Prometheus (one per module). The panels docs/dashboards.md names for the
question must single out rail 6 and leaf-g00-r6, and only them; the traffic panels, which this
fault does not move (PXN keeps the job on its rails), must single out nothing.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from typing import Any

import pytest

from fabtui.paths import demo_topology, shipped_templates
from fabtui.prom.dashboards import boards
from fabtui.sim.exporter import Exporter, scrape_config
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import fresh_state, state_file, write_state
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from tests.support.grafana import panel_values
from tests.support.prom_server import PrometheusServer, require_prometheus


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    require_prometheus()
    folder = tmp_path_factory.mktemp("symmetry")
    state = state_file(folder / "data")
    write_state(state, fresh_state(demo_topology(), find_scenario("leaf-uplink-down"),
                                   [shipped_templates()]))
    exporter = Exporter(state).start()
    server = PrometheusServer(folder, scrape_config("sim", f"127.0.0.1:{exporter.port}"))
    try:
        server.wait_ready()
        server.wait_for('count_over_time(node_ethtool_transmitted_bytes_phy{'
                        'device="enp23s0f0np0",instance="node001:9100"}[1m]) > 4 and on() '
                        'count_over_time(sonic_interface_operational_status{'
                        'device="Ethernet80",instance="leaf-g00-r6"}[1m]) > 4', 90)
        yield server
    finally:
        server.stop()
        exporter.stop()


@pytest.fixture(scope="module")
def symmetry() -> dict[str, Any]:
    graph = FabricGraph(load_topology(demo_topology()).topology)
    board = next(b for b in boards(graph) if b.name == "symmetry")
    return dict(json.loads(board.json()))


def _panel(prometheus: PrometheusServer, dashboard: dict[str, Any],
           title: str) -> dict[str, float]:
    """A panel's latest value per line, its `switch` variable set to leaf-g00-r6."""
    return panel_values(prometheus.url, dashboard, title, {"switch": "leaf-g00-r6",
                                                            "job": "4242"})


def _out_of_line(values: dict[str, float], share: float = 0.05) -> set[str]:
    """The lines further than `share` of the siblings' median from it."""
    middle = statistics.median(values.values())
    return {k for k, v in values.items() if abs(v - middle) > share * max(abs(middle), 1.0)}


def test_uplinks_up_per_rail_single_out_the_degraded_rail(
        prometheus: PrometheusServer, symmetry: dict[str, Any]) -> None:
    per_rail = _panel(prometheus, symmetry, "Leaf uplinks up per rail")
    assert len(per_rail) == 8
    assert _out_of_line(per_rail) == {"rail 6"}
    assert per_rail["rail 6"] == 7 and per_rail["rail 0"] == 8


def test_uplinks_up_per_leaf_single_out_its_leaf(prometheus: PrometheusServer,
                                                 symmetry: dict[str, Any]) -> None:
    per_leaf = _panel(prometheus, symmetry, "Uplinks up per leaf")
    assert len(per_leaf) == 8
    assert _out_of_line(per_leaf) == {"leaf-g00-r6"}


def test_ports_down_per_rail_single_out_the_degraded_rail(
        prometheus: PrometheusServer, symmetry: dict[str, Any]) -> None:
    down = _panel(prometheus, symmetry, "Leaf ports down per rail")
    assert down["rail 6"] == 1
    assert {k for k, v in down.items() if v} == {"rail 6"}


def test_the_traffic_of_the_rails_stays_in_line(prometheus: PrometheusServer,
                                                symmetry: dict[str, Any]) -> None:
    """With PXN the job's traffic stays on its rails: an uplink down moves none of it, and the
    traffic panels must not point at a rail that is fine (no false outlier)."""
    per_rail = _panel(prometheus, symmetry, "NIC transmit per rail")
    assert len(per_rail) == 8 and min(per_rail.values()) > 0
    assert _out_of_line(per_rail, share=0.2) == set()
