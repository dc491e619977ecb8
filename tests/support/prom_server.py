"""A real Prometheus on loopback (Debian's `prometheus` package), started by the tests.

It runs from a temp folder on a free port with `scrape_interval` 1 s and a scrape config for a
simulated-fabric exporter (`fabtui.sim.exporter`). When /usr/bin/prometheus is missing the tests
that need it are skipped, unless FABTUI_REQUIRE_PROMETHEUS=1 (set by .ci/run): then they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import IO

import pytest

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def require_prometheus() -> None:
    """Skip (or, in CI, fail) when there is no Prometheus server to test against."""
    if not Path(PROMETHEUS).exists():
        if os.environ.get("FABTUI_REQUIRE_PROMETHEUS") == "1":
            pytest.fail("prometheus is required (apt-get install prometheus)")
        pytest.skip("/usr/bin/prometheus not installed (apt-get install prometheus)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(process: subprocess.Popen[bytes], url: str, log: Path,
               timeout: float = 30.0) -> None:
    """Until the server at `url` (Prometheus, Alertmanager) answers `/-/ready`; raises with the
    tail of its log if it exits first, or when `timeout` passes."""
    name = Path(str(process.args[0])).name if isinstance(process.args, list) else "server"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited: " + log.read_text()[-2000:])
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{name} did not become ready")


def stop_process(process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    """Terminate a test server (killed after 10 s) and close its log."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    log.close()


class PrometheusServer:
    """One prometheus process scraping `scrape` (YAML `scrape_configs` items); `stop()` ends it."""

    def __init__(self, folder: Path, scrape: str, *, interval: str = "1s",
                 rules: str | None = None, alertmanager: str | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = folder / "prometheus.yml"
        loaded = ""
        if rules is not None:  # evaluated from the start: no reload to wait for
            (folder / "rules.yml").write_text(rules)
            loaded = f"rule_files: ['{folder / 'rules.yml'}']\n"
        if alertmanager is not None:  # host:port of the Alertmanager its alerts go to
            loaded += ("alerting:\n  alertmanagers:\n"
                       f"    - static_configs: [{{targets: ['{alertmanager}']}}]\n")
        config.write_text(f"global:\n  scrape_interval: {interval}\n"
                          f"  evaluation_interval: {interval}\n{loaded}"
                          f"scrape_configs:\n{scrape}")
        self.log = (folder / "prometheus.log").open("wb")
        self.process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn",
             "--storage.tsdb.retention.time=1h"],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=folder)
        self.folder = folder

    def wait_ready(self, timeout: float = 30.0) -> None:
        wait_ready(self.process, self.url, self.folder / "prometheus.log", timeout)

    def wait_for(self, promql: str, timeout: float = 30.0, *, want: int = 1) -> None:
        """Until `promql` returns at least `want` series (scrapes have happened)."""
        deadline = time.monotonic() + timeout
        query = urllib.parse.urlencode({"query": promql})
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/api/v1/query?{query}",
                                            timeout=2) as answer:
                    if len(json.load(answer)["data"]["result"]) >= want:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"no series for {promql} after {timeout}s")

    def value_at(self, promql: str, at: float) -> float | None:
        """The value of scalar-like `promql` (one series) evaluated at epoch moment `at`; None
        when it has no series."""
        query = urllib.parse.urlencode({"query": promql, "time": f"{at:.3f}"})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{query}", timeout=10) as answer:
            result = json.load(answer)["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    def load_rules(self, rules: str, timeout: float = 60.0) -> None:
        """Add the rule file `rules` to the config, reload (SIGHUP), and wait until every
        group has been evaluated once."""
        import signal

        path = self.folder / "rules.yml"
        path.write_text(rules)
        config = self.folder / "prometheus.yml"
        text = config.read_text()
        if "rule_files:" not in text:
            config.write_text(text.replace("scrape_configs:\n",
                                           f"rule_files: ['{path}']\nscrape_configs:\n", 1))
        self.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, KeyError, ValueError):
                with urllib.request.urlopen(f"{self.url}/api/v1/rules", timeout=5) as answer:
                    groups = json.load(answer)["data"]["groups"]
                if groups and all(g["lastEvaluation"] > "2000" for g in groups):
                    return
            time.sleep(0.5)
        raise RuntimeError(f"the rules were not evaluated within {timeout}s")

    def wait_evaluated(self, after: float, timeout: float = 30.0) -> None:
        """Until every rule group has been evaluated after the epoch moment `after`."""
        from datetime import datetime

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, KeyError, ValueError):
                with urllib.request.urlopen(f"{self.url}/api/v1/rules", timeout=5) as answer:
                    groups = json.load(answer)["data"]["groups"]
                if groups and all(datetime.fromisoformat(g["lastEvaluation"]).timestamp()
                                  > after for g in groups):
                    return
            time.sleep(0.1)
        raise RuntimeError(f"the rules were not evaluated within {timeout}s")

    def stop(self) -> None:
        stop_process(self.process, self.log)
