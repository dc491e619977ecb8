"""NCCL / PyTorch logs.

A watchdog timeout or an IB completion error fails the job; GPUDirect RDMA not in effect is a
warning (busbw halves when traffic bounces through host memory, perftest #241); a job over one
NVL72 NVLink domain whose init line says `MNNVL 0` runs without its domain and fails.
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators._nccl_events import event_metrics
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.expected import ib_retry_window_s
from fabtui.topology.failed_paths import PathGroup, address, is_flush, path_groups, shared_switch
from fabtui.topology.graph import FabricGraph
from fabtui.topology.traffic_class import SOURCE as TC_SOURCE
from fabtui.topology.traffic_class import judge as judge_traffic_class
from fabtui.topology.traffic_class import qos_design


@evaluator("nccl-log")
def nccl_log(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """What stopped the job and where: one summary per failure kind, each IB completion error on
    its host's NIC, the ranks a desync report names, the NIC the failed paths meet at (or the
    switch they chain across), and whether GPUDirect RDMA is in effect."""
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
    metrics += _failed_paths(after.events, hosts, ctx)
    if after.gpudirect_rdma is False or after.gpudirect_rdma_disabled:
        which = ",".join(after.gpudirect_rdma_disabled) or "all NICs"
        hosts_off = [h for h in _gdr_off_hosts(after) if h]
        metrics.append(Metric(name="gpudirect_rdma", value=f"not in effect on {which}",
                              component=",".join(hosts_off) or ctx.component(),
                              verdict=Verdict.WARN))
    elif after.gpudirect_rdma:
        metrics.append(Metric(name="gpudirect_rdma", value="in effect",
                              component=ctx.component()))
    metrics += _traffic_class(after, ctx)
    metrics += _nvlink_domain(after, ctx)
    # How long a link may stay down before this job's QPs give up (completion error 12).
    metrics.append(Metric(name="ib_retry_window_s",
                          value=round(ib_retry_window_s(after.nccl_version, after.env), 2),
                          unit="s", component=ctx.component(),
                          source="4.096 us x 2^NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1), NCCL "
                                 "env docs; default timeout 20 from NCCL 2.23, 18 from 2.14, "
                                 "14 before"))
    return metrics


MNNVL_SOURCE = ("NCCL env docs (NCCL_MNNVL_ENABLE: multi-node NVLink used when the GPUs are "
                "registered in one NVLink domain, needs IMEX); NCCL init line `comm .. MNNVL M` "
                "(NVIDIA/nccl#2303)")


def _nvlink_domain(log: Any, ctx: EvalContext) -> list[Metric]:
    """`nvlink_domain`: a job whose nodes all belong to one multi-node NVLink domain (GB200 /
    GB300 NVL72 in the topology) must run over it. Its init line printing `MNNVL 0` means NCCL
    crosses the trays over the network: fails (IMEX, fabric manager or NCCL_MNNVL_ENABLE), or
    warns when the job set NCCL_MNNVL_ENABLE=0 itself. Judged only when the log prints MNNVL
    and the job spans two or more nodes of one domain; otherwise nothing is said."""
    if ctx.graph is None or log.mnnvl is None:
        return []
    hosts = sorted({r.host for r in log.ranks if r.host} | set(log.hosts))
    nodes = [ctx.graph.nodes[h] for h in hosts if h in ctx.graph.nodes]
    domains = {n.nvlink_domain for n in nodes}
    if len(nodes) < 2 or len(domains) != 1 or None in domains:
        return []
    domain = str(next(iter(domains)))
    where = f"{len(nodes)} nodes of NVLink domain {domain}"
    if log.mnnvl:
        return [Metric(name="nvlink_domain", value=f"MNNVL 1: the job runs over {where}",
                       component=ctx.component(), source=MNNVL_SOURCE)]
    if str(log.env.get("NCCL_MNNVL_ENABLE", "")).strip() == "0":
        return [Metric(name="nvlink_domain",
                       value=f"MNNVL 0 on {where}: NCCL_MNNVL_ENABLE=0 set by the job, so it "
                             "crosses the trays over the network (intended for a network test, "
                             "else remove it)",
                       component=ctx.component(), verdict=Verdict.WARN, source=MNNVL_SOURCE)]
    return [Metric(name="nvlink_domain",
                   value=f"MNNVL 0 on {where}: the job runs without its NVLink domain (check "
                         "IMEX, the fabric manager and the GPUs' fabric registration "
                         "(nvidia-smi -q Fabric), and NCCL_MNNVL_ENABLE)",
                   component=ctx.component(), verdict=Verdict.FAIL, source=MNNVL_SOURCE)]


def _traffic_class(log: Any, ctx: EvalContext) -> list[Metric]:
    """`ib_traffic_class`: the DSCP the job marks its RoCE packets with (its NCCL_IB_TC) against
    the fleet's QoS design; only for a job on RoCE (its NET/IB Using line, or NCCL_IB_TC set)."""
    roce = any("roce" in (t.link_layer or "").lower() for t in log.transports)
    if not roce and "NCCL_IB_TC" not in log.env:
        return []
    result = judge_traffic_class(log.env, qos_design())
    return [Metric(name="ib_traffic_class", value=result.value, component=ctx.component(),
                   verdict=Verdict(result.verdict), source=TC_SOURCE)]


def _failed_paths(events: Any, hosts: dict[int, str], ctx: EvalContext) -> list[Metric]:
    """Per fault, in the order the log shows them: `suspect_nic` on the NIC two or more failed
    paths meet at (a lone path names two ends, and the one that reported it may be the victim),
    or `suspect_switch` on the switch paths chained over three or more NICs with none in all of
    them share (the rail's leaf, or PFC on it: not one NIC's fault).

    The rule is `fabtui.topology.failed_paths`, the one `fabtui triage nccl` follows: the GIDs
    name the NICs (the printed peer is the far host's OOB socket address), status-5 flushes are
    teardown."""
    errors = [e for e in events if e.type == "ib_completion_error"]
    flushed = sum(1 for e in errors if is_flush(e))
    metrics: list[Metric] = []
    for group in path_groups(errors, lambda e: (e.rank, _host(e, hosts), e.hca)):
        if group.chained:
            metrics.append(_switch_metric(group, ctx))
            continue
        name = _nic_name(group, hosts, ctx.graph)
        if name is None or len(group.members) < 2:
            continue
        lead = group.members[0]
        what = f"{group.nic}: the NIC all {len(group.members)} failed paths meet at"
        if group.reported_from_nic:
            what += f" (status {lead.status} from it toward {address(lead.remote_gid) or '?'})"
        if flushed:
            what += f"; {flushed} status-5 flush(es) are teardown"
        metrics.append(Metric(name="suspect_nic", value=what, component=name,
                              verdict=Verdict.FAIL))
    return metrics


def _host(event: Any, hosts: dict[int, str]) -> str | None:
    host: str | None = event.host or (hosts.get(event.rank) if event.rank is not None else None)
    return host


def _nic_name(group: PathGroup[Any], hosts: dict[int, str],
              graph: FabricGraph | None) -> str | None:
    """`node:mlx5_N` of the group's NIC: by the topology's NIC addresses, else the host and
    HCA of the report made from it (NCCL 2.23+ prints the HCA)."""
    if group.nic is None:
        return None
    if graph is not None and group.nic in graph.nic_ips:
        return ":".join(graph.nic_ips[group.nic])
    lead = group.members[0]
    owner = _host(lead, hosts)
    return f"{owner}:{lead.hca}" if group.reported_from_nic and owner and lead.hca else None


def _switch_metric(group: PathGroup[Any], ctx: EvalContext) -> Metric:
    addresses = group.addresses
    switch, rail = shared_switch(ctx.graph, addresses) if ctx.graph is not None else (None, None)
    shown = ", ".join(addresses[:8]) + (f" and {len(addresses) - 8} more"
                                        if len(addresses) > 8 else "")
    what = (f"{len(group.members)} failed paths chain over {len(addresses)} NICs ({shown})"
            + (f" of rail {rail}" if rail is not None else "")
            + " and no NIC is in all of them: not one NIC's fault; what they share is "
            + (f"{switch}, or PFC on it" if switch else "the switch they cross, or PFC on it")
            + " (the logs cannot tell which)")
    return Metric(name="suspect_switch", value=what, component=switch or ctx.component(),
                  verdict=Verdict.FAIL)


def _gdr_off_hosts(after: Any) -> list[str | None]:
    """Hosts of the ranks whose NET connections run without GDRDMA (from the channel lines)."""
    hosts = {r.rank: r.host for r in after.ranks}
    return sorted({hosts.get(rank) for use in after.net_channel_use if not use.gdrdma
                   for rank in use.ranks if hosts.get(rank)}, key=str)
