"""The same chain through a real Prometheus as from the simulator directly (issue 39).

Per scenario, the demo job's window (`fabtui.sim.slowjob`) is served by the simulator's
exporter as the exporters would have served it over that window (`/metrics/window`: every
sample timestamped, `fabtui.sim.slowjob_window`), a real Prometheus scrapes it and holds it as
history, and the chain is read back through the production path (`fabtui.workspace.slowprom`:
range queries over the live view's mapped metrics and label resolver, the step-time gauge and
Inspector's busbw placed on ranks by the job's placement). Its answer must be the one the engine
gives on the simulator's own series: the same verdict, at the same element.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabtui.config import load_settings
from fabtui.model.slowjob import SlowJobReport
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.exporter import Exporter
from fabtui.sim.scenario import find_scenario
from fabtui.sim.slowjob import play_slow_job
from fabtui.sim.slowjob_window import window_text
from fabtui.sim.state import build_sim, fresh_state, state_file, write_state
from fabtui.triage.slowjob import analyze_inputs
from fabtui.workspace import Workspace
from fabtui.workspace.promsource import live_source
from fabtui.workspace.slowprom import slow_inputs
from tests.support.prom_server import PrometheusServer, require_prometheus

RESOLUTION = 30.0
WINDOW_S = 2400.0
"""40 minutes at 30 s: every planted fault of these scenarios starts inside it, and the window
a fresh Prometheus takes in one scrape stays well inside its head block (one hour)."""


def _answers(report: SlowJobReport) -> list[tuple[str, str | None, str | None, str | None]]:
    return [(c.verdict.kind, c.verdict.layer, c.verdict.element, c.verdict.cause)
            for c in report.chains]


class Through:
    """One scenario's window, analysed directly and through Prometheus."""

    def __init__(self, folder: Path, scenario: str) -> None:
        state = fresh_state(demo_topology(), find_scenario(scenario), [shipped_templates()])
        self.sim = build_sim(state)
        play = play_slow_job(self.sim, resolution=RESOLUTION, end=WINDOW_S)
        self.inputs = play.to_inputs()
        self.direct = analyze_inputs(self.inputs, self.sim.graph)
        self.offset = time.time() - 30.0 - self.inputs.end
        body = window_text(self.inputs, self.sim.graph, offset=self.offset).encode()
        data = folder / "data"
        write_state(state_file(data), state)
        self.exporter = Exporter(state_file(data), window=lambda: body).start()
        scrape = ("  - job_name: window\n    honor_labels: true\n    scrape_interval: 3s\n"
                  "    scrape_timeout: 3s\n    metrics_path: /metrics/window\n"
                  f"    static_configs: [{{targets: ['127.0.0.1:{self.exporter.port}']}}]\n")
        self.prometheus = PrometheusServer(folder, scrape)
        self.config = folder / "fabtui.toml"
        self.config.write_text(f'data_dir = "{data}"\nscenario = "{scenario}"\n'
                               'source = "prometheus"\n[prometheus]\n'
                               f'url = "{self.prometheus.url}"\nwindow = "1m"\n'
                               'timeout = "30s"\n')

    def read(self) -> SlowJobReport:
        self.prometheus.wait_ready()
        self.prometheus.wait_for(f'count_over_time(training_step_time_seconds'
                                 f'{{slurm_job_id="{self.inputs.job}"}}[2h])', 60, want=1)
        source = live_source(Workspace(load_settings(self.config)))
        assert source is not None
        placed = {(s.node, s.gpu): s.rank for s in self.sim.graph.ranks}
        read = slow_inputs(source, self.inputs.job, self.inputs.start + self.offset,
                           self.inputs.end + self.offset, step=RESOLUTION,
                           rank_at=lambda host, gpu: placed.get((host, gpu)))
        self.read_inputs = read
        return analyze_inputs(read, self.sim.graph)

    def stop(self) -> None:
        self.prometheus.stop()
        self.exporter.stop()


@pytest.fixture
def through(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Through]:
    require_prometheus()
    running = Through(tmp_path, request.param)
    try:
        yield running
    finally:
        running.stop()


ALL = ["slow-spine-optic", "slow-nic-optic", "slow-uplink-down", "slow-tenant-pfc",
       "slow-link-speed",
       "slow-pxn-off", "slow-host", "slow-gpu-throttle", "slow-input-stall",
       "slow-gpu-and-optic", "slow-tenant-then-host", "healthy"]
"""Every slow-* scenario whose plant starts inside the window (slow-node's starts later), two of
them compound, and the healthy fabric with the job's noise (no chain either way)."""
SCENARIOS = ALL if os.environ.get("FABTUI_SLOW_PROM_ALL") == "1" else [
    "slow-spine-optic", "slow-host", "slow-gpu-and-optic", "healthy"]
"""By default an optic, a host, a compound of both and healthy (16-30 s each on two busy cores);
FABTUI_SLOW_PROM_ALL=1 runs `ALL`."""


@pytest.mark.parametrize("through", SCENARIOS, indirect=True)
def test_the_chain_through_prometheus_is_the_chain_from_the_simulator(
        through: Through) -> None:
    via = through.read()
    if through.sim.scenario.name == "healthy":
        assert through.direct.healthy and via.healthy and not via.chains
        return
    assert _answers(through.direct), "the scenario plays no episode: nothing to compare"
    assert _answers(via) == _answers(through.direct), (
        f"direct {_answers(through.direct)}\nvia Prometheus {_answers(via)}\n"
        f"warnings {through.read_inputs.warnings[:5]}")
    assert len(through.read_inputs.steps) == len(through.inputs.steps)
