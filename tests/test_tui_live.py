"""The app on the real demo fabric: the live poller through the workspace fan-out, probe-now,
and the demo screen's fault injection."""

from __future__ import annotations

import pytest

from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.demo import DemoScreen
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.views.status import Health
from tests.support.tui_support import asynctest, screen_text, until, workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")

PLAN = ("nic.ethtool@node[001,003,006]:*", "switch.pfc@leaf-g00-r4")
"""A few nodes and the storm's leaf: enough to tell the storm from its neighbours, quickly."""


@asynctest
async def test_pfc_storm_fails_the_nic_and_its_leaf_port_within_two_polls() -> None:
    """With --scenario pfc-storm the storming NIC and its leaf port show as failing within two
    polls, and selecting them shows their pause counters."""
    ws = workspace(scenario="pfc-storm", scenario_chosen=True, poll=PLAN)
    app = FabtuiApp(ws, interval=0.2)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        await until(pilot, lambda: screen.snapshot.round >= 1 and
                    screen.snapshot.poll.value == "waiting", "the first poll")
        await until(pilot, lambda: screen.snapshot.of("node006:mlx5_4") is Health.FAIL and
                    screen.snapshot.of("leaf-g00-r4:Ethernet40") is Health.FAIL,
                    "the storm", then_idle=False)
        assert screen.snapshot.round <= 2
        assert screen.snapshot.of("node001:mlx5_4") is Health.OK
        await pilot.press("slash", *"node006:mlx5_4", "enter")
        await pilot.pause()
        text = screen_text(app)
        assert "scenario pfc-storm" in text.splitlines()[1]
        assert "pause_ratio.tx_prio3" in text and "rate.rx.PFC3" in text
        await pilot.press("r")
        await until(pilot, lambda: any("nic.ethtool on node006:mlx5_4: fail" in str(n.message)
                                       for n in app._notifications), "the probe-now notice")
    assert app.poller is not None and app.poller.cancelled


@asynctest
async def test_the_demo_screen_injects_a_fault_the_poller_then_sees() -> None:
    ws = workspace(scenario="healthy", scenario_chosen=True, poll=PLAN)
    app = FabtuiApp(ws, interval=0.2)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        await until(pilot, lambda: screen.snapshot.round >= 1, "the first poll")
        assert screen.snapshot.of("node003:mlx5_1") is Health.OK
        await pilot.press("slash", *"node003:mlx5_1", "enter", "d")
        await until(pilot, lambda: isinstance(app.screen, DemoScreen), "the demo screen")
        demo = app.screen
        assert isinstance(demo, DemoScreen)
        assert demo.component == "node003:mlx5_1"
        from textual.widgets import Select

        demo.query_one("#demo-fault", Select).value = "pfc-storm"
        await pilot.click("#demo-inject")
        # the poller may read the fault before the injecting worker's notice is shown
        await until(pilot, lambda: screen.snapshot.of("node003:mlx5_1") is Health.FAIL,
                    "the injected fault")
        await until(pilot, lambda: any("injected pfc-storm on node003:mlx5_1" in str(n.message)
                                       for n in app._notifications), "the demo's notice")
