"""A guided runbook session in the app, driven by keyboard: the optic-replacement runbook opened
on `PORT` from the Runbooks screen, a runbook of a test's own opened by id, and a wait until the
session asks something."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.dialogs import Form, Gate
from fabtui.tui.screens.runbooks import RunbooksScreen
from fabtui.tui.screens.session import SessionScreen
from fabtui.workspace import Workspace
from tests.support.tui_support import workspace

PORT = "leaf-g00-r3:Ethernet16"
"""The port whose optic the optic-replacement sessions replace."""


async def settle(pilot: Any, screen: SessionScreen, rounds: int = 600) -> None:
    """Wait until the session asks something (a dialog is up) or has nothing left queued."""
    for _ in range(rounds):
        await pilot.pause(0.05)
        if isinstance(pilot.app.screen, Gate | Form) or \
                (not screen.busy and screen._queue.empty()):
            break
    await pilot.pause()


async def open_optic_replacement(pilot: Any, app: FabtuiApp) -> SessionScreen:
    """2, search by symptom, enter, the inputs typed: the guided session opens."""
    await pilot.press("2")
    await pilot.pause()
    await pilot.press("slash", *"low rx power", "enter")
    await pilot.pause()
    library = app.screen
    assert isinstance(library, RunbooksScreen)
    assert library.shown[0].meta.id == "optic-replacement"
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, Form)
    await pilot.press(*PORT, "enter", "enter", "enter", "enter")  # its 4 inputs
    await pilot.pause()
    session = app.screen
    assert isinstance(session, SessionScreen)
    return session


def with_book(folder: Path, name: str, text: str) -> Workspace:
    """The healthy demo fabric, whose runbook library also holds `text` as runbook `name`
    (written into `folder`)."""
    (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return workspace(scenario="healthy", scenario_chosen=True,
                     runbook_dirs=(folder, *workspace().settings.runbook_dirs))


async def open_book(pilot: Any, app: FabtuiApp, name: str) -> None:
    """2, then runbook `name` opened from the Runbooks screen (its input form, or its session,
    is on screen after)."""
    await pilot.press("2")
    await pilot.pause()
    library = app.screen_stack[0]
    assert isinstance(library, RunbooksScreen)
    library.open_runbook(name)
    await pilot.pause()
