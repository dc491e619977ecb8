"""NCCL / PyTorch logs.

A watchdog timeout or an IB completion error fails the job; GPUDirect RDMA not in effect is a
warning (busbw halves when traffic bounces through host memory, perftest #241).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators._nccl_events import event_metrics
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.expected import ib_retry_window_s


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
    metrics += event_metrics(after.events, hosts, ctx)
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
                                 "env docs; default timeout 20 from NCCL 2.23, 18 from 2.14, "
                                 "14 before"))
    return metrics


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
