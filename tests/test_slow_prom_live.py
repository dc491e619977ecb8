"""The slow-job chain's series through a real Prometheus (issue 39): the fabric of the demo
playing pfc-storm scraped from the simulator's exporter, and a job's step-time gauge and NCCL
Inspector textfile metrics scraped from a job exporter, read over a window with range queries
and mapped to elements and ranks as the chain needs them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fabtui.config import load_settings
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.exporter import Exporter, scrape_config
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import fresh_state, state_file, write_state
from fabtui.workspace import Workspace
from fabtui.workspace.promsource import PrometheusSource, live_source
from fabtui.workspace.slowprom import job_inputs, slow_inputs
from tests.support.prom_server import PrometheusServer, free_port, require_prometheus

STORM_PORT = "leaf-g00-r4:Ethernet40"
JOB = "4242"
# What a trainer's own gauge and NCCL Inspector's textfile (inspector_prom.cc's label set,
# served through node_exporter's textfile collector) look like to Prometheus. Rank 9 on
# node002's GPU1 is slow; its busbw is the communicator's odd one.
JOB_METRICS = "".join(
    f'training_step_time_seconds{{slurm_job_id="{JOB}",rank="{rank}"}} '
    f'{2.9 if rank == 9 else 2.4}\n' for rank in range(16)) + "".join(
    f'nccl_bus_bandwidth_gbs{{version="v5.1",slurm_job_id="{JOB}",node="{node}",'
    f'gpu="GPU{gpu}",comm_name="DP Group 0",n_nodes="2",nranks="16",collective="AllReduce",'
    f'message_size="256-257MB",algo_proto="Ring_simple",instance="{node}:9100"}} '
    f'{410.0 if (node, gpu) == ("node002", 1) else 350.0}\n'
    for node in ("node001", "node002") for gpu in range(8))


class _JobExporter(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = JOB_METRICS.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


class Running:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        write_state(state_file(self.data), fresh_state(
            demo_topology(), find_scenario("pfc-storm"), [shipped_templates()]))
        self.exporter = Exporter(state_file(self.data)).start()
        self.job = ThreadingHTTPServer(("127.0.0.1", free_port()), _JobExporter)
        threading.Thread(target=self.job.serve_forever, daemon=True).start()
        job_scrape = ("  - job_name: job\n    honor_labels: true\n    scrape_interval: 1s\n"
                      f"    static_configs: [{{targets: ['127.0.0.1:{self.job.server_port}']}}]\n")
        self.prometheus = PrometheusServer(
            folder, scrape_config("sim", f"127.0.0.1:{self.exporter.port}") + job_scrape)

    def workspace(self) -> Workspace:
        config = self.folder / "config.toml"
        config.write_text(f'data_dir = "{self.data}"\nscenario = "pfc-storm"\n'
                          'source = "prometheus"\n[prometheus]\n'
                          f'url = "{self.prometheus.url}"\nwindow = "8s"\ntimeout = "10s"\n')
        return Workspace(load_settings(config))

    def source(self) -> PrometheusSource:
        found = live_source(self.workspace())
        assert found is not None
        return found

    def stop(self) -> None:
        self.prometheus.stop()
        self.exporter.stop()
        self.job.shutdown()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    require_prometheus()
    fabric = Running(tmp_path_factory.mktemp("slowprom"))
    try:
        fabric.prometheus.wait_ready()
        fabric.prometheus.wait_for(
            'rate(sonic_interface_receive_pfc_packets{device="Ethernet40"}[8s]) > 9000 and '
            'count_over_time(sonic_interface_receive_pfc_packets{device="Ethernet40"}[8s]) > 5',
            60)
        # The window read (6 s) needs a full rate window (8 s) behind each of its samples.
        fabric.prometheus.wait_for(
            'count_over_time(sonic_interface_receive_pfc_packets{device="Ethernet40"}[16s]) > 13',
            60)
        fabric.prometheus.wait_for('count_over_time(training_step_time_seconds[8s]) > 3', 30,
                                   want=16)
        yield fabric
    finally:
        fabric.stop()


def _placed(host: str, gpu: int) -> int | None:
    """The demo job's block placement: 8 ranks a node, node001 first."""
    return {"node001": 0, "node002": 8}.get(host, -100) + gpu if host in (
        "node001", "node002") else None


def test_the_fabric_window_names_the_storm_port_as_the_chain_keys_it(running: Running) -> None:
    end = time.time() - 1
    inputs = slow_inputs(running.source(), JOB, end - 6, end, step=1.0, rank_at=_placed)
    storm = inputs.fabric[STORM_PORT]["pause_rx_per_s"]
    assert len(storm.t) >= 5 and min(storm.v[-3:]) > 9000
    calm = [max(series["pause_rx_per_s"].v) for element, series in inputs.fabric.items()
            if element != STORM_PORT and "pause_rx_per_s" in series
            and element.startswith("leaf-")]
    assert calm and max(calm) < 100  # no other leaf port pauses: one element moves
    assert "rx_power_dbm" in inputs.fabric[STORM_PORT]  # lanes folded into the port's lowest
    assert any(key.startswith("node") and ":mlx5_" in key and "pause_share_rx" in metrics
               for key, metrics in inputs.fabric.items())


def test_step_times_and_inspector_busbw_land_on_the_jobs_ranks(running: Running) -> None:
    end = time.time() - 1
    inputs = slow_inputs(running.source(), JOB, end - 6, end, step=1.0, rank_at=_placed)
    assert sorted(s.rank for s in inputs.steps) == list(range(16))
    slow = {s.rank for s in inputs.steps if min(s.step_s) > 2.5}
    assert slow == {9}
    assert [(c.id, c.nranks, c.collective) for c in inputs.communicators] == [
        ("DP Group 0", 16, "AllReduce")]
    odd = {b.rank for b in inputs.busbw if min(b.busbw_gbs) > 400}
    assert odd == {9}  # node002 GPU1 is rank 9 in the placement
    assert not [w for w in inputs.warnings if "no rank" in w]


def test_a_slurm_jobs_window_is_placed_by_its_placement(running: Running) -> None:
    # The demo's simulated Slurm places job 4242 in blocks of 8: node002's GPU1 is rank 9.
    inputs = job_inputs(running.workspace(), JOB, 6.0, step=1.0, end=time.time() - 1)
    assert {b.rank for b in inputs.busbw if min(b.busbw_gbs) > 400} == {9}
    assert any(s.startswith("placement: `scontrol show job -d 4242`") for s in inputs.sources)


def test_triage_slow_reads_the_jobs_window_from_the_configured_prometheus(
        running: Running) -> None:
    """Where the live view reads Prometheus, `fabtui triage slow --job` (the function the CLI
    and the app call) reads the job's window from it, placed by the job's Slurm placement: the
    report names the job and its sources say Prometheus, not the simulator."""
    from fabtui.workspace.slowprom import slow_job

    report = slow_job(running.workspace(), job=JOB, since=8.0)
    assert report.job == JOB
    assert any(s.startswith("placement: `scontrol show job -d 4242`") for s in report.sources)
