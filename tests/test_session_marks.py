"""What a runbook session marks on the Fabric screen (`guided.touched`): the elements it worked
on, never a host its commands merely ran on (the scheduler host, the node holding a job log)
nor an instrument of a probe (a bandwidth test's peer NIC, the leaves a PFC scan found clean).

Each runbook's own test case runs on the simulated fabric (as `fabtui runbook test` runs it);
the marks are computed from the session as recorded in its journal, as the Fabric screen gets
them when a recorded session is opened."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fabtui.journal.store import Journal
from fabtui.paths import demo_topology, shipped_templates
from fabtui.runbooks.testing import run_test
from fabtui.views import guided
from fabtui.views.fabricmap import FabricMap
from tests.support.tui_support import workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")


def marks(tmp_path: Path, runbook: str, case: int = 0) -> frozenset[str]:
    """The Fabric-screen keys the `case`-th test of `runbook` marks once it has run."""
    ws = workspace()
    book = ws.runbook(runbook)
    outcome = asyncio.run(run_test(book, book.meta.tests[case], topology=demo_topology(),
                                   template_dirs=[shipped_templates()], catalog=ws.catalog,
                                   folder=tmp_path))
    assert outcome.passed, outcome.problems
    journal = Journal(tmp_path / "journal.sqlite")
    try:
        (session,) = journal.sessions()
        view = guided.SessionView.of(book, journal.events(session.id))
    finally:
        journal.close()
    return guided.touched(FabricMap.build(ws.graph()), book, view.scope)


def around(fabric: FabricMap, port: str) -> set[str]:
    """A port with its switch, optic, cable and far-end NIC and node."""
    cell = fabric.cell_of(port)
    assert cell is not None and cell.nic and cell.link
    return {port, port.split(":")[0], cell.link, cell.nic, cell.nic.split(":")[0],
            str(fabric.optic_of(port))}


def test_optic_replacement_marks_the_repaired_path_not_the_scheduler_host_nor_the_peer(
        tmp_path: Path) -> None:
    """The optic on leaf-g00-r3:Ethernet16 is swapped, node003 drained through `scontrol` on
    node001 and the repaired link measured against node001:mlx5_3: the marks are the port, its
    leaf, optic, cable and node003:mlx5_3; node001 and its rail-3 NIC are not (an on-call
    engineer would chase a healthy link)."""
    keys = marks(tmp_path, "optic-replacement")
    fabric = FabricMap.build(workspace().graph())
    assert keys == around(fabric, "leaf-g00-r3:Ethernet16")
    assert not {"node001", "node001:mlx5_3"} & keys


def test_nccl_hang_triage_marks_the_suspect_not_the_log_host(tmp_path: Path) -> None:
    """The job log is read on node001 (`log_node`) and node003 cordoned from it: the marks are
    the suspect NIC's path (node003:mlx5_5, its port, optic, cable, leaf), not node001."""
    keys = marks(tmp_path, "nccl-hang-triage")
    fabric = FabricMap.build(workspace().graph())
    assert keys == around(fabric, "leaf-g00-r5:Ethernet16")
    assert "node001" not in keys


def test_link_flap_marks_the_flapping_link_not_the_scheduler_host(tmp_path: Path) -> None:
    keys = marks(tmp_path, "link-flap")
    fabric = FabricMap.build(workspace().graph())
    assert keys == around(fabric, "leaf-g00-r1:Ethernet32")
    assert "node001" not in keys


def test_pfc_storm_marks_where_it_started_and_the_storming_port_not_the_leaves_scanned(
        tmp_path: Path) -> None:
    """The storm is read first on leaf-g00-r0 (the input), leaves r1 to r4 are scanned and the
    storm found behind leaf-g00-r4:Ethernet40: r1 to r3 showed nothing and are not marked."""
    keys = marks(tmp_path, "pfc-storm")
    fabric = FabricMap.build(workspace().graph())
    assert keys == around(fabric, "leaf-g00-r4:Ethernet40") | {"leaf-g00-r0"}
    assert not {"leaf-g00-r1", "leaf-g00-r2", "leaf-g00-r3"} & keys


def test_an_input_used_only_as_the_host_commands_run_on_is_a_place() -> None:
    """`scheduler_host` only says where `scontrol` runs; the drained `node` is also named by the
    command, so it is what the session works on."""
    ws = workspace()
    assert guided.places(ws.runbook("optic-replacement")) == {"scheduler_host"}
    assert guided.places(ws.runbook("link-flap")) == {"scheduler_host", "log_node"}
    assert guided.places(ws.runbook("pfc-storm")) == set()
