"""The app, driven by Pilot on deterministic data: fake results applied to the app's status
model and posted as snapshots, on a frozen clock, with no poller running."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from click.testing import Result
from textual.pilot import Pilot

from fabtui.model.verdict import Verdict
from fabtui.tui.app import FabtuiApp
from fabtui.tui.messages import SnapshotArrived
from fabtui.tui.screens.dialogs import Prompt, TextPage
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.widgets.matrix import FabricMatrix
from fabtui.views.status import PollState
from tests.support.tui_support import (
    NOW,
    assert_snapshot,
    asynctest,
    healthy_round,
    make_app,
    result,
    screen_text,
    storm,
    utc,
    workspace,
)


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The header prints local time: pin it so screens read the same everywhere."""
    yield from utc(monkeypatch)


def post(app: FabtuiApp, round_no: int = 1) -> None:
    app.screen.post_message(SnapshotArrived(app.status.snapshot(round_no, PollState.WAITING,
                                                                1.5)))


async def find(pilot: Pilot[None], name: str) -> None:
    await pilot.press("slash")
    await pilot.press(*name)
    await pilot.press("enter")
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
@asynctest
async def test_the_fabric_screen_shows_the_storm_and_its_counters(size: tuple[int, int]) -> None:
    """It should show the fabric, the failing NIC and leaf port with a glyph, the problem
    counts, and, with the storming NIC selected, its counters with a sparkline."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        healthy_round(app, NOW - 10)
        storm(app, 100.0, NOW - 5)
        storm(app, 9000.0, NOW)
        post(app)
        await pilot.pause()
        await find(pilot, "node006:mlx5_4")
        text = screen_text(app)
        assert "demo" in text.splitlines()[1] and "data 14:13:20" in text.splitlines()[1]
        # "1 of 64 NICs has a problem, a failure" (at 80 columns without the totals)
        assert ("NICs ✗1/64" in text and "leaves ✗1/8" in text) or \
            (size[0] <= 80 and "NICs ✗1 " in text and "leaves ✗1 " in text)
        node_line = next(line for line in text.splitlines() if line.startswith("node006"))
        assert node_line.split()[:7] == ["node006", "✗", "✓", "✓", "✓", "✓", "✗"]
        assert "rate.tx_prio3_pause" in text and "9000/s" in text
        assert "▁█" in text  # 100 then 9000 pauses/s
        await assert_snapshot(pilot, f"fabric-storm-{size[0]}x{size[1]}")


@asynctest
async def test_the_leaf_port_shows_its_counters_when_selected() -> None:
    """Selecting the storming NIC's leaf port (by name) shows the port's PFC counter."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        storm(app, 9000.0)
        post(app)
        await find(pilot, "leaf-g00-r4:Ethernet40")
        text = screen_text(app)
        assert "leaf-g00-r4:Ethernet40" in text and "rate.rx.PFC3" in text


@asynctest
async def test_a_new_snapshot_repaints_only_the_lines_that_changed() -> None:
    """One NIC changing repaints its node's line, not the other nodes'."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        healthy_round(app)
        post(app)
        await pilot.pause()
        matrix = app.screen.query_one(FabricMatrix)
        storm(app, 5000.0)
        changed = matrix.set_snapshot(app.status.snapshot(2, PollState.WAITING))
        assert changed == 2  # node006's line and the leaves' line
        before = matrix.repainted
        await pilot.pause()
        assert 0 < matrix.repainted - before <= changed


@asynctest
async def test_pause_holds_the_view_while_data_keeps_arriving() -> None:
    """`space` freezes the view and says how many snapshots wait; `space` again shows the
    latest."""
    app = make_app()
    async with app.run_test() as pilot:
        healthy_round(app)
        post(app)
        await pilot.press("space")
        storm(app, 5000.0)
        post(app, 2)
        post(app, 3)
        await pilot.pause()
        text = screen_text(app)
        assert "PAUSED (" in text.splitlines()[1]
        assert "NICs ✓64" in text  # all 64 fine (it read `✓0/64`: "none fine"?)
        await pilot.press("space")
        await pilot.pause()
        assert "NICs ✗1" in screen_text(app)


@asynctest
async def test_a_filter_survives_refreshes_and_esc_clears_it() -> None:
    """`f rail:4` shows rail 4 only; a new snapshot keeps it; `esc` shows everything again."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        healthy_round(app)
        post(app)
        await pilot.press("f", *"rail:4", "enter")
        await pilot.pause()
        storm(app, 5000.0)
        post(app, 2)
        await pilot.pause()
        text = screen_text(app)
        assert "filter rail:4" in text.splitlines()[1]
        assert "node r4" in text and "r3" not in text.split("node r4")[1].split("\n")[0]
        node_line = next(line for line in text.splitlines() if line.startswith("node006"))
        assert node_line.split()[:3] == ["node006", "✗", "✗"]
        await pilot.press("escape")
        await pilot.pause()
        assert "r3" in screen_text(app)


@asynctest
async def test_a_filter_that_matches_nothing_says_so() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.press("f", *"node9*", "enter")
        await pilot.pause()
        assert isinstance(app.screen, FabricScreen)
        assert app.screen.query_one(FabricMatrix).view.text == ""
        assert any("node9*" in str(n.message) for n in app._notifications)


@asynctest
async def test_an_unreachable_device_shows_its_error_one_key_away() -> None:
    """A switch that did not answer shows ⊘ while the rest keeps its data; `e` shows why."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        healthy_round(app)
        app.status.apply(result("switch.pfc", "leaf-g00-r2", [],
                                error="no result within 10s (the target is slow or hung)"),
                         20.0)
        post(app)
        await find(pilot, "leaf-g00-r2")
        text = screen_text(app)
        leaf_line = next(line for line in text.splitlines() if line.startswith("g00 leaf"))
        assert leaf_line.split()[2:5] == ["✓", "✓", "⊘"]
        assert "unreachable" in text
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TextPage)
        assert "no result within 10s" in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, FabricScreen)


@asynctest
async def test_old_data_shows_as_stale() -> None:
    """Data older than its interval allows reads `~`, not ✓."""
    app = make_app()
    async with app.run_test() as pilot:
        healthy_round(app, NOW - 60)
        post(app)
        await pilot.pause()
        node_line = next(line for line in screen_text(app).splitlines()
                         if line.startswith("node001"))
        assert node_line.split()[1:3] == ["~", "~"]


def test_a_narrow_footer_keeps_the_screens_keys_in_order_and_help_last() -> None:
    from fabtui.tui.widgets.footer import Row, fit

    def row(key: str, label: str, id: str = "") -> Row:
        return Row(key, key, label, key, True, "", id)

    own = [row("n", "Next", "session.next"), row("g", "To gate", "session.gate"),
           row("f", "File case", "session.file")]
    others = [row("1", "Fabric"), row("^q", "Quit")]
    help_row = row("?", "Help", "app.help")
    wide = fit(own, others, help_row, 160, True)
    assert wide[1:] == (False, True) and [r.label for r in wide[0]][-1] == "Help"

    def labels(width: int, palette: bool = False) -> str:
        rows, narrow, docked = fit(own, others, help_row, width, palette)
        assert narrow
        return " ".join(f"{r.display} {r.label}" for r in rows) + (" | ^p" if docked else "")

    assert labels(56) == "n Next g To gate f File case 1 Fabric ^q Quit ? Help"
    assert labels(45) == "n Next g To gate f File case 1 Fabric ? more"
    assert labels(40) == "n Next g To gate f File case ? more"
    assert labels(30) == "n Next g Gate f File ? more"  # short labels: all of the screen's own
    assert labels(13) == "n Next ? more"
    assert labels(56, palette=True) == "n Next g To gate f File case 1 Fabric ? more | ^p"
    assert labels(40, palette=True) == "n Next g Gate f File ? more | ^p"
    assert labels(30, palette=True) == "n Next g Gate f File ? more"  # no room for it


@asynctest
async def test_help_palette_and_quit() -> None:
    """`?` lists every action with its binding id, ctrl+p offers them by name, q quits."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "fabric.pause" in text and "Freeze the view" in text
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"filter")
        await pilot.pause(0.3)
        assert "Filter" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, Prompt)
        await pilot.press("escape", "q")
        await pilot.pause()
    assert app.return_code == 0


@asynctest
async def test_keys_are_remapped_from_the_config() -> None:
    """`keymap = { "fabric.pause" = "z" }` makes z pause."""
    app = make_app(workspace(keymap=(("fabric.pause", "z"),)))
    async with app.run_test() as pilot:
        await pilot.press("z")
        await pilot.pause()
        assert "PAUSED" in screen_text(app).splitlines()[1]


@asynctest
async def test_the_light_theme() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        storm(app, 5000.0)
        post(app)
        await pilot.press("T")
        await pilot.pause()
        assert app.theme == "textual-light"
        await assert_snapshot(pilot, "fabric-light-80x24")


@asynctest
async def test_ascii_glyphs() -> None:
    app = make_app(ascii_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        storm(app, 5000.0)
        post(app)
        await pilot.pause()
        node_line = next(line for line in screen_text(app).splitlines()
                         if line.startswith("node006"))
        assert node_line.split()[:2] == ["node006", "X"]
        assert node_line.split()[2] == "?"


def test_fabtui_tui_without_a_terminal_says_so(run: Callable[..., Result]) -> None:
    """`fabtui tui` piped refuses in one line (exit 2); bare `fabtui` piped prints the summary
    and never imports Textual."""
    result = run("tui")
    assert result.exit_code == 2
    assert "needs a terminal" in result.stderr and "Traceback" not in result.stderr
    import subprocess
    import sys

    code = ("import sys\nfrom fabtui.cli import main\nsys.argv = ['fabtui']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "assert 'textual' not in sys.modules, 'textual imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "demo - fabtui demo fabric" in done.stdout


@asynctest
async def test_a_failing_node_shows_the_findings_of_its_nics_one_key_away() -> None:
    """A node's ✗ is its NIC's finding: `e` on the node shows that finding, not "no errors"."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        healthy_round(app)
        app.status.apply(result("nic.ethtool", "node006:mlx5_4", [
            ("node006:mlx5_4", "pause_ratio.tx_prio3", 0.96, Verdict.FAIL)]), 20.0)
        post(app)
        await find(pilot, "node006")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TextPage)
        text = screen_text(app)
        assert "node006:mlx5_4: nic.ethtool: error: node006:mlx5_4: pause_ratio.tx_prio3" in text
        assert "no errors and no findings" not in text
