"""The journeys across the app's views, by keyboard alone, on the demo fabric (Pilot).

Journey 1 whole: a hung job's logs (`fabtui sim hang-logs --case optic`, the nccl-hang scenario
at a pinned time) -> the Triage view names the culprit -> `s` marks it on the Fabric screen ->
`o` opens `nccl-hang-triage` pre-filled -> run by keyboard (cordon node003, restart yes) -> it
ends on "next: runbook optic-replacement" -> `o` hands over: optic replacement opens with the
port carried -> the first session filed as a case (`f`), its root cause completed in the
editor, saved: the case is in the library. The components the session touched are marked on
the Fabric screen. Journey 3 from a live session, in the same run once the session has run to
its hand-over: `c` on the session screen shows the draft it would file beside the shipped case
for that symptom (one run, not two: the first half alone cost a second test 7 s of CPU).

Each journey prints how long it took (the closing note quotes it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabtui.cases.library import CaseLibrary
from fabtui.sim.hangjob import JobSpec, generate
from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.case_edit import CaseEditor
from fabtui.tui.screens.case_view import CaseView
from fabtui.tui.screens.dialogs import Form, Gate
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.screens.session import SessionScreen
from fabtui.tui.screens.triage import TriageScreen
from fabtui.views import guided
from fabtui.workspace import Workspace
from tests.support.tui_support import (
    NOW,
    asynctest,
    draft_with_similar,
    screen_text,
    until,
    utc,
    workspace,
)

pytestmark = pytest.mark.usefixtures("sim_in_process")

SIM_TIME = "960"
"""16 minutes into the nccl-hang scenario: the optic behind rank 21 is dead."""
PORT = "leaf-g00-r5:Ethernet16"
SHIPPED_CASE = "nccl-hang-optic-rail5-node003"


@pytest.fixture(autouse=True)
def _pinned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Local time and the demo fabric's clock pinned, the logs written under tmp_path."""
    monkeypatch.setenv("FABTUI_SIM_TIME", SIM_TIME)
    monkeypatch.chdir(tmp_path)
    yield from utc(monkeypatch)


def hang_app(*, cold_cases: bool = False) -> tuple[FabtuiApp, Workspace, Path]:
    ws = workspace(scenario="nccl-hang", scenario_chosen=True, cold_cases=cold_cases)
    logs = Path("logs")
    generate(logs, JobSpec(case="optic", ranks=64), ws.graph())
    return FabtuiApp(ws, live=False, clock=lambda: NOW), ws, logs


async def settle(pilot: Any, screen: SessionScreen) -> None:
    """Until the session asks something (a dialog is up) or has nothing left to run."""
    await until(pilot, lambda: isinstance(pilot.app.screen, Gate | Form)
                or (not screen.busy and screen._queue.empty()), "the session to settle")


async def to_gate(pilot: Any, screen: SessionScreen) -> Gate:
    await pilot.press("g")
    await settle(pilot, screen)
    gate = pilot.app.screen
    assert isinstance(gate, Gate), screen_text(pilot.app)
    return gate


async def triage_to_session(pilot: Any, app: FabtuiApp, logs: Path) -> SessionScreen:
    """`4`, the logs, enter: the culprit; `s`: marked on the Fabric screen; `4`, `o`: the
    nccl-hang-triage form pre-filled, accepted as it is: the guided session."""
    await pilot.press("4", *str(logs), "enter")
    await until(pilot, lambda: isinstance(app.screen, TriageScreen)
                and app.screen.chain is not None, "the triage and its chain")
    head = screen_text(app).splitlines()[2]
    assert "verdict: culprit found" in head and "culprit rank 21" in head
    await pilot.press("s")
    await until(pilot, lambda: isinstance(app.screen, FabricScreen), "the Fabric screen")
    text = screen_text(app)
    assert "◆ triage" in text.splitlines()[1]
    node003 = next(line for line in text.splitlines() if line.startswith("node003"))
    assert node003.split()[1].startswith("◆")
    await pilot.press("4")
    await until(pilot, lambda: isinstance(app.screen, TriageScreen), "back to triage")
    await pilot.press("o")
    await until(pilot, lambda: isinstance(app.screen, Form), "the runbook's inputs")
    form = app.screen
    assert isinstance(form, Form)
    text = screen_text(app)
    assert "nccl-hang-triage: inputs" in text and "node003:mlx5_5" in text
    await pilot.press(*["enter"] * 6)  # every field as the triage filled it
    await until(pilot, lambda: isinstance(app.screen, SessionScreen), "the guided session")
    session = app.screen
    assert isinstance(session, SessionScreen)
    assert session.book.meta.id == "nccl-hang-triage"
    assert session.inputs["suspect_nic"] == "node003:mlx5_5"
    assert session.inputs["log_node"] == "node003"
    return session


async def run_to_the_handover(pilot: Any, app: FabtuiApp, session: SessionScreen) -> None:
    """The gates answered by keyboard (cordon typed: node003; restarted: y) to the end."""
    gate = await to_gate(pilot, session)
    assert gate.phrase == "node003", screen_text(app)
    await pilot.press(*"node003", "enter")
    await settle(pilot, session)
    gate = await to_gate(pilot, session)
    assert gate.phrase is None and "restarted" in screen_text(app)
    await pilot.press("y")
    await settle(pilot, session)
    while session.view.state != "finished":
        await pilot.press("g")
        await settle(pilot, session)
        assert not isinstance(app.screen, Gate | Form), screen_text(app)
    assert session.view.path[-1] == "hand-over-to-optic-replacement"
    assert session.view.handover == "optic-replacement"
    assert "next: runbook optic-replacement (o opens it)" in screen_text(app)


@asynctest
async def test_journey_1_whole_from_the_hang_logs_to_the_filed_case() -> None:
    """Journeys 1 and 3 in one run, as an engineer lives them: the hang triaged to the
    session, the past case found from the live session, the hand-over, the case filed."""
    started = time.monotonic()
    app, ws, logs = hang_app(cold_cases=True)  # a first start: the library is built here
    async with app.run_test(size=(160, 50)) as pilot:
        triage = await triage_to_session(pilot, app, logs)
        await run_to_the_handover(pilot, app, triage)
        first = triage.session
        assert first is not None

        # Journey 3 from a live session: `c` opens the session's draft case (not stored),
        # the past optic case first among its similar cases; `2` goes back to the session.
        await pilot.press("c")
        view = await draft_with_similar(pilot, first)
        assert view.similar is not None
        assert view.similar.cases[0].id == SHIPPED_CASE
        assert SHIPPED_CASE in screen_text(app)
        await pilot.press("2")
        await until(pilot, lambda: app.screen is triage, "back to the session")

        # What the session touched is marked on the Fabric screen (origin "session").
        marked = app.highlights.by_origin["session"][0]
        assert {PORT, "node003:mlx5_5", "MT24000043"} <= set(marked)
        await pilot.press("1")
        await until(pilot, lambda: isinstance(app.screen, FabricScreen), "the Fabric screen")
        text = screen_text(app)
        assert "◆ triage, session" in text.splitlines()[1], text
        assert "◆ marked by session: runbook nccl-hang-triage" in text
        await pilot.press("2")
        await until(pilot, lambda: app.screen is triage, "back to the session")

        # The hand-over: one key, optic-replacement's form with the port carried over.
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, Form), "optic-replacement's inputs")
        text = screen_text(app)
        assert "optic-replacement: inputs" in text and PORT in text
        assert "hand-over from nccl-hang-triage" in text
        await pilot.press("enter", "enter", "enter", "enter")  # its 4 inputs
        await until(pilot, lambda: isinstance(app.screen, SessionScreen)
                    and app.screen is not triage, "the optic replacement session")
        optic = app.screen
        assert isinstance(optic, SessionScreen)
        assert optic.book.meta.id == "optic-replacement" and optic.inputs["port"] == PORT
        # what the triage did is carried: node003 is cordoned, so it is not drained again
        assert optic.inputs["drained_node"] == "node003"
        # ... and it is opened as the triage's hand-over: its journal links the two (issue 38)
        assert optic.from_session == first

        # File the triage session as a case: the editor opens on its draft.
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is triage, "the triage session again")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, CaseEditor), "the case editor")
        assert app.current_mode == "cases" and triage.filed is not None
        await pilot.press(*"optic MT24000043 dead on " + PORT, "tab",  # root cause first
                          *"optic swapped (optic-replacement)", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, CaseView), "the saved case")
        case_id = triage.filed
    stored = CaseLibrary(ws.settings.data_dir, engine=None).get(case_id)
    assert stored.sessions == [first]
    assert stored.root_cause == f"optic MT24000043 dead on {PORT}"
    assert stored.resolution == "optic swapped (optic-replacement)"
    assert "optic-replacement" in stored.runbooks
    print(f"journey 1 (pilot): {time.monotonic() - started:.1f} s")


def test_the_hand_over_carries_same_named_plain_values_never_secrets() -> None:
    """What `o` hands over: optic-replacement's `port` and `scheduler_host` from the triage
    session's scope; its result tables, lists, a value the pattern refuses and a secret not."""
    ws = workspace()
    triage, optic = ws.runbook("nccl-hang-triage"), ws.runbook("optic-replacement")
    scope = {"port": PORT, "scheduler_host": "node001", "soak_s": 30, "stuck": [13, 21],
             "dom": {"metrics": []}, "log_node": "node003"}
    assert guided.handover_inputs(triage, optic, scope) == {
        "port": PORT, "scheduler_host": "node001", "soak_s": "30"}
    assert guided.handover_inputs(triage, optic, {"scheduler_host": "bad host;rm"}) == {}
    secret = optic.meta.inputs[0].model_copy(update={"secret": True})
    hidden = optic.model_copy(update={"meta": optic.meta.model_copy(
        update={"inputs": [secret, *optic.meta.inputs[1:]]})})
    assert "port" not in guided.handover_inputs(triage, hidden, scope)
