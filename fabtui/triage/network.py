"""Network failures in the logs: NCCL WARN events per rank with what their status means, the
first signal of each failing path (flushes and cascades after it are teardown), failed paths
that meet at one NIC grouped into one fault, and paths chained over a rail's NICs with no NIC
in all of them blamed on what they share (the switch, or PFC on it), not on one NIC."""

from __future__ import annotations

import re

from fabtui.model.triage import Suspect, Verdict, WarnEvent
from fabtui.topology.failed_paths import PathGroup, address, far_end, is_flush, path_groups
from fabtui.triage import async_events, wc_status
from fabtui.triage.findings import Context, Finding, rank_at

MAX_WARNINGS = 300
_LOCAL_RANK = re.compile(r"[Cc]onnection closed by localRank (\d+)")
_STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] [\w.\-]+:\d+:\d+ \[\d+\]")
"""NCCL_DEBUG_TIMESTAMP_LEVELS' stamp before a WARN line (the default from NCCL 2.26)."""
_NETWORK_EVENTS = ("ib_completion_error", "ib_async_event", "connect_failed",
                   "socket_connect_refused", "connect_timeout", "connection_closed")


def warnings_of(ctx: Context) -> list[WarnEvent]:
    out: list[WarnEvent] = []
    signalled: set[tuple[int | None, str | None]] = set()
    for item in ctx.facts.events:
        event = item.event
        # An NCCL error whose `Last error:` is a completion error (PyTorch prints it on the
        # terminate line) is that completion error.
        kind = "ib_completion_error" if event.status is not None and (
            "Got completion from peer" in event.message or event.vendor_err is not None
            or (event.status_name or "").startswith("IBV_WC_")) else event.type
        if kind not in _NETWORK_EVENTS and kind not in ("nccl_warn", "bootstrap_error",
                                                        "plugin_not_found", "net_plugin_error"):
            continue
        role: wc_status.Role = "other"
        meaning, name = event.status_meaning, event.status_name
        if kind == "ib_completion_error":
            known = wc_status.describe(event.status)
            if known is not None:
                meaning, role, name = known.meaning, known.role, name or known.name
        elif event.type == "ib_async_event":
            fault = async_events.describe(event.message)
            role = "signal" if fault is not None else "other"
            if fault is not None:
                meaning, name = fault.meaning, fault.name
        elif event.type == "connection_closed":
            key = (item.rank, item.host)
            role = "teardown" if key in signalled else "signal"
            signalled.add(key)
        if len(out) >= MAX_WARNINGS and (role == "teardown" or kind != "ib_completion_error"):
            # Past the cap only signals are kept: a thousand ranks' flushes, read before the
            # one status 12 in file order, must not hide it. The rest are counted.
            ctx.facts.dropped[(kind, event.status)] += 1
            continue
        out.append(WarnEvent(rank=item.rank, node=item.host, type=kind,
                             status=event.status, status_name=name,
                             meaning=meaning, role=role,
                             peer=event.peer, local_gid=event.local_gid,
                             remote_gid=event.remote_gid, hca=event.hca,
                             evidence=item.evidence))
    return out


def local_rank_findings(ctx: Context, warnings: list[WarnEvent]) -> list[Finding]:
    """`Connection closed by localRank N`: the first names the process that went away."""
    first: dict[str | None, tuple[int, WarnEvent]] = {}
    cascade = 0
    for warn in warnings:
        found = _LOCAL_RANK.search(warn.evidence.text)
        if not found:
            continue
        if warn.node in first:
            cascade += 1
            warn.role = "teardown"
            continue
        warn.role = "signal"
        first[warn.node] = (int(found.group(1)), warn)
    cascade += ctx.facts.dropped[("closed by localRank", None)]
    # Several nodes each saw a local process go: the agents stop every worker once one failed.
    # The one torchrun reports failed on its own (not stopped with SIGTERM) is the signal.
    crashed = {(e.event.host, e.event.local_rank) for e in ctx.facts.events
               if e.event.type == "child_failed" and e.event.status not in (None, -15)}
    if len(first) > 1 and (own := {n: v for n, v in first.items() if (n, v[0]) in crashed}):
        for node in set(first) - set(own):
            first[node][1].role = "teardown"
            cascade += 1
        first = own
    # The process that closed had aborted its own communicator (`Abort COMPLETE` on that host
    # and device): a watchdog's or the application's teardown after the hang, not the cause.
    torn = {node: v for node, v in first.items()
            if node is not None and (node, v[0]) in ctx.facts.aborted}
    for node, (local, warn) in torn.items():
        warn.role = "teardown"
        abort = ctx.facts.aborted[(node, local)]
        ctx.notes.append(f"`Connection closed by localRank {local}` on {node} follows that "
                         f"process's own communicator abort ({abort.file}:{abort.line}): "
                         "teardown after the hang, not its cause")
        del first[node]
    out: list[Finding] = []
    for node, (local, warn) in first.items():
        rank = rank_at(ctx, node, local) if node else None
        if cascade:
            ctx.notes.append(f"{cascade} later `Connection closed by localRank` line(s) are the "
                             "cascade of the first one")
        out.append(Finding(
            verdict="culprit found",
            summary=f"Local rank {local} on {node or 'its node'} went away first (`Connection "
                    "closed by localRank`); the other lines like it are the cascade.",
            suspects=[Suspect(kind="local rank", rank=rank, node=node, gpu=local,
                              reason=f"local rank {local}'s process closed its connections "
                                     "first", evidence=[warn.evidence])]))
    return out


def async_findings(ctx: Context, warnings: list[WarnEvent]) -> list[Finding]:
    """An IB async error event names the host and NIC that raised it: one finding per NIC, its
    first event the evidence (see `async_events`)."""
    first: dict[tuple[str | None, str | None], WarnEvent] = {}
    ranks: dict[tuple[str | None, str | None], set[int]] = {}
    for warn in warnings:
        if warn.type == "ib_async_event" and warn.role == "signal":
            first.setdefault((warn.node, warn.hca), warn)
            ranks.setdefault((warn.node, warn.hca), set()).update(
                [warn.rank] if warn.rank is not None else [])
    out: list[Finding] = []
    for (node, hca), warn in first.items():
        where = f"{hca or 'its NIC'} on {node or 'a host no line names'}"
        # Several ranks of the host saw the same NIC fail (old NCCL names no device): the NIC
        # is shared, no one rank is it.
        sharing = sorted(ranks[(node, hca)])
        out.append(Finding(
            verdict="culprit found" if node or warn.rank is not None else "network path",
            summary=f"{where} raised an IB async error ({warn.status_name}: {warn.meaning}). "
                    "That host's NIC is where the failure starts; completion errors its peers "
                    "report afterwards (flushes, retries, rejected requests) are its consequence, "
                    "not faults of their own.",
            suspects=[Suspect(kind="nic", rank=warn.rank if len(sharing) < 2 else None,
                              ranks=sharing if len(sharing) > 1 else [], node=node, nic=hca,
                              confidence="high" if node else "medium",
                              reason=f"its own NIC raised {warn.status_name} ({warn.meaning})",
                              evidence=[warn.evidence])]))
    return out


def _async_origin(ctx: Context, warn: WarnEvent, faults: list[Suspect]) -> Suspect | None:
    """The async-error NIC a completion error is the consequence of: one on the same host, or
    the only one there is when the error's peer is on no other host the logs or topology name."""
    if not faults:
        return None
    same = next((s for s in faults if s.node is not None and s.node == warn.node), None)
    if same is not None:
        return same
    peer_host = ctx.host(far_end(warn)) or ctx.host(address(warn.peer))
    if peer_host is not None:
        return next((s for s in faults if s.node == peer_host), None)
    return faults[0] if len(faults) == 1 else None


def link_findings(ctx: Context, warnings: list[WarnEvent], earlier: list[Finding]) -> list[Finding]:
    """The first signal of each failing NIC: an IB error other than a flush, a refused or
    timed-out connection; the flushes after it are teardown. A completion error that is the
    consequence of an IB async error (`async_findings`, in `earlier`) is evidence of that."""
    nic_faults = [s for f in earlier for s in f.suspects if s.kind == "nic"]
    # A process that died (or left no log) takes its queue pairs with it: its peers' retries
    # then run out, so their completion errors toward its host are its symptom. A rank that
    # is merely behind still acknowledges at the transport level: no such symptom.
    known_nodes: dict[str, Suspect] = {}
    for suspect in (s for f in earlier for s in f.suspects
                    if s.kind in ("dead", "missing log", "local rank")):
        node = suspect.node or _node_of(ctx, suspect.rank)
        if node:
            known_nodes.setdefault(node, suspect)
    known_ranks = {s.rank for f in earlier for s in f.suspects if s.rank is not None}
    failures = [w for w in warnings if w.type in ("ib_completion_error", "socket_connect_refused",
                                                  "connect_failed", "connect_timeout")]
    flushed = sum(1 for w in failures if is_flush(w))
    # One rule with the hang runbook's `nccl-log` evaluator (fabtui.topology.failed_paths): the
    # GIDs name the path's NICs, flushes are teardown, paths meeting at one NIC are one fault.
    groups = path_groups(failures, lambda w: (w.rank, w.node, w.hca))
    flushed += ctx.facts.dropped[("ib_completion_error", 5)]
    if flushed:
        ctx.notes.append(f"{flushed} IB completion(s) with status 5 (work request flushed) are "
                         "teardown after the first error, not separate faults")
    out: list[Finding] = []
    for found in groups:
        group = found.members
        warn = group[0]
        nic_fault = _async_origin(ctx, warn, nic_faults)
        if nic_fault is not None:
            # The host whose NIC raised an async error is the origin; this completion error is
            # its consequence (the same host's queue pair, or a peer losing it).
            nic_fault.evidence.extend(w.evidence for w in group[:2])
            for member in group:
                member.role = "teardown"
            continue
        if found.chained:
            # No NIC is in every path: none is the culprit (and none is "toward its NIC").
            if not {w.rank for w in group} <= known_ranks:
                out.append(_chained_paths(ctx, found))
            continue
        peer_host = ctx.host(far_end(warn)) or ctx.host(address(warn.peer))
        if peer_host in known_nodes:
            # The path to a rank already suspected: its symptom, not a new fault.
            known_nodes[peer_host].evidence.append(warn.evidence)
            continue
        if warn.rank in known_ranks and warn.rank is not None:
            continue
        if len(group) > 1 and not found.reported_from_nic and found.nic is not None:
            out.append(_toward_one_nic(ctx, found, peer_host))
            continue
        if warn.node is None and warn.rank is None and not far_end(warn) and not warn.peer:
            out.append(_unplaced(warn, len(group)))
            continue
        known = wc_status.describe(warn.status) if warn.type == "ib_completion_error" else None
        host_side = known is not None and known.host_side
        status = f"status {warn.status} ({warn.status_name})" if warn.status is not None \
            else warn.type.replace("_", " ")
        who = f"rank {warn.rank}" if warn.rank is not None else "a rank"
        suspects = [Suspect(kind="link", rank=warn.rank, node=warn.node, nic=warn.hca,
                            confidence="high" if warn.rank is not None else "medium",
                            peer=warn.remote_gid or warn.peer, peer_node=peer_host,
                            reason=f"{status}: {warn.meaning or 'connection failed'}"
                                   + (f"; {len(group) - 1} other rank(s) failed toward this "
                                      "NIC" if len(group) > 1 else ""),
                            evidence=[warn.evidence])]
        for other in group[1:]:
            suspects.append(Suspect(confidence="low", kind="link", rank=other.rank, node=other.node,
                                    nic=other.hca, peer=other.remote_gid or other.peer,
                                    reason=f"also failed ({other.status_name or other.type}), "
                                           f"toward {who}'s NIC: a symptom of the same path",
                                    evidence=[other.evidence]))
        if warn.peer and len(group) == 1 and not host_side:
            # The far NIC is the remote GID; the printed peer is its host's OOB socket address.
            suspects.append(Suspect(confidence="low", kind="peer", rank=None, node=peer_host,
                                    peer=warn.remote_gid or warn.peer,
                                    reason=f"the far end of {who}'s failed path"
                                           + (f" (host {warn.peer} by its socket address)"
                                              if warn.remote_gid and warn.peer else ""),
                                    evidence=[warn.evidence]))
        # An IB queue pair that never reached RTR/RTS (`ibv_modify_qp failed with 110`): the two
        # NICs did not reach each other, a network path like a retry-exceeded completion.
        queue_pair = warn.type == "connect_failed" and "ibv_modify_qp" in warn.evidence.text
        if queue_pair:
            suspects[0].reason = (f"queue pair setup on {warn.hca or 'its NIC'} timed out "
                                  f"(errno {warn.status}): the far NIC never answered")
        refused = warn.type != "ib_completion_error" and not queue_pair
        # The first signal names the rank whose NIC saw it: that NIC (and, on the topology, its
        # leaf port and optic) is the culprit, the far end its peer. Without a rank the logs
        # name only a path; a host-side error (status 1, 2, 4) names no path at all.
        verdict: Verdict = "cannot tell" if refused else \
            "culprit found" if warn.rank is not None else \
            "cannot tell" if host_side else "network path"
        where = f"{who}{' on ' + warn.node if warn.node else ''}"
        if queue_pair:
            summary = (f"{where} could not set up a queue pair from {warn.hca or 'its NIC'} to "
                       f"{far_end(warn) or '?'} (ibv_modify_qp timed out, errno {warn.status}): "
                       "the two NICs never reached each other. Suspect the path (a down link, "
                       "no route between them: on a rail-only fabric, traffic across rails, "
                       "NCCL_CROSS_NIC=0), or the GID index (NCCL_IB_GID_INDEX).")
        elif warn.type == "socket_connect_refused":
            summary = (f"{who} was refused a connection by {warn.peer}: nothing listened there "
                       "(the peer process died or had not started); the logs do not say why.")
        elif refused:
            summary = (f"{who} could not connect to {warn.peer} "
                       f"({warn.type.replace('_', ' ')}): a socket (bootstrap / rendezvous) "
                       "failure; the peer may be down or not started yet, and the logs do not "
                       "say which.")
        else:
            summary = (f"{where} reported {status} talking to {far_end(warn) or '?'}"
                       + (f", and {len(group) - 1} other rank(s) failed toward its NIC"
                          if len(group) > 1 else "")
                       + (": an error made on that host (memory registration, GPUDirect RDMA, "
                          "the NIC or its driver), not on the network path." if host_side else
                          ": the network path of that NIC (its leaf port and optic, then the "
                          "peer's) is the suspect."))
        out.append(Finding(
            verdict=verdict,
            summary=summary,
            suspects=suspects))
    # Independent faults in the order they happened where every lead line says when (NCCL 2.26+
    # stamps its WARN lines), else in reading order (a combined log's is the time order).
    stamps = [_STAMP.search(f.suspects[0].evidence[0].text)
              if f.suspects and f.suspects[0].evidence else None for f in out]
    if all(stamps):
        order = {id(f): found.group(1) for f, found in zip(out, stamps, strict=True) if found}
        out.sort(key=lambda f: order[id(f)])
    out.sort(key=lambda f: f.verdict == "cannot tell")
    return out


def _unplaced(warn: WarnEvent, count: int) -> Finding:
    """A network failure no host, rank, peer or GID places (NCCL before 2.12 printed `Got
    completion with error 12` alone; a paste that lost the line prefix): a path failed, the
    logs cannot say which."""
    status = f"status {warn.status} ({warn.status_name})" if warn.status is not None \
        else warn.type.replace("_", " ")
    return Finding(
        verdict="cannot tell",
        summary=f"{count} failure(s) with {status} name no host, rank, peer or GID (NCCL before "
                "2.12 printed none on completion errors): a network path failed, but the logs "
                "cannot say whose.",
        suspects=[])


def _chained_paths(ctx: Context, found: PathGroup[WarnEvent]) -> Finding:
    """Failed paths chained over three or more NICs with none in all of them (a rail's NICs
    each failing toward their ring neighbour): what they share is the switch they all cross,
    or PFC on it; `locate` names the switch from the topology."""
    group = found.members
    addresses = found.addresses
    shown = ", ".join(addresses[:8]) + (f" and {len(addresses) - 8} more"
                                        if len(addresses) > 8 else "")
    statuses = sorted({w.status_name or (f"status {w.status}" if w.status is not None
                                         else w.type.replace("_", " ")) for w in group})
    ranks = sorted({w.rank for w in group if w.rank is not None})
    lead = Suspect(kind="switch", rank=None, ranks=ranks,
                   reason=f"the {len(group)} failed paths chain over {len(addresses)} NICs and "
                          "no NIC is in all of them: the switch they all cross, or PFC on it",
                   evidence=[w.evidence for w in group[:3]])
    links = [Suspect(confidence="low", kind="link", rank=w.rank, node=w.node, nic=w.hca,
                     peer=w.remote_gid or w.peer, peer_node=ctx.host(far_end(w)),
                     reason=f"{w.status_name or w.type} toward {far_end(w) or '?'}: one of the "
                            f"{len(group)} chained failed paths, a symptom of what they share, "
                            "not a culprit on its own",
                     evidence=[w.evidence]) for w in group]
    return Finding(
        verdict="network path",
        summary=(f"{len(group)} ranks' failed paths ({', '.join(statuses)}) chain over "
                 f"{len(addresses)} NICs ({shown}) and no NIC is in all of them: no one NIC, "
                 "optic or node explains them. What they share is the switch they all cross (in "
                 "a rail-optimised fabric, the rail's leaf), or PFC on it: a pause storm or "
                 "deadlock holding the lossless queue until the queue pairs' retries ran out. "
                 "The logs cannot tell which, nor rule out a cause the NICs share (a firmware or "
                 "configuration pushed to all of them)."),
        suspects=[lead, *links])


def _toward_one_nic(ctx: Context, found: PathGroup[WarnEvent], host: str | None) -> Finding:
    """Several ranks' failed paths all end at one NIC that no log reports from: that NIC (its
    process stopped answering, or its log is not among the inputs) is the suspect."""
    group = found.members
    nic = found.nic
    ranks = ", ".join(str(w.rank) for w in group[:8] if w.rank is not None) or "unnamed"
    far = Suspect(kind="peer", rank=None, node=host, peer=nic,
                  reason=f"all {len(group)} failed paths end at this NIC and no log reports "
                         "from it",
                  evidence=[w.evidence for w in group[:3]])
    links = [Suspect(confidence="low", kind="link", rank=w.rank, node=w.node, nic=w.hca,
                     peer=w.remote_gid or w.peer, peer_node=host,
                     reason=f"{w.status_name or w.type} toward {nic}: a symptom of that NIC's "
                            "path",
                     evidence=[w.evidence]) for w in group]
    return Finding(
        verdict="network path",
        summary=(f"{len(group)} ranks (ranks {ranks}) failed toward {nic}"
                 f"{' on ' + host if host else ''}, the one address in every failed path, and "
                 "no log reports from it: the network path of that NIC (its leaf port and "
                 "optic) or its host is the suspect."),
        suspects=[far, *links])


def _node_of(ctx: Context, rank: int | None) -> str | None:
    """The host of `rank` as the logs say, else as their regular layout implies."""
    if rank is None:
        return None
    if rank in ctx.facts.hosts:
        return ctx.facts.hosts[rank]
    placed = ctx.layout.place(rank) if ctx.layout is not None else None
    return placed[0] if placed else None
