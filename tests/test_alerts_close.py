"""Closing an incident by hand (issue 40): `fabtui alerts close ID --reason ...` and the
Incidents screen's `c` go through one workspace API (`close_incident`); the close is journaled
with who, when and why; a closed incident leaves `alerts list` (shown with `--all`); its alerts
resolving, or Alertmanager sending the same firing again, do not reopen it; a new firing does.
A receiver running in another process honours a close made beside it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from textual.widgets import Label

from fabtui.alerts.incidents import CLOSED, IncidentBook
from fabtui.alerts.locate import Locator
from fabtui.alerts.payload import parse_notification
from fabtui.config import load_settings
from fabtui.errors import RequestError
from fabtui.journal.store import Journal
from fabtui.prom.labels import LabelMap
from fabtui.tui.screens.dialogs import Prompt
from fabtui.tui.screens.incidents import IncidentsScreen
from fabtui.workspace import Workspace
from fabtui.workspace.alerting import Receiver, close_incident
from tests.support.tui_support import asynctest, make_app, screen_text, until, workspace
from tests.test_alerts_grouping import FLAP, GRAPH, STORM, UPLINK, payload


def resolved(*alerts: dict[str, Any]) -> bytes:
    return payload(*[{**a, "status": "resolved"} for a in alerts], status="resolved")


def again(*alerts: dict[str, Any]) -> bytes:
    """The same alerts firing anew: Alertmanager gives a new firing a new `startsAt`."""
    return payload(*[{**a, "startsAt": "2026-12-05T04:00:00Z"} for a in alerts])


@pytest.fixture
def book(tmp_path: Path) -> IncidentBook:
    return IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))


def test_a_closed_incident_stays_closed_until_it_fires_again(book: IncidentBook,
                                                              tmp_path: Path) -> None:
    (opened,) = book.receive(parse_notification(payload(*FLAP))).opened
    closed = book.close(opened, "reseated the cable", "oncall")
    assert closed.status == CLOSED and book.open_incidents() == []
    # Alertmanager repeats the same firing (repeat_interval): still closed, said.
    receipt = book.receive(parse_notification(payload(*FLAP)))
    assert receipt.opened == [] and receipt.held == len(FLAP)
    assert "closed by hand" in receipt.line() and book.open_incidents() == []
    # A restarted receiver knows it too.
    restarted = IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))
    assert restarted.incidents[opened].status == CLOSED
    assert restarted.incidents[opened].closed_by == "oncall"
    assert restarted.incidents[opened].close_reason == "reseated the cable"
    assert restarted.receive(parse_notification(payload(*FLAP))).opened == []
    # Its alerts resolve: nothing reopens.
    restarted.receive(parse_notification(resolved(*FLAP)))
    assert restarted.open_incidents() == [] and restarted.incidents[opened].status == CLOSED
    # It fires again: the same incident opens again, with the close in its history.
    receipt = restarted.receive(parse_notification(again(*FLAP)))
    assert receipt.opened == [opened] and [i.id for i in restarted.open_incidents()] == [opened]
    assert restarted.incidents[opened].close_reason == "reseated the cable"
    kinds = [str(e.kind) for e in restarted.journal.events(opened)]
    assert kinds.index("incident_closed") < kinds.index("incident_reopened")


def test_a_closed_incident_fires_again_while_still_firing(book: IncidentBook) -> None:
    """Closed while two alerts fire; one resolves and fires again: the incident opens again
    holding both (the other never stopped), and resolves when both have."""
    (opened,) = book.receive(parse_notification(payload(*FLAP))).opened
    book.close(opened, "worked around", "oncall")
    book.receive(parse_notification(resolved(FLAP[0])))
    assert book.receive(parse_notification(again(FLAP[0]))).opened == [opened]
    book.receive(parse_notification(payload(FLAP[1])))  # the other, sent again unchanged
    assert len(book.incidents[opened].firing) == 2
    book.receive(parse_notification(resolved(FLAP[1], {**FLAP[0],
                                                       "startsAt": "2026-12-05T04:00:00Z"})))
    assert book.incidents[opened].status == "resolved"


def test_close_needs_an_open_incident_and_a_reason(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n')
    ws = Workspace(load_settings(tmp_path / "config.toml"))
    (opened,) = ws.alerts.receive(parse_notification(payload(*UPLINK))).opened
    with pytest.raises(RequestError, match="say why"):
        close_incident(ws, opened, "  ", "oncall")
    assert close_incident(ws, opened[:-1], "spine port replaced", "oncall").status == CLOSED
    with pytest.raises(RequestError, match="is closed, not open"):
        close_incident(ws, opened, "again", "oncall")
    ws.close()


def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    return path


def test_cli_close_while_a_receiver_runs_beside_it(tmp_path: Path,
                                                   run: Callable[..., Result]) -> None:
    """The receiver (`fabtui alerts serve`, its own book in memory) keeps receiving after
    `fabtui alerts close` wrote to the journal: the closed incident is not resolved, reopened
    or appended to under it, and nothing is lost."""
    lines: list[str] = []
    served = Workspace(load_settings(config(tmp_path)))
    receiver = Receiver(served, lines.append)
    assert receiver.receive(payload(*STORM, *UPLINK))[0] == 200
    cfg = str(config(tmp_path))
    listed = json.loads(run("--config", cfg, "alerts", "list", "--json").output)
    storm = next(i for i in listed if i["suspect"] == "node006:mlx5_4")

    missing = run("--config", cfg, "alerts", "close", storm["id"])
    assert missing.exit_code == 2 and "--reason" in missing.stderr
    done = run("--config", cfg, "alerts", "close", storm["id"], "--reason",
               "storm source drained")
    assert done.exit_code == 0, done.output
    assert f"closed {storm['id']} (node006:mlx5_4) by " in done.output
    assert done.output.rstrip().endswith(": storm source drained")

    # The receiver gets the storm's alerts resolved, then a new alert elsewhere.
    assert receiver.receive(resolved(*STORM))[0] == 200
    assert receiver.receive(payload(*FLAP))[0] == 200
    assert any("changed in another process" in line for line in lines)
    assert receiver.book.incidents[storm["id"]].status == CLOSED

    listed = json.loads(run("--config", cfg, "alerts", "list", "--json").output)
    assert sorted(i["suspect"] for i in listed) == ["leaf-g00-r1:Ethernet32",
                                                   "leaf-g00-r6:Ethernet80"]
    everything = run("--config", cfg, "alerts", "list", "--all")
    assert "closed" in everything.output and "node006:mlx5_4" in everything.output
    shown = json.loads(run("--config", cfg, "alerts", "show", storm["id"], "--json").output)
    assert shown["status"] == CLOSED and shown["close_reason"] == "storm source drained"
    assert shown["closed_by"] and shown["closed_at"] is not None
    text = run("--config", cfg, "alerts", "show", storm["id"]).output
    assert f"closed by {shown['closed_by']} at " in text
    again_ = run("--config", cfg, "alerts", "close", storm["id"], "--reason", "x", "--json")
    assert again_.exit_code == 2 and "is closed, not open" in again_.stderr
    served.close()


@asynctest
async def test_close_on_the_incidents_screen_asks_why_and_esc_cancels() -> None:
    ws = workspace()
    receiver = Receiver(Workspace(ws.settings), lambda _line: None)
    assert receiver.receive(payload(*STORM), "test")[0] == 200
    assert receiver.receive(payload(*UPLINK), "test")[0] == 200
    app = make_app(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, IncidentsScreen) and
                    len(app.screen.rows) == 2, "the incident list")
        screen = app.screen
        assert isinstance(screen, IncidentsScreen)
        newest = screen.rows[0]
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, Prompt), "the reason prompt")
        await pilot.press(*"not", "escape")  # Esc: nothing closed
        await until(pilot, lambda: app.screen is screen, "back on the list")
        assert len(screen.rows) == 2
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, Prompt), "the reason prompt")
        # A blank reason is refused in place: the prompt stays and says why (it had closed,
        # so the next keys typed as the reason ran the list's commands).
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, Prompt)
        assert "a reason is required" in str(app.screen.query_one("Label.hint", Label).render())
        await pilot.press(*"optic swapped", "enter")
        await until(pilot, lambda: len(screen.rows) == 1, "the closed incident gone")
        assert newest.suspect not in [r.suspect for r in screen.rows]
        assert "1 open incident(s)" in screen_text(app)
    book = Workspace(ws.settings).alerts
    closed = book.incidents[newest.id]
    assert closed.status == CLOSED and closed.close_reason == "optic swapped"
    (event,) = [e for e in book.journal.events(newest.id) if e.kind == "incident_closed"]
    assert event.data.model_dump()["operator"]
