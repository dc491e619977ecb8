"""Keys typed ahead of the app are done in order, not lost: an operator at a laggy terminal (a
loaded host, a slow management network) types the next key before the screen has caught up
with the last one. A session's `n` / `g` pressed while a block runs; `enter`, `enter` in the
case search before the focus has moved to the results."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from textual.widgets import Input

from fabtui.sim.latency import LATENCY_VAR
from fabtui.tui.screens.case_view import CaseView
from fabtui.tui.screens.cases import CasesScreen
from fabtui.tui.screens.session import SessionScreen
from tests.support.guided import open_optic_replacement, settle
from tests.support.tui_support import asynctest, make_app, screen_text, until, utc, workspace


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from utc(monkeypatch)


@pytest.fixture
def slow_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every leaf answers after 3 s: a block probing one runs that long."""
    monkeypatch.setenv(LATENCY_VAR, "0,leaf-*=3")
    assert os.environ[LATENCY_VAR]


@asynctest
async def test_next_pressed_while_a_block_runs_runs_after_it(slow_leaves: None) -> None:
    """`n` while the leaf's DOM probe runs is not refused: the session says it is typed ahead
    and runs the next block when the probe ends."""
    app = make_app(workspace(scenario="optic-degrading", scenario_chosen=True))
    async with app.run_test(size=(160, 50)) as pilot:
        session = await open_optic_replacement(pilot, app)
        assert isinstance(session, SessionScreen)
        await pilot.press("n")
        await settle(pilot, session)
        assert session.view.states["where"] == "ok"
        await pilot.press("n")
        await until(pilot, lambda: session.view.states["dom-before"] == "running",
                    "the DOM probe running")
        await pilot.press("n")
        await until(pilot, lambda: "(1 typed ahead)" in screen_text(app), "the key queued")
        assert "a block is running" not in screen_text(app)
        await until(pilot, lambda: session.view.states["nic-before"] not in ("pending",
                                                                              "running"),
                    "the block after the probe, run", seconds=60)
        assert session.view.states["dom-before"] not in ("pending", "running")
        await until(pilot, lambda: not session.busy, "the session idle")
        assert session.view.states["fec-before"] == "pending"  # one key, one block


@asynctest
async def test_enter_enter_in_the_case_search_opens_the_first_result() -> None:
    """The second `enter` reaches the query field before the focus has moved to the results:
    it opens the highlighted case, as it would have from the results."""
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        screen = app.screen
        assert isinstance(screen, CasesScreen)
        await until(pilot, lambda: screen.shown_query == "", "the library listing")
        await pilot.press(*"pfc storm pause")
        await until(pilot, lambda: screen.shown_query == "pfc storm pause", "the results")
        query = screen.query_one("#case-query", Input)
        assert app.focused is query
        for _ in range(2):  # both from the query field: the focus has not moved yet
            query.post_message(Input.Submitted(query, query.value))
        await until(pilot, lambda: isinstance(app.screen, CaseView), "the case view")
        view = app.screen
        assert isinstance(view, CaseView)
        assert view.case.id == "pfc-storm-node006-nic-stall-prevention"


@asynctest
async def test_file_pressed_while_a_block_runs_files_the_session_when_it_stops(
        slow_leaves: None) -> None:
    """`f` while the leaf's DOM probe runs: the session is filed once the probe has ended, and
    the draft opens to edit (it was refused before)."""
    from fabtui.tui.screens.case_edit import CaseEditor

    app = make_app(workspace(scenario="optic-degrading", scenario_chosen=True))
    async with app.run_test(size=(160, 50)) as pilot:
        session = await open_optic_replacement(pilot, app)
        await pilot.press("n")
        await settle(pilot, session)
        await pilot.press("n")
        await until(pilot, lambda: session.view.states["dom-before"] == "running",
                    "the DOM probe running")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, CaseEditor), "the filed draft",
                    seconds=60)
        assert session.view.states["dom-before"] not in ("pending", "running")
        editor = app.screen
        assert isinstance(editor, CaseEditor) and session.session in editor.case.sessions
