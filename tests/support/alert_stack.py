"""The running pieces of the end-to-end alert tests (tests/test_alerts_live*.py): the simulated
fabric's exporter playing the healthy demo an hour in, a real Prometheus scraping it every
`INTERVAL` (`SLOW_SCRAPES`: longer for some faults) with `fabtui prom rules --alerting` loaded
(recording and alerting, as generated, for a rate window of `WINDOWS` intervals), a real
Alertmanager whose webhook is fabtui's receiver
(`fabtui.alerts.receiver` on the workspace's `Receiver`), all on loopback in a temp folder; one
stack per test (`stack_fixture`), so no test waits for another's alerts to resolve, and the
tests spread over pytest-xdist's workers (tests/conftest.py's `SPREAD`).

A test plants the faults of shipped scenarios as they stand at each scenario's start (their
timelines injected into the running fabric, shifted so that now is the scenario's start: the
counters of every other link stay continuous) once Prometheus holds a healthy scrape of every
series, and waits on conditions, never a fixed sleep: every rule evaluated over a window of
samples all scraped after the plant (the faults' steady state: what they will raise, they
raise by then), and every alert Prometheus has firing delivered to the receiver as firing. What
the operator sees is read the way the app reads it: a second workspace on the same data folder
loads the alerts journal (`fabtui.views.incidents`); the time from the webhook's arrival to the
incident showing there is printed, never asserted.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from fabtui.alerts.incidents import Incident, Receipt
from fabtui.alerts.receiver import AlertReceiver
from fabtui.config import load_settings
from fabtui.paths import demo_topology, shipped_templates
from fabtui.prom.alerting import GROUP
from fabtui.sim.exporter import scrape_config
from fabtui.sim.scenario import FaultSpec, find_scenario, load_scenario
from fabtui.sim.state import fresh_state, state_file, update_state, write_state
from fabtui.views.incidents import IncidentList
from fabtui.workspace import Workspace
from fabtui.workspace.alerting import Receiver
from fabtui.workspace.promsource import live_source
from tests.support import REPO
from tests.support.alertmanager import AlertmanagerServer, require_alertmanager
from tests.support.prom_server import PrometheusServer, free_port, require_prometheus

INTERVAL = 2.0
"""Seconds between scrapes and between rule evaluations (a scrape times out after as long)."""
SLOW_SCRAPES = {"optic-degrading": 3.0}
"""The interval of a test planting these: a scrape of the demo with an ageing optic in its
history is ~0.7 s of Python for /metrics/node and 0.5 s for /metrics/switch alone (each family
has an exporter process of its own, so they do not add up), measured up to 2.1 s on two
loaded cores: at 2 s, scrapes timed out."""
WINDOWS = 5
"""The rules' `rate()` window in scrape intervals (the config's rule: at least four)."""
FLAP_WINDOW = "90s"
"""The flap rules' window (15 min by default): longer than the link-flap scenario's period
(60 s), so a flapping link stays firing between its flaps rather than resolving and firing
again each minute."""
FAMILIES = ("dcgm", "node", "switch")


class Stack:
    """The running pieces (see the module docstring)."""

    def __init__(self, folder: Path, interval: float = INTERVAL) -> None:
        self.folder = folder
        self.interval = interval
        self.window = WINDOWS * interval
        self.data = folder / "data"
        self.state = state_file(self.data)
        healthy = fresh_state(demo_topology(), find_scenario("healthy"), [shipped_templates()])
        # An hour into the healthy run: a scenario planted "as at its start" (up to 20 min
        # in) fits behind now.
        write_state(self.state, healthy.model_copy(update={"epoch": time.time() - 3600}))
        config = folder / "config.toml"
        config.write_text(f'data_dir = "{self.data}"\nsource = "prometheus"\n[prometheus]\n'
                          f'url = "http://127.0.0.1:9"\nwindow = "{self.window:g}s"\n')
        self.ws = Workspace(load_settings(config))
        source = live_source(self.ws)
        assert source is not None
        rules = source.rules(alerting=True, flap_window=FLAP_WINDOW)
        self.lines: list[str] = []
        self.receipts: list[tuple[float, Receipt]] = []
        self.receiver = Receiver(self.ws, self.lines.append)
        self.receiver.listeners.append(lambda r: self.receipts.append((time.time(), r)))
        self.arrivals: list[float] = []
        self.delivered: dict[frozenset[tuple[str, str]], str] = {}
        """Each alert Alertmanager sent (its labels) and its last status."""

        def handle(body: bytes, peer: str) -> tuple[int, str]:
            self.arrivals.append(time.time())
            answer = self.receiver.receive(body, peer)
            with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                for alert in json.loads(body)["alerts"]:
                    self.delivered[frozenset(alert["labels"].items())] = alert["status"]
            return answer

        try:
            self._start_processes(folder, config, handle, rules)
        except BaseException:
            self.stop()
            raise
        self.viewer_ws = Workspace(load_settings(config))
        self.viewer = IncidentList(self.viewer_ws.alerts)
        """What the app shows: a second workspace reading the same alerts journal."""

    def _start_processes(self, folder: Path, config: Path,
                         handle: Callable[[bytes, str], tuple[int, str]], rules: str) -> None:
        """The receiver, the exporters, Alertmanager and Prometheus, all at once: Prometheus
        scrapes first ~5 s after it starts (its discovery manager's update interval), time
        the exporters use to start and build the fabric (`start`)."""
        self.http = AlertReceiver(handle, self.lines.append, port=0).start()
        # The exporters in processes of their own (`fabtui sim exporter`), one per family
        # (each serves all three; Prometheus scrapes one path of each): a scrape is Python
        # that in this process would share one interpreter lock with the receiver and the
        # tests, and in one exporter the three families' scrapes with each other.
        ports = [free_port() for _ in FAMILIES]
        self.exporter_log = (folder / "exporter.log").open("wb")
        self.exporters = [subprocess.Popen(
            [sys.executable, "-m", "fabtui", "--config", str(config), "sim", "exporter",
             "--port", str(port), "--json"], stdout=subprocess.PIPE, stderr=self.exporter_log,
            env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=folder) for port in ports]
        self.alertmanager = AlertmanagerServer(
            folder, f"http://127.0.0.1:{self.http.port}/alerts")
        every = f"{self.interval:g}s"
        self.prometheus = PrometheusServer(
            folder, "".join(scrape_config("sim", f"127.0.0.1:{port}", interval=every,
                                          families=(family,))
                            for family, port in zip(FAMILIES, ports, strict=True)),
            interval=every, rules=rules, alertmanager=f"127.0.0.1:{self.alertmanager.port}")

    def start(self) -> None:
        """Until Prometheus holds a healthy scrape of every exporter and has evaluated the
        rules on it (the baseline every counter of a planted fault rises from)."""
        urls = []
        for exporter in self.exporters:
            assert exporter.stdout is not None
            line = exporter.stdout.readline()
            if not line:
                raise RuntimeError("fabtui sim exporter did not start: "
                                   + (self.folder / "exporter.log").read_text()[-2000:])
            urls.append(json.loads(line)["url"])
        # A first scrape builds the simulated fabric (seconds on a loaded machine): done here,
        # all three at once, so that Prometheus's first scrapes do not time out.
        warm = [threading.Thread(target=_get, args=(f"{url}/metrics/{family}",))
                for family, url in zip(FAMILIES, urls, strict=True)]
        for thread in warm:
            thread.start()
        for thread in warm:
            thread.join()
        self.alertmanager.wait_ready()
        self.prometheus.wait_ready()
        self.prometheus.wait_for('count(up{job=~"sim-.*"} == 1) == 3', 60)
        self.scraped = time.time()
        """By now Prometheus holds the first healthy scrape of every exporter."""
        self.wait_evaluated(self.scraped)

    def get(self, url: str) -> object:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return json.load(answer)["data"]

    def firing(self) -> list[dict[str, object]]:
        """Prometheus's firing alerts."""
        alerts = self.get(f"{self.prometheus.url}/api/v1/alerts")
        assert isinstance(alerts, dict)
        return [x for x in alerts["alerts"] if x["state"] == "firing"]

    def evaluated(self) -> float:
        """When Prometheus last evaluated the alerting rules (epoch seconds; 0 not yet)."""
        data = self.get(f"{self.prometheus.url}/api/v1/rules?type=alert")
        assert isinstance(data, dict)
        return max((datetime.fromisoformat(g["lastEvaluation"]).timestamp()
                    for g in data["groups"] if g["name"] == GROUP), default=0.0)

    def wait_evaluated(self, after: float, timeout: float = 60.0) -> None:
        """Until the alerting rules have been evaluated after the epoch moment `after`."""
        deadline = time.monotonic() + timeout
        while self.evaluated() <= after:
            if time.monotonic() > deadline:
                raise AssertionError(f"the rules were not evaluated within {timeout}s")
            time.sleep(0.2)

    def plant(self, *names: str) -> list[FaultSpec]:
        """Inject the timelines of the scenarios `names` as they stand at their start."""
        specs: list[FaultSpec] = []
        state = update_state(self.state, lambda s: s)
        assert state is not None
        now = state.now()
        for name in names:
            scenario = load_scenario(find_scenario(name)).scenario
            offset = now - scenario.start
            assert offset > 0, "the healthy run is not far enough along"
            specs += [spec.model_copy(update={"at": spec.at + offset})
                      for spec in scenario.timeline]
        update_state(self.state, lambda s: s.model_copy(
            update={"injected": [*s.injected, *specs]}))
        return specs

    def end_faults(self) -> None:
        def end(s):  # type: ignore[no-untyped-def]
            now = s.now()
            return s.model_copy(update={"injected": [
                f if f.until is not None else f.model_copy(update={"until": now})
                for f in s.injected]})

        update_state(self.state, end)

    def undelivered(self) -> list[dict[str, str]]:
        """The labels of the alerts Prometheus has firing that the receiver was not sent as
        firing (yet)."""
        return [a["labels"] for a in self.firing() if isinstance(a["labels"], dict) and
                self.delivered.get(frozenset(a["labels"].items())) != "firing"]

    def opened(self) -> list[str]:
        """Every incident opened (or opened again) in this stack, in order."""
        return list(dict.fromkeys(i for _, r in list(self.receipts) for i in r.opened))

    def settled(self, since: float, want: int, timeout: float = 120.0) -> list[Incident]:
        """The incidents opened (or opened again) since the stack started, once there are at
        least `want`, the rules have been evaluated over a whole rate window scraped after
        `since` (when the faults were planted), and for two intervals every alert Prometheus
        has firing was delivered to the receiver as firing and no incident opened.

        Counted as distinct incidents, not as open ones: on a loaded machine a scrape that
        times out makes the series stale, the alerts resolve and fire again a scrape later,
        and the incident closes and opens again (the same one: a suspect alerting again within
        15 minutes reopens it)."""
        self.wait_evaluated(since + self.window + self.interval, timeout)
        deadline = time.monotonic() + timeout
        steady: tuple[float, list[str]] | None = None
        while time.monotonic() < deadline:
            ids = self.opened()
            if len(ids) >= want and self.firing() and not self.undelivered():
                if steady is None or steady[1] != ids:
                    steady = (time.monotonic(), ids)
                elif time.monotonic() - steady[0] >= 2 * self.interval:
                    return [self.receiver.book.incidents[i] for i in ids]
            else:
                steady = None
            time.sleep(0.2)
        raise AssertionError(f"incidents did not settle in {timeout}s: "
                             f"{[i.suspect for i in self.receiver.book.open_incidents()]}; "
                             f"undelivered: {self.undelivered()[:5]}; log: {self.lines[-8:]}")

    def all_resolved(self, timeout: float = 120.0) -> None:
        """Until Prometheus has no alert firing and the receiver no incident open."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.firing() and not self.receiver.book.open_incidents():
                return
            time.sleep(0.5)
        raise AssertionError(f"still open after {timeout}s: "
                             f"{[i.suspect for i in self.receiver.book.open_incidents()]}; "
                             f"firing: {[a['labels'] for a in self.firing()][:5]}")

    def watch(self) -> None:
        """Until `stop_watching`: refresh the app's model every 50 ms (the app's worker does
        it every second) and note when each incident first shows there."""
        self.watching = True
        self.watch_started = time.time()
        self.shown: dict[str, float] = {}

        def loop() -> None:
            while self.watching:
                for row in self.viewer.refresh():
                    self.shown.setdefault(row.id, time.time())
                time.sleep(0.05)

        self.watcher = threading.Thread(target=loop, daemon=True)
        self.watcher.start()

    def stop_watching(self) -> None:
        self.watching = False
        self.watcher.join(5)

    def shown_after_webhook(self, incident: str) -> float:
        """Seconds from the webhook that opened `incident` arriving to the app's model
        (a second workspace reading the journal) listing it."""
        opened_at = min(t for t, r in self.receipts
                        if incident in r.opened and t >= self.watch_started)
        arrival = max(a for a in self.arrivals if a <= opened_at)
        return self.shown[incident] - arrival

    def stop(self) -> None:
        """Stop whatever of the stack has started (also after a failed start)."""
        for server in (getattr(self, "prometheus", None), getattr(self, "alertmanager", None),
                       getattr(self, "http", None)):
            if server is not None:
                server.stop()
        exporters = getattr(self, "exporters", [])
        for exporter in exporters:
            exporter.terminate()
        for exporter in exporters:
            try:
                exporter.wait(timeout=10)
            except subprocess.TimeoutExpired:
                exporter.kill()
                exporter.wait()
            if exporter.stdout is not None:
                exporter.stdout.close()
        if hasattr(self, "exporter_log"):
            self.exporter_log.close()
        if hasattr(self, "viewer_ws"):
            self.viewer_ws.close()
        self.ws.close()


def _get(url: str) -> None:
    with urllib.request.urlopen(url, timeout=60) as answer:
        answer.read()


def stack_fixture(folder: Path, request: pytest.FixtureRequest) -> Iterator[Stack]:
    """A test's stack in `folder` (wrap in `pytest.fixture`), scraping every `INTERVAL`, or
    `SLOW_SCRAPES`'s interval for the test's `scenario` parameter; skips without Prometheus or
    Alertmanager (see their `require_*`)."""
    require_prometheus()
    require_alertmanager()
    callspec = getattr(request.node, "callspec", None)
    scenario = callspec.params.get("scenario") if callspec is not None else None
    running = Stack(folder, SLOW_SCRAPES.get(str(scenario), INTERVAL))
    try:
        running.start()
        yield running
    finally:
        running.stop()


def planted(stack: Stack, *scenarios: str, want: int = 1) -> list[Incident]:
    """Plant `scenarios`, return the settled incidents (and print when they showed)."""
    stack.watch()
    try:
        since = time.time()
        stack.plant(*scenarios)
        incidents = stack.settled(since, want)
    finally:
        stack.stop_watching()
    for incident in incidents:
        took = stack.shown_after_webhook(incident.id)
        print(f"\n{'+'.join(scenarios)}: incident {incident.id} ({incident.suspect}) in the "
              f"app's model {took * 1000:.0f} ms after its webhook arrived")
    return incidents
