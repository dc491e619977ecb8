"""The demo job's window (`fabtui.sim.slowjob`) as the exporters would have served it over that
window: Prometheus text with a timestamp on every sample, for a real Prometheus to scrape once
and hold as history (issue 39: the chain read through Prometheus against the chain read from
the simulator directly).

Names and labels are the exporters' (`fabtui.sim.exporter`, docs/prometheus.md): SONiC port
counters and gauges, node_exporter's ethtool, infiniband and netdev series for the NICs,
dcgm-exporter's for the GPUs, a trainer's step-time gauge and NCCL Inspector's textfile metric.
Rates become counters (their running sums), shares the counters real exporters keep for them: a
NIC's paused share is mlx5's `rx_prio3_pause_duration` (microseconds paused), a switch port's is the
PFC frames a paused link carries (`PAUSE_FRAMES_PER_PAUSED_S`, on fabtui's own PFC series for a
switch port: vinted/sonic-exporter serves none, docs/prometheus.md). What no exporter serves is left
out, as a real Prometheus would lack it: a switch port's ECN marks, a NIC's light and FEC codeword
counts (node_exporter has no `ethtool -m`; mlx5's corrected and received bits give the NIC's pre-FEC
BER), Xid counts (dcgm's `DCGM_FI_DEV_XID_ERRORS` is the last Xid, not a count). No side effects.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from fabtui.model.slowjob import Series, SlowJobInputs
from fabtui.topology.graph import FabricGraph

PAUSE_FRAMES_PER_PAUSED_S = 23_840.0
"""PFC frames in one second of a paused 400G link: an XOFF of the full 65,535 quanta (512 bit
times each: 83.9 us at 400 Gb/s) refreshed at half its life, every 41.9 us [inference: the
refresh switches commonly use]."""
THROTTLE_THERMAL = 0x40
"""dcgm's clock-throttle reasons bit for a software thermal slowdown (DCGM_CLOCKS_THROTTLE_
REASON_SW_THERMAL), served while the play's GPU throttles."""
LINE_RATE_BYTES = 400e9 / 8


def _counter(series: Series, scale: float) -> Iterator[tuple[float, float]]:
    """A rate series as the counter that grows by it (starting at 0)."""
    total = 0.0
    previous: float | None = None
    for t, v in zip(series.t, series.v, strict=True):
        if previous is not None and math.isfinite(v):
            total += max(v, 0.0) * scale * (t - previous)
        previous = t
        yield t, total


def _gauge(series: Series, scale: float = 1.0) -> Iterator[tuple[float, float]]:
    for t, v in zip(series.t, series.v, strict=True):
        if math.isfinite(v):
            yield t, v * scale


def _labels(pairs: Sequence[tuple[str, str]]) -> str:
    return ",".join(f'{k}="{v}"' for k, v in pairs)


class _Out:
    def __init__(self, offset: float) -> None:
        self.lines: list[str] = []
        self.offset = offset

    def put(self, name: str, labels: Sequence[tuple[str, str]],
            points: Iterator[tuple[float, float]]) -> None:
        head = f"{name}{{{_labels(labels)}}} "
        self.lines += [f"{head}{v:.9g} {round((t + self.offset) * 1000)}" for t, v in points]


def window_text(inputs: SlowJobInputs, graph: FabricGraph, *, offset: float,
                job_label: str = "slurm_job_id") -> str:
    """Every series of `inputs` as exposition text, sample times shifted by `offset` seconds
    (the play's window starts at 0: an offset of `now - duration` ends it now)."""
    out = _Out(offset)
    job = (job_label, inputs.job)
    for steps in inputs.steps:
        out.put("training_step_time_seconds", [job, ("rank", str(steps.rank))],
                _gauge(Series(t=steps.t, v=steps.step_s)))
    placed = {slot.rank: (slot.node, slot.gpu) for slot in graph.ranks}
    comms = {c.id: c for c in inputs.communicators}
    for busbw in inputs.busbw:
        where = placed.get(busbw.rank)
        comm = comms.get(busbw.comm)
        if where is None or comm is None:
            continue
        out.put("nccl_bus_bandwidth_gbs", [
            ("version", "v5.1"), job, ("node", where[0]), ("gpu", f"GPU{where[1]}"),
            ("comm_name", comm.id), ("n_nodes", str(len({placed[r][0] for r in comm.ranks
                                                          if r in placed}) or 1)),
            ("nranks", str(comm.nranks)), ("collective", comm.collective),
            ("message_size", _bucket(comm.msg_bytes)), ("algo_proto", "Ring_simple")],
            _gauge(Series(t=busbw.t, v=busbw.busbw_gbs)))
    netdev = {(host, nic.name): nic.netdev or nic.name
              for host, node in graph.nodes.items() for nic in node.nics}
    for element, metrics in inputs.fabric.items():
        owner, _, part = element.partition(":")
        if owner in graph.switches:
            _port(out, owner, part, metrics)
        elif owner in graph.nodes and part.startswith("gpu") and part[3:].isdigit():
            _gpu(out, owner, part[3:], metrics)
        elif (owner, part) in netdev:
            _nic(out, owner, part, netdev[(owner, part)], metrics)
    return "\n".join(out.lines) + "\n"


def _bucket(size: int) -> str:
    """NCCL Inspector's `message_size` label (`inspector_prom.cc`: a range around the size)."""
    units = ("B", "KB", "MB", "GB")
    value, unit = float(size), 0
    while value >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    return f"{math.floor(value):.0f}-{math.floor(value) + 1:.0f}{units[unit]}"


def _port(out: _Out, switch: str, port: str, metrics: dict[str, Series]) -> None:
    labels = [("device", port), ("instance", switch)]
    pfc = {"pause_share_rx": ("sonic_interface_receive_pfc_packets", PAUSE_FRAMES_PER_PAUSED_S),
           "pause_share_tx": ("sonic_interface_transmit_pfc_packets", PAUSE_FRAMES_PER_PAUSED_S),
           "pause_rx_per_s": ("sonic_interface_receive_pfc_packets", 1.0),
           "pause_tx_per_s": ("sonic_interface_transmit_pfc_packets", 1.0)}
    done: set[str] = set()
    for metric, (name, scale) in pfc.items():
        if metric in metrics and name not in done:
            done.add(name)
            out.put(name, [("device", port), ("priority", "3"), ("instance", switch)],
                    _counter(metrics[metric], scale))
    for metric, name in (("fec_corrected_per_s", "sonic_interface_fec_correctable_frames"),
                         ("fec_uncorrectable_per_s", "sonic_interface_fec_uncorrectable_frames")):
        if metric in metrics:
            out.put(name, labels, _counter(metrics[metric], 1.0))
    if "pre_fec_ber" in metrics:
        out.put("sonic_interface_fec_pre_ber", labels, _gauge(metrics["pre_fec_ber"]))
    if "link_up" in metrics:
        out.put("sonic_interface_operational_status", labels, _gauge(metrics["link_up"]))
    if "rx_power_dbm" in metrics:
        for lane in range(1, 5):
            out.put("sonic_interface_optic_receive_power_dbm",
                    [("device", port), ("unit", str(lane)), ("instance", switch)],
                    _gauge(metrics["rx_power_dbm"]))
    if "util" in metrics:
        out.put("sonic_interface_transmit_bytes_total", labels, _counter(_sent(metrics), 1.0))
    _speed(out, "sonic_interface_speed_bytes", labels, metrics)


def _sent(metrics: dict[str, Series]) -> Series:
    """Bytes sent per second: the share of the line used times the speed the link runs at."""
    util = metrics["util"]
    speed = metrics.get("speed_gbps")
    rates = [u * (s * 1e9 / 8 if speed is not None else LINE_RATE_BYTES)
             for u, s in zip(util.v, speed.v if speed is not None else util.v, strict=True)]
    return Series(t=util.t, v=rates)


def _speed(out: _Out, name: str, labels: Sequence[tuple[str, str]],
           metrics: dict[str, Series]) -> None:
    """The link's speed in bytes per second, as node_exporter and the SONiC exporter serve it:
    the speed it trained at when the play has it, else the line rate."""
    if "speed_gbps" in metrics:
        out.put(name, labels, _gauge(metrics["speed_gbps"], 1e9 / 8))
    elif "util" in metrics:
        out.put(name, labels, ((t, LINE_RATE_BYTES) for t in metrics["util"].t))


def _nic(out: _Out, host: str, rdma: str, netdev: str, metrics: dict[str, Series]) -> None:
    instance = ("instance", f"{host}:9100")
    eth = [("device", netdev), instance]
    for side, word in (("rx", "received"), ("tx", "transmitted")):
        share = metrics.get(f"pause_share_{side}")
        if share is not None:
            out.put(f"node_ethtool_{word}_prio3_pause_duration", eth, _counter(share, 1e6))
            out.put(f"node_ethtool_{word}_prio3_pause", eth,
                    _counter(share, PAUSE_FRAMES_PER_PAUSED_S))
    ib = [("device", rdma), ("port", "1"), instance]
    for metric, name in (("cnp_per_s", "node_infiniband_rp_cnp_handled_total"),
                         ("out_of_sequence_per_s", "node_infiniband_out_of_sequence_total"),
                         ("ecn_marked_per_s", "node_infiniband_np_ecn_marked_roce_packets_total")):
        if metric in metrics:
            out.put(name, ib, _counter(metrics[metric], 1.0))
    if "pre_fec_ber" in metrics:  # mlx5: corrected bits over received bits
        bits = metrics["pre_fec_ber"]
        out.put("node_ethtool_received_bits_phy", eth,
                _counter(Series(t=bits.t, v=[1.0] * len(bits.t)), LINE_RATE_BYTES * 8))
        out.put("node_ethtool_received_corrected_bits_phy", eth,
                _counter(bits, LINE_RATE_BYTES * 8))
    if "util" in metrics:
        out.put("node_network_transmit_bytes_total", eth, _counter(_sent(metrics), 1.0))
    _speed(out, "node_network_speed_bytes", eth, metrics)


def _gpu(out: _Out, host: str, index: str, metrics: dict[str, Series]) -> None:
    labels = [("gpu", index), ("Hostname", host), ("instance", f"{host}:9400")]
    if "gpu_sm_clock_mhz" in metrics:
        out.put("DCGM_FI_DEV_SM_CLOCK", labels, _gauge(metrics["gpu_sm_clock_mhz"]))
    if "gpu_util" in metrics:
        out.put("DCGM_FI_DEV_GPU_UTIL", labels, _gauge(metrics["gpu_util"], 100.0))
    if "gpu_throttle" in metrics:
        out.put("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", labels,
                ((t, float(THROTTLE_THERMAL if v >= 0.5 else 0))
                 for t, v in _gauge(metrics["gpu_throttle"])))
    if "nvlink_errors_per_s" in metrics:
        out.put("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", labels,
                _counter(metrics["nvlink_errors_per_s"], 1.0))
