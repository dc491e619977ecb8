"""A red node, cable or switch in the Fabric view says which of its parts made it red.

A node's health is the worst of its own readings and its NICs' and GPUs' (a roll-up): node003
read `✗ fail` in the detail panel with only its model, rack and counts under it, and nothing
said which of its eight NICs had failed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fabtui.tui.messages import SnapshotArrived
from fabtui.tui.widgets.detail import DetailPanel
from fabtui.views.status import PollState
from tests.support.tui_support import asynctest, healthy_round, make_app, storm, utc


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from utc(monkeypatch)


@asynctest
async def test_a_failing_node_names_the_nic_that_fails_it_at_80x24() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        healthy_round(app)
        storm(app, 5000.0)  # node006:mlx5_4 and its leaf port fail
        app.screen.post_message(SnapshotArrived(app.status.snapshot(1, PollState.WAITING, 1.5)))
        await pilot.press("slash", *"node006", "enter")
        await pilot.pause()
        detail = app.screen.query_one(DetailPanel)
        assert detail._last is not None and detail._last[0] == "node006"
        panel = detail.render_text(*detail._last).plain.splitlines()
        assert panel[0].split()[:3] == ["✗", "fail", "node006"], panel
        assert [line.split() for line in panel if line.split()[:1] == ["from"]] == [
            ["from", "✗", "node006:mlx5_4"]], panel

        await pilot.press("slash", *"node005", "enter")  # a healthy node: no such line
        await pilot.pause()
        assert detail._last is not None and detail._last[0] == "node005"
        assert "from" not in detail.render_text(*detail._last).plain
