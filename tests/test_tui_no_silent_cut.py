"""No value cut silently in the app (the quality bar: "usable at 80x24 with no value cut
silently"; a review found the app "cuts evidence values into wrong numbers"). Each test here
failed on the code before: a unit cut to three columns (`400Gb/`), values and findings beyond
the detail panel's first few dropped without a word, a probe's reason cut at 80 characters
and its other lines dropped, a plot's number cut to five digits, a runbook's steps cut
mid-name in the jump prompt."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.text import Text
from textual.pilot import Pilot

from fabtui.model.events import (
    BlockCommand,
    BlockFinished,
    BlockStarted,
    Event,
    EventKind,
    Payload,
    SessionStarted,
    StepStarted,
)
from fabtui.model.findings import Finding, Severity
from fabtui.model.probe import Metric, ProbeResult
from fabtui.model.table import Table
from fabtui.model.verdict import Verdict
from fabtui.render.table import cut_middle, display_width
from fabtui.tui.app import FabtuiApp
from fabtui.tui.messages import SnapshotArrived
from fabtui.tui.screens.demo import DemoScreen
from fabtui.tui.screens.dialogs import Prompt, TextPage
from fabtui.tui.screens.incidents import IncidentsScreen
from fabtui.tui.screens.probes import ConsoleResult, ConsoleRunEnded, ProbeConsole
from fabtui.tui.screens.runbook_choice import RunbookChoiceScreen
from fabtui.tui.screens.session import SessionScreen
from fabtui.tui.widgets.busbw_plot import plot_rows, y_label
from fabtui.tui.widgets.detail import FINDINGS, VALUES, DetailPanel
from fabtui.tui.widgets.fit_table import fold_text
from fabtui.tui.widgets.hanging import Hanging
from fabtui.tui.widgets.results import SweepTable
from fabtui.views.console import BusbwSeries
from fabtui.views.crosslinks import RunbookChoice
from fabtui.views.status import PollState
from tests.support.guided import open_book, with_book
from tests.support.tui_support import (
    NOW,
    asynctest,
    healthy_round,
    make_app,
    result,
    screen_text,
    until,
    utc,
    workspace,
)


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from utc(monkeypatch)


NIC = "node006:mlx5_4"


def metrics_result(probe: str, target: str,
                   metrics: list[tuple[str, float | str, str, Verdict]]) -> ProbeResult:
    """A result of (metric, value, unit, verdict) on `NIC`, a finding for each one failing."""
    when = datetime.fromtimestamp(NOW, UTC)
    findings = [Finding(rule="threshold", severity=Severity.ERROR,
                        message=f"{NIC}: {name} = {value}", component=NIC)
                for name, value, _, verdict in metrics if verdict is Verdict.FAIL]
    return ProbeResult(
        probe=probe, target=target, command="fake", started_at=when, ended_at=when,
        verdict=max((v for *_, v in metrics), key=lambda v: v.rank), findings=findings,
        metrics=[Metric(name=name, value=value, unit=unit, component=NIC, verdict=verdict)
                 for name, value, unit, verdict in metrics])


async def select_nic(app: FabtuiApp, pilot: Pilot[None]) -> str:
    """Post the round, select node006's rail-4 link (its NIC), return the screen."""
    app.screen.post_message(SnapshotArrived(app.status.snapshot(1, PollState.WAITING, 1.5)))
    await pilot.press("slash", *NIC, "enter")
    await pilot.pause()
    return screen_text(app)


# the detail panel -----------------------------------------------------------------------------
@asynctest
async def test_a_unit_beside_a_value_is_never_cut_at_80x24() -> None:
    """ibstat's port rate read `400Gb/` at 80 columns (the unit cut to three), a bandwidth
    `GB/` : a wrong unit beside a number. Every unit the probes give is whole now, the metric
    names giving way instead."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        healthy_round(app)
        app.status.apply(metrics_result("node.ibstat", "node006", [
            ("port.rate_gbps", 400.0, "Gb/s", Verdict.OK),
            ("busbw_peak", 371.2, "GB/s", Verdict.OK),
            ("rx_power_dbm", -2.5, "dBm", Verdict.OK),
            ("temperature_c", 51.0, "°C", Verdict.OK)]), 60)
        text = await select_nic(app, pilot)
        assert "400Gb/s" in text and "371.2GB/s" in text, text
        assert "-2.5dBm" in text and "51°C" in text, text


@asynctest
async def test_names_that_share_a_start_stay_apart_when_cut() -> None:
    """Cut at the end, `rate.rx_prio3_pause` and `rate.rx_prio3_marked` both read
    `rate.rx_prio3…` at 80 columns: two values under one name. Cut in the middle they differ."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        healthy_round(app)
        app.status.apply(metrics_result("nic.ethtool", NIC, [
            ("rate.rx_prio3_pause", 11.07, "/s", Verdict.OK),
            ("rate.rx_prio3_marked", 15.338, "/s", Verdict.OK)]), 60)
        text = await select_nic(app, pilot)
        lines = [line.split("▏")[-1].strip() for line in text.splitlines()]
        pause = next(line for line in lines if "11.07/s" in line)
        marked = next(line for line in lines if "15.34/s" in line)
        assert pause.split()[0] != marked.split()[0], (pause, marked)
        assert "…" in pause and pause.split()[0].endswith("_pause"), pause


@asynctest
async def test_values_and_findings_beyond_the_panel_are_counted_and_e_shows_them_whole() -> None:
    """The panel lists the first 8 values and 4 findings of an element; the rest were dropped
    without a word. It says how many more there are, and `e` lists every one whole."""
    app = make_app()
    names = [f"delta.rx_prio{p}_discard_events_phy" for p in range(8)] + \
        [f"rate.tx_prio{p}_pause" for p in range(4)]
    async with app.run_test(size=(80, 24)) as pilot:
        healthy_round(app)
        app.status.apply(metrics_result("nic.ethtool", NIC, [
            (name, 1.5 + number, "/s", Verdict.FAIL if number < 6 else Verdict.OK)
            for number, name in enumerate(names)]), 60)
        await select_nic(app, pilot)
        detail = app.screen.query_one(DetailPanel)
        assert detail._last is not None
        panel = detail.render_text(*detail._last).plain  # what the panel scrolls through
        assert f"+{len(names) - VALUES} more values (e: all)" in panel, panel
        assert f"+{6 - FINDINGS} more findings (e: all)" in panel, panel
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TextPage)
        body = app.screen.body
        assert isinstance(body, Hanging)  # a long line wraps under itself
        shown = body.text.plain
        for number, name in enumerate(names):
            assert f"{name} = {1.5 + number} /s" in shown, (name, shown)


def test_a_middle_cut_fits_its_columns_in_any_script() -> None:
    """Display columns, not characters: a Chinese name (two columns a character) is cut to
    the same width as an ASCII one, both ends kept."""
    for name in ("rate.rx_prio3_marked", "端口光模块接收功率读数", "光模块rx_power_dbm"):
        for width in range(1, 20):
            shown = cut_middle(name, width)
            assert display_width(shown) <= width, (name, width, shown)
            if display_width(name) <= width:
                assert shown == name
            else:
                assert shown.count("…") == 1, (name, width, shown)
                if width >= 5:  # room for a wide character on each side of the `…`
                    assert shown[0] == name[0] and shown[-1] == name[-1], (name, shown)
    assert cut_middle("rate.rx_prio3_marked", 14) == "rate.rx…marked"
    # a word cut short at the tail's start is kept whole (`x_prio3` read as a word of its own)
    assert cut_middle("pause_ratio.tx_prio3", 15) == "pause_…tx_prio3"


# the probe console's sweep ---------------------------------------------------------------------
TIMEOUT = ("ssh: connect to host node002.pod-a.cluster.example.internal port 22: Connection "
           "timed out after 10 s (ConnectTimeout=10, tried 3 times, last at 14:13:20)\n"
           "kex_exchange_identification: read: Connection reset by peer")


@asynctest
async def test_a_sweep_row_marks_its_cut_and_the_panel_shows_the_whole_reason() -> None:
    """A target's reason was cut at 80 characters and at the screen's edge without a mark,
    its other lines and findings dropped. At 80x24 the row ends in `…` and says what more
    there is; the result panel shows the error whole, every line."""
    storm = result("nic.ethtool", "node001:mlx5_4", [
        ("node001:mlx5_4", name, 9000.0, Verdict.FAIL)
        for name in ("rate.tx_prio3_pause", "rate.rx_prio3_pause", "pause_ratio.tx_prio3")])
    down = result("nic.ethtool", "node002:mlx5_4", [], error=TIMEOUT)
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        console = ProbeConsole("nic.ethtool", "node*:mlx5_4")
        await app.push_screen(console)
        await pilot.pause()
        console.run_no, console.running = 1, True
        console.post_message(ConsoleResult(1, storm))
        console.post_message(ConsoleResult(1, down))
        console.post_message(ConsoleRunEnded(1, None, 2.0))
        await pilot.pause()
        table = console.query_one(SweepTable)
        lines = screen_text(app).splitlines()
        row = next(line for line in lines if "node002:mlx5_4" in line).rstrip()
        assert row.endswith("…") and "ssh: connect to host node002" in row, row
        assert [r.why for r in table.rows] == [
            "node001:mlx5_4: rate.tx_prio3_pause = 9000.0 (+2 more findings)",
            TIMEOUT.splitlines()[0] + " (+1 line)"]
        table.focus()
        await pilot.press("down")
        await pilot.pause()
        assert console.shown is down
        headline = str(console.query_one(".headline").render())
        for line in TIMEOUT.splitlines():
            assert line in headline, headline


# the busbw plot -------------------------------------------------------------------------------
def test_the_plots_expected_figure_and_axis_figures_are_never_cut_into_other_numbers() -> None:
    """The legend was cut at the plot's width (`expected 47` for 476 at 45 columns) and a y
    figure to its first five digits (123456 read 12345). Narrow, the legend drops its words
    first and keeps the figure whole, or marks its cut; a figure past five digits is scaled."""
    series = BusbwSeries("all_reduce", ((8, 0.1), (1 << 20, 120.0), (16 << 30, 470.0)), 476.0)
    for width in range(12, 81):
        legend = plot_rows(series, width, 12)[0][0].rstrip()
        assert display_width(legend) <= width
        assert "expected 476" in legend or legend.endswith("…"), (width, legend)
    assert "expected 476" in plot_rows(series, 45, 12)[0][0]
    huge = BusbwSeries("all_reduce", ((8, 1.0), (1 << 30, 123456.0)), None)
    figures = [t[:5].strip() for t, k in plot_rows(huge, 40, 12)[1:-2] if t[:5].strip()]
    assert "12345" not in figures and any(f.endswith("k") for f in figures), figures
    assert [y_label(v) for v in (0, 476, 99_999, 123_456, 5e11)] == \
        ["    0", "  476", "99999", " 123k", " 500G"]


# a session's jump prompt ----------------------------------------------------------------------
LONG_BOOK = """---
id: many-steps
title: A runbook of many steps
summary: thirty steps, each one local command
symptoms: [many steps]
---

# Many steps

""" + "".join(f"## Check the rail {n} counters again\n\n```sh {{id=b{n}}}\necho {n}\n```\n\n"
              for n in range(1, 31))


@asynctest
async def test_the_jump_prompt_lists_whole_steps_and_says_how_many_more(tmp_path: Path) -> None:
    """`j` listed the steps as one text cut at 300 characters: the last one named was cut
    mid-name and the steps after it were not said to exist. It lists whole steps and says
    how many more there are and how to reach them."""
    app = make_app(with_book(tmp_path, "many-steps", LONG_BOOK))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_book(pilot, app, "many-steps")
        session = app.screen
        assert isinstance(session, SessionScreen)
        ids = [step.id for step in session.book.steps]
        assert len(ids) == 30
        await pilot.press("j")
        await pilot.pause()
        assert isinstance(app.screen, Prompt)
        hint = app.screen.hint
        listed = re.findall(r"(\d+)\. (\S+)", hint)
        assert listed and all(ids[int(n) - 1] == step for n, step in listed), hint
        assert f"+{30 - len(listed)} more ({len(listed) + 1}-30" in hint, hint


# one-line labels: Textual crops a `Label` at its container's edge without a mark -----------------
def on_screen(app: FabtuiApp) -> str:
    """The screen's words in one line (a wrapped text joined again, borders dropped)."""
    return " ".join(screen_text(app).replace("│", " ").split())


SUMMARY = ("rank 21 on node003 reported status 12 (IBV_WC_RETRY_EXC_ERR) talking to "
           "10.205.0.4, and 1 other rank on node002 reported the same status at 14:13:20")


@asynctest
async def test_a_parsers_title_and_notes_in_the_console_wrap_whole_at_80x24() -> None:
    """The console showed a parser's titles and notes (the NCCL triage's summary, LLDP's and
    dcgmi's footers) as one-line labels cropped at 80 columns: `talking to 10.205.0.4, an`."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        console = ProbeConsole("nic.ethtool", "node001:mlx5_4")
        await app.push_screen(console)
        await pilot.pause()
        table = Table.build((), title=["verdict: culprit found", SUMMARY],
                            notes=["note: " + SUMMARY.replace("rank 21", "rank 5")])
        await console.query_one("#console-body").mount_all(console._table_widgets(table))
        await pilot.pause()
        text = on_screen(app)
        assert SUMMARY in text and "note: " + SUMMARY.replace("rank 21", "rank 5") in text, text


@asynctest
async def test_why_a_runbook_is_offered_shows_whole_at_80x24() -> None:
    """`b`'s list said why its first runbook was offered in a one-line label, cropped at the
    box's edge at 80 columns."""
    why = ("error: leaf-g00-r5:Ethernet16/lane1: rx_power_dbm = -inf (limit -10.4 dBm) · "
           "matched optic, rx, power, dark in the symptoms of optic-replacement")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(RunbookChoiceScreen("leaf-g00-r5:Ethernet16", [RunbookChoice(
            "optic-replacement", "Replace an optic", {"port": "leaf-g00-r5:Ethernet16"}, why)]))
        await pilot.pause()
        assert why in on_screen(app), screen_text(app)


@asynctest
async def test_the_demo_says_which_scenario_plays_whole_at_80x24() -> None:
    """`d` named the scenario playing in a one-line label: `pfc-storm-stall-prevention`
    pushed its end past the box at 80 columns."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(DemoScreen([("pfc-storm-stall-prevention", "a storm, stopped")],
                                         ["pfc-storm"], "pfc-storm-stall-prevention",
                                         "node001:mlx5_0"))
        await pilot.pause()
        assert "playing: pfc-storm-stall-prevention · choose a scenario (restarts the demo's " \
            "clock):" in on_screen(app), screen_text(app)


def test_a_fold_into_fewer_lines_marks_what_it_leaves_out() -> None:
    """What a box of fixed height cannot hold ends in `…` on its last line (cell widths:
    Chinese text folds at two columns a character); lines past the room that fit on the last
    are joined there with ` · ` instead of being lost."""
    from rich.console import Console

    console = Console(width=200)
    text = Text("verdict: culprit found\nchain: ● rail\n" + "光模块接收功率过低 " * 6 +
                "\n2 suspect(s)")
    shown, cut = fold_text(text, 30, 3, console)
    lines = shown.plain.split("\n")
    assert cut and len(lines) == 3 and lines[-1].endswith("…"), lines
    assert all(display_width(line) <= 30 for line in lines), lines
    shown, cut = fold_text(Text("a\nb\nc\nlast"), 30, 3, console)
    assert not cut and shown.plain == "a\nb\nc · last"
    assert fold_text(text, 0, 3, console) == (text, False)


# a session's heads ----------------------------------------------------------------------------
WHY = ("error: leaf-g00-r3:Ethernet16/lane1: rx_power_dbm = -inf (limit -10.4 dBm) · matched "
       "optic, rx, power, dark, los in the symptoms of optic-replacement · opened from b on "
       "the Fabric screen")
MESSAGE = ("dom-before read: lanes 1, 2 and 4 dark (no light), lane 3 at -40 dBm, the module "
           "MT24000043 answering; the far end node003:mlx5_3 reads its own lanes lit")
COMMAND = "switch.dom on leaf-g00-r3:Ethernet16 lanes=1,2,3,4 thresholds=module"


def long_session() -> list[Event]:
    """A recorded optic replacement whose one block said a long message about a long
    command."""
    events: list[Event] = []

    def add(kind: EventKind, data: Payload, step: str | None = None,
            block: str | None = None) -> None:
        events.append(Event(session="20261205-010203-abcdef", seq=len(events),
                            at=1.0 + len(events), kind=kind, step=step, block=block, data=data))

    step, block = "record-the-evidence-at-both-ends", "dom-before"
    add(EventKind.SESSION_STARTED, SessionStarted(runbook="optic-replacement",
                                                  inputs={"port": "leaf-g00-r3:Ethernet16"}))
    add(EventKind.STEP_STARTED, StepStarted(), step=step)
    add(EventKind.BLOCK_STARTED, BlockStarted(kind="probe"), step, block)
    add(EventKind.BLOCK_COMMAND, BlockCommand(command=COMMAND), step, block)
    add(EventKind.BLOCK_FINISHED, BlockFinished(verdict=Verdict.FAIL, message=MESSAGE), step,
        block)
    return events


def box_lines(app: FabtuiApp, selector: str) -> list[str]:
    region = app.screen.query_one(selector).region
    return [line[region.x:region.right].rstrip()
            for line in screen_text(app).splitlines()[region.y:region.bottom]]


@asynctest
async def test_a_sessions_heads_mark_what_they_cannot_hold_and_the_why_reads_whole() -> None:
    """At 80x24 the session's head (3 lines) cropped why the runbook was opened, and the
    block's head (4 lines) its message and command, without a mark. Each box's last line ends
    in `…` now, and the why reads whole above the step's text."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.switch_mode("runbooks")
        session = SessionScreen(app.workspace.runbook("optic-replacement"),
                                recorded=long_session(), why=WHY)
        await app.push_screen(session)
        await pilot.pause()
        await pilot.pause()
        head = box_lines(app, "#session-head")
        assert len(head) == 3 and head[-1].endswith("…"), head
        pane = session.query_one("#prose")
        seen: dict[int, str] = {}
        for y in range(0, pane.virtual_size.height, max(1, pane.size.height)):
            pane.scroll_to(y=y, animate=False)  # the pane scrolls through the step's text
            await pilot.pause()
            top = int(pane.scroll_offset.y)
            seen.update((top + i, line) for i, line in enumerate(box_lines(app, "#prose")))
        prose = " ".join(" ".join(seen[i].rstrip("▁▂▃▄▅▆▇█ ") for i in sorted(seen)).split())
        assert f"why: {WHY}" in prose, prose
        block = box_lines(app, "#block-head")
        assert len(block) == 4 and block[-1].endswith("…"), block


@asynctest
async def test_the_incidents_status_line_wraps_whole_at_80x24() -> None:
    """`A` with no incident said `no open incidents (`fabtui alerts serve` writes them as
    Alertmanager sends alerts)` on one line of 80 columns: `... sends alerts)` was cropped."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, IncidentsScreen) and
                    "no open incidents" in screen_text(app), "the incidents screen")
        assert "(`fabtui alerts serve` writes them as Alertmanager sends alerts)" in \
            on_screen(app), screen_text(app)


RUN_ERROR = ("topology.yaml:41: node 'node0017' is not in the fabric: the targets of "
             "nic.ethtool are node*:mlx5_* (node001-node008), and the pattern 'node0017:*' "
             "matches none of them\nhint: a node range is written node[001-004], a glob "
             "node00*; `fabtui topology show` lists the nodes and NICs the fabric holds, and "
             "`fabtui probe show nic.ethtool` the targets it takes")


@asynctest
async def test_a_run_error_longer_than_the_status_ends_in_an_ellipsis_and_reads_whole() -> None:
    """A run that could not start said its error's first line only, in a status of 3 lines
    that cropped it unmarked at 80 columns. The status ends in `…` and the body says it all."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        console = ProbeConsole("nic.ethtool", "node0017:*")
        await app.push_screen(console)
        await pilot.pause()
        console.run_no, console.running = 1, True
        console.post_message(ConsoleRunEnded(1, RUN_ERROR, 0.2))
        await pilot.pause()
        status = box_lines(app, "#console-status")
        assert len(status) == 3 and status[-1].endswith("…"), status
        said = on_screen(app)
        for line in RUN_ERROR.splitlines():
            assert line in said, said
