"""A two-plane fabric on the Fabric view: every plane's leaves, host links and NICs are drawn,
roll up and can be found and filtered to (the shipped `b300-64gpu-2plane` template: each GPU's
ConnectX-8 has a 400G port in each of two planes, 16 leaves for 8 rails).

The map once kept one leaf per group and rail and one NIC per node and rail: plane 1's eight
leaves and 64 host links were drawn nowhere, so a red plane-1 link was never seen."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from fabtui.config import load_settings
from fabtui.model.element import Kind
from fabtui.model.verdict import Verdict
from fabtui.paths import shipped_templates
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.widgets.matrix import FabricMatrix, Row, build_rows
from fabtui.views.crosslinks import Place
from fabtui.views.fabricmap import FabricMap, ViewFilter, parse_filter, selection_elements
from fabtui.views.status import FabricSnapshot, FabricStatus, Health, PollState, worst_health
from fabtui.workspace import Workspace
from tests.support.tui_support import NOW, asynctest, result, screen_text

TEMPLATE = shipped_templates() / "b300-64gpu-2plane.yaml"
PLANE1_NIC = "node003:mlx5_7"
"""node003's rail-3 NIC port in plane 1 (NIC 2*rail + plane)."""
PLANE1_LEAF = "leaf-g00-r3-p1"


@functools.cache
def two_plane() -> tuple[FabricMap, FabricGraph]:
    graph = FabricGraph(load_topology(TEMPLATE).topology)
    return FabricMap.build(graph), graph


def reachable(fabric: FabricMap, rows: list[Row]) -> set[str]:
    """Every element some drawn cell selects or is coloured by."""
    found: set[str] = set()
    for row in rows:
        for cell in row.cells:
            if cell.key:
                found |= {cell.key, *cell.health_keys, *selection_elements(fabric, cell.key)}
    return found


def of_kind(fabric: FabricMap, kind: Kind) -> set[str]:
    return {k for k, v in fabric.kinds.items() if v is kind}


def shown(rows: list[Row], snapshot: FabricSnapshot) -> dict[str, Health]:
    """Cell key -> the health the matrix colours it with."""
    return {c.key: worst_health(snapshot.of(k) for k in c.health_keys)
            for r in rows for c in r.cells if c.key}


def test_every_leaf_host_link_and_nic_of_both_planes_is_drawn() -> None:
    fabric, _ = two_plane()
    assert len(of_kind(fabric, Kind.LEAF)) == 16 and len(of_kind(fabric, Kind.NIC)) == 128
    for width in (80, 160):
        rows = build_rows(fabric, ViewFilter(), width)
        seen = reachable(fabric, rows)
        for kind in (Kind.LEAF, Kind.HOST_LINK, Kind.NIC, Kind.SPINE, Kind.SPINE_LINK):
            missing = of_kind(fabric, kind) - seen
            assert not missing, (kind, sorted(missing)[:4], len(missing))
        # a row of leaves per plane, each node once, under both
        labels = [r.label for r in rows]
        assert labels[labels.index("g00 p0 leaf") + 2] == "g00 p1 leaf"
        assert sum(label.startswith("node0") for label in labels) == 8


def test_a_failing_plane1_nic_or_leaf_port_shows_on_its_cell_node_and_leaf() -> None:
    fabric, _ = two_plane()
    rows = build_rows(fabric, ViewFilter())
    status = FabricStatus(fabric, clock=lambda: NOW)
    status.apply(result("nic.ethtool", PLANE1_NIC, [
        (PLANE1_NIC, "pause_ratio.tx_prio3", 0.95, Verdict.FAIL)]), 20)
    port = "leaf-g00-r5-p1:swp6"  # node006's plane-1 NIC on rail 5
    assert port in fabric.members["leaf-g00-r5-p1"]
    status.apply(result("switch.pfc", "leaf-g00-r5-p1", [
        (port, "rate.rx.PFC3", 9000.0, Verdict.FAIL)]), 20)
    snapshot = status.snapshot(1, PollState.WAITING)
    health = shown(rows, snapshot)
    assert health["node003@3"] is Health.FAIL and health["node003"] is Health.FAIL
    assert health["node006@5"] is Health.FAIL and health["leaf-g00-r5-p1"] is Health.FAIL
    assert health["leaf-g00-r5-p0"] is Health.UNKNOWN  # plane 0 is untouched
    assert {k for k, h in health.items() if h is Health.FAIL} == {
        "node003@3", "node003", "node006@5", "leaf-g00-r5-p1"}
    link = next(k for k in fabric.members if fabric.kinds[k] is Kind.HOST_LINK
                and PLANE1_NIC in fabric.members[k])
    assert snapshot.of(link) is Health.FAIL


def test_find_and_filters_reach_plane1() -> None:
    """`/` selects a plane-1 leaf or NIC in a drawn cell; `rail:3` and `leaf:<plane-1 leaf>`
    keep plane 1's leaf and NIC in sight."""
    fabric, graph = two_plane()
    for view in (ViewFilter(), parse_filter(fabric, graph, "rail:3"),
                 parse_filter(fabric, graph, f"leaf:{PLANE1_LEAF}")):
        rows = build_rows(fabric, view)
        keys = {c.key for r in rows for c in r.cells}
        assert PLANE1_LEAF in keys and f"uplinks:{PLANE1_LEAF}" in keys, view
        assert {PLANE1_LEAF, PLANE1_NIC} <= reachable(fabric, rows), view
    assert fabric.find(PLANE1_LEAF) == [PLANE1_LEAF]
    cell = fabric.cell_of(PLANE1_NIC)
    assert cell is not None and (cell.node, cell.rail, cell.plane) == ("node003", 3, "plane1")
    # what a runbook opened on the NIC is given: its own leaf and port, not plane 0's
    place = Place.of_element(fabric, PLANE1_NIC)
    assert (place.node, place.leaf, place.port) == ("node003", PLANE1_LEAF, cell.port)
    assert cell.port is not None and cell.port.startswith(PLANE1_LEAF)


@pytest.mark.parametrize("template", sorted(p.stem for p in shipped_templates().glob("*.yaml")))
def test_no_element_of_a_shipped_template_is_drawn_nowhere(template: str) -> None:
    """Every node, NIC, host link, leaf, spine and spine link of each shipped template is in
    some cell of the matrix at 80 columns (selected by it, or colouring it)."""
    fabric = FabricMap.build(FabricGraph(
        load_topology(shipped_templates() / f"{template}.yaml").topology))
    seen = reachable(fabric, build_rows(fabric, ViewFilter(), 80))
    drawn = (Kind.NODE, Kind.NIC, Kind.HOST_LINK, Kind.LEAF, Kind.SPINE, Kind.SPINE_LINK)
    missing = {k for k, kind in fabric.kinds.items() if kind in drawn} - seen
    assert not missing, (len(missing), sorted(missing)[:5])


def test_planes_named_without_group_numbers_draw_their_nodes_once() -> None:
    """Leaves that name only their plane (no group number) are drawn a row per plane, named
    so, with the nodes once under both rows."""
    topology = load_topology(TEMPLATE).topology
    switches = tuple(s.model_copy(update={"group": None}) for s in topology.switches)
    fabric = FabricMap.build(FabricGraph(topology.model_copy(update={"switches": switches})))
    rows = build_rows(fabric, ViewFilter())
    labels = [r.label for r in rows]
    assert labels.index("plane0 leaf") < labels.index("plane1 leaf") < labels.index("node001")
    assert labels.count("node001") == 1 and "" not in fabric.group_nodes
    assert of_kind(fabric, Kind.LEAF) | of_kind(fabric, Kind.NIC) <= reachable(fabric, rows)


def plane_app() -> FabtuiApp:
    settings = dataclasses.replace(load_settings(), topology=TEMPLATE, simulated=True,
                                   topology_is_default=False)
    return FabtuiApp(Workspace(settings), live=False, clock=lambda: NOW)


@asynctest
async def test_at_80x24_plane1_is_on_screen_and_its_failure_leads_the_detail() -> None:
    """The app on the template: both planes' leaf rows and every node on the first screen; a
    failing plane-1 NIC reds its node's rail-3 cell, and the cell's detail panel says which
    plane, the failing one first; `/` finds the NIC in that cell."""
    app = plane_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.status.apply(result("nic.ethtool", PLANE1_NIC, [
            (PLANE1_NIC, "pause_ratio.tx_prio3", 0.95, Verdict.FAIL)]), 60)
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        screen.apply(app.status.snapshot(1, PollState.WAITING, 1.0))
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert any(line.startswith("g00 p0 leaf") for line in lines), lines
        assert any(line.startswith("g00 p1 leaf") for line in lines), lines
        assert all(any(line.startswith(f"node00{n}") for line in lines) for n in range(1, 9))
        node = next(line for line in lines if line.startswith("node003"))
        assert node.split()[1:6] == ["✗", "?", "?", "?", "✗"], node
        matrix = screen.query_one(FabricMatrix)
        assert matrix.select_key("node003@3")
        await pilot.pause()
        text = screen_text(app)
        assert "node003 r3: 2 planes" in text
        planes = [line.split("▏")[-1].split() for line in text.splitlines()
                  if "plane" in line and "mlx5_" in line]
        assert [p[1:] for p in planes] == [["fail", "plane1", "mlx5_7"],
                                           ["unknown", "plane0", "mlx5_6"]], text
        await pilot.press("slash", *PLANE1_NIC, "enter")
        await pilot.pause()
        assert matrix.selected_key == "node003@3"
        assert "nothing called" not in screen_text(app)
