"""Type-to-search on the Runbooks and Cases lists, driven as a newcomer drove them at 80x24:
letters and digits typed on the list go into the search (typing never runs a command there,
`q` never quits), none lost when they come in one burst (a tmux paste), and the library list's
titles cut with `…` once the sessions table takes its height."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from textual import events
from textual.keys import _character_to_key
from textual.widgets import DataTable, Input

from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.cases import CasesScreen
from fabtui.tui.screens.runbooks import RunbooksScreen
from fabtui.tui.screens.session import SessionScreen
from tests.support.guided import open_optic_replacement, settle
from tests.support.tui_support import asynctest, make_app, until, utc, workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from utc(monkeypatch)


async def interrupted_at_gate(pilot: Any, app: FabtuiApp) -> str:
    """optic-replacement opened, run to its first gate, esc at the gate: interrupted."""
    session = await open_optic_replacement(pilot, app)
    await pilot.press("g")
    await settle(pilot, session)
    await pilot.press("escape")
    await settle(pilot, session)
    assert session.session is not None
    return session.session


async def on_the_library_list(pilot: Any, app: FabtuiApp) -> RunbooksScreen:
    """`2`, `esc esc down`: the reviewer's way onto the list."""
    await pilot.press("2")
    await pilot.pause()
    await pilot.press("escape", "escape", "down")
    await pilot.pause()
    library = app.screen
    assert isinstance(library, RunbooksScreen)
    return library


def burst(app: FabtuiApp, text: str) -> None:
    """`text`'s keys queued at once, as a terminal delivers a paste or fast typing."""
    for character in text:
        app.post_message(events.Key(_character_to_key(character), character))


@asynctest
async def test_typing_uplink_on_the_runbooks_list_searches_and_resumes_nothing() -> None:
    app = make_app(workspace(scenario="optic-degrading", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        session_id = await interrupted_at_gate(pilot, app)
        library = await on_the_library_list(pilot, app)
        assert [r.id for r in library.banner] == [session_id]
        await pilot.press(*"uplink")
        await pilot.pause()
        assert app.screen is library, "a letter typed on the list ran a command"
        assert not any(isinstance(s, SessionScreen) for s in app.screen_stack)
        assert library.query_one("#rb-search", Input).value == "uplink"
        # the list's commands are on ctrl keys: ctrl+r still resumes it
        library.query_one("#rb-list", DataTable).focus()
        await pilot.press("ctrl+r")
        await pilot.pause(0.3)
        assert isinstance(app.screen, SessionScreen) and app.screen.session == session_id


@asynctest
async def test_a_burst_typed_on_the_runbooks_list_loses_no_letter_or_digit() -> None:
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        for text in ("optic", "leaf-g00-r5:Ethernet16"):
            library = await on_the_library_list(pilot, app)
            search = library.query_one("#rb-search", Input)
            search.value = ""
            library.query_one("#rb-list", DataTable).focus()
            await pilot.pause()
            burst(app, text)
            await pilot.pause(0.2)
            assert app.screen is library and app.current_mode == "runbooks"
            assert search.value == text


@asynctest
async def test_q_typed_on_the_cases_list_searches_and_never_quits() -> None:
    app = make_app(workspace())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3")
        screen = app.screen
        assert isinstance(screen, CasesScreen)
        await until(pilot, lambda: screen.shown_query == "", "the library listing")
        await pilot.press(*"pfc", "enter", "down")
        await pilot.pause()
        await pilot.press(*"qos")
        await pilot.pause()
        assert app.return_code is None and app.is_running, "q quit the app"
        assert app.screen is screen
        assert screen.query_one("#case-query", Input).value == "pfcqos"


@asynctest
async def test_the_library_titles_fit_once_the_sessions_table_shows() -> None:
    """The list's columns fit its width with the sessions table shown: a title cut there ends
    in `…` (fit_data_table's cut), never by the scrollbar at the edge."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await interrupted_at_gate(pilot, app)
        library = await on_the_library_list(pilot, app)
        await pilot.pause(0.2)
        table = library.query_one("#rb-list", DataTable)
        assert library.rows, "the sessions table shows"
        used = sum(column.get_render_width(table) for column in table.columns.values())
        assert used <= table.scrollable_content_region.width


@asynctest
async def test_a_view_number_typed_first_on_a_list_switches_views_as_the_tab_bar_says() -> None:
    """`3` typed on the Runbooks list opens Cases (the tab bar reads `3 Cases`); a digit in a
    burst typed after a letter goes into the search (`leaf-g00-r5`)."""
    app = make_app(workspace())
    async with app.run_test(size=(80, 24)) as pilot:
        library = await on_the_library_list(pilot, app)
        await pilot.press("3")
        await pilot.pause()
        assert isinstance(app.screen, CasesScreen)
        await pilot.press("f2")  # (Cases has the focus in its search field: `2` is text there)
        await pilot.pause()
        assert library.is_current
        library.query_one("#rb-list", DataTable).focus()
        await pilot.pause()
        burst(app, "r5")
        await pilot.pause()
        await pilot.pause()
        assert library.is_current
        assert library.query_one("#rb-search", Input).value.endswith("r5")
