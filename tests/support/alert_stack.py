"""The running pieces of the end-to-end alert tests (tests/test_alerts_live*.py): the simulated
fabric's exporter playing the healthy demo an hour in, a real Prometheus scraping it every second
with `fabtui prom rules` loaded (recording and alerting), a real Alertmanager whose webhook is
fabtui's receiver (`fabtui.alerts.receiver` on the workspace's `Receiver`), all on loopback in a
temp folder; one stack per test module (`stack_fixture`).

A test plants the faults of shipped scenarios as they stand at each scenario's start (their
timelines injected into the running fabric, shifted so that now is the scenario's `start`: the
counters of every other link stay continuous), waits until the incidents settle, checks them,
then ends the faults and waits until every incident has resolved. What the operator sees is
read the way the app reads it: a second workspace on the same data folder loads the alerts
journal (`fabtui.views.incidents`); the time from the webhook's arrival to the incident showing
there is printed, never asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabtui.alerts.incidents import Incident, Receipt
from fabtui.alerts.receiver import AlertReceiver
from fabtui.config import load_settings
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.exporter import scrape_config
from fabtui.sim.scenario import FaultSpec, find_scenario, load_scenario
from fabtui.sim.state import fresh_state, state_file, update_state, write_state
from fabtui.views.incidents import IncidentList
from fabtui.workspace import Workspace
from fabtui.workspace.alerting import Receiver
from fabtui.workspace.promsource import live_source
from tests.support import REPO
from tests.support.alertmanager import AlertmanagerServer, require_alertmanager
from tests.support.prom_server import PrometheusServer, require_prometheus

SETTLE_S = 25.0
"""Incidents unchanged this long (after the last notification) count as settled."""


class Stack:
    """The running pieces (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.state = state_file(self.data)
        healthy = fresh_state(demo_topology(), find_scenario("healthy"), [shipped_templates()])
        # An hour into the healthy run: a scenario planted "as at its start" (up to 20 min
        # in) fits behind now.
        write_state(self.state, healthy.model_copy(update={"epoch": time.time() - 3600}))
        config = folder / "config.toml"
        config.write_text(f'data_dir = "{self.data}"\nsource = "prometheus"\n[prometheus]\n'
                          'url = "http://127.0.0.1:9"\nwindow = "40s"\n')
        # The exporter in a process of its own (`fabtui sim exporter`): a scrape of the demo
        # with an ageing optic in its history is ~1 s of Python, which in this process would
        # share one interpreter lock with the receiver and the tests.
        self.exporter_log = (folder / "exporter.log").open("wb")
        self.exporter = subprocess.Popen(
            [sys.executable, "-m", "fabtui", "--config", str(config), "sim", "exporter",
             "--port", "0", "--json"], stdout=subprocess.PIPE, stderr=self.exporter_log,
            env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=folder)
        assert self.exporter.stdout is not None
        self.exporter_url = json.loads(self.exporter.stdout.readline())["url"]
        self.ws = Workspace(load_settings(config))
        self.lines: list[str] = []
        self.receipts: list[tuple[float, Receipt]] = []
        self.receiver = Receiver(self.ws, self.lines.append)
        self.receiver.listeners.append(lambda r: self.receipts.append((time.time(), r)))
        self.arrivals: list[float] = []

        def handle(body: bytes, peer: str) -> tuple[int, str]:
            self.arrivals.append(time.time())
            return self.receiver.receive(body, peer)

        self.http = AlertReceiver(handle, self.lines.append, port=0).start()
        self.alertmanager = AlertmanagerServer(
            folder, f"http://127.0.0.1:{self.http.port}/alerts")
        source = live_source(self.ws)
        assert source is not None
        # A flap counts within 3 minutes here (15 min by default): the test's faults end and
        # their alerts resolve within the module's time.
        rules = source.rules(alerting=True, flap_window="3m")
        self.prometheus = PrometheusServer(
            # Every 10 s: a scrape of the whole demo fabric with faults in its history takes
            # 1-2 s alone (an ageing optic's ramp, a day of flaps), several times that on a
            # loaded machine, and a scrape that times out makes every series stale.
            folder, scrape_config("sim", self.exporter_url.removeprefix("http://"),
                                  interval="10s"),
            rules=rules,
            alertmanager=f"127.0.0.1:{self.alertmanager.port}")
        self.viewer = IncidentList(Workspace(load_settings(config)).alerts)
        """What the app shows: a second workspace reading the same alerts journal."""

    def firing(self) -> list[dict[str, object]]:
        with urllib.request.urlopen(f"{self.prometheus.url}/api/v1/alerts", timeout=5) as a:
            alerts = json.load(a)["data"]["alerts"]
        return [x for x in alerts if x["state"] == "firing"]

    def plant(self, *names: str) -> list[FaultSpec]:
        """Inject the timelines of the scenarios `names` as they stand at their start (the
        faults planted before stay in the history, ended: removing them would rewrite the
        counters of their links, which Prometheus would read as resets)."""
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

    def settled(self, since: float, want: int, timeout: float = 180.0) -> list[Incident]:
        """The incidents opened (or opened again) since `since`, once there are at least
        `want` and no notification came for `SETTLE_S`. Counted as distinct incidents, not
        as open ones: on a loaded machine a scrape that times out makes the series stale, the
        alerts resolve and fire again a scrape later, and the incident closes and opens again
        (the same one: a suspect alerting again within 15 minutes reopens it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            count = len(self.receipts)
            ids = list(dict.fromkeys(i for t, r in self.receipts if t >= since
                                     for i in r.opened))
            last = self.receipts[-1][0] if self.receipts else 0.0
            if len(ids) >= want and time.time() - last >= SETTLE_S and \
                    count == len(self.receipts):
                return [self.receiver.book.incidents[i] for i in ids]
            time.sleep(0.5)
        raise AssertionError(f"incidents did not settle in {timeout}s: "
                             f"{[i.suspect for i in self.receiver.book.open_incidents()]}; "
                             f"log: {self.lines[-8:]}")

    def all_resolved(self, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.firing() and not self.receiver.book.open_incidents():
                return
            time.sleep(1.0)
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
        self.prometheus.stop()
        self.alertmanager.stop()
        self.http.stop()
        self.exporter.terminate()
        try:
            self.exporter.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.exporter.kill()
            self.exporter.wait()
        self.exporter_log.close()
        self.ws.close()


def stack_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A module's stack (wrap in `pytest.fixture(scope="module")`); skips without Prometheus
    or Alertmanager (see their `require_*`)."""
    require_prometheus()
    require_alertmanager()
    running = Stack(tmp_path_factory.mktemp("alerts"))
    try:
        running.alertmanager.wait_ready()
        running.prometheus.wait_ready()
        running.prometheus.wait_for('count(up{job=~"sim-.*"} == 1) == 3', 60)
        running.prometheus.load_rules((running.folder / "rules.yml").read_text())
        yield running
    finally:
        running.stop()


def planted(stack: Stack, *scenarios: str, want: int = 1) -> list[Incident]:
    """Plant `scenarios`, return the settled incidents (and print when they showed)."""
    stack.all_resolved()
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


def finish(stack: Stack) -> None:
    stack.end_faults()
    stack.all_resolved()
