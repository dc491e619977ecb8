"""Guided runbook sessions in the app on the demo fabric: opening a runbook, and key presses while
output streams at 10,000 lines a second.

Figures, each beside a reference measured in the same run:
  - opening a runbook: its guided session pushed and its first frame drawn (optic-replacement,
    35 blocks); references: pushing a bare screen with one Static, and the same with the
    session's keys in a Footer; goal <= 200 ms;
  - key latency while streaming: a producer feeds the session's output stream 10,000 lines/s
    (as the engine's `output_chunk` would, 100 lines every 10 ms) while keys are pressed (the
    outline scrolled, the frame drawn); reference: the same key presses with nothing
    streaming; goal: answered <= 100 ms, and every line reached the log.
Prints figures; never fails on timing.

    python benchmarks/tui_runbooks.py            # 5 s of streaming, 20 opens
    python benchmarks/tui_runbooks.py --smoke    # 1 s, 5 opens (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fabtui.config import load_settings  # noqa: E402
from fabtui.workspace import Workspace  # noqa: E402

OPEN_GOAL_MS = 200
KEY_GOAL_MS = 100
RATE = 10_000
SIZE = (120, 30)
"""Small enough that the session's outline scrolls (the keys move it)."""


async def measure(seconds: float, opens: int) -> dict[str, list[float]]:
    from textual.screen import Screen
    from textual.widgets import Static

    from fabtui.tui.app import FabtuiApp
    from fabtui.tui.commands import SESSION_COMMANDS, bindings
    from fabtui.tui.screens.session import SessionScreen
    from fabtui.tui.widgets.footer import KeyFooter
    from fabtui.tui.widgets.session_parts import OutlineList

    settings = dataclasses.replace(load_settings(), scenario="healthy", scenario_chosen=True)
    app = FabtuiApp(Workspace(settings), live=False)
    figures: dict[str, list[float]] = {"open": [], "bare": [], "footed": [], "key": [],
                                       "idle_key": [], "lines": []}

    class Bare(Screen[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield Static("bare")

    class Footed(Screen[None]):
        """A bare screen with the session's keys in a Footer (what every screen pays)."""

        BINDINGS = bindings(SESSION_COMMANDS)

        def compose(self):  # type: ignore[no-untyped-def]
            yield Static("bare")
            yield KeyFooter()

    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await pilot.pause()
        book = app.workspace.runbook("optic-replacement")
        async def first_frame(screen: Screen[None]) -> float:
            """Seconds from pushing `screen` to its first frame drawn (not Pilot's idle)."""
            drawn = asyncio.Event()
            start = time.perf_counter()
            await app.push_screen(screen)
            screen.call_after_refresh(drawn.set)
            await drawn.wait()
            seconds = time.perf_counter() - start
            app.pop_screen()
            await pilot.pause()
            return seconds

        for _ in range(opens):
            figures["open"].append(await first_frame(
                SessionScreen(book, inputs={"port": "leaf-g00-r3:Ethernet16"})))
            figures["bare"].append(await first_frame(Bare()))
            figures["footed"].append(await first_frame(Footed()))
        session = SessionScreen(book, inputs={"port": "leaf-g00-r3:Ethernet16"})
        await app.push_screen(session)
        await pilot.pause()
        outline = session.query_one("#outline", OutlineList)
        outline.focus()

        async def keys(into: str, until: float) -> None:
            """Press down/up on the outline; answered when its cursor has moved (the key
            handled on the app's loop), measured without waiting for the app to idle."""
            n = 0
            while time.perf_counter() < until:
                before = outline.cursor
                key = "down" if outline.cursor < len(outline.lines) - 1 and n % 20 < 10 \
                    else "up"
                start = time.perf_counter()
                app.simulate_key(key)
                while outline.cursor == before and time.perf_counter() - start < 2:
                    await asyncio.sleep(0.001)
                figures[into].append(time.perf_counter() - start)
                n += 1
                await asyncio.sleep(0.02)

        await keys("idle_key", time.perf_counter() + min(seconds, 1.0))
        sent = 0
        stop = time.perf_counter() + seconds

        async def produce() -> None:
            nonlocal sent
            begun = time.perf_counter()
            while time.perf_counter() < stop:
                due = int((time.perf_counter() - begun) * RATE)
                for _ in range(due - sent):
                    session.stream.add(f"line {sent:07d} rx_prio3_bytes: {sent * 4096}")
                    sent += 1
                await asyncio.sleep(0.01)

        producer = asyncio.create_task(produce())
        await keys("key", stop)
        await producer
        await pilot.pause(0.2)
        figures["lines"] = [float(sent), float(session.stream.written)]
    return figures


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.1f} {max(values) * 1000:8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="1 s of streaming (CI)")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    seconds, opens = (1.0, 5) if args.smoke else (args.seconds, 20)
    with tempfile.TemporaryDirectory(prefix="fabtui-tui-runbooks-") as tmp:
        os.environ.update(HOME=tmp, XDG_DATA_HOME=str(Path(tmp) / "data"),
                          XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        os.environ.pop("FABTUI_CONFIG", None)
        figures = asyncio.run(measure(seconds, opens))
    sent, written = figures["lines"]
    opened = statistics.median(figures["open"])
    key = statistics.median(figures["key"])
    print(f"{os.cpu_count()} CPUs; {SIZE[0]}x{SIZE[1]}; {opens} opens; {seconds:g} s streamed "
          f"at {RATE:,} lines/s")
    print(f"{'figure':<58}{'median ms':>9}{'max ms':>9}")
    print(f"{'reference: push a bare screen, first frame':<58}{ms(figures['bare'])}")
    print(f"{'reference: the same with the session keys in a Footer':<58}"
          f"{ms(figures['footed'])}")
    print(f"{'open optic-replacement as a guided session, first frame':<58}"
          f"{ms(figures['open'])}   {opened / statistics.median(figures['bare']):.2f}x; goal "
          f"<= {OPEN_GOAL_MS} ms: {'met' if opened * 1000 <= OPEN_GOAL_MS else 'NOT met'}")
    print(f"{'reference: key press answered, nothing streaming':<58}{ms(figures['idle_key'])}")
    print(f"{'key press answered while 10,000 lines/s stream':<58}{ms(figures['key'])}   "
          f"{key / statistics.median(figures['idle_key']):.2f}x; goal <= {KEY_GOAL_MS} ms: "
          f"{'met' if key * 1000 <= KEY_GOAL_MS else 'NOT met'}")
    print(f"lines streamed {sent:,.0f}, written into the log {written:,.0f} "
          f"({'all' if sent == written else 'NOT all'})")


if __name__ == "__main__":
    main()
