"""The right runbook for the element (issue 37, Deliver 5), on the demo fabric playing the
nccl-hang scenario (node003 mlx5_5's optic MT24000043 in leaf-g00-r5:Ethernet16 is dead):

- a port that is down (admin up) FAILS in the switch-counters evaluator, as its dark optic
  fails in the DOM one (a down port was only a warning);
- the live view keeps a dark optic's findings on the optic (they were dropped: its metrics moved
  to the optic, its findings stayed on the port, which got no reading of that probe);
- `b` on the dead port, its optic or its matrix cell offers optic-replacement first, the port
  filled in (it offered major-incident, link-flap ... for the port's warning);
- the hand-over carries what the first runbook did: the node nccl-hang-triage cordoned is
  `drained_node` of optic-replacement, which then does not drain it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import Result
from textual.message import Message

from fabtui.model.verdict import Verdict
from fabtui.tui.app import FabtuiApp
from fabtui.tui.messages import OpenRunbook, SnapshotArrived
from fabtui.tui.screens.runbook_choice import RunbookChoiceScreen
from fabtui.views import guided
from fabtui.views.crosslinks import runbooks_for, with_members
from fabtui.views.fabricmap import FabricMap, selection_elements
from fabtui.views.status import FabricStatus, PollState
from fabtui.workspace import Workspace
from tests.support.tui_support import NOW, asynctest, screen_text, workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")

PORT = "leaf-g00-r5:Ethernet16"
OPTIC = "MT24000043"
PROBES = [("switch.counters", "leaf-g00-r5"), ("switch.dom_all", "leaf-g00-r5"),
          ("switch.fec", "leaf-g00-r5"), ("nic.ethtool", "node003:mlx5_5")]
"""What the live view polls (its default plan) on the dead link's two ends."""


def _readings(ws: Workspace, status: FabricStatus) -> None:
    async def read() -> None:
        for probe, target in PROBES:
            status.apply(await ws.run_probe(probe, target, {}), 1e9)

    asyncio.run(read())


def test_a_port_that_is_down_fails_not_warns() -> None:
    ws = workspace(scenario="nccl-hang", scenario_chosen=True)
    result = asyncio.run(ws.run_probe("switch.port_counters", PORT, {}))
    down = [m for m in result.metrics if m.name == "state_down"]
    assert [(m.component, m.verdict) for m in down] == [(PORT, Verdict.FAIL)]
    assert result.verdict is Verdict.FAIL
    healthy = workspace(scenario="healthy", scenario_chosen=True)
    assert not [m for m in asyncio.run(healthy.run_probe("switch.port_counters", PORT, {}))
                .metrics if m.name == "state_down"]


def test_a_dark_optic_keeps_its_findings_and_b_offers_optic_replacement_first() -> None:
    ws = workspace(scenario="nccl-hang", scenario_chosen=True)
    fabric = FabricMap.build(ws.graph())
    status = FabricStatus(fabric)
    _readings(ws, status)
    states = status.snapshot(1, PollState.WAITING).states
    assert fabric.optic_of(PORT) == OPTIC
    optic = [f.line for f in states[OPTIC].findings]
    assert f"error: {PORT}/lane1: rx_power_dbm = -inf dBm" in optic
    assert f"error: {PORT}: state_down = 1 (limit 1)" in [f.line for f in states[PORT].findings]
    for key in (OPTIC, PORT, "node003@5", "leaf-g00-r5"):
        elements = with_members(fabric, selection_elements(fabric, key))
        element, choices = runbooks_for(ws.library, fabric, states, elements)
        assert element == OPTIC, key
        assert choices[0].runbook == "optic-replacement", (key, [c.runbook for c in choices])
        assert choices[0].inputs == {"port": PORT}


class Recorder(FabtuiApp):
    """The app, keeping the runbooks it is asked to open instead of opening them."""

    def __init__(self, ws: Workspace, **kwargs: Any) -> None:
        super().__init__(ws, live=False, clock=lambda: NOW, **kwargs)
        self.requests: list[Message] = []

    async def on_open_runbook(self, message: OpenRunbook) -> None:
        self.requests.append(message)
        message.prevent_default()


@asynctest
async def test_b_on_the_dead_port_in_the_app_offers_the_repair_first() -> None:
    ws = workspace(scenario="nccl-hang", scenario_chosen=True)
    app = Recorder(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        for probe, target in PROBES:
            app.status.apply(await ws.run_probe(probe, target, {}), 1e9)
        app.screen.post_message(SnapshotArrived(app.status.snapshot(1, PollState.WAITING)))
        await pilot.press("slash", *PORT, "enter")
        await pilot.pause()
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, RunbookChoiceScreen), \
            [n.message for n in app._notifications]
        assert app.screen.choices[0].runbook == "optic-replacement"
        assert f"runbooks for {OPTIC}" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        (request,) = app.requests
        assert isinstance(request, OpenRunbook)
        assert (request.runbook, request.inputs) == ("optic-replacement", {"port": PORT})
        assert "rx_power_dbm = -inf" in request.why


def test_the_hand_over_carries_the_drained_node(run: Callable[..., Result],
                                                tmp_path: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """nccl-hang-triage cordons node003 and hands over: the command it prints opens
    optic-replacement with drained_node=node003, which skips its drain and drained gate."""
    monkeypatch.setenv("FABTUI_SIM_STATE", str(tmp_path / "state.json"))
    triage = run("--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage",
                 "--answer", "cordon=node003", "--answer", "restart=yes")
    assert "next: runbook optic-replacement" in triage.stdout, triage.output
    line = next(x for x in triage.stdout.splitlines() if x.startswith("hand over with: "))
    triage_id = workspace().sessions(1)[0].id
    assert line == ("hand over with: fabtui runbook run optic-replacement --input "
                    f"port={PORT} --input scheduler_host=node001 --input drained_node=node003 "
                    f"--handed-over-from {triage_id}")  # the journal links the two (issue 38)
    repair = run("runbook", "run", *line.removeprefix("hand over with: fabtui ").split()[2:])
    assert f"== handed over from session {triage_id} (nccl-hang-triage)" in repair.stdout
    assert repair.exit_code == 5, repair.output  # waiting at the next gate: shut the port
    assert "note: node003 was drained already (by the runbook that handed over): not " \
        "drained again." in repair.stdout
    assert "[skipped] drain: " in repair.stdout and "[skipped] drained: " in repair.stdout
    assert "waiting at gate shut-port" in repair.stdout
    ws = workspace()
    carried = guided.handover_inputs(ws.runbook("nccl-hang-triage"),
                                     ws.runbook("optic-replacement"),
                                     {"port": PORT, "drained_node": "node003"})
    assert carried == {"port": PORT, "drained_node": "node003"}
