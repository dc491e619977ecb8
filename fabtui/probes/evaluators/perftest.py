"""perftest results: bandwidth in Gb/s at the largest message size, latency percentiles.

perftest's `MB/sec` is 10^6 bytes per second (an HDR 200G loopback prints ~24,000 MB/sec, which
as MiB would exceed the line rate), so Gb/s = MB/sec x 8 / 1000. Bandwidth is judged against the
RoCE write ceiling of the slower NIC of the pair (fabtui.topology.expected: 392 Gb/s at 400G,
the line rate less RoCEv2 framing), on top of any per-SKU gate the catalog holds.
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.expected import expected_rdma_gbps

_TO_GBPS = {"gb/sec": 1.0, "gbit/sec": 1.0, "mb/sec": 8 / 1000, "mib/sec": 8 * 1.048576 / 1000}


@evaluator("perftest")
def perftest(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Bandwidth (largest size) or latency (smallest size) of the main result."""
    where = ctx.target.name
    if not after.rows:
        return [Metric(name="rows", value=0, component=where, verdict=Verdict.ERROR)]
    if after.test_type == "lat" or after.rows[0].bw_avg is None:
        row = min(after.rows, key=lambda r: r.bytes)
        return [Metric(name=name, value=value, unit="us", component=where)
                for name, value in (("t_typical_usec", row.t_typical_usec),
                                    ("t_avg_usec", row.t_avg_usec), ("p99_usec", row.p99_usec),
                                    ("p99_9_usec", row.p99_9_usec)) if value is not None]
    row = max(after.rows, key=lambda r: r.bytes)
    factor = _TO_GBPS.get((after.unit or "mb/sec").lower())
    metrics = [Metric(name="message_bytes", value=row.bytes, component=where)]
    speeds = [t.nic.speed for t in (ctx.target, ctx.target.peer) if t is not None and t.nic]
    expected = expected_rdma_gbps(min(speeds)) if speeds else None
    for name, value in (("bw_avg_gbps", row.bw_avg), ("bw_peak_gbps", row.bw_peak)):
        if value is not None and factor is not None and not (name == "bw_peak_gbps" and
                                                             after.side == "server"):
            gbps = round(value * factor, 2)
            verdict, limit, source = Verdict.OK, None, None
            if expected is not None and name == "bw_avg_gbps":
                limit, source = expected.warn, f"expected {expected.value:g} Gb/s: " \
                    f"{expected.basis} ({expected.source})"
                if gbps < expected.fail:
                    verdict, limit = Verdict.FAIL, expected.fail
                elif gbps < expected.warn:
                    verdict = Verdict.WARN
            metrics.append(Metric(name=name, value=gbps, unit="Gb/s", component=where,
                                  verdict=verdict, limit=limit, source=source))
    if row.msg_rate is not None:
        metrics.append(Metric(name="msg_rate_mpps", value=row.msg_rate, component=where))
    return metrics
