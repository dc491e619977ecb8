"""Gates that forgive, in the app (issue 37, Deliver 1), driven by keyboard on the demo fabric
playing optic-degrading: `n` at "Is node003 drained?" leaves the session waiting at that gate
(journaled, not finished), the next `g` asks it again and the drain is not run twice; the
library's banner offers the waiting session and `u` resumes it; a typo at a typed confirmation
is asked again in the dialog; `x` abandons with a reason."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fabtui.model.events import BlockFinished
from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.dialogs import Gate, Prompt
from fabtui.tui.screens.runbooks import RunbooksScreen
from fabtui.tui.screens.session import SessionScreen
from tests.support.guided import PORT, open_optic_replacement, settle
from tests.support.tui_support import asynctest, make_app, screen_text, utc, workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from utc(monkeypatch)


async def to_gate(pilot: Any, screen: SessionScreen) -> Gate:
    await pilot.press("g")
    await settle(pilot, screen)
    gate = pilot.app.screen
    assert isinstance(gate, Gate), screen_text(pilot.app)
    return gate


def drains(app: FabtuiApp, session: str) -> int:
    """How many times the session ran its drain command."""
    return sum(1 for e in app.workspace.events(session)
               if isinstance(e.data, BlockFinished) and e.block == "drain")


@asynctest
async def test_no_at_drained_waits_and_resumes_and_a_typo_is_asked_again() -> None:
    app = make_app(workspace(scenario="optic-degrading", scenario_chosen=True))
    async with app.run_test(size=(160, 50)) as pilot:
        session = await open_optic_replacement(pilot, app)
        await to_gate(pilot, session)  # drain node003: typed
        await pilot.press(*"node003", "enter")
        await settle(pilot, session)
        gate = await to_gate(pilot, session)
        assert "Is node003 drained" in gate.prompt
        assert "n: not yet (the session waits at this gate)" in screen_text(app)
        await pilot.press("n")  # not yet: the normal answer on a real cluster
        await settle(pilot, session)
        session_id = session.session
        assert session_id is not None
        assert session.view.state == "waiting" and session.view.states["drained"] == "waiting"
        info = app.workspace.journal.session(session_id)
        assert info is not None and info[0].status == "waiting"
        text = screen_text(app)
        assert "waiting at gate drained: answered no to 'Is node003 drained" in text
        assert "n or g asks it again when ready · x abandons it" in text
        # back to the library: the banner offers it, u resumes it, g asks the gate again
        await pilot.press("escape")
        await pilot.pause(0.3)
        library = app.screen
        assert isinstance(library, RunbooksScreen)
        assert [r.id for r in library.banner] == [session_id]
        assert f"waits at a gate: optic-replacement session {session_id}" in screen_text(app)
        await pilot.press("ctrl+r")
        await pilot.pause(0.3)
        resumed = app.screen
        assert isinstance(resumed, SessionScreen) and resumed.session == session_id
        gate = await to_gate(pilot, resumed)
        assert "Is node003 drained" in gate.prompt  # the same gate, asked again
        await pilot.press("y")
        await settle(pilot, resumed)
        assert drains(app, session_id) == 1  # the drain was not run a second time
        # a typo at the typed confirmation is said and asked again; nothing is sent
        gate = await to_gate(pilot, resumed)
        assert gate.phrase == PORT
        await pilot.press(*"leaf-g00-r3:Ethernet61", "enter")
        await pilot.pause()
        assert app.screen is gate
        assert f"typed 'leaf-g00-r3:Ethernet61', not '{PORT}': type it again" \
            in screen_text(app)
        await pilot.press(*PORT, "enter")
        await settle(pilot, resumed)
        assert resumed.view.states["shut-port"] == "ok"
        assert resumed.view.state != "finished"


@asynctest
async def test_x_abandons_a_waiting_session_with_a_reason() -> None:
    app = make_app(workspace(scenario="optic-degrading", scenario_chosen=True))
    async with app.run_test(size=(160, 50)) as pilot:
        session = await open_optic_replacement(pilot, app)
        await to_gate(pilot, session)
        await pilot.press(*"no", "enter")  # no at a typed gate: not yet, it waits
        await settle(pilot, session)
        assert session.view.state == "waiting"
        assert session.view.states["drain"] == "waiting"
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, Prompt)
        await pilot.press(*"spare optic not on site", "enter")
        await settle(pilot, session)
        assert session.view.state == "finished" and session.view.outcome == "aborted"
        assert session.session is not None
        info = app.workspace.journal.session(session.session)
        assert info is not None and info[0].status == "aborted"
        await pilot.press("g")
        await settle(pilot, session)
        await pilot.pause(0.2)
        said = [n.message for n in app._notifications]
        assert any(m.startswith("the session has ended (aborted): f files it as a case")
                   for m in said), said
