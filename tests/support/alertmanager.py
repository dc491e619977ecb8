"""A real Alertmanager on loopback (Debian's `prometheus-alertmanager` package), started by the
tests.

It runs from a temp folder on a free port, without clustering, with one route to one webhook
(the receiver under test) and short group timers (`group_wait`, `group_interval` 1 s) so that
an alert Prometheus sends is delivered within seconds. When the binary is missing the tests
that need it are skipped, unless FABTUI_REQUIRE_ALERTMANAGER=1 (set by .ci/run): then they
fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.prom_server import free_port, stop_process, wait_ready

ALERTMANAGER = shutil.which("prometheus-alertmanager") or "/usr/bin/prometheus-alertmanager"


def require_alertmanager() -> None:
    """Skip (or, in CI, fail) when there is no Alertmanager to test against."""
    if not Path(ALERTMANAGER).exists():
        if os.environ.get("FABTUI_REQUIRE_ALERTMANAGER") == "1":
            pytest.fail("prometheus-alertmanager is required (apt-get install "
                        "prometheus-alertmanager)")
        pytest.skip("/usr/bin/prometheus-alertmanager not installed (apt-get install "
                    "prometheus-alertmanager)")


class AlertmanagerServer:
    """One Alertmanager process posting every alert to `webhook`; `stop()` ends it."""

    def __init__(self, folder: Path, webhook: str, *, group_by: str = "[alertname]") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.folder = folder
        config = folder / "alertmanager.yml"
        config.write_text(
            "route:\n  receiver: fabtui\n"
            f"  group_by: {group_by}\n  group_wait: 1s\n  group_interval: 1s\n"
            "  repeat_interval: 1h\n"
            "receivers:\n  - name: fabtui\n    webhook_configs:\n"
            f"      - url: '{webhook}'\n        send_resolved: true\n")
        self.log = (folder / "alertmanager.log").open("wb")
        self.process = subprocess.Popen(
            [ALERTMANAGER, f"--config.file={config}", f"--storage.path={folder / 'am-data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--cluster.listen-address=",
             "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=folder)

    def wait_ready(self, timeout: float = 30.0) -> None:
        wait_ready(self.process, self.url, self.folder / "alertmanager.log", timeout)

    def stop(self) -> None:
        stop_process(self.process, self.log)
