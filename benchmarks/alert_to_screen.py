"""From Alertmanager's webhook to the incident on the app's screen, beside a bare Textual app.

Row (issue 40, "Must show"): from the webhook to an incident on screen in at most 2 s. The
receiver is the real one, `fabtui alerts serve` in a process of its own on a free loopback
port (as it runs beside Alertmanager); the app is the real one on the demo fabric (its live
poller running), headless under Textual's Pilot, on the Incidents screen (`A`). Each post is
an Alertmanager v4 webhook body (a cable down, as the rule pack labels it); the time runs from
the moment the POST starts until the incident's suspect is in the screen's rendered text (the
compositor's strips, looked at every 5 ms); the incident is then resolved and gone from the
screen before the next post. Printed beside it: the HTTP answer (the incident journaled), and
the reference measured in the same run: a bare Textual app whose DataTable gets a row from a
message posted by another thread, the time until that row is rendered. Prints figures; never
fails on timing.

    python benchmarks/alert_to_screen.py           # 9 posts each
    python benchmarks/alert_to_screen.py --smoke   # 2 posts each (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GOAL_S = 2.0
POLL_S = 0.005
TIMEOUT_S = 60.0
CABLES = [(f"node00{n}", f"mlx5_{n - 1}") for n in range(1, 9)]
"""One cable per post: eight nodes, eight rails, no two sharing a node or a leaf."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def body(node: str, device: str, status: str, starts_at: str) -> bytes:
    """An Alertmanager v4 notification with one `FabricNicLinkDown` alert (the rule pack's
    labels: `fabtui prom rules`)."""
    labels = {"alertname": "FabricNicLinkDown", "severity": "critical",
              "instance": f"{node}:9100", "device": device, "fabtui_element": "ibport",
              "fabtui_role": "cause", "fabtui_fault": "link-down", "fabtui_suspect": "link"}
    alert = {"status": status, "labels": labels,
             "annotations": {"summary": f"{node} {device} is down", "runbook": "link-flap"},
             "startsAt": starts_at, "endsAt": "0001-01-01T00:00:00Z",
             "generatorURL": "http://prometheus:9090/graph", "fingerprint": f"{node}-{device}"}
    return json.dumps({"version": "4", "groupKey": "{}:{alertname=\"FabricNicLinkDown\"}",
                       "truncatedAlerts": 0, "status": status, "receiver": "fabtui",
                       "groupLabels": {"alertname": "FabricNicLinkDown"},
                       "commonLabels": labels, "commonAnnotations": {},
                       "externalURL": "http://alertmanager:9093",
                       "alerts": [alert]}).encode()


def post(url: str, data: bytes) -> float:
    """POST and return the seconds until the answer (raises on a non-200)."""
    start = time.perf_counter()
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
        answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{url}: HTTP {answer.status}")
    return time.perf_counter() - start


def rendered(app: Any) -> str:
    """The screen as the compositor last rendered it, one line per row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def wait_for(check: Callable[[], bool], what: str) -> float:
    """Seconds until `check()` holds, looked at every `POLL_S`."""
    start = time.perf_counter()
    while not check():
        if time.perf_counter() - start > TIMEOUT_S:
            raise TimeoutError(f"no {what} after {TIMEOUT_S:.0f} s")
        await asyncio.sleep(POLL_S)
    return time.perf_counter() - start


async def on_screen_within(app: Any, text: str, *, shown: bool) -> float:
    """Seconds until `text` is on the rendered screen (`shown`), or gone from it."""
    return await wait_for(lambda: (text in rendered(app)) == shown,
                          f"{text!r} {'shown' if shown else 'gone'}")


async def fabtui_app(url: str, posts: int) -> tuple[list[float], list[float]]:
    """(webhook -> row rendered, webhook -> HTTP answer) of each post."""
    from fabtui.config import load_settings
    from fabtui.tui.app import FabtuiApp
    from fabtui.tui.screens.incidents import IncidentsScreen
    from fabtui.workspace import Workspace

    app = FabtuiApp(Workspace(load_settings()))
    on_screen: list[float] = []
    answered: list[float] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("A")
        await wait_for(lambda: isinstance(app.screen, IncidentsScreen) and
                       "open incident" in rendered(app), "Incidents screen")
        for index in range(posts + 1):  # the first is a warm-up, not counted
            node, device = CABLES[index % len(CABLES)]
            starts = f"2026-12-05T03:{index // 60:02d}:{index % 60:02d}Z"
            leaf_port = app.workspace.graph().far_end(f"{node}:{device}") or node
            start = time.perf_counter()
            answer = asyncio.create_task(asyncio.to_thread(
                post, url, body(node, device, "firing", starts)))
            await on_screen_within(app, leaf_port, shown=True)
            seconds = time.perf_counter() - start
            http = await answer
            if index:
                on_screen.append(seconds)
                answered.append(http)
            await asyncio.to_thread(post, url, body(node, device, "resolved", starts))
            await on_screen_within(app, leaf_port, shown=False)
    return on_screen, answered


async def bare_app(posts: int) -> list[float]:
    """A bare Textual app: a message posted from another thread adds a DataTable row; the
    seconds until the row is rendered."""
    from textual.app import App, ComposeResult
    from textual.message import Message
    from textual.widgets import DataTable

    class Row(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

        def on_mount(self) -> None:
            self.query_one(DataTable).add_columns("opened", "suspect", "firing", "runbook")

        def on_row(self, message: Row) -> None:
            table = self.query_one(DataTable)
            table.clear()
            table.add_row("03:00:00", message.text, "1/1", "link-flap")

    app = Bare()
    seconds: list[float] = []
    async with app.run_test(size=(100, 30)):
        await wait_for(lambda: "suspect" in rendered(app), "table")
        for index in range(posts + 1):
            text = f"leaf-g00-r{index % 8}:Ethernet{index}"
            start = time.perf_counter()
            threading.Thread(target=app.post_message, args=(Row(text),)).start()
            await on_screen_within(app, text, shown=True)
            if index:
                seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="2 posts each (CI)")
    parser.add_argument("--posts", type=int, default=9)
    args = parser.parse_args()
    posts = 2 if args.smoke else args.posts
    with tempfile.TemporaryDirectory(prefix="fabtui-alert-to-screen-") as tmp:
        work = Path(tmp)
        for name in [k for k in os.environ if k.startswith("FABTUI_")]:
            del os.environ[name]
        os.environ.update(HOME=str(work), XDG_CONFIG_HOME=str(work / "config"),
                          XDG_DATA_HOME=str(work / "data"))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        port = free_port()
        log = (work / "serve.log").open("wb")
        serve = subprocess.Popen([sys.executable, "-m", "fabtui", "alerts", "serve",
                                  "--listen", f"127.0.0.1:{port}"], env=env, cwd=work,
                                 stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + TIMEOUT_S
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/healthy",
                                                timeout=5):
                        break
                except OSError:
                    if serve.poll() is not None or time.monotonic() > deadline:
                        log.flush()
                        sys.exit("fabtui alerts serve did not start:\n" +
                                 (work / "serve.log").read_text()[-2000:])
                    time.sleep(0.05)
            sys.path.insert(0, str(REPO))
            reference = asyncio.run(bare_app(posts))
            on_screen, answered = asyncio.run(fabtui_app(f"http://127.0.0.1:{port}/alerts",
                                                         posts))
        finally:
            serve.terminate()
            serve.wait(timeout=30)
            log.close()
    print(f"{os.cpu_count()} CPUs; {posts} posts each (after one warm-up); seconds")
    print(f"{'':<58}{'p50':>8}{'max':>8}")
    print(f"{'bare Textual app: message -> DataTable row rendered (ref)':<58}"
          f"{statistics.median(reference):>8.3f}{max(reference):>8.3f}")
    print(f"{'webhook POST -> HTTP 200 (incident journaled)':<58}"
          f"{statistics.median(answered):>8.3f}{max(answered):>8.3f}")
    worst = max(on_screen)
    print(f"{'webhook POST -> incident row on the Incidents screen':<58}"
          f"{statistics.median(on_screen):>8.3f}{worst:>8.3f}   goal <= {GOAL_S:.0f} s: "
          f"{'met' if worst <= GOAL_S else 'NOT met'}")


if __name__ == "__main__":
    main()
