"""What the app's tests share: a workspace on the demo fabric, fake probe results, a frozen
clock, the screen as text, and the SVG snapshot check.

Snapshots: pytest-textual-snapshot 1.1.0 pins syrupy 4.8.0, which does not install beside
pytest 9, so `assert_snapshot` compares `App.export_screenshot()` with a file under
tests/snapshots/ itself. The SVG's generated ids (`terminal-123456-r1`) differ on every run and
are normalised first. `FABTUI_UPDATE_SNAPSHOTS=1 pytest ...` rewrites the files: review the
diff before committing them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import re
import time
from collections.abc import Callable, Coroutine, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import textual._wait

from fabtui.config import load_settings
from fabtui.model.findings import Finding, Severity
from fabtui.model.probe import Metric, ProbeResult
from fabtui.model.verdict import Verdict
from fabtui.tui.app import FabtuiApp
from fabtui.tui.screens.case_view import CaseView
from fabtui.workspace import Workspace
from tests.support.case_seed import seed_case_library

textual._wait.SLEEP_GRANULARITY = 0.005
textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20
"""The pilot waits for the app to go idle after every key it presses, twice (`wait_for_idle`):
rounds of a 1/50 s sleep until one round costs under 1/20 of it in CPU. At that grain typing a
22-character port name waited 1-2 s, and the app tests were wall-bound by it. Textual's own rule
is kept (a round idle when it used under 5 % CPU), only at a finer grain of 5 ms: the app state
the tests read is the same, reached sooner. Every app test imports this module, so every one
runs at this grain."""

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"
NOW = 1_790_000_000.0
"""The frozen clock every app test runs on."""


def workspace(*, cold_cases: bool = False, **changes: Any) -> Workspace:
    """A workspace on the demo fabric (the test's own data folder, from conftest), its case
    library already holding the shipped cases and their index, as on any start after the
    first (see `case_seed`); `cold_cases`: a data folder without one, as on the very
    first start."""
    settings = dataclasses.replace(load_settings(), **changes)
    if not cold_cases:
        seed_case_library(settings)
    return Workspace(settings)


def make_app(ws: Workspace | None = None, **kwargs: Any) -> FabtuiApp:
    """The app without a poller, on the frozen clock: tests post snapshots themselves."""
    return FabtuiApp(ws or workspace(), live=False, clock=lambda: NOW, **kwargs)


def result(probe: str, target: str, metrics: list[tuple[str, str, float, Verdict]], *,
           at: float = NOW, error: str | None = None) -> ProbeResult:
    """A probe result as the runner would give it: (component, metric, value, verdict)."""
    when = datetime.fromtimestamp(at, UTC)
    verdicts = [v for *_, v in metrics]
    verdict = Verdict.ERROR if error else max(verdicts, key=lambda v: v.rank,
                                              default=Verdict.OK)
    findings = [Finding(rule="threshold", severity=Severity.ERROR if v is Verdict.FAIL
                        else Severity.WARNING, message=f"{c}: {n} = {x}", component=c)
                for c, n, x, v in metrics if v in (Verdict.FAIL, Verdict.WARN)]
    return ProbeResult(probe=probe, target=target, command="fake", started_at=when,
                       ended_at=when, verdict=verdict, error=error, findings=findings,
                       metrics=[Metric(name=n, value=x, unit="/s" if n.startswith("rate.")
                                       else "", component=c, verdict=v)
                                for c, n, x, v in metrics])


def healthy_round(app: FabtuiApp, at: float = NOW) -> None:
    """Every NIC and every leaf port reads ok at `at`."""
    for cell in app.fabric.attachments():
        app.status.apply(result("nic.ethtool", cell.nic, [
            (cell.nic, "rate.tx_prio3_pause", 0.0, Verdict.OK)], at=at), 20.0)
        if cell.port:
            app.status.apply(result("switch.pfc", cell.port.partition(":")[0], [
                (cell.port, "rate.rx.PFC3", 0.0, Verdict.OK)], at=at), 20.0)


def storm(app: FabtuiApp, pauses: float, at: float = NOW) -> None:
    """node006:mlx5_4 storms: its NIC and its leaf port fail."""
    app.status.apply(result("nic.ethtool", "node006:mlx5_4", [
        ("node006:mlx5_4", "rate.tx_prio3_pause", pauses, Verdict.FAIL),
        ("node006:mlx5_4", "pause_ratio.tx_prio3", 0.95, Verdict.FAIL)], at=at), 20.0)
    app.status.apply(result("switch.pfc", "leaf-g00-r4", [
        ("leaf-g00-r4:Ethernet40", "rate.rx.PFC3", pauses, Verdict.FAIL)], at=at), 20.0)


def screen_text(app: FabtuiApp) -> str:
    """The screen as plain text, one line per row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def until(pilot: Any, check: Callable[[], object], what: str, seconds: float = 60.0, *,
                then_idle: bool = True) -> None:
    """Pump the app until `check()` holds, then (`then_idle`) let it go idle; fail after
    `seconds`, naming `what` and showing the screen. What the app does in a worker or on its
    next refresh is waited for this way, not by idleness alone: a process starved of CPU
    (a loaded machine) reads as idle."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}:\n" \
            f"{screen_text(pilot.app)}"
        await pilot.pause(0.05)
    if then_idle:
        await pilot.pause()


async def draft_with_similar(pilot: Any, session: str) -> CaseView:
    """The case view of live session `session`'s draft (not stored), once its similar cases
    are in (the view was just asked for)."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, CaseView), "the session's draft")
    view = app.screen
    assert isinstance(view, CaseView) and not view.stored
    assert view.case.sessions == [session]
    await until(pilot, lambda: view.similar is not None, "its similar cases")
    assert view.similar is not None
    return view


async def shows(pilot: Any, *wanted: str, seconds: float = 60.0) -> str:
    """The screen's text once every one of `wanted` is on it (see `until`)."""
    await until(pilot, lambda: all(w in screen_text(pilot.app) for w in wanted),
                " and ".join(map(repr, wanted)), seconds)
    return screen_text(pilot.app)


async def assert_snapshot(pilot: Any, name: str) -> None:
    """The app's screen equals tests/snapshots/NAME.svg (see the module docstring).

    A few frames are let by first, and then frames until two in a row agree: at the pilot's
    5 ms idle grain the app reads idle before its next 60 Hz frame has laid out what the last
    message changed (a scrollbar that the new content needs showed in one run and not the
    next), and on a loaded machine that takes longer."""
    await pilot.pause(0.05)
    await pilot.pause()
    app = pilot.app
    svg = _normalise(app.export_screenshot(title="fabtui"))
    for _ in range(40):  # settled: two frames 50 ms apart agree (a loaded machine lays out late)
        await pilot.pause(0.05)
        again = _normalise(app.export_screenshot(title="fabtui"))
        if again == svg:
            break
        svg = again
    path = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("FABTUI_UPDATE_SNAPSHOTS") or not path.exists():
        if not os.environ.get("FABTUI_UPDATE_SNAPSHOTS") and os.environ.get("CI"):
            raise AssertionError(f"{path} is missing: run with FABTUI_UPDATE_SNAPSHOTS=1")
        path.write_text(svg, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    if svg != expected:
        failed = path.with_suffix(".actual.svg")
        failed.write_text(svg, encoding="utf-8")
        raise AssertionError(f"screen differs from {path}; see {failed} "
                             "(FABTUI_UPDATE_SNAPSHOTS=1 accepts it)")


def _normalise(svg: str) -> str:
    return re.sub(r"terminal-\d+", "terminal", svg)


def asynctest(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test on a fresh event loop (the project does without pytest-asyncio)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def utc(monkeypatch: Any) -> Iterator[None]:
    """For an autouse fixture (`yield from utc(monkeypatch)`): local time is UTC for the
    test, so the header's clock reads the same everywhere; everything `monkeypatch` set is
    undone, and the zone restored, after it."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
