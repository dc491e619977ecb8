"""The live view's default poll plan on the demo fabric: a link that is down before the first
poll moves no counter, so only a port-state read can show it (issue 40/39 follow-up: with
`leaf-g00-r2` dead the header read `NICs ✓64 host links ✓64`)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from fabtui.model.probe import ProbeResult
from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.model.verdict import Verdict
from fabtui.views.fabricmap import FabricMap, Layer
from fabtui.views.poller import DEFAULT_PLAN, PlanItem
from fabtui.views.status import FabricSnapshot, FabricStatus, Health, PollState
from fabtui.workspace.probesource import ProbeSource
from tests.support.tui_support import workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")

DEAD_LEAF = "leaf-g00-r2"


def first_poll(scenario: str) -> tuple[FabricMap, FabricSnapshot]:
    """The fabric's status after one round of the default plan on `scenario`."""
    ws = workspace(scenario=scenario, scenario_chosen=True)
    fabric = FabricMap.build(ws.graph())
    status = FabricStatus(fabric)
    source = ProbeSource(ws, [PlanItem.parse(p) for p in DEFAULT_PLAN], interval=10.0)

    async def one_round() -> None:
        async for update in source.poll():
            status.take(update)

    asyncio.run(one_round())
    assert not source.notes, source.notes  # every plan item ran
    return fabric, status.snapshot(1, PollState.WAITING)


def test_a_dead_leaf_fails_the_host_links_under_it_on_the_first_poll() -> None:
    fabric, snap = first_poll("leaf-down")
    under = [cell for cell in fabric.attachments() if cell.leaf == DEAD_LEAF]
    assert len(under) == len(fabric.nodes)  # rail 2 of every node
    for cell in under:
        assert cell.link is not None
        assert snap.of(cell.link) is Health.FAIL, cell
        assert snap.of(cell.nic) is Health.FAIL, cell.nic
        assert snap.of(cell.node) is Health.FAIL, cell.node
        what = {f.what for f in snap.states[cell.nic].findings if f.probe == "node.ibstat"}
        assert what == {"port.state = Down", "port.physical_state = Polling"}, what
    # the other rails' links are up: only the dead leaf's are counted
    assert snap.counts[Layer.HOST_LINKS].fail == len(under)
    assert snap.counts[Layer.NICS].fail == len(under)
    others = [c for c in fabric.attachments() if c.leaf != DEAD_LEAF]
    assert others and all(snap.of(c.nic) is Health.OK for c in others)


def test_a_healthy_fabric_stays_all_ok_with_the_link_state_read() -> None:
    fabric, snap = first_poll("healthy")
    for layer in (Layer.NICS, Layer.HOST_LINKS):
        count = snap.counts[layer]
        assert count.problems == 0 and count.ok == count.total, (layer, count)
    for cell in fabric.attachments():
        readings = snap.states[cell.nic].readings
        assert "node.ibstat" in readings and "nic.ethtool" in readings, cell.nic
        assert snap.states[cell.nic].values["port.state"].value == "Active"


def _failed(error: ErrorKind | None, message: str) -> ProbeResult:
    """`node.ibstat` on node001 whose transport ended with `error` (None: it answered, and
    its output could not be read)."""
    now = datetime.now(UTC)
    raw = TransportResult(target="node001", transport="ssh", command="ibstat", started_at=now,
                          ended_at=now, error=error, error_message=message, exit_status=127)
    return ProbeResult(probe="node.ibstat", target="node001", command="ibstat",
                       started_at=now, ended_at=now, verdict=Verdict.ERROR, raw=[raw],
                       error=message)


def test_a_node_without_ibstat_is_a_warning_that_says_so_not_a_node_down() -> None:
    """A RoCE node without infiniband-diags answers `ibstat: command not found`: the node is
    reachable, so it must not show unreachable; the warning names what could not be read."""
    ws = workspace(scenario="healthy", scenario_chosen=True)
    status = FabricStatus(FabricMap.build(ws.graph()))
    status.apply(_failed(ErrorKind.COMMAND, "ibstat: command not found"), 30.0)
    snap = status.snapshot(1, PollState.WAITING)
    assert snap.of("node001") is Health.WARN
    assert [f.line for f in snap.states["node001"].findings] == [
        "warning: node001: node.ibstat could not read: ibstat: command not found"]


def test_a_node_whose_answer_could_not_be_read_is_a_warning_not_a_node_down() -> None:
    ws = workspace(scenario="healthy", scenario_chosen=True)
    status = FabricStatus(FabricMap.build(ws.graph()))
    status.apply(_failed(None, "ibstat: no CA found in the output"), 30.0)
    snap = status.snapshot(1, PollState.WAITING)
    assert snap.of("node001") is Health.WARN
    assert [f.line for f in snap.states["node001"].findings] == [
        "warning: node001: node.ibstat could not read: ibstat: no CA found in the output"]


def test_a_node_that_did_not_answer_is_unreachable() -> None:
    ws = workspace(scenario="healthy", scenario_chosen=True)
    status = FabricStatus(FabricMap.build(ws.graph()))
    status.apply(_failed(ErrorKind.UNREACHABLE, "node001: connection refused"), 30.0)
    assert status.snapshot(1, PollState.WAITING).of("node001") is Health.UNREACHABLE
