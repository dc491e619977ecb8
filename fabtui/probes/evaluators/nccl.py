"""nccl-tests results and NCCL / PyTorch logs.

nccl-tests: busbw at the largest message is what the hardware bottleneck moves; #wrong > 0 and a
failed '# Out of bounds values' line are data corruption whatever the bandwidth; an average of 0
after an init failure means "did not run", not "slow" (NVIDIA/nccl-tests #267, #294).
NCCL logs: a watchdog timeout or an IB completion error fails the job; GPUDirect RDMA not in
effect is a warning (busbw halves when traffic bounces through host memory, perftest #241).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.model.topology import Node
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.expected import Expected, expected_busbw, ib_retry_window_s, node_shape

_JOB_FATAL = {"watchdog_timeout", "ib_completion_error", "dist_backend_error",
              "unhandled_system_error", "nccl_error", "child_failed", "desync",
              "connect_failed", "socket_connect_refused", "connect_timeout",
              "connection_closed", "store_error", "bootstrap_error", "cuda_error"}


@evaluator("nccl-tests")
def nccl_tests(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """busbw (largest size and peak), correctness, and whether the test ran at all."""
    where = ctx.component()
    # The failures the test printed come first: they say why it did not run, and the first
    # finding is the one a summary shows (`status = did_not_run` alone hides the cause).
    metrics = [Metric(name=f"failure.{failure.category}", value=failure.message[:160],
                      component=failure.host if failure.host else where, verdict=Verdict.FAIL)
               for failure in after.failures]
    # What NCCL printed is the cause (an IB completion error, a peer that went away): the same
    # event metrics as for an NCCL log, so a failed run names its NIC and peer.
    metrics += _event_metrics(after.events, {r.rank: r.host for r in after.ranks}, ctx)
    metrics.append(Metric(name="status", value=after.status, component=where,
                          verdict=Verdict.OK if after.status in ("ok", "incomplete") else
                          Verdict.ERROR if after.status == "did_not_run" else Verdict.FAIL))
    if after.rows:
        largest = max(after.rows, key=lambda r: r.size_bytes)
        busbw = largest.out_of_place.busbw
        if busbw is not None:
            # alltoall moves less per byte of bus than the ring collectives: its own name, so a
            # runbook never compares the two figures by mistake.
            name = "alltoall_busbw_max" if after.collective == "alltoall" else "busbw_max"
            expected = _expected(after, ctx)
            metrics.append(_judged(name, busbw, expected, where))
            if expected is not None:
                metrics.append(Metric(name="busbw_expected", value=expected.value, unit="GB/s",
                                      component=where, source=expected.basis))
        wrong = sum((r.out_of_place.wrong or 0) + (r.in_place.wrong or 0) for r in after.rows)
        metrics.append(Metric(name="wrong_total", value=wrong, component=where))
        metrics.append(Metric(name="message_bytes", value=largest.size_bytes, component=where))
    if after.peak_busbw is not None:
        metrics.append(Metric(name="busbw_peak", value=after.peak_busbw, unit="GB/s",
                              component=where))
    if after.avg_busbw is not None:
        metrics.append(Metric(name="avg_busbw", value=after.avg_busbw, unit="GB/s",
                              component=where))
    if after.out_of_bounds is not None:
        metrics.append(Metric(name="out_of_bounds", value=after.out_of_bounds, component=where))
    return metrics


def _expected(after: Any, ctx: EvalContext) -> Expected | None:
    """The healthy busbw of this run: its collective over the nodes its ranks ran on."""
    hosts = sorted({r.host for r in after.ranks})
    nodes: list[Node] = []
    if ctx.graph is not None:
        nodes = [ctx.graph.nodes[h] for h in hosts if h in ctx.graph.nodes]
    if not nodes and ctx.target.node is not None:
        nodes = [ctx.target.node]
    shape = node_shape(nodes)
    if shape is None or after.collective is None:
        return None
    return expected_busbw(after.collective, max(len(hosts), 1), shape)


def _judged(name: str, value: float, expected: Expected | None, where: str) -> Metric:
    """busbw against the topology's expected figure (fabtui.topology.expected)."""
    if expected is None:
        return Metric(name=name, value=value, unit="GB/s", component=where)
    verdict, limit = Verdict.OK, expected.warn
    if value < expected.fail:
        verdict, limit = Verdict.FAIL, expected.fail
    elif value < expected.warn:
        verdict = Verdict.WARN
    return Metric(name=name, value=value, unit="GB/s", component=where, verdict=verdict,
                  limit=limit, source=f"expected {expected.value:g} GB/s: {expected.basis} "
                                      f"({expected.source})")


@evaluator("nccl-log")
def nccl_log(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """What stopped the job and where: one summary per failure kind, each IB completion error on
    its host's NIC, the ranks a desync report names, the NIC every error points at, and whether
    GPUDirect RDMA is in effect."""
    hosts = {r.rank: r.host for r in after.ranks if r.host}
    metrics: list[Metric] = []
    timeouts = [e for e in after.events if e.type == "watchdog_timeout"]
    if timeouts:
        seqs = sorted({e.seq for e in timeouts if e.seq is not None})
        ops = sorted({e.op for e in timeouts if e.op})
        ranks = sorted({e.rank for e in timeouts if e.rank is not None})
        what = f"{len(ranks) or len(timeouts)} rank(s) timed out"
        if ops or seqs:
            what += f" in {'/'.join(ops) or 'a collective'}" + \
                (f" #{','.join(map(str, seqs[:3]))}" if seqs else "")
        metrics.append(Metric(name="event.watchdog_timeout", value=what,
                              component=ctx.component(), verdict=Verdict.FAIL))
    metrics += _event_metrics(after.events, hosts, ctx)
    suspect = _suspect_nic(after.events, hosts)
    if suspect is not None:
        metrics.append(Metric(name="suspect_nic", value=suspect[1], component=suspect[0],
                              verdict=Verdict.FAIL))
    if after.gpudirect_rdma is False or after.gpudirect_rdma_disabled:
        which = ",".join(after.gpudirect_rdma_disabled) or "all NICs"
        hosts_off = [h for h in _gdr_off_hosts(after) if h]
        metrics.append(Metric(name="gpudirect_rdma", value=f"not in effect on {which}",
                              component=",".join(hosts_off) or ctx.component(),
                              verdict=Verdict.WARN))
    elif after.gpudirect_rdma:
        metrics.append(Metric(name="gpudirect_rdma", value="in effect",
                              component=ctx.component()))
    # How long a link may stay down before this job's QPs give up (completion error 12).
    metrics.append(Metric(name="ib_retry_window_s",
                          value=round(ib_retry_window_s(after.nccl_version, after.env), 2),
                          unit="s", component=ctx.component(),
                          source="4.096 us x 2^NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1), NCCL "
                                 "env docs; default timeout 20 from NCCL 2.23, 18 before"))
    return metrics


def _event_metrics(events: Any, hosts: dict[int, str], ctx: EvalContext) -> list[Metric]:
    """One failing metric per job-fatal event kind and place (watchdog timeouts are summed up
    by the caller): an IB completion error on its host's NIC with its status and peer, other
    failures on their host and rank, with the peer when the event names one."""
    metrics: list[Metric] = []
    seen: set[tuple[str, str]] = set()
    for event in events:
        if event.type not in _JOB_FATAL or event.type == "watchdog_timeout":
            continue
        host = event.host or hosts.get(event.rank) if event.rank is not None else event.host
        if event.type == "ib_completion_error":
            where = f"{host}:{event.hca}" if host and event.hca else \
                (host or (f"rank{event.rank}" if event.rank is not None else None))
            meaning = ": ".join(x for x in (event.status_name, event.status_meaning) if x)
            value = f"status {event.status} ({meaning or '?'}) with peer {event.peer}"
        else:
            rank = f"rank{event.rank}" if event.rank is not None else None
            where = f"{host}:{rank}" if host and rank else (rank or host)
            value = event.message[:160]
            if event.peer and event.peer not in value:
                value += f" (peer {event.peer})"
        key = (event.type, where or "")
        if key in seen:
            continue
        seen.add(key)
        metrics.append(Metric(name=f"event.{event.type}", value=value,
                              component=_absolute(ctx, where), verdict=Verdict.FAIL))
    return metrics


def _absolute(ctx: EvalContext, where: str | None) -> str:
    """`node003:mlx5_5` as is (it names its host); otherwise under the probe's target."""
    if where is None:
        return ctx.component()
    return where if ":" in where else ctx.component(where)


def _suspect_nic(events: Any, hosts: dict[int, str]) -> tuple[str, str] | None:
    """The NIC every IB completion error involves (as the local end or as the peer), if one is.

    When a link dies, the rank behind it and the ranks talking to it all report error 12, each
    naming the other's address: the address common to them all is the dead link's NIC."""
    errors = [e for e in events if e.type == "ib_completion_error"]
    if len(errors) < 2:
        return None
    owners: dict[str, str] = {}
    involved: dict[str, int] = {}
    for event in errors:
        local = (event.local_gid or "").removeprefix("::ffff:") or None
        host = event.host or (hosts.get(event.rank) if event.rank is not None else None)
        if local and host and event.hca:
            owners.setdefault(local, f"{host}:{event.hca}")
        for address in {local, event.peer}:
            if address:
                involved[address] = involved.get(address, 0) + 1
    common = [a for a, n in involved.items() if n == len(errors) and a in owners]
    if len(common) != 1:
        return None
    return owners[common[0]], f"{common[0]} is in all {len(errors)} IB completion errors"


def _gdr_off_hosts(after: Any) -> list[str | None]:
    """Hosts of the ranks whose NET connections run without GDRDMA (from the channel lines)."""
    hosts = {r.rank: r.host for r in after.ranks}
    return sorted({hosts.get(rank) for use in after.net_channel_use if not use.gdrdma
                   for rank in use.ranks if hosts.get(rank)}, key=str)
