"""The spine-leaf-rail picture at any size: every layer drawn (aggregated when it does not fit),
within the view's width, on generated fabrics up to 1,024 nodes x 8 rails, at 80x24 and
160x50; and the app opening on such a fabric and answering keys."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pytest
from rich.cells import cell_len

from fabtui.config import load_settings
from fabtui.model.topology import Plane
from fabtui.model.verdict import Verdict
from fabtui.topology.export import dump_yaml
from fabtui.topology.generate import RailOptimizedParams, rail_optimized
from fabtui.topology.graph import FabricGraph
from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.widgets.detail import DetailPanel
from fabtui.tui.widgets.matrix import CELL, RAIL_AXIS, FabricMatrix, Row, build_rows, row_label
from fabtui.views.fabricmap import SET, FabricMap, ViewFilter, selection_elements
from fabtui.views.status import Health, PollState
from fabtui.workspace import Workspace
from tests.support.tui_support import NOW, asynctest, result, screen_text

SPINED = {"nodes": 1024, "spines": 32, "uplinks_per_leaf": 32}
"""1,024 nodes x 8 rails with a spine tier (32 groups, 256 leaves, 32 spines)."""
PLAIN = {"nodes": 1024, "spines": 0, "uplinks_per_leaf": 0}
"""Leaves only, named so (unnamed, a multi-group fabric gets its spine layer)."""
"""`fabtui topo generate rail-optimized --param nodes=1024`: leaves only (no spines)."""
PODS = {"nodes": 256, "spines": 8, "uplinks_per_leaf": 8, "pods": 2, "super_spines": 4,
        "uplinks_per_spine": 4}


@functools.cache
def fabric(**params: int) -> FabricMap:
    return FabricMap.build(FabricGraph(rail_optimized(RailOptimizedParams(**params))))


def picture(rows: list[Row]) -> list[Row]:
    """The rows above the first group's (the overview)."""
    return rows[:next(i for i, r in enumerate(rows) if r.label.startswith("g00"))]


def covered(rows: list[Row]) -> set[str]:
    return {k for r in rows for c in r.cells for k in c.health_keys}


@pytest.mark.parametrize("width", [44, 88, 300])
def test_every_layer_of_a_1024_node_fabric_is_drawn_within_the_width(width: int) -> None:
    """Spines (all 32, in at most two lines), every rail's uplinks and leaves (all 256 leaves),
    and no overview line wider than the view."""
    fab = fabric(**SPINED)
    rows = build_rows(fab, ViewFilter(), width)
    top = picture(rows)
    labels = [r.label for r in top]
    assert labels[0] == "spines" and "rails" in labels and "uplinks" in labels \
        and "leaves" in labels
    spine_rows = [r for r in top if any(c.key in fab.spines or c.key.startswith(f"{SET}spines")
                                        for c in r.cells)]
    assert 1 <= len(spine_rows) <= 2
    assert covered(spine_rows) == set(fab.spines)
    leaves = next(r for r in top if r.label == "leaves")
    assert [c.key for c in leaves.cells] == [f"{SET}leaves:r{r}" for r in range(8)]
    assert covered([leaves]) == {k for k, kind in fab.kinds.items() if kind.value == "leaf"}
    uplinks = next(r for r in top if r.label == "uplinks")
    assert covered([uplinks]) == {link for links in fab.leaf_uplinks.values() for link in links}
    label_width = max(len(n) for n in fab.nodes) + 1
    for row in top:
        drawn = len(row.heading) if row.heading is not None else sum(
            CELL + (len(c.caption) + 1 if c.caption else 0) for c in row.cells)
        # the rails' rows line up with the node rows: past their node column
        assert label_width + drawn <= max(width, label_width + RAIL_AXIS + 8 * CELL), row
    groups = [r.label for r in rows if r.label.endswith(" leaf")]
    assert len(groups) == 32  # every group keeps its own leaf row above its nodes


def test_a_narrow_view_aggregates_the_spines_and_says_how() -> None:
    fab = fabric(**SPINED)
    rows = picture(build_rows(fab, ViewFilter(), 44))
    cells = [c for r in rows for c in r.cells if c.key.startswith(f"{SET}spines:")]
    assert [c.key for c in cells[:2]] == [f"{SET}spines:1-2", f"{SET}spines:3-4"]
    assert any(r.heading == "32 spines, 2 a cell" for r in rows)
    assert selection_elements(fab, cells[0].key) == ["spine-01", "spine-02"]
    assert fab.label(cells[0].key) == "spines:1-2 (2)"


def test_a_fabric_of_leaves_only_says_it_has_no_spines() -> None:
    fab = fabric(**PLAIN)
    rows = build_rows(fab, ViewFilter(), 88)
    assert rows[0].label == "spines" and rows[0].heading == "none in the topology"
    assert not any(r.label in ("uplinks", "g00 up") for r in rows)  # nothing to show there
    assert covered([r for r in rows if r.label == "leaves"]) == \
        {k for k, kind in fab.kinds.items() if kind.value == "leaf"}


def test_super_spines_have_their_own_tier() -> None:
    fab = fabric(**PODS)
    assert len(fab.super_spines) == 4 and len(fab.spines) == 16
    rows = picture(build_rows(fab, ViewFilter(), 88))
    assert rows[0].label == "super-spines" and covered([rows[0]]) == set(fab.super_spines)
    assert covered([r for r in rows if r.label in ("spines", "")]) >= set(fab.spines)


def test_a_rail_filter_keeps_every_tier_and_the_rail() -> None:
    fab = fabric(**SPINED)
    rows = picture(build_rows(fab, ViewFilter("rail:3", None, frozenset({3})), 88))
    assert covered([r for r in rows if r.label in ("spines", "")]) == set(fab.spines)
    assert [c.key for r in rows if r.label == "leaves" for c in r.cells] == \
        [f"{SET}leaves:r3"]


# the app on a generated fabric ----------------------------------------------------------------
@pytest.fixture(scope="module")
def big_topology(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fabric") / "fabric-1024.yaml"
    path.write_text(dump_yaml(rail_optimized(RailOptimizedParams(**SPINED))))
    return path


def big_app(topology: Path) -> FabtuiApp:
    settings = dataclasses.replace(load_settings(), topology=topology, simulated=True,
                                   topology_is_default=False)
    return FabtuiApp(Workspace(settings), live=False, clock=lambda: NOW)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
@asynctest
async def test_the_1024_node_picture_shows_a_failing_spine_and_leaf(
        size: tuple[int, int], big_topology: Path) -> None:
    """A spine and a rail-5 leaf fail: the spine tier and the rail's leaves show ✗ on the first
    screen, whatever its size; selecting the leaves cell lists the rail's leaves."""
    app = big_app(big_topology)
    async with app.run_test(size=size) as pilot:
        spine_port = app.fabric.members["spine-07"][0]
        leaf_port = app.fabric.members["leaf-g12-r5"][0]
        app.status.apply(result("switch.counters", "spine-07", [
            (spine_port, "rate.rx_errors", 50.0, Verdict.FAIL)]), 60)
        app.status.apply(result("switch.pfc", "leaf-g12-r5", [
            (leaf_port, "rate.rx.PFC3", 9000.0, Verdict.FAIL)]), 60)
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        screen.apply(app.status.snapshot(1, PollState.WAITING, 1.0))
        await pilot.pause()
        lines = screen_text(app).splitlines()
        spine_lines = [line for line in lines[2:6] if "✗" in line]
        assert spine_lines and (lines[2].startswith("spines") or lines[3].startswith("spines"))
        leaves = next(line for line in lines if line.startswith("leaves "))
        matrix = app.screen.query_one(FabricMatrix)
        # at 80 columns the detail panel keeps its 46 % and the last rail scrolls out of
        # sight, said on the rails heading (`r7 →`); rail 5's ✗ is on the first screen
        _, hidden = matrix.hidden_rails(next(r for r in matrix.rows if r.rails))
        shown = 8 - len(hidden)
        assert shown > 5 and hidden == list(range(shown, 8))
        assert leaves[:matrix.size.width].split()[1:] == \
            (["?"] * 5 + ["✗", "?", "?"])[:shown], (leaves, matrix.size.width, hidden, lines)
        assert any(line.startswith(("rails ", f"r{shown} →" if hidden else "rails "))
                   for line in lines)
        row = next(i for i, r in enumerate(matrix.rows) if r.label == "leaves")
        matrix._move_to(row, 5)
        await pilot.pause()
        text = screen_text(app)
        assert "leaf-g12-r5" in text and "leaf-g00-r5" in text
        assert matrix.selected_key == f"{SET}leaves:r5"


@asynctest
async def test_the_1024_node_fabric_opens_and_answers_keys(big_topology: Path) -> None:
    """Opens, takes a full snapshot, goes to the last node, finds a node by name."""
    app = big_app(big_topology)
    async with app.run_test(size=(160, 50)) as pilot:
        for cell in app.fabric.attachments():
            app.status.apply(result("nic.ethtool", cell.nic, [
                (cell.nic, "rate.tx_prio3_pause", 0.0, Verdict.OK)]), 60)
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        screen.apply(app.status.snapshot(1, PollState.WAITING, 1.0))
        await pilot.pause()
        matrix = screen.query_one(FabricMatrix)
        assert screen.snapshot.of("node0777:mlx5_3") is Health.OK
        await pilot.press("end")
        await pilot.pause()
        assert matrix.selected_key == "node1024" and matrix.scroll_offset.y > 1000
        assert any(line.startswith("node1024") for line in screen_text(app).splitlines())
        await pilot.press("slash", *"node0777", "enter")
        await pilot.pause()
        assert matrix.selected_key == "node0777"
        assert any(line.startswith("node0777") for line in screen_text(app).splitlines())


# a custom topology's long group labels --------------------------------------------------------
EAST = "训练集群东区-pod-east-production"
"""A plane named in Chinese and English: 34 cells."""
WEST = "backup-pod-west-very-long-label-name"


@pytest.fixture(scope="module")
def long_labels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8 nodes in two groups whose leaves name a plane instead of a group number (the row
    labels are then the planes' names, as long as a topology makes them)."""
    topology = rail_optimized(RailOptimizedParams(nodes=8, nodes_per_leaf=4, spines=2,
                                                  uplinks_per_leaf=2))
    planes = {0: EAST, 1: WEST}
    switches = tuple(s.model_copy(update={"group": None, "plane": planes[s.group]})
                     if s.group is not None else s for s in topology.switches)
    topology = topology.model_copy(update={
        "switches": switches, "planes": (Plane(name=EAST), Plane(name=WEST))})
    path = tmp_path_factory.mktemp("fabric") / "long-labels.yaml"
    path.write_text(dump_yaml(topology), encoding="utf-8")
    return path


def cells(line: str) -> list[tuple[int, str]]:
    """(the cell it starts at, the character) for each character of `line` (a Chinese
    character is two cells)."""
    at, out = 0, []
    for char in line:
        out.append((at, char))
        at += cell_len(char)
    return out


@asynctest
async def test_a_long_group_label_is_cut_in_cells_its_row_stays_on_the_rails_and_reads_whole(
        long_labels: Path) -> None:
    """A plane's name as a group's label (`<plane> up`, `<plane> leaf`) was drawn whole at
    the start of its row: at 80x24 the row's cells were pushed off their rails (a leaf under
    the wrong rail, or out of sight), and a Chinese name, two cells a character, further.
    The group label is now cut in its middle, counted in cells, ` up`/` leaf` kept, every
    glyph of the row under its rail's `rN`; the detail panel of a leaf or its uplinks in that
    row says the whole label."""
    app = big_app(long_labels)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        screen.apply(app.status.snapshot(1, PollState.WAITING, 1.0))
        await pilot.pause()
        matrix = screen.query_one(FabricMatrix)
        region = matrix.scrollable_content_region
        strips = app.screen._compositor.render_strips()
        lines = [strips[y].crop(region.x, region.right).text
                 for y in range(region.y, region.y + min(region.height, len(matrix.rows)))]
        heading = next(line for line in lines if " node r0 " in line)
        rails = [at for at, char in cells(heading) if char == "r" and at > matrix.label_width]
        assert len(rails) >= 6, heading
        for name in (EAST, WEST):
            for tail in ("up", "leaf"):
                line = next(line for line in lines if line.startswith(name[:2])
                            and line.split()[1:2] == [tail])
                label = line[:line.index(f" {tail}")]
                assert label != name and "…" in label and name.startswith(label.split("…")[0])
                assert name.endswith(label.split("…")[1]), line
                glyphs = [at for at, char in cells(line)[len(label) + len(tail) + 1:]
                          if not char.isspace()]
                assert glyphs == rails[:len(glyphs)] and len(glyphs) == len(rails), \
                    (line, heading)
        for name in (EAST, WEST):
            leaf = next(leaf for leaf, group in app.fabric.leaf_groups.items() if group == name)
            for key in (leaf, f"uplinks:{leaf}"):
                assert matrix.select_key(key), key
                await pilot.pause()
                panel = screen.query_one(DetailPanel).content_region
                shown = [strips.crop(panel.x, panel.right).text for strips in
                         app.screen._compositor.render_strips()[panel.y:panel.bottom]]
                assert name in "".join("".join(shown).split()), (key, shown)


def test_group_labels_that_share_a_start_stay_apart_and_a_groups_rows_cut_alike() -> None:
    """Cut at the end, `pod-east-production-a` and `...-b` would both read `pod-eas…`: two
    groups under one label. Cut in the middle each keeps its end; its `up` and `leaf` rows
    show the same cut, and a label that fits is left whole."""
    shown = {tail: [row_label(Row(f"{g} {tail}", group=g), 14).rstrip()
                    for g in ("pod-east-production-a", "pod-east-production-b")]
             for tail in ("up", "leaf")}
    assert shown["leaf"][0] != shown["leaf"][1]
    assert [s.removesuffix(" leaf") for s in shown["leaf"]] == \
        [s.removesuffix(" up") for s in shown["up"]]
    assert all(cell_len(s) <= 13 and "…" in s for s in shown["leaf"] + shown["up"])
    assert row_label(Row("g00 leaf", group="g00"), 14) == "g00 leaf".ljust(14)
