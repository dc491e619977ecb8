"""NCCL Inspector output: its JSON log and its Prometheus textfile (schema read from
NVIDIA/nccl `plugins/profiler/inspector/inspector_json.cc` and `inspector_prom.cc`).

    {"header":{"id":"0x7f8c496ae9f661","comm_name":"DP Group 0","rank":2,"n_ranks":8,
     "nnodes":1},"metadata":{"inspector_output_format_version":"v4.0","git_rev":"",
     "rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":1748030377748202,
     "hostname":"host","pid":1639453},"coll_perf":{"coll":"AllReduce","coll_sn":1407,
     "coll_msg_size_bytes":17179869184,"coll_exec_time_us":61974,
     "coll_timing_source":"kernel_gpu","coll_algobw_gbs":277.210914,
     "coll_busbw_gbs":485.119099}}
    nccl_bus_bandwidth_gbs{version="v5.1",slurm_job_id="unknown",node="n1",gpu="GPU0",
     comm_name="DP Group 0",n_nodes="1",nranks="4",collective="AllReduce",
     message_size="4-5GB",algo_proto="Ring_ll"} 678.263

The plugin writes one compact object per line; pretty-printed objects (its README) and
objects run together read the same. A record cut short by a crash or a copy (the last one,
usually) is a warning with its line; a file of nothing but broken records is refused.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from fabtui.model.parsed.nccl_inspector import InspectorGauge, InspectorOperation, NcclInspector
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import normalize

KIND = "nccl-inspector"
MODEL = NcclInspector
DESCRIPTION = ("NCCL Inspector profiler plugin output: per-communicator collective busbw "
               "(JSON log or Prometheus textfile)")

_JSON_HINT = re.compile(r'"(?:coll_perf|p2p_perf|inspector_output_format_version)"')
_PROM_HINT = re.compile(r"^nccl_(?:bus_bandwidth_gbs|collective_exec_time_microseconds|"
                        r"p2p_bus_bandwidth_gbs|p2p_exec_time_microseconds)\{", re.MULTILINE)
SIGNATURE = (r'"(?:coll_perf|p2p_perf|inspector_output_format_version)"|'
             r"nccl_(?:bus_bandwidth_gbs|collective_exec_time_microseconds|"
             r"p2p_bus_bandwidth_gbs|p2p_exec_time_microseconds)\{")
"""What `detect` needs (fabtui/parsers/signatures.py carries the same text)."""
_SAMPLE = re.compile(r"^(nccl_(?:bus_bandwidth_gbs|collective_exec_time_microseconds|"
                     r"p2p_bus_bandwidth_gbs|p2p_exec_time_microseconds))\{(.*)\}\s+(\S+)(?:\s+\d+)?\s*$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def detect(text: str) -> float:
    """Confidence that `text` is NCCL Inspector output."""
    head = normalize(text[:65536])
    if _JSON_HINT.search(head):
        return 0.95
    return 0.9 if _PROM_HINT.search(head) else 0.0


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # `"nan"`: the plugin prints NaN as a string
    return float(value) if math.isfinite(value) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _operation(record: dict[str, Any], line: int) -> InspectorOperation | str:
    """One record as an operation, or what is wrong with it."""
    header, meta = record.get("header"), record.get("metadata") or {}
    if not isinstance(meta, dict):
        return "its metadata is not an object"
    perf, kind, key = record.get("coll_perf"), "collective", "coll"
    if perf is None:
        perf, kind, key = record.get("p2p_perf"), "p2p", "p2p"
    if not isinstance(header, dict) or not isinstance(perf, dict):
        return "not an Inspector record (no header and coll_perf/p2p_perf objects)"
    rank, n_ranks = _int(header.get("rank")), _int(header.get("n_ranks"))
    if not isinstance(header.get("id"), str) or rank is None or n_ranks is None:
        return "its header has no communicator id, rank or n_ranks"
    if not isinstance(perf.get(key), str):
        return f"its {kind} record names no operation (`{key}`)"
    trace_found = perf.get("event_trace_ts")
    trace: dict[str, Any] = trace_found if isinstance(trace_found, dict) else {}
    exec_time = _float(perf.get(f"{key}_exec_time_us"))
    return InspectorOperation(
        line=line, comm_id=header["id"], comm_name=header.get("comm_name"), rank=rank,
        n_ranks=n_ranks, n_nodes=_int(header.get("nnodes")) or 0,
        hostname=meta.get("hostname"), pid=_int(meta.get("pid")),
        dump_timestamp_us=_int(meta.get("dump_timestamp_us")),
        format_version=meta.get("inspector_output_format_version"), kind=kind,
        operation=perf[key], sequence=_int(perf.get(f"{key}_sn")),
        peer=_int(perf.get("p2p_peer")), message_bytes=_int(perf.get(f"{key}_msg_size_bytes")),
        exec_time_us=exec_time, timing_source=perf.get(f"{key}_timing_source"),
        algbw_gbs=_float(perf.get(f"{key}_algobw_gbs")),
        busbw_gbs=_float(perf.get(f"{key}_busbw_gbs")),
        start_us=_int(trace.get(f"{key}_start_ts")), stop_us=_int(trace.get(f"{key}_stop_ts")))


def _parse_json(text: str) -> NcclInspector:
    decoder = json.JSONDecoder()
    operations: list[InspectorOperation] = []
    warnings: list[str] = []
    position, length = 0, len(text)
    while position < length:
        while position < length and text[position] in " \t\r\n":
            position += 1
        if position >= length:
            break
        line = text.count("\n", 0, position) + 1
        if text[position] != "{":
            end = text.find("\n", position)
            end = length if end < 0 else end
            warnings.append(f"line {line}: not a JSON record, skipped: "
                            f"{text[position:end].strip()[:60]!r}")
            position = end
            continue
        try:
            record, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            end = text.find("\n{", position + 1)
            warnings.append(f"line {line}: record cut short or malformed ({exc.msg}), "
                            "skipped")
            position = length if end < 0 else end + 1
            continue
        read = _operation(record, line) if isinstance(record, dict) else "not a JSON object"
        if isinstance(read, str):
            warnings.append(f"line {line}: {read}, skipped")
        else:
            operations.append(read)
    if not operations:
        first = warnings[0] if warnings else "no record"
        raise ParseError(KIND, int(first.split(":")[0].removeprefix("line "))
                         if first.startswith("line ") else None,
                         "no complete NCCL Inspector record: "
                         + first.split(": ", 1)[-1].removesuffix(", skipped"))
    comms = list(dict.fromkeys(op.comm_id for op in operations))
    return NcclInspector(shape="json", operations=operations, gauges=[], communicators=comms,
                         warnings=warnings)


def _label_int(labels: dict[str, str], name: str) -> int | None:
    return int(labels[name]) if labels.get(name, "").isdigit() else None


def _parse_prom(text: str) -> NcclInspector:
    gauges: list[InspectorGauge] = []
    warnings: list[str] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match is None:
            if line.startswith("nccl_"):
                warnings.append(f"line {number}: sample cut short or malformed, skipped")
            continue
        labels = {k: v for k, v in _LABEL.findall(match.group(2))}
        try:
            value: float | None = float(match.group(3))
        except ValueError:
            warnings.append(f"line {number}: value {match.group(3)!r} is not a number, "
                            "skipped")
            continue
        if value is not None and not math.isfinite(value):
            value = None

        gauges.append(InspectorGauge(
            line=number, metric=match.group(1), value=value,
            node=labels.get("node"), gpu=labels.get("gpu"), comm_name=labels.get("comm_name"),
            operation=labels.get("collective") or labels.get("p2p_operation"),
            message_size=labels.get("message_size"), n_ranks=_label_int(labels, "nranks"),
            n_nodes=_label_int(labels, "n_nodes"), labels=labels))
    if not gauges:
        raise ParseError(KIND, None, "no NCCL Inspector sample (nccl_bus_bandwidth_gbs{...} "
                                     "value)")
    comms = list(dict.fromkeys(g.comm_name for g in gauges if g.comm_name is not None))
    return NcclInspector(shape="prometheus", operations=[], gauges=gauges, communicators=comms,
                         warnings=warnings)


def parse(text: str) -> NcclInspector:
    """Read an Inspector JSON log or Prometheus textfile. Raises `ParseError`."""
    text = normalize(text)
    if not text.strip():
        raise ParseError(KIND, None, "the input is empty")
    if text.lstrip().startswith("{") or _JSON_HINT.search(text[:65536]):
        return _parse_json(text)
    return _parse_prom(text)


def tables(result: NcclInspector) -> Iterable[Table]:
    """Operations (JSON) or samples (Prometheus)."""
    if result.shape == "json":
        columns = [right("line"), left("comm"), right("rank"), right("n_ranks"), left("op"),
                   right("seq"), right("bytes"), right("time_us", "time us"),
                   right("busbw", "busbw GB/s"), left("timing")]
        rows = [(o.line, o.comm_name or o.comm_id, o.rank, o.n_ranks, o.operation,
                 o.sequence, o.message_bytes, o.exec_time_us, o.busbw_gbs, o.timing_source)
                for o in result.operations]
        return [Table.build(columns, rows)]
    columns = [right("line"), left("metric"), left("node"), left("gpu"), left("comm"),
               left("op"), left("size"), right("value")]
    samples = [(g.line, g.metric, g.node, g.gpu, g.comm_name, g.operation, g.message_size,
             g.value) for g in result.gauges]
    return [Table.build(columns, samples)]
