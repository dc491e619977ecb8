"""The probe console: probes run for real on the demo fabric (the simulator answers them), at
80x24 and 160x50; the snapshots use results posted as messages so their timing is fixed."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from fabtui.model.probe import ProbeResult
from fabtui.model.verdict import Verdict
from fabtui.parsers import registry
from fabtui.sim.latency import LATENCY_VAR
from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.dialogs import Prompt
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.screens.probes import ConsoleResult, ConsoleRunEnded, ProbeConsole
from fabtui.tui.widgets.busbw_plot import EXPECTED, SERIES, plot_rows
from fabtui.views.console import BusbwSeries, busbw_series, parse_request, result_tables
from tests.support.site_probes import DANGER_PROBE
from tests.support.tui_support import (
    assert_snapshot,
    asynctest,
    make_app,
    screen_text,
    utc,
    workspace,
)

pytestmark = pytest.mark.usefixtures("sim_in_process")

SIZES = [(80, 24), (160, 50)]


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from utc(monkeypatch)


async def open_console(app: FabtuiApp, pilot: Pilot[None], probe: str | None,
                       target: str) -> ProbeConsole:
    console = ProbeConsole(probe, target)
    await app.push_screen(console)
    await pilot.pause()
    return console


async def run_and_wait(pilot: Pilot[None], console: ProbeConsole, count: int = 1) -> None:
    """Press enter in the target field and wait until the run has ended."""
    await pilot.press("enter")
    for _ in range(300):
        await pilot.pause(0.05)
        if not console.running and console.outcome is not None:
            break
    await pilot.pause()
    assert console.outcome == "done", console.outcome
    assert len(console.results) == count


@pytest.mark.parametrize("size", SIZES)
@asynctest
async def test_a_healthy_sweep_shows_ok_badges(size: tuple[int, int]) -> None:
    """nic.ethtool on every NIC of a node of the healthy demo: one ok row per NIC and the
    count as a badge (glyph and word)."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=size) as pilot:
        console = await open_console(app, pilot, "nic.ethtool", "node001:*")
        await run_and_wait(pilot, console, count=8)
        text = screen_text(app)
        assert "✓ ok 8" in text
        assert all(r.verdict is Verdict.OK for r in console.results)
        assert f"✓ ok  nic.ethtool on {console.results[0].target}" in text
        assert "✗" not in text
        console.query_one("#console-results").focus()
        await pilot.press("down")
        await pilot.pause()
        assert console.shown is console.results[1]
        assert f"✓ ok  nic.ethtool on {console.results[1].target}" in screen_text(app)


@asynctest
async def test_the_palette_has_the_console_s_actions() -> None:
    """ctrl+p on the console finds its actions by name: `raw` shows the raw output."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        console = await open_console(app, pilot, "nic.ethtool", "node001:mlx5_0")
        await run_and_wait(pilot, console)
        await pilot.press("ctrl+p", *"raw")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert console.has_class("raw")
        assert "$ ethtool -S" in screen_text(app)


@pytest.mark.parametrize("size", SIZES)
@asynctest
async def test_the_storming_leaf_fails_switch_pfc_from_the_fabric_screen(
        size: tuple[int, int]) -> None:
    """Under pfc-storm, the storming leaf selected on the fabric screen and `c` open the console
    on switch.pfc there; the run shows fail, naming the port that receives the pauses."""
    app = make_app(workspace(scenario="pfc-storm", scenario_chosen=True))
    async with app.run_test(size=size) as pilot:
        await pilot.press("slash", *"leaf-g00-r4", "enter")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        console = app.screen
        assert isinstance(console, ProbeConsole)
        assert (console.probe, console.target) == ("switch.pfc", "leaf-g00-r4")
        await run_and_wait(pilot, console)
        text = screen_text(app)
        assert console.results[0].verdict is Verdict.FAIL
        assert "✗ fail  switch.pfc on leaf-g00-r4" in text
        assert "✗ fail  leaf-g00-r4:Ethernet40  pause_share.rx.PFC3 = " in text
        assert "Port Rx" in text  # the parser's own table


@pytest.mark.parametrize("size", SIZES)
@asynctest
async def test_all_reduce_shows_the_plot_the_raw_output_and_goes_back(
        size: tuple[int, int]) -> None:
    """nccl.all_reduce: busbw against size with the expected line for 8xH100 (476 GB/s); `o`
    shows the raw output and hides it again; esc goes back to the fabric."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        console = await open_console(app, pilot, "nccl.all_reduce", "node001")
        await run_and_wait(pilot, console)
        text = screen_text(app)
        assert "╌ expected 476" in text
        expected_line = next(line for line in text.splitlines() if "╌╌╌" in line)
        assert expected_line.lstrip().startswith("476")
        assert any("\u2801" <= ch <= "\u28ff" for ch in text)  # the braille series
        assert "16G" in text and "8B" in text  # the largest message is named
        await pilot.press("o")
        await pilot.pause()
        raw = screen_text(app)
        assert "# nccl-tests version" in raw and "$ /opt/nccl-tests/build/all_reduce_perf" in raw
        assert "╌ expected" not in raw
        await pilot.press("o")
        await pilot.pause()
        assert "# nccl-tests version" not in screen_text(app)
        await pilot.press("o", "escape")  # esc first hides the raw output ...
        await pilot.pause()
        assert isinstance(app.screen, ProbeConsole)
        await pilot.press("escape")  # ... then goes back
        await pilot.pause()
        assert isinstance(app.screen, FabricScreen)


@asynctest
async def test_closing_the_console_cancels_its_run() -> None:
    """A run still going when the console closes is cancelled, not left running."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    # A simulated device answers in milliseconds: made slow (as a slow management network is),
    # the sweep is surely still running when the console closes, however loaded the machine.
    saved = os.environ.get(LATENCY_VAR)
    os.environ[LATENCY_VAR] = "30"
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            console = await open_console(app, pilot, "nic.ethtool", "node*:*")
            await pilot.press("enter", "escape")
            for _ in range(200):
                await pilot.pause(0.05)
                if console.outcome is not None:
                    break
            assert console.outcome == "cancelled"
            assert isinstance(app.screen, FabricScreen)
    finally:
        os.environ.pop(LATENCY_VAR)
        if saved is not None:
            os.environ[LATENCY_VAR] = saved


@asynctest
async def test_a_bad_target_says_why() -> None:
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        console = await open_console(app, pilot, "nic.ethtool", "nosuch*")
        await pilot.press("enter")
        for _ in range(100):
            await pilot.pause(0.05)
            if console.outcome is not None:
                break
        await pilot.pause()
        assert console.outcome and console.outcome != "done"
        assert "nic.ethtool on nosuch*: " in screen_text(app)


def _all_reduce() -> ProbeResult:
    ws = workspace(scenario="healthy", scenario_chosen=True)
    return asyncio.run(ws.run_probe("nccl.all_reduce", "node001", {}))


@pytest.mark.parametrize("size", SIZES)
@asynctest
async def test_console_snapshot(size: tuple[int, int]) -> None:
    """The console with an all_reduce result (the demo fabric's, posted as messages)."""
    result = await asyncio.to_thread(_all_reduce)
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=size) as pilot:
        console = await open_console(app, pilot, "nccl.all_reduce", "node001")
        console.run_no, console.running = 1, True
        console.post_message(ConsoleResult(1, result))
        console.post_message(ConsoleRunEnded(1, None, 2.5))
        await pilot.pause()
        console.query_one("#console-body").focus()
        await pilot.pause()
        assert "1 result in 2.5s" in screen_text(app)
        await assert_snapshot(pilot, f"console-all-reduce-{size[0]}x{size[1]}")


# headless parts -------------------------------------------------------------------------------
def test_result_tables_are_the_parsers_then_the_metrics() -> None:
    """switch.pfc: the parser's tables (what `fabtui parse --table` prints), then metrics;
    nic.ethtool's parser describes none, so its metrics table stands alone."""
    ws = workspace(scenario="pfc-storm", scenario_chosen=True)
    pfc = asyncio.run(ws.run_probe("switch.pfc", "leaf-g00-r4", {}))
    parser = registry.get("pfc-counters")
    own = parser.tables(parser.model.model_validate(pfc.parsed))
    tables = result_tables(pfc, ws.probe("switch.pfc"))
    assert own and tables[:len(own)] == own
    metrics = tables[-1]
    assert [c.name for c in metrics.columns] == ["verdict", "component", "metric", "value",
                                                  "unit"]
    assert ("leaf-g00-r4:Ethernet40", "pause_share.rx.PFC3") in \
        {(r[1], r[2]) for r in metrics.rows if r[0] == "fail"}
    ethtool = asyncio.run(ws.run_probe("nic.ethtool", "node001:mlx5_0", {}))
    assert [t.title for t in result_tables(ethtool, ws.probe("nic.ethtool"))] == [("metrics",)]


def test_busbw_series_and_its_plot() -> None:
    result = _all_reduce()
    series = busbw_series(result)
    assert series is not None and series.collective == "all_reduce"
    assert series.expected == 476.0
    assert series.points[0][0] == 8 and series.points[-1][0] == 16 << 30
    assert busbw_series(result.model_copy(update={"parsed": {"kind": "pfc-counters"}})) is None
    rows = plot_rows(series, 60, 12)
    assert len(rows) == 12 and all(len(t) == len(k) == 60 for t, k in rows[:1])
    dashed = [i for i, (_, kinds) in enumerate(rows) if EXPECTED in kinds]
    assert len(dashed) == 1 and rows[dashed[0]][0].startswith("  476")
    # the largest sizes sit on the expected line's row, the smallest on the bottom row
    assert rows[dashed[0]][1].rstrip("t").endswith(SERIES)
    assert rows[-3][1][6] == SERIES


def test_the_plot_in_ascii_and_without_an_expected_figure() -> None:
    series = BusbwSeries("alltoall", ((1024, 1.0), (1 << 20, 40.0), (1 << 30, 90.0)), None)
    rows = plot_rows(series, 40, 10, ascii_only=True)
    assert all(t.isascii() for t, _ in rows)
    assert not any(EXPECTED in k for _, k in rows) and "expected" not in rows[0][0]
    assert rows[-1][0].split() == ["1K", "32K", "1M", "32M", "1G"]




@asynctest
async def test_a_dangerous_probe_runs_only_once_its_target_is_typed(tmp_path: Path) -> None:
    """As `fabtui probe run`: a `danger` probe asks for its target typed; anything else does
    not run it."""
    (tmp_path / "danger.toml").write_text(DANGER_PROBE, encoding="utf-8")
    app = make_app(workspace(scenario="healthy", scenario_chosen=True, probe_dirs=(tmp_path,)))
    async with app.run_test(size=(80, 24)) as pilot:
        console = await open_console(app, pilot, "nic.danger_test", "node001:mlx5_0")
        await pilot.press("enter")
        await pilot.pause()
        prompt = app.screen
        assert isinstance(prompt, Prompt)
        await pilot.press(*"node001", "enter")
        await pilot.pause(0.3)
        assert console.run_no == 0 and console.outcome is None
        assert app.screen is console
        await pilot.press("r")
        await pilot.pause()
        await pilot.press(*"node001:mlx5_0", "enter")
        for _ in range(100):
            await pilot.pause(0.05)
            if console.outcome is not None:
                break
        assert console.outcome == "done" and console.results[0].probe == "nic.danger_test"


@asynctest
async def test_parameters_follow_the_target() -> None:
    """`node001 max_bytes=1G`: the run's command and its plot end at 1 GiB."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(160, 50)) as pilot:
        console = await open_console(app, pilot, "nccl.all_reduce", "node001 max_bytes=1G")
        await run_and_wait(pilot, console)
        assert " -e 1G " in console.results[0].command
        series = busbw_series(console.results[0])
        assert series is not None and series.points[-1][0] == 1 << 30
        assert "1G" in screen_text(app).split("└")[1]


def test_parse_request() -> None:
    assert parse_request("  node[001-004] ") == ("node[001-004]", {})
    assert parse_request("node001 path='/var/log/my job.log' n=2") == \
        ("node001", {"path": "/var/log/my job.log", "n": "2"})
    assert parse_request("") == ("", {})
    for bad, why in (("node001 node002", "a list is written node001,node002"),
                     ("node001 =3", "a parameter is name=value"),
                     ("node001 path='open", "cannot read")):
        with pytest.raises(ValueError, match=why):
            parse_request(bad)


@asynctest
async def test_a_big_sweep_draws_only_what_shows_and_sorts_worst_first() -> None:
    """2,000 results: the table draws only the lines on screen; the cursor picks the result
    shown; `s` puts the failures first with the cursor staying on its row, and back."""
    from fabtui.tui.widgets.results import SweepTable
    from tests.support.tui_support import result

    results = [result("nic.ethtool", f"node{n // 8 + 1:03d}:mlx5_{n % 8}", [
        (f"node{n // 8 + 1:03d}:mlx5_{n % 8}", "rate.tx_prio3_pause", 0.0,
         Verdict.FAIL if n % 500 == 250 else Verdict.OK)]) for n in range(2000)]
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(100, 30)) as pilot:
        console = await open_console(app, pilot, "nic.ethtool", "node*:*")
        console.run_no, console.running = 1, True
        for each in results:
            console.post_message(ConsoleResult(1, each))
        console.post_message(ConsoleRunEnded(1, None, 3.0))
        await pilot.pause()
        table = console.query_one(SweepTable)
        assert len(table.rows) == 2000 and table.rendered < 100
        assert "✗ fail 4  ✓ ok 1996" in screen_text(app)
        table.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        assert console.shown is results[2]
        await pilot.press("s")
        await pilot.pause()
        assert table.selected == 2 and console.shown is results[2]
        await pilot.press("home")
        await pilot.pause()
        assert console.shown is results[250]
        assert [table.order[i] for i in range(5)] == [250, 750, 1250, 1750, 0]
        text = screen_text(app)
        assert "node032:mlx5_2  ✗ fail" in text
        await pilot.press("s")
        await pilot.pause()
        assert table.order[:3] == [0, 1, 2] and table.selected == 250


@asynctest
async def test_the_console_opened_without_a_probe_starts_with_none_picked() -> None:
    """`c` with nothing selected opens the console with no probe picked (`Select.NULL`; Textual's
    `Select.BLANK` is an unrelated widget flag and an illegal value): enter asks for a probe."""
    from textual.widgets import Select

    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        console = await open_console(app, pilot, None, "")
        assert console.query_one("#probe-select", Select).value is Select.NULL
        console.action_run()
        await pilot.pause()
        assert any("pick a probe first" in str(n.message) for n in app._notifications)
        assert console.results == []
