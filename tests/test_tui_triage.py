"""Triage on screen and the links between the Fabric screen and the rest, driven by Pilot.

Journey 1's first half by keyboard on the demo fabric: a hung job's logs (the `optic` case of
`fabtui sim hang-logs`, the demo's nccl-hang scenario playing at a pinned time) -> the Triage
screen names the culprit rank, its NIC, leaf port and optic, with the evidence chain probed on
the demo fabric -> the Fabric screen marks those elements -> `o` asks for the suggested
runbook on the suspect. And from a Fabric element with findings (the pfc-storm scenario), the
runbooks for them one key away. `OpenRunbook` / `OpenCase` are recorded here: opening them is
the Runbooks and Cases screens' job.
"""

from __future__ import annotations

import asyncio
import io
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from rich.console import Console
from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList

from fabtui.model.chain import ChainLink, EvidenceChain
from fabtui.model.probe import Verdict
from fabtui.model.triage import Evidence, Suspect, TriageReport
from fabtui.sim.hangjob import JobSpec, generate
from fabtui.tui.app import FabtuiApp
from fabtui.tui.messages import Highlight, OpenCase, OpenRunbook, SnapshotArrived
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.screens.runbook_choice import RunbookChoiceScreen
from fabtui.tui.screens.triage import TriageScreen
from fabtui.tui.widgets.detail import DetailPanel
from fabtui.tui.widgets.hanging import hang
from fabtui.tui.widgets.matrix import FabricMatrix
from fabtui.tui.widgets.triage_view import (
    EVIDENCE_LINES,
    chain_strip,
    chain_text,
    more_evidence_text,
    suspect_text,
)
from fabtui.views.crosslinks import (
    Highlights,
    Place,
    element_runbooks,
    fill_inputs,
    finding_words,
    suspect_keys,
)
from fabtui.views.fabricmap import FabricMap
from fabtui.views.status import LiveFinding, PollState
from fabtui.workspace import Workspace
from tests.support import REPO
from tests.support.tmux import tmux, wait_for
from tests.support.tui_support import (
    NOW,
    assert_snapshot,
    asynctest,
    healthy_round,
    screen_text,
    utc,
    workspace,
)

pytestmark = pytest.mark.usefixtures("sim_in_process")

__all__ = ["tmux"]  # the fixture, from tests.support.tmux

SIM_TIME = "960"
"""16 minutes into the nccl-hang scenario: the optic behind rank 21 is dead."""
CULPRIT = {"node": "node003", "nic": "node003:mlx5_5", "port": "leaf-g00-r5:Ethernet16",
           "optic": "MT24000043"}


@pytest.fixture(autouse=True)
def _pinned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Local time and the demo fabric's clock pinned; the logs are named relative to tmp_path
    (the evidence lines print the path as given, and a snapshot must not hold a temp name)."""
    monkeypatch.setenv("FABTUI_SIM_TIME", SIM_TIME)
    monkeypatch.chdir(tmp_path)
    yield from utc(monkeypatch)


class Recorder(FabtuiApp):
    """The app, keeping the cross-screen requests it receives instead of acting on them."""

    def __init__(self, ws: Workspace, **kwargs: Any) -> None:
        super().__init__(ws, live=False, clock=lambda: NOW, **kwargs)
        self.requests: list[Message] = []

    async def on_open_runbook(self, message: OpenRunbook) -> None:
        self.requests.append(message)
        message.prevent_default()

    async def on_open_case(self, message: OpenCase) -> None:
        self.requests.append(message)
        message.prevent_default()


def hang_workspace() -> Workspace:
    return workspace(scenario="nccl-hang", scenario_chosen=True)


def hang_logs(ws: Workspace, name: str = "logs") -> Path:
    """What `fabtui sim hang-logs logs --case optic --ranks 64` writes."""
    path = Path(name)
    generate(path, JobSpec(case="optic", ranks=64), ws.graph())
    return path


async def settle(pilot: Any, done: Any, seconds: float = 60.0) -> None:
    """Let the workers run until `done()` (the triage and chain run in threads)."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the workers did not finish"
        await pilot.pause(0.05)
    await pilot.pause()


def chained(app: FabtuiApp) -> Any:
    return lambda: isinstance(app.screen, TriageScreen) and app.screen.chain is not None


@asynctest
async def test_journey_1_first_half_by_keyboard() -> None:
    """`4`, the log folder, enter: the culprit rank 21 with its NIC, leaf port and optic, the
    evidence chain confirmed down to the optic, similar cases; `o` asks for the suggested
    runbook with the suspect filled in, `c` for the similar case, `s` shows the suspect marked
    on the Fabric screen."""
    ws = hang_workspace()
    logs = hang_logs(ws)
    app = Recorder(ws)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("4")
        await pilot.press(*str(logs), "enter")
        await settle(pilot, chained(app))
        text = screen_text(app)
        head = text.splitlines()[2]
        assert "verdict: culprit found" in head and "culprit rank 21" in head
        row = next(line for line in text.splitlines() if line.split()[:3] == ["1", "link", "21"])
        assert row.split()[3:8] == ["node003", "5", "mlx5_5", "leaf-g00-r5:Ethernet16",
                                    "MT24000043"]
        assert "logs/job.log:" in text and "status=12" in text  # the evidence, file:line
        assert "nccl-hang-optic-rail5-node003" in text  # seen before
        chain = {line.split()[2]: line.split()[:2] for line in text.splitlines()
                 if line.strip()[:1] in ("●", "○", "?") and len(line.split()) > 2}
        assert chain["optic"] == ["●", "confirmed"] and chain["pfc"] == ["○", "contradicted"]
        assert chain["job"] == ["?", "unknown"]

        await pilot.press("o")
        await pilot.press("c")
        await pilot.pause()
        runbook, case = app.requests
        assert isinstance(runbook, OpenRunbook) and isinstance(case, OpenCase)
        assert runbook.runbook == "nccl-hang-triage"
        assert runbook.inputs == {"log_node": "node003", "suspect_nic": "node003:mlx5_5"}
        assert case.case_id == "nccl-hang-optic-rail5-node003"

        await pilot.press("s")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, FabricScreen)
        text = screen_text(app)
        assert "◆ triage" in text.splitlines()[1]
        node003 = next(line for line in text.splitlines() if line.startswith("node003"))
        assert node003.split()[0:2] == ["node003", "◆?"] and node003.split()[7] == "◆?"
        leaves = next(line for line in text.splitlines() if line.startswith("g00 leaf"))
        assert leaves.split()[7] == "◆?"  # leaf-g00-r5, where the port is
        matrix = app.screen.query_one(FabricMatrix)
        assert matrix.selected_key == "node003@5"
        detail = app.screen.query_one(DetailPanel)
        body = str(detail.render_text(matrix.selected_key, app.screen.snapshot,
                                      app.screen.found))
        assert body.startswith("? unknown    MT24000043")  # the optic first
        assert "◆ marked by triage: NCCL hang, culprit found" in body


@asynctest
async def test_the_other_suspect_gets_its_own_runbook_inputs() -> None:
    """Opened on the logs (`fabtui tui --triage logs`): the rail peer (rank 13 on node002),
    selected, is the one the runbook is asked for."""
    ws = hang_workspace()
    app = Recorder(ws, triage=((hang_logs(ws),), None))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, chained(app))
        await pilot.press("down", "o")
        await pilot.pause()
        (request,) = app.requests
        assert isinstance(request, OpenRunbook)
        assert request.inputs == {"log_node": "node002", "suspect_nic": "node002:mlx5_5"}
        assert "node002" in screen_text(app)


@asynctest
async def test_marks_survive_refreshes_and_filters_and_n_jumps_between_them() -> None:
    """A Highlight marks the cells of its elements with ◆; a new snapshot and a filter keep
    the marks; `n` goes from one marked cell to the next (wrapping), `N` back; `esc` clears
    the filter first, then the marks."""
    app = Recorder(workspace())
    async with app.run_test(size=(120, 40)) as pilot:
        app.post_message(Highlight("session", frozenset({"node002:mlx5_1", "MT24000043"}),
                                   "optic-replacement"))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        matrix = screen.query_one(FabricMatrix)
        assert matrix.marks == {"node002@1": "node002:mlx5_1", "node003@5": "MT24000043"}
        healthy_round(app)
        screen.post_message(SnapshotArrived(app.status.snapshot(1, PollState.WAITING)))
        await pilot.pause()
        line = next(r for r in screen_text(app).splitlines() if r.startswith("node002"))
        assert line.split()[3] == "◆✓"  # rail 1, healthy and marked
        await pilot.press("f", *"rail:5", "enter")
        await pilot.pause()
        await pilot.press("n")
        assert matrix.selected_key == "node003@5" and screen.found == "MT24000043"
        await pilot.press("n")  # the only one rail 5 shows: it wraps onto itself
        assert matrix.selected_key == "node003@5"
        await pilot.press("escape")  # the filter
        await pilot.pause()
        await pilot.press("N")
        assert matrix.selected_key == "node002@1"
        await pilot.press("escape")  # the marks
        await pilot.pause()
        assert matrix.marks == {} and "◆" not in screen_text(app)


@asynctest
async def test_runbooks_for_a_fabric_elements_findings() -> None:
    """The pfc-storm scenario, probed for real on the demo fabric: on the storming leaf port,
    `b` lists the runbooks for its findings with pfc-storm first, and enter asks for it with the
    port's leaf filled in."""
    ws = workspace(scenario="pfc-storm", scenario_chosen=True)
    app = Recorder(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        result = await ws.run_probe("switch.pfc", "leaf-g00-r4", {})
        app.status.apply(result, 1e9)
        app.screen.post_message(SnapshotArrived(app.status.snapshot(1, PollState.WAITING)))
        await pilot.press("slash", *"leaf-g00-r4:Ethernet40", "enter")
        await pilot.pause()
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, RunbookChoiceScreen)
        assert app.screen.choices[0].runbook == "pfc-storm"
        assert "pfc-storm" in screen_text(app) and "with leaf=leaf-g00-r4" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        (request,) = app.requests
        assert isinstance(request, OpenRunbook)
        assert (request.runbook, request.inputs) == ("pfc-storm", {"leaf": "leaf-g00-r4"})
        assert "pause_share.rx.PFC3" in request.why


@asynctest
async def test_a_failing_node_offers_the_runbooks_of_its_nics_findings() -> None:
    """The node row's ✗ is its storming NIC's: `b` on node006 offers pfc-storm for the NIC
    (it said "no findings" before: a node selection stood for the node alone)."""
    ws = workspace(scenario="pfc-storm", scenario_chosen=True)
    app = Recorder(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        result = await ws.run_probe("nic.ethtool", "node006:mlx5_4", {})
        assert result.verdict is Verdict.FAIL
        app.status.apply(result, 1e9)
        app.screen.post_message(SnapshotArrived(app.status.snapshot(1, PollState.WAITING)))
        await pilot.press("slash", *"node006", "enter")
        await pilot.pause()
        assert app.screen.query_one(FabricMatrix).selected_key == "node006", screen_text(app)
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, RunbookChoiceScreen), \
            [n.message for n in app._notifications]
        assert app.screen.choices[0].runbook == "pfc-storm"
        shown = screen_text(app)
        assert "runbooks for node006:mlx5_4" in shown and "with leaf=leaf-g00-r4" in shown


@asynctest
async def test_an_element_without_findings_has_no_runbooks_to_offer() -> None:
    app = Recorder(workspace())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, FabricScreen)
        assert any("no findings, so no runbook" in n.message for n in app._notifications)


@asynctest
async def test_a_log_folder_that_does_not_exist_says_so_in_one_line() -> None:
    app = Recorder(workspace())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("4", *"no-such-logs", "enter")
        await settle(pilot, lambda: "cannot triage" in screen_text(app))
        assert any("no-such-logs" in n.message for n in app._notifications)
        line = next(r for r in screen_text(app).splitlines() if "cannot triage" in r)
        assert "no-such-logs" in line
        await pilot.press("escape", "o")
        assert app.requests == []


def triaged() -> tuple[Workspace, TriageReport]:
    """The report of the optic case with its chain, as `fabtui triage nccl logs --chain`."""
    ws = hang_workspace()
    report = ws.triage([hang_logs(ws)])
    report.chain = asyncio.run(ws.evidence_chain(report))
    return ws, report


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
@asynctest
async def test_the_triage_screen_snapshot(size: tuple[int, int]) -> None:
    """The Triage screen of the optic case (`fabtui triage nccl logs --chain --open`)."""
    ws, report = await asyncio.to_thread(triaged)
    app = Recorder(ws, triage=((Path("logs"),), report))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.pause()
        text = screen_text(app)
        assert "culprit rank 21" in text and "MT24000043" in text
        await assert_snapshot(pilot, f"triage-optic-{size[0]}x{size[1]}")


@asynctest
async def test_a_summary_the_verdict_box_cannot_hold_ends_in_an_ellipsis_and_reads_whole_below(
        ) -> None:
    """At 80x24 the verdict box (4 lines) cropped the summary after `talking to` and never
    showed `2 suspect(s) from logs`, without a mark. Its last line ends in `…` now, and the
    detail pane opens with the summary and the count whole."""
    ws, report = await asyncio.to_thread(triaged)
    app = Recorder(ws, triage=((Path("logs"),), report))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(app).splitlines()
        top = next(i for i, line in enumerate(lines) if line.startswith(" verdict:"))
        assert lines[top + 3].rstrip().endswith("…"), lines[top:top + 4]
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        pane = screen.query_one("#triage-detail").region  # the detail pane, on screen
        rows = screen_text(app).splitlines()[pane.y:pane.bottom]
        said = " ".join(" ".join(row[:pane.right - 2] for row in rows).split())
        assert " ".join(report.summary.split()) in said and "2 suspect(s) from logs" in said
    wide = Recorder(ws, triage=((Path("logs"),), report))
    async with wide.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.pause()
        assert "is the suspect. · 2 suspect(s) from logs" in screen_text(wide)


def test_evidence_past_the_first_lines_is_counted_and_listed_under_the_chain() -> None:
    """A suspect's evidence past the first three lines was left out without a word (a desync
    names a line per shape, a rank's watchdog and dump lines add up). The suspect says how
    many more there are, and they follow the chain, each whole."""
    lines = [Evidence(file="logs/rank5.log", line=100 + n, text=f"NCCL WARN watchdog line {n}")
             for n in range(EVIDENCE_LINES + 2)]
    suspect = Suspect(kind="link", rank=5, reason="status 12", evidence=lines)
    report = TriageReport(verdict="culprit found", summary="rank 5", suspects=[suspect])
    shown = suspect_text(report, suspect).plain
    assert "logs/rank5.log:102  NCCL WARN watchdog line 2" in shown
    assert "watchdog line 3" not in shown and "+2 more evidence lines (under the chain)" in shown
    more = more_evidence_text(suspect).plain
    assert "logs/rank5.log:103  NCCL WARN watchdog line 3" in more
    assert "logs/rank5.log:104  NCCL WARN watchdog line 4" in more
    few = suspect.model_copy(update={"evidence": lines[:EVIDENCE_LINES]})
    assert "more evidence" not in suspect_text(report, few).plain + more_evidence_text(few).plain


@asynctest
async def test_slash_filters_the_suspects_and_esc_leaves_then_clears_the_filter() -> None:
    """`/` on Triage filters, as on every view (it focused the log field): `node002` keeps
    rank 13's suspect and the selected suspect is that one (o, s, x act on it); Esc leaves
    the field with the filter kept and said; Esc again clears it; the log field is `l`."""
    ws, report = await asyncio.to_thread(triaged)
    app = Recorder(ws, triage=((Path("logs"),), report))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TriageScreen) and len(screen.shown) == 2
        await pilot.press("slash", *"node002")
        await pilot.pause()
        assert screen.shown == [1] and screen.selected_suspect is report.suspects[1]
        cases = screen.query_one("#triage-cases", OptionList)
        assert cases.option_count == 0  # no similar case names node002
        await pilot.press("escape")
        await pilot.pause()
        assert screen.focused is screen.query_one("#triage-suspects")
        assert "/ node002" in screen_text(app) and "1 of 2 suspects" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert screen.shown == [0, 1] and screen.view_filter == ""
        assert "1 of 2 suspects" not in screen_text(app)
        await pilot.press("l")
        assert screen.focused is screen.query_one("#triage-path")


@asynctest
async def test_the_log_field_shows_what_is_typed_while_it_has_the_keys() -> None:
    """The app's focus ring (a tall border) filled the one-line log field with its top edge:
    `4` then typing showed `logs ▊▔▔▔▔`, neither the placeholder nor what was typed."""
    app = Recorder(hang_workspace())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        assert isinstance(app.screen, TriageScreen)
        assert app.screen.focused is app.screen.query_one("#triage-path")
        assert "folder of per-rank logs" in screen_text(app).splitlines()[1]
        await pilot.press(*"runs/job-17/logs")
        await pilot.pause()
        line = screen_text(app).splitlines()[1]
        assert line.split() == ["logs", "runs/job-17/logs"], line


@asynctest
async def test_on_the_demo_the_empty_screen_says_how_to_get_a_hung_jobs_logs(
        tmp_path: Path, run: Callable[..., Result]) -> None:
    """A newcomer on the demo fabric has no logs of a hang: the empty screen names the command
    that writes some, and that command, run as printed, writes logs this screen triages to
    the culprit. On a real fabric the screen says nothing of the kind."""
    app = Recorder(hang_workspace())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        command = next(line.strip() for line in lines if "fabtui sim hang-logs" in line)
        argv = shlex.split(command)
        assert argv[:3] == ["fabtui", "sim", "hang-logs"], command
        logs = tmp_path / "hang"
        written = run(*[str(logs) if a == "/tmp/hang" else a for a in argv[1:]])
        assert written.exit_code == 0, written.output
        await pilot.press(*str(logs), "enter")
        await settle(pilot, lambda: app.screen.report is not None)  # type: ignore[attr-defined]
        text = screen_text(app)
        assert "culprit rank 21" in text and "fabtui sim hang-logs" not in text

    real = Recorder(workspace(simulated=False))
    async with real.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        assert "hang-logs" not in screen_text(real)


@asynctest
async def test_at_80_columns_a_long_evidence_line_wraps_under_itself() -> None:
    """The evidence line `logs/job.log:1155  2: node003 ... NCCL WARN NET/IB ...` wrapped back
    to the panel's first column, where it read as a line of its own; it goes on indented."""
    ws, report = await asyncio.to_thread(triaged)
    app = Recorder(ws, triage=((Path("logs"),), report))
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(app).splitlines()
        warn = next(i for i, line in enumerate(lines) if "NCCL WARN NET/IB" in line)
        assert lines[warn].startswith("     NCCL WARN"), lines[warn - 1:warn + 2]
        tail = next(i for i, line in enumerate(lines) if "remoteGids" in line)
        assert tail > warn and lines[tail].startswith("     "), lines[warn:tail + 1]


def test_a_hanging_line_goes_on_past_its_own_indent() -> None:
    console = Console(width=30, file=io.StringIO())
    lines = [t.plain for t in hang(console, Text("  file:1  " + "word " * 12), 30)]
    assert lines[0].startswith("  file:1  word") and len(lines) > 2
    assert all(line.startswith("    ") and line.strip() for line in lines[1:])
    assert " ".join(" ".join(lines).split()) == "file:1 " + " ".join(["word"] * 12)


# --- the non-visual links (workspace.crosslinks) -------------------------------------------
def test_suspect_keys_are_the_fabric_maps_and_skip_what_it_does_not_know() -> None:
    fabric = FabricMap.build(workspace().graph())
    suspect = Suspect(kind="link", rank=21, node="node003", gpu=5, nic="mlx5_5",
                      port="leaf-g00-r5:Ethernet16", optic="MT24000043", reason="r")
    keys = suspect_keys(fabric, suspect)
    assert keys[:2] == ["MT24000043", "leaf-g00-r5:Ethernet16"]
    assert keys[2].startswith("link:") and keys[3:] == ["node003:mlx5_5", "node003:gpu5",
                                                        "node003"]
    stranger = Suspect(kind="dead", rank=3, node="10.0.0.9", nic="mlx5_0", reason="r")
    assert suspect_keys(fabric, stranger) == []


def test_inputs_are_filled_by_name_and_type_and_respect_patterns() -> None:
    """A runbook gets only inputs it declares, of a fitting type, that its pattern accepts."""
    library = workspace().library
    place = Place(node="node003", nic="node003:mlx5_5", port="leaf-g00-r5:Ethernet16",
                  leaf="leaf-g00-r5", optic="MT24000043", element="MT24000043")
    assert fill_inputs(library.runbooks["optic-replacement"], place) == {
        "port": "leaf-g00-r5:Ethernet16"}
    assert fill_inputs(library.runbooks["gdr-not-effective"], place) == {
        "node": "node003", "log_node": "node003"}  # not `peer`: another node is wanted
    assert fill_inputs(library.runbooks["nccl-hang-triage"], Place(nic="bad nic name")) == {}
    assert fill_inputs(library.runbooks["pfc-storm"], place, {"priority": "3", "x": "1"}) == {
        "priority": "3", "leaf": "leaf-g00-r5"}


def test_finding_words_keep_what_and_drop_where() -> None:
    words = finding_words(LiveFinding("switch.pfc", "error", "leaf-g00-r4:Ethernet40",
                                      "leaf-g00-r4:Ethernet40: pause_share.rx.PFC3 = 1 "
                                      "(limit 0.5)"))
    assert words == ["switch", "pfc", "pause"]
    assert finding_words(LiveFinding(
        "switch.dom", "warning", "leaf-g00-r5:Ethernet16/lane1",
        "leaf-g00-r5:Ethernet16/lane1: rx_power_dbm = -9.1")) == ["switch", "dom", "power", "dbm"]


def test_runbooks_for_an_optics_findings_lead_to_optic_replacement() -> None:
    ws = workspace()
    fabric = FabricMap.build(ws.graph())
    choices = element_runbooks(ws.library, fabric, "leaf-g00-r5:Ethernet16", [LiveFinding(
        "switch.dom", "error", "leaf-g00-r5:Ethernet16/lane1",
        "leaf-g00-r5:Ethernet16/lane1: rx_power_dbm = -inf (limit -10)")])
    assert choices[0].runbook == "optic-replacement"
    assert choices[0].inputs == {"port": "leaf-g00-r5:Ethernet16"}
    # why it is offered names the element once (the finding already does)
    assert choices[0].why == "error: leaf-g00-r5:Ethernet16/lane1: rx_power_dbm = -inf " \
        "(limit -10)"
    assert element_runbooks(ws.library, fabric, "node001", []) == []


def test_highlights_per_origin_replace_and_clear() -> None:
    fabric = FabricMap.build(workspace().graph())
    marks = Highlights()
    marks.set("triage", ["node003:mlx5_5", "node003"], "hang")
    marks.set("session", ["node003:mlx5_5"], "optic-replacement")
    assert [m.origin for m in marks.elements()["node003:mlx5_5"]] == ["triage", "session"]
    assert marks.cells(fabric) == {"node003@5": "node003:mlx5_5", "node003": "node003"}
    marks.set("case", ["not-in-this-fabric"], "")  # another fabric's: marks no cell
    assert "not-in-this-fabric" not in marks.cells(fabric)
    marks.set("triage", [], "")
    marks.set("case", [], "")
    assert list(marks.elements()) == ["node003:mlx5_5"]
    version = marks.version
    marks.clear()
    assert marks.elements() == {} and marks.version == version + 1


def test_the_chain_reads_by_glyph_and_word_in_ascii_too() -> None:
    chain = EvidenceChain(node="node003", nic="mlx5_5", port="leaf-g00-r5:Ethernet16", optic=None,
                          links=[ChainLink(layer="pfc", question="q", status="contradicted",
                                           reason="clean"),
                                 ChainLink(layer="optic", question="q", status="confirmed",
                                           reason="dark", probe="switch.dom", target="p")],
                          confirmed=["optic"], deepest="optic", summary="s")
    lines = chain_text(chain, "", ascii_only=True).plain.splitlines()
    assert lines[1].split()[:3] == ["o", "contradicted", "pfc"]
    assert lines[2].split()[:3] == ["*", "confirmed", "optic"] and "[switch.dom p]" in lines[2]
    assert chain_strip(chain, "").plain == "chain: ○ pfc  ● optic  deepest confirmed: optic"
    assert chain_strip(None, "probing the fabric …").plain == "chain: probing the fabric …"


@asynctest
async def test_marks_in_ascii() -> None:
    app = Recorder(workspace(), ascii_only=True)
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(Highlight("triage", frozenset({"node003:mlx5_5"}), "hang"))
        await pilot.pause()
        line = next(r for r in screen_text(app).splitlines() if r.startswith("node003"))
        assert line.split()[7] == "*?"


# --- the command line ----------------------------------------------------------------------
def test_the_command_line_opens_the_app_on_a_triage_only_in_a_terminal(
        run: Callable[..., Result]) -> None:
    result = run("tui", "--triage", "no-such-logs")
    assert result.exit_code == 2 and "no-such-logs: no such file or folder" in result.stderr
    Path("logs").mkdir()
    result = run("tui", "--triage", "logs")
    assert result.exit_code == 2 and "needs a terminal" in result.stderr
    result = run("triage", "nccl", "logs", "--open", "--json")
    assert result.exit_code == 2 and "--open shows the report in the app" in result.stderr
    result = run("triage", "nccl", "logs", "--open")
    assert result.exit_code == 2 and "needs a terminal" in result.stderr


# --- end to end: the real `fabtui` in tmux -------------------------------------------------
@pytest.mark.skipif(shutil.which("tmux") is None,
                    reason="tmux is not installed (apt-get install tmux)")
def test_journey_1_first_half_in_tmux(tmux: Callable[..., str],
                                      tmp_path: Path) -> None:
    """`fabtui sim hang-logs`, then `fabtui triage nccl logs --open` in a real terminal: the
    culprit and its chain on the Triage screen, `s`: the suspect marked on the Fabric screen."""
    config = tmp_path / "config.toml"
    config.write_text('poll = ["switch.dom@leaf-g00-r5:Ethernet16"]\npoll_interval = 5\n',
                      encoding="utf-8")
    env = {"PYTHONPATH": str(REPO), "FABTUI_CONFIG": str(config), "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "data"), "TERM": "xterm-256color",
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PATH": os.environ.get("PATH", ""),
           "FABTUI_SIM_TIME": SIM_TIME}
    fabtui = [sys.executable, "-m", "fabtui", "--scenario", "nccl-hang"]
    made = subprocess.run([*fabtui, "sim", "hang-logs", "logs", "--case", "optic", "--ranks",
                           "64"], env=env, cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert made.returncode == 0, made.stderr
    settings = [shlex.quote(f"{k}={v}") for k, v in env.items()]
    command = " ".join(["cd", shlex.quote(str(tmp_path)), "&&", "env", "-u", "COLUMNS", "-u",
                        "LINES", *settings, *map(shlex.quote, fabtui), "triage", "nccl", "logs",
                        "--open"])
    tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", command)

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "e2e")

    text = wait_for(screen, "deepest confirmed: optic", 90)
    assert "culprit rank 21 node003 mlx5_5 leaf-g00-r5:Ethernet16 optic MT24000043" in text
    print(text)  # what the closing note quotes
    tmux("send-keys", "-t", "e2e", "s")

    def node003_row(text: str) -> str:
        return next((line for line in text.splitlines() if line.startswith("node003")), "")

    text = wait_for(screen, lambda text: "marked by triage" in text and "◆" in node003_row(text),
                    step="s: the suspect on the Fabric screen")
    node003 = node003_row(text)
    assert node003.split()[1].startswith("◆") and node003.split()[7].startswith("◆")
    print(text)
    tmux("send-keys", "-t", "e2e", "q")
