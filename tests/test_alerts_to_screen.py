"""A webhook posted to the receiver shows as an incident on the Incidents screen by itself
(issue 40, "from webhook to an incident on screen"): the receiver is the HTTP one `fabtui alerts
serve` runs, with its own workspace (as in its own process); the app is on the Incidents screen
and no key is pressed after the post.

What this test cannot catch: a slower refresh. It waits up to a minute (`until`'s limit, for a
loaded CI machine) and has no timed assertion, so a screen that took 30 s instead of 0.1 s to
show the incident still passes. The speed (the goal: at most 2 s from the POST to the suspect
on screen) is guarded by benchmarks/alert_to_screen.py, whose smoke mode (`--smoke`) CI runs
and which prints its figure beside a bare Textual app's.
"""

from __future__ import annotations

import asyncio
import urllib.request

from fabtui.alerts.present import summary
from fabtui.alerts.receiver import AlertReceiver
from fabtui.tui.screens.incidents import IncidentsScreen
from fabtui.workspace import Workspace
from fabtui.workspace.alerting import Receiver
from tests.support.tui_support import asynctest, make_app, screen_text, until, workspace
from tests.test_alerts_grouping import FLAP, payload


def post(url: str, body: bytes) -> int:
    request = urllib.request.Request(url, data=body, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return int(answer.status)


@asynctest
async def test_a_posted_webhook_shows_on_the_incidents_screen_without_a_key() -> None:
    ws = workspace()
    served = Workspace(ws.settings)  # the receiver's own, as `fabtui alerts serve` has
    receiver = Receiver(served, lambda _line: None)
    server = AlertReceiver(receiver.receive, lambda _line: None, port=0, listing=lambda: [
        summary(i) for i in receiver.book.open_incidents()]).start()
    app = make_app(ws)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("A")
            await until(pilot, lambda: isinstance(app.screen, IncidentsScreen) and
                        "no open incidents" in screen_text(app), "the empty list")
            screen = app.screen
            assert isinstance(screen, IncidentsScreen)
            status = await asyncio.to_thread(post, f"http://127.0.0.1:{server.port}/alerts",
                                             payload(*FLAP))
            assert status == 200
            await until(pilot, lambda: "leaf-g00-r1:Ethernet32" in screen_text(app),
                        "the incident on screen", then_idle=False)
            assert app.screen is screen  # no key, no other screen
            text = screen_text(app)
            assert "1 open incident(s), 2 alert(s) firing" in text
            assert "suspect: leaf-g00-r1:Ethernet32 (port)" in text
    finally:
        server.stop()
        served.close()
