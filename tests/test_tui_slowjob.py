"""The slow-job screen (issue 39), driven by Pilot: from Triage, `j` analyses the demo job's
window; the timeline shows the episode, the chain beside it ends at the planted optic; `o`
asks for the runbook of the deepest confirmed element, `s` marks the chain on the Fabric
screen, `f` files a draft case. And the view model it draws from, headless."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from textual.message import Message

from fabtui.model.slowjob import Series, SlowJobReport
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state
from fabtui.tui.app import FabtuiApp
from fabtui.tui.messages import OpenRunbook
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.screens.slowjob import SlowJobScreen
from fabtui.views import slowjob as view
from fabtui.views.fabricmap import FabricMap
from fabtui.workspace import Workspace
from fabtui.workspace.triaging import demo_slow_frame, slow_job
from tests.support.tui_support import (
    NOW,
    assert_snapshot,
    asynctest,
    screen_text,
    until,
    utc,
    workspace,
)
from tests.test_slow_report import analysis, fabric_chain

pytestmark = pytest.mark.usefixtures("sim_in_process")
OPTIC = "MT24000089"
"""The optic slow-spine-optic ages (its scenario's `expect`)."""


@pytest.fixture(autouse=True)
def _pinned(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The demo fabric's clock at the end of the scenario's hour."""
    monkeypatch.setenv("FABTUI_SIM_TIME", "3600")
    yield from utc(monkeypatch)


class Recorder(FabtuiApp):
    """The app, keeping the runbook requests instead of opening them."""

    def __init__(self, ws: Workspace, **kwargs: Any) -> None:
        super().__init__(ws, live=False, clock=lambda: NOW, **kwargs)
        self.requests: list[Message] = []

    async def on_open_runbook(self, message: OpenRunbook) -> None:
        self.requests.append(message)
        message.prevent_default()


def optic_workspace() -> Workspace:
    return workspace(scenario="slow-spine-optic", scenario_chosen=True)


def fixed_report() -> SlowJobReport:
    """slow-spine-optic's hour analysed on a fixed epoch (screen text independent of when the
    test runs)."""
    state = fresh_state(demo_topology(), find_scenario("slow-spine-optic"),
                        [shipped_templates()]).model_copy(update={"epoch": NOW - 3600})
    sim = build_sim(state)
    return slow_job(sim.graph, frame=demo_slow_frame(sim, start=0.0, end=3600.0))


def analysed(app: FabtuiApp) -> Any:
    return lambda: isinstance(app.screen, SlowJobScreen) and app.screen.report is not None


@asynctest
async def test_from_triage_to_the_optic_its_runbook_the_fabric_and_a_case() -> None:
    ws = optic_workspace()
    app = Recorder(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4", "escape", "j")
        await until(pilot, analysed(app), "the analysis", 120)
        text = screen_text(app)
        lines = text.splitlines()
        assert f"episode 1 → fabric optic {OPTIC}" in " ".join(lines[1:3])
        assert any(line.strip().startswith(f"● optic {OPTIC}") for line in lines)
        assert "1111" in text  # the episode marked under the timeline
        assert "digits: episodes" in text

        await pilot.press("o")
        await pilot.pause()
        (request,) = app.requests
        assert isinstance(request, OpenRunbook) and request.runbook == "optic-replacement"
        assert OPTIC in request.why
        # the optic sits in an uplink cable: the runbook starts at its leaf end
        assert request.inputs["port"] == "leaf-g00-r3:Ethernet64"

        await pilot.press("f")
        await until(pilot, lambda: any(c.id.startswith("slow-4242-")
                                       for c in ws.cases.store.all()), "the filed case", 60)
        case = next(c for c in ws.cases.store.all() if c.id.startswith("slow-4242-"))
        assert case.status.value == "draft" and OPTIC in case.components

        await pilot.press("s")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, FabricScreen)
        assert "◆ slow" in screen_text(app).splitlines()[1]


@asynctest
async def test_the_slow_job_screen_snapshot_at_80x24() -> None:
    app = Recorder(optic_workspace())
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(SlowJobScreen(fixed_report()))
        await until(pilot, analysed(app), "the analysis shown")
        await pilot.press("down", "down", "down")
        await assert_snapshot(pilot, "slow-job-80x24")


@asynctest
async def test_a_healthy_window_says_so_and_marks_nothing() -> None:
    ws = workspace(scenario="healthy", scenario_chosen=True)
    app = Recorder(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4", "escape", "j")
        await until(pilot, analysed(app), "the analysis", 120)
        text = screen_text(app)
        assert "no slow or jittery" in text and "●" not in text
        await pilot.press("o")
        await pilot.pause()
        assert app.requests == []  # nothing to open: it says so in a notice instead


def test_the_timeline_keeps_a_one_sample_spike_and_numbers_the_episodes() -> None:
    report = analysis(fabric_chain())
    t = [report.start + 15 * i for i in range(240)]
    v = [2.4] * 240
    v[5] = 9.0  # one sample, folded with three others into one column: still the top bar
    report = report.model_copy(update={"timeline": Series(t=t, v=v)})
    line = view.timeline(report, 60)
    assert line is not None and line.per_column == 4
    assert line.spark[1] == "█" and line.spark.count("█") == 1
    episode = report.chains[0].episode
    inside = [i for i in range(60) if episode.start <= t[min(4 * i + 3, 239)]
              and episode.end >= t[4 * i]]
    assert {line.marks[i] for i in inside} == {"1"}
    assert line.legend(2.4).startswith("step time 2.4-9 s, baseline 2.4 s; 240 samples")


def test_rows_say_what_is_confirmed_and_marks_skip_what_the_map_does_not_know() -> None:
    report = analysis(fabric_chain())
    texts = [r.text for r in view.rows(report)]
    assert texts[1] == "  ● job 4242 95%" and texts[-2].startswith("  ○ optic ")
    assert texts[2] == "  ● rail 3 80%"  # `rail rail 3` said once
    ws = optic_workspace()
    keys = view.mark_keys(FabricMap.build(ws.graph()), report)
    assert "rail 3" not in keys and "spine-01:Ethernet1/1" in keys
