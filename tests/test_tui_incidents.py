"""The Incidents screen (issue 40): `A` from any view lists the open incidents the receiver
journaled (here: hand-made Alertmanager payloads received by the workspace's `Receiver`, as
`fabtui alerts serve` does), the suspect first in the highlighted one's account, at 80x24;
an incident the receiver opens while the screen is up shows without a key; `o` asks for its
runbook, `s` shows the suspect on the Fabric screen, Esc goes back.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from fabtui.tui.app import FabtuiApp
from fabtui.tui.messages import OpenRunbook
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.screens.incidents import IncidentsScreen
from fabtui.tui.widgets.matrix import FabricMatrix
from fabtui.workspace import Workspace
from fabtui.workspace.alerting import Receiver
from tests.support.tui_support import NOW, asynctest, screen_text, until, workspace
from tests.test_alerts_grouping import STORM, UPLINK, payload


class Recorder(FabtuiApp):
    def __init__(self, ws: Workspace, **kwargs: Any) -> None:
        super().__init__(ws, live=False, clock=lambda: NOW, **kwargs)
        self.requests: list[Message] = []

    async def on_open_runbook(self, message: OpenRunbook) -> None:
        self.requests.append(message)
        message.prevent_default()


@asynctest
async def test_incidents_on_screen_at_80x24_by_keyboard() -> None:
    ws = workspace()
    lines: list[str] = []
    receiver = Receiver(Workspace(ws.settings), lines.append)  # the serve process's own
    assert receiver.receive(payload(*STORM), "test")[0] == 200
    app = Recorder(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, IncidentsScreen) and
                    app.screen.rows, "the incident list")
        text = screen_text(app)
        assert "1 open incident(s), 4 alert(s) firing" in text
        assert "node006:mlx5_4" in text
        assert "suspect: node006:mlx5_4 (nic)" in text
        # A second incident arrives while the screen is up: it shows by itself.
        assert receiver.receive(payload(*UPLINK), "test")[0] == 200
        screen = app.screen
        assert isinstance(screen, IncidentsScreen)
        await until(pilot, lambda: len(screen.rows) == 2, "the new incident")
        assert "leaf-g00-r6:Ethernet80" in screen_text(app)
        await pilot.press("down", "o")
        await until(pilot, lambda: app.requests, "the runbook request")
        (request,) = app.requests
        assert isinstance(request, OpenRunbook) and request.runbook == "pfc-storm"
        await until(pilot, lambda: not isinstance(app.screen, IncidentsScreen), "closed")
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, IncidentsScreen) and
                    len(app.screen.rows) == 2, "incidents again")
        await pilot.press("s")  # the newest first: the uplink
        await until(pilot, lambda: isinstance(app.screen, FabricScreen), "the Fabric screen")
        await until(pilot, lambda: "leaf-g00-r6" in str(
            app.screen.query_one(FabricMatrix).selected_key), "the suspect's leaf selected")
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, IncidentsScreen), "incidents again")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, FabricScreen), "back")
