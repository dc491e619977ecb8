"""The slow-job chain's series read from Prometheus over a window (issue 39): the fabric by
element, the job's step time from a gauge, its communicators' busbw from NCCL Inspector's
textfile metrics, mapped to ranks through the job's placement.

The fabric series are the live view's own mapped exporter metrics (`fabtui.prom.catalog`,
names and labels as configured) read with range queries — a counter as its rate over the
configured window, every `step` seconds — and named by the same label mapping
(`fabtui.prom.labels`), so `node004:mlx5_3` or `leaf-g00-r3:Ethernet16` is the element the
simulator's series use too. What a real exporter does not serve is absent, not made up: a SONiC
port has PFC frame rates but no paused-time share (the NIC's `rx_prio3_pause_duration` gives
the share on the host side).

Side effects: HTTP range queries to the configured Prometheus.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabtui.errors import RequestError
from fabtui.model.slowjob import Series, SlowJobInputs
from fabtui.prom import queries as promql
from fabtui.prom.catalog import BY_KEY, Element, Mapped
from fabtui.prom.client import PromError
from fabtui.prom.client import Series as PromSeries
from fabtui.triage.slowinputs import RankAt, prom_busbw, prom_steps
from fabtui.workspace.promsource import PrometheusSource

if TYPE_CHECKING:
    from pathlib import Path

    from fabtui.model.slowjob import SlowJobReport
    from fabtui.workspace.core import Workspace


@dataclass(frozen=True)
class FabricRead:
    """One fabric metric of the chain (`fabtui.model.slowjob.FABRIC_METRICS`) and the mapped
    exporter metric(s) it is read from."""

    metric: str
    keys: tuple[str, ...]
    """Mapped metric keys, summed (`dcgm.nvlink_crc` + `dcgm.nvlink_replay`)."""
    scale: float = 1.0
    """Unit conversion (mlx5's pause duration counts microseconds: 1e-6 makes it a share)."""
    lanes: str | None = None
    """For per-lane gauges: `min` or `max` over the lanes of one port."""


FABRIC_READS: tuple[FabricRead, ...] = (
    FabricRead("pause_rx_per_s", ("ethtool.rx_prio3_pause",)),
    FabricRead("pause_tx_per_s", ("ethtool.tx_prio3_pause",)),
    FabricRead("pause_share_rx", ("ethtool.rx_prio3_pause_duration",), 1e-6),
    FabricRead("pause_share_tx", ("ethtool.tx_prio3_pause_duration",), 1e-6),
    FabricRead("pause_rx_per_s", ("sonic.pfc_rx",)),
    FabricRead("pause_tx_per_s", ("sonic.pfc_tx",)),
    FabricRead("ecn_marked_per_s", ("infiniband.np_ecn_marked_roce_packets",)),
    FabricRead("cnp_per_s", ("infiniband.rp_cnp_handled",)),
    FabricRead("out_of_sequence_per_s", ("infiniband.out_of_sequence",)),
    FabricRead("fec_corrected_per_s", ("sonic.fec_corr",)),
    FabricRead("fec_uncorrectable_per_s", ("sonic.fec_uncorr",)),
    FabricRead("pre_fec_ber", ("sonic.fec_pre_ber",)),
    FabricRead("link_up", ("sonic.oper_status",)),
    FabricRead("rx_power_dbm", ("sonic.rx_power",), lanes="min"),
    FabricRead("nvlink_errors_per_s", ("dcgm.nvlink_crc", "dcgm.nvlink_replay")),
)
"""What the chain reads from Prometheus, in the exporters' own names (docs/prometheus.md)."""

@dataclass(frozen=True)
class RawRead:
    """A fabric metric read from exporter series no probe maps (`fabtui.prom.catalog` has only
    what a probe judges): its PromQL (`{by}` the element's labels, `{window}` the rate window)
    and what turns a value into the chain's unit."""

    metric: str
    element: Element
    promql: str
    transform: Callable[[float], float] | None = None


THROTTLING = 0x1CC
"""dcgm clock-throttle reasons that slow a GPU down: SW power cap 0x4, HW slowdown 0x8, SW
thermal 0x40, HW thermal 0x80, HW power brake 0x100 (idle 0x1, application clocks 0x2 and
sync boost 0x10 are not slowdowns)."""

RAW_READS: tuple[RawRead, ...] = (
    RawRead("util", "port",
            "sum by ({by}) (rate(sonic_interface_transmit_bytes_total[{window}])) / "
            "max by ({by}) (sonic_interface_speed_bytes)"),
    RawRead("util", "nic", "sum by ({by}) (rate(node_network_transmit_bytes_total[{window}])) / "
                           "max by ({by}) (node_network_speed_bytes)"),
    RawRead("speed_gbps", "port", "max by ({by}) (sonic_interface_speed_bytes) * 8 / 1e9"),
    RawRead("speed_gbps", "nic", "max by ({by}) (node_network_speed_bytes) * 8 / 1e9"),
    RawRead("pre_fec_ber", "nic",
            "sum by ({by}) (rate(node_ethtool_received_corrected_bits_phy[{window}])) / "
            "sum by ({by}) (rate(node_ethtool_received_bits_phy[{window}]))"),
    RawRead("gpu_sm_clock_mhz", "gpu", "max by ({by}) (DCGM_FI_DEV_SM_CLOCK)"),
    RawRead("gpu_util", "gpu", "max by ({by}) (DCGM_FI_DEV_GPU_UTIL) / 100"),
    RawRead("gpu_throttle", "gpu", "max by ({by}) (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS)",
            lambda v: 1.0 if int(v) & THROTTLING else 0.0),
)
"""Utilisation (node_exporter's netdev bytes, the SONiC exporter's transmit bytes over its
`speed_bytes`), a NIC's pre-FEC BER (mlx5's `rx_corrected_bits_phy` over `rx_bits_phy`, as
node_exporter's ethtool collector serves them) and the GPU's clock, busy share and throttle
reasons (dcgm-exporter)."""

STEP_METRIC = "training_step_time_seconds"
"""Default name of the step-time gauge (seconds per step, label `rank`): no standard exporter
serves one; a trainer exports it (prometheus_client, a pushgateway) under this or another name."""
BUSBW_METRIC = "nccl_bus_bandwidth_gbs"
"""NCCL Inspector's textfile metric (`NCCL_INSPECTOR_PROM_DUMP=1`, node_exporter's textfile
collector), labels `node`, `gpu`, `comm_name`, `collective`, `message_size`, `slurm_job_id`."""


def _query(source: PrometheusSource, read: FabricRead, mapped: Mapped) -> str:
    if read.lanes is None:
        return source.queries[mapped.key]
    by = ", ".join(source.labels.grouping(mapped.element))
    return f"{read.lanes} by ({by}) ({source.selector(mapped)})"


def fabric_series(source: PrometheusSource, start: float, end: float, step: float,
                  ) -> tuple[dict[str, dict[str, Series]], list[str]]:
    """Element key -> fabric metric -> samples over [start, end]; warnings for reads that
    failed (one failing metric does not stop the others)."""
    fabric: dict[str, dict[str, Series]] = {}
    warnings: list[str] = []
    for raw in RAW_READS:
        text = raw.promql.format(by=", ".join(source.labels.grouping(raw.element)),
                                 window=source.settings.window)
        try:
            answer = source.client.query_range(text, start, end, step)
        except PromError as exc:
            warnings.append(f"{raw.metric}: {exc}")
            continue
        for item in answer:
            element = source.resolver.element(raw.element, item.labels)
            if element is None:
                continue
            fabric.setdefault(element, {})[raw.metric] = Series(
                t=[t for t, _ in item.points],
                v=[raw.transform(v) if raw.transform else v for _, v in item.points])
    for read in FABRIC_READS:
        summed: dict[str, dict[float, float]] = {}
        for key in read.keys:
            mapped = BY_KEY[key]
            try:
                answer = source.client.query_range(_query(source, read, mapped), start, end,
                                                   step)
            except PromError as exc:
                warnings.append(f"{read.metric} ({source.names[key]}): {exc}")
                continue
            for item in answer:
                element = source.resolver.element(mapped.element, item.labels)
                if element is None:
                    continue
                points = summed.setdefault(element, {})
                for t, v in item.points:
                    points[t] = points.get(t, 0.0) + v * read.scale
        for element, points in summed.items():
            times = sorted(points)
            fabric.setdefault(element, {})[read.metric] = Series(
                t=times, v=[points[t] for t in times])
    return fabric, warnings


def _range(source: PrometheusSource, promql_text: str, start: float, end: float, step: float,
           warnings: list[str]) -> list[tuple[Mapping[str, str], Sequence[tuple[float, float]]]]:
    try:
        answer: list[PromSeries] = source.client.query_range(promql_text, start, end, step)
    except PromError as exc:
        warnings.append(f"{promql_text}: {exc}")
        return []
    return [(item.labels, item.points) for item in answer]


def slow_inputs(source: PrometheusSource, job: str, start: float, end: float, *,
                step: float = 15.0, rank_at: RankAt,
                step_metric: str = STEP_METRIC, job_label: str | None = "slurm_job_id",
                ) -> SlowJobInputs:
    """Everything the chain reads for `job` over [start, end] from Prometheus: step times
    (gauge `step_metric`), Inspector busbw and the fabric, every `step` seconds. `rank_at`
    places (host, GPU) on the job's ranks (its Slurm placement)."""
    warnings: list[str] = []
    only = f'{job_label}=~"{promql.alternatives([job])}"' if job_label else ""
    steps_found = _range(source, f"{step_metric}{{{only}}}", start, end, step, warnings)
    host: Callable[[str], str] = source.resolver.host
    steps, more = prom_steps(steps_found, metric=step_metric, rank_at=rank_at, host_of=host)
    warnings += more
    busbw_found = _range(source, f"{BUSBW_METRIC}{{{only}}}", start, end, step, warnings)
    communicators, busbw, more = prom_busbw(busbw_found, rank_at=rank_at, host_of=host)
    warnings += more
    fabric, more = fabric_series(source, start, end, step)
    warnings += more
    if not steps:
        warnings.append(f"no {step_metric} series for job {job} in the window: no step times")
    return SlowJobInputs(job=job, start=start, end=end, steps=steps,
                         communicators=communicators, busbw=busbw, fabric=fabric,
                         sources=[f"Prometheus {source.client.shown_url}"],
                         warnings=warnings)


def job_inputs(ws: Workspace, job: str, since: float, *, step: float = 15.0,
               end: float | None = None) -> SlowJobInputs:
    """A Slurm job's last `since` seconds (to `end`, default now) read from the configured
    Prometheus, its ranks placed by the job's Slurm placement (`fabtui.workspace.slurm`).
    Raises `RequestError` when no Prometheus source is configured or the job is unknown."""
    from fabtui.workspace.promsource import live_source
    from fabtui.workspace.slurm import job_placement

    source = live_source(ws)
    if source is None:
        raise RequestError("reading a job's series needs the Prometheus source: set source = "
                           '"prometheus" and its [prometheus] url (docs/prometheus.md), or give '
                           "--inputs FILE (docs/triage-slow.md)")
    placement = job_placement(ws, job)
    placed = {(slot.node, slot.gpu): slot.rank for slot in placement.slots}
    stop = time.time() if end is None else end
    inputs = slow_inputs(source, job, stop - since, stop, step=step,
                         rank_at=lambda host, gpu: placed.get((host, gpu)))
    inputs.sources.append(f"placement: {placement.source}")
    return inputs


def slow_job(ws: Workspace, *, inputs: Path | None = None, job: str | None = None,
             since: float = 3600.0, topology: Path | None = None,
             job_log: str | None = None) -> SlowJobReport:
    """`fabtui triage slow` and the app's Slow job screen. An inputs file, or where the live
    view reads Prometheus (`source = "prometheus"`) the job's window read from it
    (`job_inputs`; on the demo fabric its job 4242 by default), else on the demo fabric the
    job the simulator plays (`Workspace.slow_job`). Here rather than in the workspace core,
    which may not import this module (it reads the Prometheus source, which reads the core).
    `job_log`: the job's log as a path on its nodes, for the `logs.nccl` check a chain prints
    (else the inputs' own; on the demo its job's). Raises `RequestError` when a real fabric
    gives no job or reads no Prometheus."""
    from fabtui.workspace import triaging

    if inputs is None and ws.settings.live_source == "prometheus":
        if job is None and ws.simulated(topology):
            job = triaging.DEMO_JOB
        if job is None:
            raise RequestError("which job? give --job JOBID (its Slurm placement places the "
                               "ranks), or --inputs FILE (docs/triage-slow.md)")
        read = job_inputs(ws, job, since)
        read.job_log = job_log or _demo_job_log(ws, topology)
        return triaging.slow_job(ws.graph(topology), inputs=read)
    if inputs is None and not ws.simulated(topology):
        raise RequestError("a real fabric's job is read from Prometheus (source = "
                           '"prometheus", docs/prometheus.md) or from --inputs FILE '
                           "(docs/triage-slow.md)")
    return ws.slow_job(inputs=inputs, job=job, since=since, topology=topology, job_log=job_log)


def _demo_job_log(ws: Workspace, topology: Path | None) -> str | None:
    """Where the demo's job logs on its nodes (a real fabric's job log is not in Prometheus:
    None, unless given)."""
    if not ws.simulated(topology):
        return None
    from fabtui.sim.programs.nccl_log import JOB_LOG

    return JOB_LOG
