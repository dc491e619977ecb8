"""The demo fabric as Prometheus exporters: what dcgm-exporter, node_exporter (ethtool and
infiniband collectors) and a SONiC exporter would serve for every simulated node and switch.

One HTTP server stands for all the fabric's exporters: `/metrics/dcgm`, `/metrics/node` and
`/metrics/switch` each serve every device's series with the `instance` label the device's own
exporter would get from its scrape target (`node001:9400`, `node001:9100`, `leaf-g00-r3`), so a
Prometheus job with `honor_labels: true` stores them as if it had scraped each device. Values are
the simulation's own counters at the moment of the scrape (the same integrals `ethtool -S`,
`show pfc counters` and `nvidia-smi` print), so a fault scenario shows in PromQL as it shows in
probes: a PFC storm is a pause rate on one port. Names follow `fabtui.prom.catalog`'s exporters
(written out here rather than imported: the exporter imitates the exporters, the reader maps
them, and the test through a real Prometheus checks that the two agree). The dashboards
(`fabtui.prom.dashboards`) read a few more, each under its real exporter's name: traffic
(`*_bytes_phy`, SONiC's `sonic_interface_{receive,transmit}_bytes_total`), GPU utilisation and SM
clock, dcgm-exporter's HPC job mapping (`hpc_job`), and the NCCL Inspector plugin's Prometheus
output (`nccl_*`, served with node_exporter's series as its textfile collector would).

Side effects: `serve` listens on a TCP port until stopped; each scrape reads the state file.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

from fabtui.sim.core import PRIORITY, Sim
from fabtui.sim.node_commands import ethtool_counters, rdma_counters
from fabtui.sim.programs._slurm_job import JOB_ID, JOB_NAME, job_nodes
from fabtui.sim.state import FabricCache, SimState

FAMILIES = ("dcgm", "node", "switch")
_ETHTOOL = ("rx_prio3_pause", "tx_prio3_pause", "rx_prio3_pause_duration",
            "tx_prio3_pause_duration", "rx_prio3_marked", "rx_crc_errors_phy",
            "rx_symbol_err_phy", "rx_discards_phy", "rx_prio3_buf_discard",
            "link_down_events_phy", "rx_out_of_buffer", "tx_pause_storm_warning_events",
            "tx_pause_storm_error_events", "rx_bits_phy", "rx_corrected_bits_phy",
            "rx_bytes_phy", "tx_bytes_phy")
_ETHTOOL_NAMES = {s: "node_ethtool_" + s.replace("rx_", "received_", 1).replace(
    "tx_", "transmitted_", 1) if s.startswith(("rx_", "tx_")) else "node_ethtool_" + s
    for s in _ETHTOOL}
_RDMA = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "np_cnp_sent",
         "rp_cnp_handled", "np_ecn_marked_roce_packets", "req_cqe_error", "resp_cqe_error")


class Untyped(Metric):
    """A family exposed without a type, under its exact name (as node_exporter's ethtool and
    client_golang counters without `_total` are): prometheus-client's CounterMetricFamily
    would append `_total`."""

    def __init__(self, name: str, documentation: str, labels: list[str]) -> None:
        super().__init__(name, documentation, "unknown")
        self._labels = labels

    def add_metric(self, values: list[str], value: float) -> None:
        self.add_sample(self.name, dict(zip(self._labels, values, strict=True)), value)


class FabricCollector(Collector):
    """Collects one exporter family's series for every device of the running demo fabric."""

    def __init__(self, state_file: Path, family: str) -> None:
        self.state_file = str(state_file)
        self.family = family
        self.cache = FabricCache()
        self.paused = threading.Event()
        """Set: the exporter answers 503 (a target down, for stale-scrape tests)."""

    def collect(self) -> Iterator[Metric]:
        found = self.cache.get(self.state_file)
        if found is None:
            return
        state, sim = found
        yield from {"dcgm": _dcgm, "node": _node, "switch": _switch}[self.family](
            state, sim, state.now())


def _dcgm(_state: SimState, sim: Sim, t: float) -> Iterator[Metric]:
    # `hpc_job`: dcgm-exporter's HPC job mapping (`--hpc-job-mapping-dir`, one file per GPU
    # naming its job; the label is empty on a GPU no job holds).
    labels = ["gpu", "UUID", "device", "modelName", "Hostname", "hpc_job", "instance"]
    names = {"temp": ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."),
             "power": ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
             "util": ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
             "sm_clock": ("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz)."),
             "xid": ("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered."),
             "dbe": ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile "
                                                     "ECC errors."),
             "sbe": ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "Total number of single-bit volatile "
                                                     "ECC errors."),
             "rows": ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "Number of remapped rows "
                                                                "for uncorrectable errors"),
             "pending": ("DCGM_FI_DEV_ROW_REMAP_PENDING", "Row remapping pending."),
             "failure": ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "Whether remapping of rows has "
                                                          "failed"),
             "replay": ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries."),
             "crc": ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "Total number of NVLink "
                                                                     "flow-control CRC errors."),
             "nvreplay": ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "Total number of "
                                                                        "NVLink retries.")}
    families: dict[str, Untyped | GaugeMetricFamily] = {
        k: Untyped(n, d, labels) if k in ("replay", "crc", "nvreplay")
        else GaugeMetricFamily(n, d, labels=labels) for k, (n, d) in names.items()}
    in_job = {(slot.node, slot.gpu) for slot in sim.graph.ranks}
    for host, node in sim.graph.nodes.items():
        for gpu in node.gpus:
            state = sim.gpu(host, gpu.index, t)
            values = [str(gpu.index), f"GPU-{abs(hash((host, gpu.index))) % 10**12:012d}",
                      f"nvidia{gpu.index}", "NVIDIA " + state.model.replace("-", " "), host,
                      JOB_ID if (host, gpu.index) in in_job else "", f"{host}:9400"]
            for key, value in (("temp", state.temperature_c), ("power", state.power_w),
                               ("util", state.utilization_pct),
                               ("sm_clock", state.sm_clock_mhz),
                               ("xid", 0), ("dbe", state.ecc_volatile_uncorrectable),
                               ("sbe", state.ecc_volatile_correctable), ("rows", 0),
                               ("pending", 0), ("failure", 0), ("replay", 0), ("crc", 0),
                               ("nvreplay", 0)):
                families[key].add_metric(values, float(value))
    yield from families.values()


NCCL_MESSAGE = 1 << 30
"""The message size of the job's collectives the NCCL Inspector reports (1 GiB)."""
NCCL_DUMP_S = 30.0
"""The Inspector's dump interval for its Prometheus output: at least 30 s (its minimum,
`inspectorPromValidateInterval`)."""


def _nccl(sim: Sim, t: float) -> dict[str, list[tuple[list[str], tuple[float, ...]]]]:
    """Per node, the NCCL Inspector plugin's Prometheus lines for the demo job's ranks on it
    (NVIDIA/nccl `ext-profiler/inspector/inspector_prom.cc`: `nccl_algorithm_bandwidth_gbs`,
    `nccl_bus_bandwidth_gbs`, `nccl_collective_exec_time_microseconds`, one series per rank
    and last completed collective): label values and (algbw, busbw, exec time in us). None
    while the job completes no collective (hung or dead): the Inspector writes only completed
    ones."""
    nodes = job_nodes(sim)
    busbw = sim.busbw(nodes, t, NCCL_MESSAGE) if nodes else 0.0
    if busbw <= 0:
        return {}
    ranks = len(sim.graph.ranks)
    algbw = busbw * ranks / (2 * (ranks - 1)) if ranks > 1 else busbw  # all_reduce's factor
    dump = int(t // NCCL_DUMP_S)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(sim.epoch + dump * NCCL_DUMP_S))
    comm = f"{int(sim.noise('comm', JOB_ID) * 16**15):015x}"
    lines: dict[str, list[tuple[list[str], tuple[float, ...]]]] = {}
    for slot in sim.graph.ranks:
        jitter = 0.99 + 0.02 * sim.noise("nccl", slot.rank, dump)
        labels = [comm, slot.node, str(slot.rank), JOB_NAME, JOB_ID, str(ranks),
                  str(len(nodes)), f"GPU{slot.gpu}", "AllReduce", str(dump * 1000), stamp,
                  "1.00GB"]
        values = (algbw * jitter, busbw * jitter, NCCL_MESSAGE / (algbw * jitter * 1e3))
        lines.setdefault(slot.node, []).append((labels, values))
    return lines


NCCL_LABELS = ["comm_id", "hostname", "rank", "slurm_job", "slurm_job_id", "nranks", "n_nodes",
               "gpu_device_id", "collective", "coll_sn", "timestamp", "message_size",
               "instance"]


def _node(_state: SimState, sim: Sim, t: float) -> Iterator[Metric]:
    ethtool = {s: Untyped(n, f"Network interface {s}", ["device", "instance"])
               for s, n in _ETHTOOL_NAMES.items()}
    ib_labels = ["device", "port", "instance"]
    rdma: dict[str, CounterMetricFamily] = {
        c: CounterMetricFamily(f"node_infiniband_{c}", f"Hardware counter {c}",
                               labels=ib_labels) for c in _RDMA}
    ib = {"symbol_error": "SymbolErrorCounter", "link_downed": "LinkDownedCounter",
          "port_errors_received": "PortRcvErrors",
          "port_discards_transmitted": "PortXmitDiscards",
          "port_transmit_wait": "PortXmitWait"}
    ib_families: dict[str, CounterMetricFamily] = {
        n: CounterMetricFamily(f"node_infiniband_{n}", f"IB {c}", labels=ib_labels)
        for n, c in ib.items()}
    state_id = GaugeMetricFamily("node_infiniband_state_id", "State of the InfiniBand port "
                                 "(0: no change, 1: down, 2: init, 3: armed, 4: active, "
                                 "5: act defer)", labels=ib_labels)
    nccl = {n: GaugeMetricFamily(n, d, labels=NCCL_LABELS) for n, d in (
        ("nccl_algorithm_bandwidth_gbs", "NCCL Inspector: algorithm bandwidth (GB/s)"),
        ("nccl_bus_bandwidth_gbs", "NCCL Inspector: bus bandwidth (GB/s)"),
        ("nccl_collective_exec_time_microseconds", "NCCL Inspector: execution time (us)"))}
    collectives = _nccl(sim, t)
    for host, node in sim.graph.nodes.items():
        instance = f"{host}:9100"
        for labels, values in collectives.get(host, []):
            for nccl_family, value in zip(nccl.values(), values, strict=True):
                nccl_family.add_metric([*labels, instance], value)
        for nic in node.nics:
            counters = ethtool_counters(sim, host, nic, t)
            for stat, family in ethtool.items():
                if stat in counters:
                    family.add_metric([nic.netdev or nic.name, instance], float(counters[stat]))
            hw = rdma_counters(sim, host, nic, t)
            ib_values = [nic.name, "1", instance]
            for name, hw_family in rdma.items():
                hw_family.add_metric(ib_values, float(hw.get(name, 0)))
            attachment = sim.graph.attachments.get((host, nic.name))
            up = attachment is not None and sim.link_up(attachment.link_index, t)
            links = sim.down_events(attachment.link_index, t) if attachment else 0
            for name, ib_family in ib_families.items():
                ib_family.add_metric(ib_values, float(links if name == "link_downed" else 0))
            state_id.add_metric(ib_values, 4.0 if up else 1.0)
    yield from ethtool.values()
    yield from rdma.values()
    yield from ib_families.values()
    yield state_id
    yield from nccl.values()


def _switch(_state: SimState, sim: Sim, t: float) -> Iterator[Metric]:
    port_labels = ["device", "instance"]
    receive = Untyped("sonic_interface_receive_errs_total", "Number of receive errs on an "
                      "interface", ["device", "type", "instance"])
    transmit = Untyped("sonic_interface_transmit_errs_total", "Number of transmit errs on an "
                       "interface", ["device", "type", "instance"])
    oper = GaugeMetricFamily("sonic_interface_operational_status", "Operational status "
                             "(1 up, 0 down)", labels=port_labels)
    octets = {d: Untyped(f"sonic_interface_{d}_bytes_total",
                         f"Number of bytes {done} on an interface", port_labels)
              for d, done in (("receive", "received"), ("transmit", "transmitted"))}
    speed = GaugeMetricFamily("sonic_interface_speed_bytes", "Network device property: "
                              "speed_bytes", labels=port_labels)
    pfc_labels = ["device", "priority", "instance"]
    pfc_rx = Untyped("sonic_interface_receive_pfc_packets", "PFC frames received "
                     "(SAI_PORT_STAT_PFC_n_RX_PKTS)", pfc_labels)
    pfc_tx = Untyped("sonic_interface_transmit_pfc_packets", "PFC frames sent "
                     "(SAI_PORT_STAT_PFC_n_TX_PKTS)", pfc_labels)
    fec = {n: Untyped(f"sonic_interface_fec_{n}", f"FEC {n}", port_labels)
           for n in ("correctable_frames", "uncorrectable_frames", "symbol_errors")}
    ber = GaugeMetricFamily("sonic_interface_fec_pre_ber", "Pre-FEC bit error ratio",
                            labels=port_labels)
    # sonic-exporter's optic power: the lane is label `unit` (STATE_DB `rx<N>power`); the
    # laser bias is fabtui's own series, labelled the same way.
    lane_labels = ["device", "unit", "instance"]
    dom = {k: GaugeMetricFamily(name, text, labels=lane_labels) for k, name, text in (
        ("rx_power_dbm", "sonic_interface_optic_receive_power_dbm",
         "Network device transceiver receive power (dBm)"),
        ("tx_power_dbm", "sonic_interface_optic_transmit_power_dbm",
         "Network device transceiver transmit power (dBm)"),
        ("tx_bias_ma", "sonic_interface_transceiver_tx_bias_ma", "Transceiver tx_bias_ma"))}
    temperature = GaugeMetricFamily("sonic_interface_transceiver_temperature_celsius",
                                    "Transceiver temperature", labels=port_labels)
    for name, switch in sim.graph.switches.items():
        if sim.switch_dead(name, t):
            continue  # its exporter answers nothing: no series at all
        for port in sim.switch_ports(name):
            counters = sim.port_counters(switch, port, t)
            if counters is None:
                continue
            values = [port, name]
            for kind, value in (("error", counters.rx_err), ("drop", counters.rx_drp),
                                ("pause", sum(counters.rx_pfc))):
                receive.add_metric([port, kind, name], float(value))
            for kind, value in (("error", counters.tx_err), ("discard", counters.tx_drp),
                                ("pause", sum(counters.tx_pfc))):
                transmit.add_metric([port, kind, name], float(value))
            octets["receive"].add_metric(values, float(counters.rx_bytes))
            octets["transmit"].add_metric(values, float(counters.tx_bytes))
            oper.add_metric(values, 1.0 if counters.up else 0.0)
            speed.add_metric(values, counters.speed_gbps * 1e9 / 8)
            pfc_rx.add_metric([port, str(PRIORITY), name], float(counters.rx_pfc[PRIORITY]))
            pfc_tx.add_metric([port, str(PRIORITY), name], float(counters.tx_pfc[PRIORITY]))
            fec["correctable_frames"].add_metric(values, float(counters.fec_corr))
            fec["uncorrectable_frames"].add_metric(values, float(counters.fec_uncorr))
            fec["symbol_errors"].add_metric(values, float(counters.fec_symbol_err))
            ber.add_metric(values, counters.pre_ber)
            module = sim.dom(name, port, t)
            if module is None:
                continue
            for lane, (rx, tx, bias) in enumerate(zip(module.rx_power_dbm, module.tx_power_dbm,
                                                      module.tx_bias_ma, strict=True), 1):
                lane_values = [port, str(lane), name]
                dom["rx_power_dbm"].add_metric(lane_values,
                                               float("-inf") if rx is None else rx)
                dom["tx_power_dbm"].add_metric(lane_values,
                                               float("-inf") if tx is None else tx)
                dom["tx_bias_ma"].add_metric(lane_values, bias)
            temperature.add_metric(values, module.temperature_c)
    yield from (receive, transmit, *octets.values(), oper, speed, pfc_rx, pfc_tx,
                *fec.values(), ber, *dom.values(), temperature)


class Exporter:
    """The HTTP server (see the module docstring); `start()` serves on a thread."""

    def __init__(self, state_file: Path, port: int = 0, host: str = "127.0.0.1", *,
                 window: Callable[[], bytes] | None = None) -> None:
        """`window`: what `/metrics/window` serves (timestamped history, e.g. the demo job's
        window from `fabtui.sim.slowjob_window`); without it that path is not served."""
        self.collectors = {f: FabricCollector(state_file, f) for f in FAMILIES}
        registries: dict[str, CollectorRegistry] = {}
        for family, collector in self.collectors.items():
            registry = CollectorRegistry(auto_describe=False)
            registry.register(collector)
            registries[family] = registry
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                family = self.path.split("?")[0].rstrip("/").rpartition("/")[2]
                if family == "window" and window is not None:
                    self._answer(window())
                    return
                chosen = list(registries) if family == "metrics" else [family]
                if not all(f in registries for f in chosen):
                    self.send_error(404, "paths: /metrics, /metrics/dcgm, /metrics/node, "
                                         "/metrics/switch")
                    return
                if any(exporter.collectors[f].paused.is_set() for f in chosen):
                    self.send_error(503, "exporter paused")
                    return
                self._answer(b"".join(generate_latest(registries[f]) for f in chosen))

            def _answer(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPE_LATEST)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                # A scraper that gave up (its scrape timeout) has closed: the next scrape is new.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                """Scrapes are not logged (one a second per job)."""

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def pause(self, paused: bool = True) -> None:
        """Answer 503 (a target that is down) until unpaused."""
        for collector in self.collectors.values():
            if paused:
                collector.paused.set()
            else:
                collector.paused.clear()

    def start(self) -> Exporter:
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                        name="sim-exporter")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def scrape_config(job_prefix: str, target: str, interval: str = "1s",
                  families: tuple[str, ...] = FAMILIES) -> str:
    """A Prometheus `scrape_configs` YAML fragment that scrapes `families` of one sim exporter
    at `target` (`127.0.0.1:9464`), keeping the devices' own `instance` labels."""
    lines = []
    for family in families:
        lines += [f"  - job_name: {job_prefix}-{family}", "    honor_labels: true",
                  f"    scrape_interval: {interval}", f"    scrape_timeout: {interval}",
                  f"    metrics_path: /metrics/{family}",
                  f"    static_configs: [{{targets: ['{target}']}}]"]
    return "\n".join(lines) + "\n"
