"""From the app, `R` writes the newest session's report (the same one `fabtui report` builds) and
says where; with no session it says so instead."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fabtui.cli import cli
from tests.support.tui_support import asynctest, make_app, workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")


@pytest.fixture
def faulty_session() -> str:
    """A customer-acceptance session on the optic-degrading demo (run before the app opens)."""
    ran = CliRunner().invoke(cli, ["--scenario", "optic-degrading", "runbook", "run",
                                   "customer-acceptance", "--answer", "idle=yes"])
    assert ran.exit_code == 1, ran.output  # the optic fails the hand-over
    return workspace().sessions(1)[0].id


@asynctest
async def test_with_no_session_r_says_so() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("R")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert any("no session recorded" in n.message for n in app._notifications)


@asynctest
async def test_r_writes_the_newest_sessions_report_and_says_where(faulty_session: str) -> None:
    ws = workspace()
    app = make_app(ws)
    path = ws.settings.data_dir / "reports" / f"{faulty_session}.html"
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("R")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert any(str(path) in n.message for n in app._notifications)
    html = path.read_text()
    assert "hand-over FAILS" in html and "MT24000027" in html
