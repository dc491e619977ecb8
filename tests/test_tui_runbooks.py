"""The Runbooks screen and guided sessions, driven by keyboard on the demo fabric: journey 2
(guided optic replacement, filed as a case), secrets typed into a dialog, a cancelled session
resumed from the banner, the app's OpenRunbook / OpenSession messages, and snapshots at 80x24
and 160x50 (the library, and a session before its first block)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.message import Message
from textual.widgets import Log

from fabtui.cases.markdown import write_case
from fabtui.model.verdict import Verdict
from fabtui.runbooks.library import match
from fabtui.sim.latency import LATENCY_VAR
from fabtui.tui.app import FabtuiApp
from fabtui.tui.messages import Highlight, OpenCase, OpenRunbook, OpenSession
from fabtui.tui.screens.case_view import CaseView
from fabtui.tui.screens.dialogs import Form, Gate
from fabtui.tui.screens.runbooks import RunbooksScreen
from fabtui.tui.screens.session import SessionScreen
from fabtui.tui.widgets.fit_table import FitTable
from fabtui.views import guided
from tests.support.guided import PORT, open_book, open_optic_replacement, settle, with_book
from tests.support.tui_support import (
    assert_snapshot,
    asynctest,
    make_app,
    screen_text,
    shows,
    until,
    utc,
    workspace,
)

pytestmark = pytest.mark.usefixtures("sim_in_process")

SIZES = [(80, 24), (160, 50)]


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from utc(monkeypatch)


def recording(app: FabtuiApp, monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    """Every message posted to the app from now on."""
    seen: list[Message] = []
    post = app.post_message

    def record(message: Message) -> bool:
        seen.append(message)
        return post(message)

    monkeypatch.setattr(app, "post_message", record)
    return seen


async def case_shown(pilot: Any, app: FabtuiApp, seen: list[Message]) -> None:
    """Wait until `f`'s case is on the screen, not only asked for: a test that left the app
    while its `OpenCase` was still queued quit with the Cases view opening under Textual's
    shutdown (the flaky `dictionary changed size during iteration`)."""
    def shown() -> bool:
        opened = [m for m in seen if isinstance(m, OpenCase)]
        return bool(opened) and app.current_mode == "cases" and any(
            isinstance(s, CaseView) for s in app.screen_stack)
    await until(pilot, shown, "the filed case on the Cases view")


async def to_gate(pilot: Any, screen: SessionScreen) -> Gate:
    await pilot.press("g")
    await settle(pilot, screen)
    gate = pilot.app.screen
    assert isinstance(gate, Gate), screen_text(pilot.app)
    return gate


@asynctest
async def test_journey_2_guided_optic_replacement_by_keyboard(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """optic-degrading: before-evidence (DOM, FEC, errors), the drain gate typed, the port shut,
    cleaning does not hold, the optic swapped (the demo fabric's repair), the after-evidence
    beside the before, verified, the node resumed, filed as a case that opens to edit."""
    app = make_app(workspace(scenario="optic-degrading", scenario_chosen=True))
    seen = recording(app, monkeypatch)
    async with app.run_test(size=(160, 50)) as pilot:
        session = await open_optic_replacement(pilot, app)
        gate = await to_gate(pilot, session)
        # the before-evidence ran first: DOM and the NIC's errors fail, FEC read
        states = session.view.states
        assert states["dom-before"] == "fail" and states["nic-fec-before"] == "fail"
        assert states["fec-before"] == "ok" and states["blame-check"] == "ok"
        assert "branch taken: drain-the-node (because needs_repair)" in \
            session.view.decisions.values()
        text = screen_text(app)
        assert "DANGER: typed confirmation" in text and "Type node003 to run it." in text
        assert gate.phrase == "node003"
        await pilot.press(*"node003", "enter")
        await settle(pilot, session)
        assert session.view.states["drain"] == "ok"
        await to_gate(pilot, session)  # drained?
        await pilot.press("y")
        await settle(pilot, session)
        gate = await to_gate(pilot, session)  # shut the port: typed
        assert gate.phrase == PORT
        await pilot.press(*PORT, "enter")
        await settle(pilot, session)
        await to_gate(pilot, session)  # cleaned?
        await pilot.press("y")
        await settle(pilot, session)
        gate = await to_gate(pilot, session)  # cleaning did not hold: shut again to swap
        assert session.view.states["dom-clean"] == "fail"
        assert gate.phrase == PORT
        await pilot.press(*PORT, "enter")
        await settle(pilot, session)
        gate = await to_gate(pilot, session)  # swapped? the demo fabric swaps it first
        assert "replaced" in gate.prompt
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert f"repaired {PORT} on the demo fabric: ended optic-degrading" in screen_text(app)
        await pilot.press("y")
        await settle(pilot, session)
        gate = await to_gate(pilot, session)  # verified: resume the node
        assert gate.phrase == "node003"
        assert session.view.states["verdict-after"] == "ok"
        dom = guided.comparison(session.book, {k.replace("-", "_"): v for k, v in
                                               session.view.results.items()}, "dom-after")
        assert dom is not None and any(r[1] == "optic_serial" and r[2] != r[3]
                                       for r in dom.rows)
        await pilot.press(*"node003", "enter")
        await settle(pilot, session)
        await pilot.press("g")
        await settle(pilot, session)
        assert session.engine is not None and session.engine.summary is not None
        summary = session.engine.summary
        assert summary.outcome is Verdict.OK
        assert summary.path[-3:] == ["soak-and-verify", "return-the-node", "record-the-repair"]
        # the after-evidence beside the before, on the repaired port only (the table is
        # drawn on the screen's next refresh)
        await shows(pilot, "finished ✓ ok", "after (before)", "fec-after (fec-before)")
        table = session.query_one("#result", FitTable)
        rows = [[str(cell) for cell in row] for row in table.rows]
        serial = next(r for r in rows if r[5] == "dom-after (dom-before)" and
                      r[1] == "optic_serial")
        assert serial[0] == PORT and serial[2] == "MT24000027" and serial[3] != serial[2]
        assert {r[0].split("/")[0] for r in rows} <= {PORT, "node003:mlx5_3"}
        highlights = [m for m in seen if isinstance(m, Highlight)]
        assert highlights and {PORT, "node003:mlx5_3", "leaf-g00-r3"} <= highlights[-1].keys
        await pilot.press("f")
        await case_shown(pilot, app, seen)
        opened = [m for m in seen if isinstance(m, OpenCase)]
        assert opened and opened[0].edit and opened[0].case_id == session.filed
    case = app.workspace.cases.get(opened[0].case_id)
    assert summary.session in case.sessions and "optic-replacement" in case.runbooks
    folder = Path(os.environ["XDG_DATA_HOME"]) / "export"
    paths, _ = app.workspace.cases.export(folder, [case.id])
    assert paths[0].is_file() and summary.session in paths[0].read_text(encoding="utf-8")


@asynctest
async def test_quitting_while_a_case_is_being_opened_ends_cleanly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`f` then quit at once, on a busy machine: the `OpenCase` is handled while Textual closes
    the views' screen stacks. It opened the Cases view then, adding a stack to the dict being
    closed, and the quit raised `RuntimeError: dictionary changed size during iteration`
    (the flaky secret test), or `UnknownModeError` once the modes were cleared: which one
    depends on where the shutdown is when the message is handled. The app being closed opens
    no view."""
    app = make_app()
    closing = asyncio.Event()
    close_all = app._close_all

    async def closing_first() -> None:
        closing.set()
        await close_all()

    monkeypatch.setattr(app, "_close_all", closing_first)

    async def busy() -> None:  # the app still at work when the quit comes
        await closing.wait()

    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "cases" not in app._screen_stacks
        app.post_message(events.Callback(callback=busy))
        app.post_message(OpenCase("nccl-hang-optic-rail5-node003"))
    assert closing.is_set() and app.return_code in (None, 0)


SECRET = "Hunter2-S3cret!"
SECRET_BOOK = """---
id: secret-test
title: A runbook that asks for a secret
summary: asks for a token and uses it
symptoms: [secret test]
inputs:
  - name: host
    type: node
    default: node001
---

# Secret

## Ask

```input {id=token name=token secret=true}
The API token?
```

```sh {id=use}
echo "using {{ token }} on {{ host }}"
```

```check {id=seen}
warn if 'using' in use.output: the command said {{ use.output }}
ok: fine
```
"""


@asynctest
async def test_a_secret_typed_into_a_dialog_never_shows(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The token is masked as typed; the snapshot, the journal's bytes and the filed case
    never hold it (the output and the check's message say ***)."""
    ws = with_book(tmp_path, "secret-test", SECRET_BOOK)
    app = make_app(ws)
    seen = recording(app, monkeypatch)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_book(pilot, app, "secret-test")
        await pilot.press("enter")  # host: the default
        await pilot.pause()
        session = app.screen
        assert isinstance(session, SessionScreen)
        await pilot.press("n")
        await settle(pilot, session)
        assert isinstance(app.screen, Form) and "secret" in screen_text(app)
        await pilot.press(*SECRET)
        await pilot.pause()
        svgs = [app.export_screenshot()]
        assert "•" * len(SECRET) in screen_text(app)
        await pilot.press("enter")
        await settle(pilot, session)
        await pilot.press("g")
        await settle(pilot, session)
        assert session.engine is not None and session.engine.summary is not None
        assert session.view.states["seen"] == "warn"
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "using *** on node001" in text
        svgs.append(app.export_screenshot())
        await pilot.press("f")
        await case_shown(pilot, app, seen)
        case_id = next(m.case_id for m in seen if isinstance(m, OpenCase))
    stored = b"".join(p.read_bytes() for p in ws.settings.data_dir.glob("journal.sqlite*"))
    assert stored and b"***" in stored
    case = write_case(ws.cases.get(case_id))
    assert "***" in case
    for where in (*svgs, stored.decode("latin-1"), case,
                  *(p.read_bytes().decode("latin-1") for p in ws.settings.data_dir.rglob("*")
                    if p.is_file())):
        assert SECRET not in where


@asynctest
async def test_an_input_the_fabric_does_not_have_is_refused_with_the_reason() -> None:
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("2")
        await pilot.pause()
        app.post_message(OpenRunbook("optic-replacement", {"port": "leaf-g00-r3:Ethernet999"},
                                     "triage: the suspect optic"))
        await pilot.pause(0.2)
        assert isinstance(app.screen, Form)
        await pilot.press("enter", "enter", "enter", "enter")  # its 4 inputs
        await pilot.pause()
        assert isinstance(app.screen, Form)
        assert "port: 'leaf-g00-r3:Ethernet999' is not a cabled switch port" in \
            screen_text(app)


@asynctest
async def test_open_runbook_from_another_mode_prefills_and_open_session_shows_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenRunbook from the Fabric mode switches to Runbooks with the inputs pre-filled and why
    shown; OpenSession shows a recorded session read only, by a prefix of its id, and marks
    what it touched on the Fabric screen."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    seen = recording(app, monkeypatch)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.post_message(OpenRunbook("optic-replacement", {"port": PORT, "soak_s": "60"},
                                     "triage named this optic"))
        await pilot.pause(0.3)
        assert app.current_mode == "runbooks" and isinstance(app.screen, Form)
        await pilot.press("enter", "enter", "enter", "enter")  # its 4 inputs
        await pilot.pause()
        session = app.screen
        assert isinstance(session, SessionScreen)
        assert session.inputs["soak_s"] == 60 and "why: triage named this optic" in \
            screen_text(app)
        await pilot.press("n")
        await settle(pilot, session)
        assert session.view.states["where"] == "ok"
        session_id = session.session
        assert session_id is not None
        await pilot.press("x")
        await pilot.pause()
        await pilot.press(*"wrong port", "enter")
        await settle(pilot, session)
        assert session.view.state == "finished" and session.view.outcome == "aborted"
        await pilot.press("escape")
        await pilot.pause()
        app.post_message(OpenSession(session_id[:-2]))
        await pilot.pause(0.3)
        shown = app.screen
        assert isinstance(shown, SessionScreen) and not shown.live
        text = screen_text(app)
        assert "recorded session (read only)" in text or "aborted by the operator" in text
        assert "✓ ok check where" in text
        marks = [m for m in seen if isinstance(m, Highlight)]
        assert marks and {PORT, "node003:mlx5_3"} <= marks[-1].keys
        assert session_id in marks[-1].why
        library = app.screen_stack[0]
        assert isinstance(library, RunbooksScreen)
        row = next(r for r in library.rows if r.id == session_id)
        assert (row.state, row.outcome, row.runbook) == ("finished", "aborted",
                                                         "optic-replacement")
        assert row.operator


@asynctest
async def test_a_cancelled_session_is_offered_in_the_banner_and_resumes() -> None:
    """The leaf is slow (FABTUI_SIM_LATENCY): leaving the session while its DOM probe runs
    cancels it (journaled, resumable); the library's banner names it and `u` resumes it."""
    app = make_app(workspace(scenario="optic-degrading", scenario_chosen=True))
    saved = os.environ.get(LATENCY_VAR)
    os.environ[LATENCY_VAR] = "0,leaf-*=30"
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            session = await open_optic_replacement(pilot, app)
            await pilot.press("n")
            await settle(pilot, session)
            assert session.view.states["where"] == "ok"
            await pilot.press("n")
            for _ in range(100):
                await pilot.pause(0.05)
                if session.view.states["dom-before"] == "running":
                    break
            session_id = session.session
            await pilot.press("escape")
            for _ in range(200):
                await pilot.pause(0.05)
                info = app.workspace.journal.session(session_id or "")
                if info and info[0].status == "cancelled":
                    break
            library = app.screen
            assert isinstance(library, RunbooksScreen)
            await pilot.pause()
            assert info is not None and info[0].status == "cancelled"
            assert [r.id for r in library.banner] == [session_id]
            assert f"interrupted: optic-replacement session {session_id}" in screen_text(app)
            await pilot.press("ctrl+r")
            await pilot.pause(0.3)
            resumed = app.screen
            assert isinstance(resumed, SessionScreen) and resumed.session == session_id
            assert resumed.engine is not None and not resumed.engine.cancelled
            assert resumed.view.states["where"] == "ok"
            assert resumed.view.states["dom-before"] == "cancelled"
            block = resumed.engine.next_block()
            assert block is not None and block.id == "dom-before"
    finally:
        os.environ.pop(LATENCY_VAR)
        if saved is not None:
            os.environ[LATENCY_VAR] = saved


# snapshots --------------------------------------------------------------------------------------
async def steady(pilot: Any, app: FabtuiApp) -> None:
    """Wait until two screenshots in a row agree (the footer composes its keys late on a
    loaded machine)."""
    last = ""
    for _ in range(40):
        await pilot.pause(0.1)
        shot = app.export_screenshot()
        if shot == last:
            return
        last = shot


@pytest.mark.parametrize("size", SIZES)
@asynctest
async def test_library_snapshot(size: tuple[int, int]) -> None:
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("slash", *"FEC", "enter")
        await pilot.pause()
        assert "optic-replacement" in screen_text(app)
        await steady(pilot, app)
        await assert_snapshot(pilot, f"runbooks-library-{size[0]}x{size[1]}")


async def open_unstarted_session(pilot: Any, app: FabtuiApp) -> None:
    """2, then optic-replacement opened on the port, not started yet."""
    await pilot.press("2")
    await pilot.pause()
    library = app.screen
    assert isinstance(library, RunbooksScreen)
    library._start(app.workspace.runbook("optic-replacement"), {"port": PORT}, "")
    await pilot.pause(0.3)


@pytest.mark.parametrize("size", SIZES)
@asynctest
async def test_session_snapshot(size: tuple[int, int]) -> None:
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=size) as pilot:
        await open_unstarted_session(pilot, app)
        assert "session (not started)" in screen_text(app)
        await steady(pilot, app)
        await assert_snapshot(pilot, f"runbooks-session-{size[0]}x{size[1]}")


SESSION_FOOTER_80 = ("n Next g Gate s Skip j Jump r Rerun a Note x Abandon o Hand c Past f File "
                     "? more")


@asynctest
async def test_at_80_columns_the_session_footer_shows_every_session_key_and_help() -> None:
    """Cut off after `o Han` before: every key of a session now shows (short labels), and `?`
    (more) opens the help page on the session's keys, with their full labels."""
    app = make_app(workspace(scenario="healthy", scenario_chosen=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_unstarted_session(pilot, app)
        await steady(pilot, app)
        assert screen_text(app).splitlines()[-1].rstrip() == SESSION_FOOTER_80
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        rows = [line.split("│")[1] for line in text.splitlines() if line.count("│") == 2]
        heading = next(i for i, row in enumerate(rows) if "This view: Guided session" in row)
        keys = [row.split()[:2] for row in rows[heading + 1:] if not row[:4].isspace()]
        # the session's keys first, under their heading; a wrapped help stays in its column
        assert keys[:3] == [["n", "Next"], ["g", "To"], ["s", "Skip"]]


# headless parts ---------------------------------------------------------------------------------
def test_the_library_search_is_runbook_find_s() -> None:
    library = workspace().library
    for text in ("low rx power", "NCCL 超时", "光模块收光低", "pfc storm"):
        assert [b.meta.id for b in guided.find_runbooks(library, text)] == \
            [b.meta.id for _, b in match(library, text, limit=len(library.runbooks))]
    assert guided.find_runbooks(library, "光模块收光低")[0].meta.id == "optic-replacement"
    assert len(guided.find_runbooks(library, " ")) == len(library.runbooks)


def test_session_rows_read_the_status_as_state_and_outcome() -> None:
    from fabtui.model.runbook import SessionInfo

    rows = guided.session_rows([
        SessionInfo(id=i, runbook="rb", title="t", started_at=0.0, status=s, operator="ann")
        for i, s in (("a", "ok"), ("b", "cancelled"), ("c", "running"), ("d", "error"),
                     ("e", "aborted"))])
    assert [(r.state, r.outcome) for r in rows] == [
        ("finished", "ok"), ("interrupted", ""), ("running", ""), ("interrupted", "error"),
        ("finished", "aborted")]
    assert [r.id for r in guided.interrupted(rows, live=["c"])] == ["b", "d"]
    assert guided.find_session(rows, "e") is rows[4]


KEYS_BOOK = """---
id: keys-test
title: Every operator key
summary: three steps of local commands
symptoms: [keys test]
---

# Keys

## One

```sh {id=count}
seq 1 3000
```

```sh {id=hello}
echo hello
```

## Two

```sh {id=two}
echo two
```

## Three

```sh {id=three}
echo three
```
"""


@asynctest
async def test_skip_jump_rerun_and_note_by_keyboard_are_journaled(tmp_path: Path) -> None:
    """The output of a block streams into one Log (3,000 lines, batched); skip asks a reason,
    jump takes a step's number, re-run a block id, note a text: each is in the journal."""
    ws = with_book(tmp_path, "keys-test", KEYS_BOOK)
    app = make_app(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_book(pilot, app, "keys-test")
        session = app.screen
        assert isinstance(session, SessionScreen)
        await pilot.press("n")
        await settle(pilot, session)
        await pilot.pause(0.2)
        log = session.query_one("#output", Log)
        assert session.stream.written >= 3001 and log.line_count >= 3001
        assert log.lines[-1] == "3000"
        await pilot.press("r", "ctrl+u", *"count", "enter")  # the field holds the last block
        await settle(pilot, session)
        assert log.line_count >= 6002
        await pilot.press("s", *"not needed today", "enter")
        await pilot.pause()
        assert session.view.states["hello"] == "skipped"
        await pilot.press("j", "3", "enter")
        await pilot.pause()
        await pilot.press("n")
        await settle(pilot, session)
        assert session.view.states["two"] == "pending"
        assert session.view.states["three"] == "ok"
        assert session.view.state == "finished"
        await pilot.press("a", *"checked with the vendor", "enter")
        await pilot.pause()
        session_id = session.session
    from fabtui.model.events import Decision, Note

    events = ws.events(session_id or "")
    decisions = [e.data for e in events if isinstance(e.data, Decision)]
    assert any(d.skip == "not needed today" for d in decisions)
    assert any(d.jump == "three" for d in decisions)
    assert any(d.rerun for d in decisions)
    assert any(isinstance(e.data, Note) and e.data.text == "checked with the vendor"
               for e in events)


GATED_BOOK = """---
id: gated-test
title: A gate between two commands, with a secret input
summary: stops at a gate
symptoms: [gated test]
inputs:
  - name: password
    type: string
    required: true
    secret: true
---

# Gated

## Before

```sh {id=before}
echo "before {{ password }}"
```

```confirm {id=go}
Go on?
```

## After

```sh {id=after}
echo "after {{ password }}"
```
"""


@asynctest
async def test_esc_at_a_gate_interrupts_and_resume_asks_the_secret_again(
        tmp_path: Path) -> None:
    """esc at a gate leaves the session interrupted (journaled, resumable); resuming from the
    banner asks the secret input again (never stored) and runs on from the gate."""
    ws = with_book(tmp_path, "gated-test", GATED_BOOK)
    app = make_app(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_book(pilot, app, "gated-test")
        await pilot.press(*SECRET, "enter")
        await pilot.pause()
        session = app.screen
        assert isinstance(session, SessionScreen)
        await to_gate(pilot, session)
        await pilot.press("escape")
        await settle(pilot, session)
        session_id = session.session or ""
        assert session.view.state == "interrupted"
        gate_block = session.view.block or ""
        assert session.view.states[gate_block] == "pending"  # asked again on resume, not running
        assert "▶ running" not in screen_text(app)
        info = ws.journal.session(session_id)
        assert info is not None and info[0].status == "cancelled"
        await pilot.press("escape")
        await pilot.pause()
        assert f"gated-test session {session_id}" in screen_text(app)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, Form) and "never stored" in screen_text(app)
        await pilot.press(*SECRET, "enter")
        await pilot.pause(0.3)
        resumed = app.screen
        assert isinstance(resumed, SessionScreen) and resumed.session == session_id
        await to_gate(pilot, resumed)
        await pilot.press("y")
        await settle(pilot, resumed)
        await pilot.press("g")
        await settle(pilot, resumed)
        assert resumed.view.state == "finished" and resumed.view.outcome == "ok"
        assert "after ***" in screen_text(app)
    stored = b"".join(p.read_bytes() for p in ws.settings.data_dir.glob("journal.sqlite*"))
    assert SECRET.encode() not in stored


def test_prose_fills_in_what_the_session_knows_and_masks_secrets(tmp_path: Path) -> None:
    from fabtui.runbooks.engine import ScriptedOperator

    ws = with_book(tmp_path, "gated-test", GATED_BOOK)
    engine = ws.open_run("gated-test", inputs={"password": SECRET},
                         operator=ScriptedOperator())
    assert guided.render_prose("use {{ password }} on {{ nic }} ({{ 1 + 2 }})", engine) == \
        "use *** on {{ nic }} (3)"
    fabric = make_app(ws).fabric
    keys = guided.touched(fabric, ws.runbook("optic-replacement"),
                          {"port": PORT, "other": "not-an-element"})
    cell = fabric.cell_of(PORT)
    assert cell is not None and keys == {PORT, cell.link, fabric.optic_of(PORT)}
    assert guided.repair_component(ws.runbook("optic-replacement"), {"port": PORT}) == PORT


@asynctest
async def test_enters_typed_ahead_of_the_focus_each_move_one_field() -> None:
    """On a slow link or a loaded host the next `enter` can reach the form before the focus
    has moved: it is delivered to the field it left, and still moves one field on, so six
    enters typed at once through six fields submit the form (none is lost)."""
    from textual.widgets import Input

    from fabtui.tui.screens.dialogs import Field

    app = make_app()
    answers: list[dict[str, str] | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        fields = [Field(f"f{i}", f"field {i}", value=str(i)) for i in range(4)]
        app.push_screen(Form("typed ahead", fields, lambda name, value: None), answers.append)
        await pilot.pause()
        form = app.screen
        assert isinstance(form, Form)
        first = form.query_one("#field-0", Input)
        for _ in range(2):  # both from the first field: the focus has not moved yet
            form.post_message(Input.Submitted(first, first.value))
        await pilot.pause()
        assert app.focused is form.query_one("#field-2", Input)
        await pilot.press("tab")  # the operator moves on by hand: enter goes on from there
        await pilot.pause()
        assert app.focused is form.query_one("#field-3", Input)
        await pilot.press("enter")
        await pilot.pause()
    assert answers == [{"f0": "0", "f1": "1", "f2": "2", "f3": "3"}]
