"""Nothing fails silently: a status source that raises shows in the header and a notice (and the
poller goes on, back to normal when the source answers again); a worker that raises what its
code does not expect is notified by the app, which goes on; a session command that raises is
shown, journaled as an interruption, and the next key resumes the session."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from textual.dom import DOMNode
from textual.widgets import Log

import fabtui.tui.screens
import fabtui.tui.widgets
from fabtui.model.events import EventKind, SessionCancelled
from fabtui.model.probe import ProbeResult
from fabtui.model.verdict import Verdict
from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.screens.session import SessionScreen
from fabtui.tui.widgets.header import StatusHeader, header_text
from fabtui.tui.workers import ForwardsWorkerErrors
from fabtui.views.status import FabricSnapshot, Health, PollState
from fabtui.views.updates import Results, StatusUpdate
from tests.support.guided import open_book, with_book
from tests.support.site_probes import DANGER_PROBE
from tests.support.tui_support import (
    NOW,
    asynctest,
    make_app,
    result,
    screen_text,
    until,
    workspace,
)

NIC = "node001:mlx5_0"


class Broken:
    """A source whose every poll raises."""

    def __init__(self) -> None:
        self.polls = 0

    async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
        self.polls += 1
        raise KeyError("x")
        yield  # an async generator, as a source's poll is


class FailsOnce:
    """A source whose first poll raises; the later ones read the NIC ok."""

    def __init__(self) -> None:
        self.polls = 0

    async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
        self.polls += 1
        if self.polls == 1:
            raise ConnectionError("prometheus: connection refused")
        yield Results(result("nic.ethtool", NIC, [(NIC, "rate.tx_prio3_pause", 0.0,
                                                    Verdict.OK)], at=time.time()), 60.0)


def notices(app: FabtuiApp, severity: str = "error") -> list[str]:
    return [str(n.message) for n in app._notifications if n.severity == severity]


def header_line(app: FabtuiApp) -> str:
    return screen_text(app).splitlines()[1]


def test_the_header_says_a_round_failed_and_when_it_tries_again() -> None:
    failed = FabricSnapshot(NOW, 1, PollState.FAILED, {}, {}, {}, failure="KeyError: 'x'",
                            retry_s=2.0)
    assert header_text("demo", None, failed, paused=False, held=0, now=NOW) == \
        "demo · source failed: KeyError: 'x' · retry in 2s · no data yet"
    quick = FabricSnapshot(NOW, 1, PollState.FAILED, {}, {}, {}, failure="OSError",
                           retry_s=0.5)
    assert "source failed: OSError · retry in 0.5s" in \
        header_text("demo", None, quick, paused=False, held=0, now=NOW)


@asynctest
async def test_a_raising_source_shows_in_the_header_and_a_notice_within_one_poll() -> None:
    source = Broken()
    app = FabtuiApp(workspace(), source=source, interval=5.0)
    async with app.run_test(size=(160, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        await until(pilot, lambda: "source failed" in header_line(app), "the failed round",
                    seconds=20)
        assert "source failed: KeyError: 'x' · retry in 5s" in header_line(app)
        assert screen.query_one(StatusHeader).has_class("-failed")
        assert source.polls == 1 and app.poller is not None and app.poller.rounds == 1
        await until(pilot, lambda: any("KeyError: 'x'" in n for n in notices(app)),
                    "the failure's notice", seconds=20)
        assert any(n.startswith("source failed: KeyError: 'x'") for n in notices(app))
        assert app.is_running
    assert app.poller is not None and app.poller.cancelled


@asynctest
async def test_a_source_that_fails_once_then_answers_returns_to_a_normal_header() -> None:
    source = FailsOnce()
    app = FabtuiApp(workspace(), source=source, interval=0.2)
    said: list[str] = []  # every error notice, kept: a toast expires (a slow start missed it)
    notify = app.notify

    def kept(message: str, **kwargs: Any) -> None:
        if kwargs.get("severity") == "error":
            said.append(str(message))
        notify(message, **kwargs)

    app.notify = kept  # type: ignore[method-assign]
    async with app.run_test(size=(160, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        await until(pilot, lambda: any("ConnectionError" in n for n in said),
                    "the failure's notice", seconds=20)
        await until(pilot, lambda: screen.snapshot.poll is PollState.WAITING and
                    screen.snapshot.of(NIC) is Health.OK, "a good round", seconds=20)
        await pilot.pause()
        header = header_line(app)
        assert "source failed" not in header and re.search(r"poll \d+ done in", header)
        assert not screen.query_one(StatusHeader).has_class("-failed")
        assert screen.snapshot.failure is None
        assert "the source answered again" in notices(app, "information")
        # one notice for the failure, however many rounds it lasts
        assert len([n for n in said if "ConnectionError" in n]) == 1


@asynctest
async def test_a_worker_that_raises_is_notified_and_the_app_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Probe-now's worker on the Fabric screen (a screen's worker, forwarded to the app's
    handler) and the report's worker (the app's own)."""
    ws = workspace()

    async def unreachable(*args: Any, **kwargs: Any) -> ProbeResult:
        raise OSError("no route to host")

    monkeypatch.setattr(ws, "run_probe", unreachable)
    app = make_app(ws)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("slash", *NIC, "enter")
        await pilot.pause()
        await pilot.press("r")
        await until(pilot, lambda: any("OSError" in n for n in notices(app)),
                    "the worker's failure", seconds=20)
        assert "probe on demand failed: OSError: no route to host" in notices(app)
        assert isinstance(app.screen, FabricScreen) and app.is_running

        from fabtui.workspace import reporting

        def full(*args: Any, **kwargs: Any) -> Path:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(reporting, "write_newest", full)
        app.action_report()
        await until(pilot, lambda: any("session report failed" in n for n in notices(app)),
                    "the report worker's failure", seconds=20)
        assert "session report failed: OSError: [Errno 28] No space left on device" in \
            notices(app)
        assert app.is_running


def test_every_screen_and_widget_that_runs_a_worker_forwards_its_failures() -> None:
    """Textual's `Worker.StateChanged` does not bubble: a node that runs workers and does not
    forward them would let their failures vanish again."""
    running = []
    for package in (fabtui.tui.screens, fabtui.tui.widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ != module.__name__ or not issubclass(cls, DOMNode):
                    continue
                source = inspect.getsource(cls)
                if "@work(" in source or "run_worker(" in source:
                    running.append(cls)
                    assert issubclass(cls, ForwardsWorkerErrors), cls
    assert FabricScreen in running and SessionScreen in running


BOOK = """---
id: failing-test
title: A command whose transport fails once
summary: two local commands
symptoms: [failing test]
---

# Failing

## One

```sh {id=first}
echo first
```

```sh {id=second}
echo second
```
"""


@asynctest
async def test_a_session_command_that_raises_is_shown_and_the_next_key_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An OSError from the transport in the middle of a block (nothing in the engine expects
    it): a notice and a line in the output say so, the journal records the session
    interrupted by it, and the keys still work: `n` resumes it and runs that block again."""
    ws = with_book(tmp_path, "failing-test", BOOK)
    app = make_app(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_book(pilot, app, "failing-test")
        session = app.screen
        assert isinstance(session, SessionScreen) and session.engine is not None
        local = session.engine.runner.transports.local
        run = local.run
        calls = []

        async def fails_once(*args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            if len(calls) == 1:
                raise OSError(24, "Too many open files")
            return await run(*args, **kwargs)

        monkeypatch.setattr(local, "run", fails_once)
        await pilot.press("n")
        await until(pilot, lambda: any("Too many open files" in n for n in notices(app)),
                    "the failure's notice", seconds=20)
        said = next(n for n in notices(app) if "Too many open files" in n)
        assert said == "next failed: OSError: [Errno 24] Too many open files; the session " \
            "stopped there: n or g resumes it"
        await until(pilot, lambda: not session.busy, "the driver idle", seconds=20)
        log = session.query_one("#output", Log)
        assert any("next failed: OSError" in line for line in log.lines)
        assert session.view.state == "interrupted"
        assert session.view.reason == \
            "stopped by an error: OSError: [Errno 24] Too many open files"
        await pilot.press("n")
        await until(pilot, lambda: session.view.states.get("first") == "ok",
                    "the block run again after the resume", seconds=20)
        # resumed: why it stopped before is no longer shown as the session's state
        assert session.view.state == "running" and session.view.reason == ""
        await pilot.press("n")
        await until(pilot, lambda: session.view.state == "finished", "the session's end",
                    seconds=20)
        session_id = session.session
    events = ws.events(session_id or "")
    kinds = [e.kind for e in events]
    cancelled = [e.data for e in events if isinstance(e.data, SessionCancelled)]
    assert [c.reason for c in cancelled] == \
        ["stopped by an error: OSError: [Errno 24] Too many open files"]
    assert kinds.index(EventKind.SESSION_CANCELLED) < kinds.index(EventKind.SESSION_RESUMED) \
        < kinds.index(EventKind.SESSION_FINISHED)
    finished = [e.block for e in events if e.kind is EventKind.BLOCK_FINISHED]
    assert finished == ["first", "second"]


@asynctest
async def test_a_poll_plan_note_is_told_whole_once(tmp_path: Path) -> None:
    """The header is one line and cuts a long note at 80 columns: a plan item that cannot run
    (here a dangerous probe, which the poller never runs) is also a notice, whole, once."""
    (tmp_path / "danger.toml").write_text(DANGER_PROBE, encoding="utf-8")
    ws = workspace(scenario="healthy", scenario_chosen=True, probe_dirs=(tmp_path,),
                   poll=["nic.danger_test@node00*:mlx5_0"])
    app = FabtuiApp(ws, interval=0.2)
    said = "nic.danger_test@node00*:mlx5_0: not polled: the probe changes state on its " \
           "target (danger); run it from the console"
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: said in notices(app, "warning"), "the note's notice",
                    seconds=30)
        assert app.poller is not None
        rounds = app.poller.rounds
        await until(pilot, lambda: app.poller is not None and app.poller.rounds >= rounds + 2,
                    "two more rounds", seconds=30)
        assert notices(app, "warning").count(said) == 1
