"""NCCL Inspector output (NCCL's profiler plugin, `plugins/profiler/inspector/` in NVIDIA/nccl):
per-communicator, per-operation bus bandwidth, issue 39's communicator input.

Two shapes, both read from NCCL's own source (inspector_json.cc, inspector_prom.cc): the JSON
log `<host>-pid<pid>.log` (one compact object per completed collective or point-to-point
operation per line: `header` with the communicator, `metadata` with the dump time, and
`coll_perf` or `p2p_perf`), and the Prometheus textfile `nccl_inspector_metrics_<uuid>.prom`
(`NCCL_INSPECTOR_PROM_DUMP=1`) with the latest value per communicator, collective, message
size bucket and algorithm, for node_exporter's textfile collector. The JSON names the rank
in the communicator; the Prometheus file names the node and GPU only, so ranks come from the
job's placement.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InspectorOperation(_Strict):
    """One completed operation of one rank in one communicator (a JSON log record)."""

    line: int
    """1-based line of the input where the record starts."""
    comm_id: str
    """`header.id`: the communicator's hash as printed (`0x7f8c496ae9f661`)."""
    comm_name: str | None
    """`header.comm_name` (NCCL 2.30 and later; `unknown` when the application named none);
    null in older outputs."""
    rank: int
    """`header.rank`: the rank within the communicator (not the global rank)."""
    n_ranks: int
    """`header.n_ranks`: the communicator's size."""
    n_nodes: int
    """`header.nnodes`: nodes the communicator spans."""
    hostname: str | None
    """`metadata.hostname`."""
    pid: int | None
    """`metadata.pid`."""
    dump_timestamp_us: int | None
    """`metadata.dump_timestamp_us`: when the plugin wrote the record, microseconds since the
    epoch (records drained in one dump share it)."""
    format_version: str | None
    """`metadata.inspector_output_format_version` (`v4.0`)."""
    kind: Literal["collective", "p2p"]
    """`coll_perf` (a collective) or `p2p_perf` (a send or receive)."""
    operation: str
    """`coll` or `p2p`: AllReduce, AllGather, ReduceScatter, Broadcast, Send, Recv, ..."""
    sequence: int | None
    """`coll_sn` / `p2p_sn`: the operation's sequence number in the communicator."""
    peer: int | None = None
    """`p2p_peer`: the other rank of a point-to-point operation."""
    message_bytes: int | None
    """`coll_msg_size_bytes` / `p2p_msg_size_bytes`."""
    exec_time_us: float | None
    """`coll_exec_time_us` / `p2p_exec_time_us`."""
    timing_source: str | None
    """`kernel_gpu` (GPU timestamps), `kernel_cpu` or `collective_cpu`; null in outputs that
    predate the field. Only `kernel_gpu` is recorded by default since NCCL 2.30."""
    algbw_gbs: float | None
    """Algorithm bandwidth in GB/s; null when the plugin printed `nan`."""
    busbw_gbs: float | None
    """Bus bandwidth in GB/s (comparable across collectives and to link speed); null for
    `nan`."""
    start_us: int | None = None
    """`event_trace_ts.coll_start_ts` (verbose mode), microseconds."""
    stop_us: int | None = None
    """`event_trace_ts.coll_stop_ts` (verbose mode), microseconds."""


class InspectorGauge(_Strict):
    """One sample of the Prometheus textfile."""

    line: int
    """1-based line of the input."""
    metric: Literal["nccl_bus_bandwidth_gbs", "nccl_collective_exec_time_microseconds",
                    "nccl_p2p_bus_bandwidth_gbs", "nccl_p2p_exec_time_microseconds"]
    """Which of the plugin's four metrics."""
    value: float | None
    """The sample's value; null for NaN."""
    node: str | None
    """`node` label: the host."""
    gpu: str | None
    """`gpu` label (`GPU0`: the CUDA device index)."""
    comm_name: str | None
    """`comm_name` label."""
    operation: str | None
    """`collective` or `p2p_operation` label."""
    message_size: str | None
    """`message_size` label: a bucket such as `4-5GB`, as printed."""
    n_ranks: int | None
    """`nranks` label."""
    n_nodes: int | None
    """`n_nodes` label."""
    labels: dict[str, str]
    """Every label as printed (`version`, `slurm_job_id`, `algo_proto`, ...)."""


class NcclInspector(ParsedOutput):
    """One NCCL Inspector file: JSON log records or Prometheus textfile samples."""

    kind: Literal["nccl-inspector"] = "nccl-inspector"
    shape: Literal["json", "prometheus"]
    """Which output the file is."""
    operations: list[InspectorOperation]
    """JSON records in input order (empty for the Prometheus shape)."""
    gauges: list[InspectorGauge]
    """Prometheus samples in input order (empty for the JSON shape)."""
    communicators: list[str]
    """Communicator ids (JSON) or names (Prometheus) found, in order of first appearance."""
