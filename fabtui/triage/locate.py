"""Put suspects on the fabric: rank -> node, GPU, NIC, rail, leaf port, optic; peers by IP / GID.

With a rank file (or a configured one) the topology's placement says where each rank ran.
Without one, the host names and CUDA devices the logs print place a rank where that host is a
node of the topology; a peer named by its IP (or an IPv4-mapped RoCE GID) is found among the
topology's NIC addresses. Nothing is guessed: a rank the logs and the rank file do not place
keeps `node` null, except a rank that left no log in a job whose logged ranks follow a regular
layout (8 per node in rank order): it is placed where that layout puts it, and its reason and
evidence say the node is inferred. A node is always a host name (an address the topology and the
logs do not name is no node).
"""

from __future__ import annotations

from fabtui.model.triage import Evidence, NextStep, Suspect, TriageReport
from fabtui.topology.failed_paths import address, shared_switch
from fabtui.topology.graph import FabricGraph, RankPlacement, UnknownRank
from fabtui.topology.ranks import compact_ranges
from fabtui.triage.ingest import Facts
from fabtui.triage.placement import Layout, host_of, regular_layout


def locate(report: TriageReport, facts: Facts, graph: FabricGraph | None,
           placement_known: bool) -> None:
    """Fill node / GPU / NIC / rail / port / optic / peer fields of `report`'s suspects in place,
    and the runbooks to run next."""
    layout = None if placement_known else regular_layout(facts.hosts, facts.devices)
    for suspect in report.suspects:
        if layout is not None and suspect.rank is not None and suspect.node is None \
                and suspect.rank not in facts.hosts:
            _infer(suspect, layout)
        if suspect.kind == "stuck" and suspect.rank is None and suspect.ranks:
            _place_group(suspect, facts, graph, placement_known)
        else:
            _place(suspect, facts, graph, placement_known)
        if graph is not None and suspect.node is not None and suspect.node not in graph.nodes:
            # A node is a node of the topology: a host name the logs print that the topology
            # lacks is kept, an address is not a host name.
            suspect.node = host_of(suspect.node, facts.ip_hosts, facts.addresses)
        _place_peer(suspect, facts, graph)
    for suspect in report.suspects:
        if suspect.kind == "switch" and graph is not None:
            _place_switch(report, suspect, graph)
    report.next = _next_steps(report)


def _place_switch(report: TriageReport, suspect: Suspect, graph: FabricGraph) -> None:
    """The switch every NIC of a `switch` suspect's failed paths is cabled to (both ends of each
    path: the reporting NIC and the remote GID's), by the topology; the summary names it."""
    paths = [s for s in report.suspects if s.fault == suspect.fault and s.kind == "link"]
    ends = [*(f"{s.node}:{s.nic}" for s in paths if s.node and s.nic),
            *(a for s in paths if (a := address(s.peer)) is not None)]
    if len([s for s in paths if s.node and s.nic]) < len(paths):
        return  # a NIC the topology does not place: its switch is unknown
    switch, rail = shared_switch(graph, ends)
    if switch is None:
        return
    suspect.switch, suspect.rail = switch, rail
    suspect.reason = suspect.reason.replace("the switch they all cross",
                                            f"{switch}, the switch they all cross")
    if suspect.fault == 1:
        rail_of = f" (rail {rail})" if rail is not None else ""
        report.summary += (f" All these NICs{rail_of} are cabled to {switch}: read its ports, PFC "
                           "counters and PFC watchdog (runbook pfc-storm).")


def _infer(suspect: Suspect, layout: Layout) -> None:
    """Place a rank no log places where the other ranks' regular layout puts it, saying so."""
    assert suspect.rank is not None
    placed = layout.place(suspect.rank)
    if placed is None:
        return
    suspect.node, gpu = placed
    suspect.gpu = gpu if suspect.gpu is None else suspect.gpu
    block = suspect.rank // layout.per_node * layout.per_node
    why = (f"node inferred: no log places rank {suspect.rank}; the logged ranks run "
           f"{layout.per_node} per node in rank order, ranks {block}-"
           f"{block + layout.per_node - 1} on {suspect.node}")
    suspect.reason += f" ({why})"
    suspect.evidence.append(Evidence(file="(inferred)", line=None, text=why))


def _place(suspect: Suspect, facts: Facts, graph: FabricGraph | None,
           placement_known: bool) -> None:
    rank = suspect.rank
    placement: RankPlacement | None = None
    if rank is not None:
        suspect.node = suspect.node or facts.hosts.get(rank)
        if suspect.gpu is None:
            suspect.gpu = facts.devices.get(rank)
        if graph is not None and placement_known:
            try:
                placement = graph.placement(rank)
            except UnknownRank:
                placement = None
    if placement is None and graph is not None and suspect.node in graph.nodes:
        placement = _placement_on(graph, suspect.node, suspect.gpu)
    if placement is not None:
        suspect.node, suspect.gpu = placement.node, placement.gpu
        nics = placement.nics
        chosen = next((n for n in nics if suspect.nic in (n.nic, n.netdev)), None) \
            or (nics[0] if nics and suspect.nic is None else None)
        if chosen is not None:
            suspect.nic, suspect.rail = chosen.nic, chosen.rail
            suspect.port = f"{chosen.leaf}:{chosen.leaf_port}" if chosen.leaf else None
            suspect.optic = chosen.optic
    elif graph is not None and suspect.node and suspect.nic:
        attachment = graph.attachment_of(f"{suspect.node}:{suspect.nic}")
        if attachment is not None:
            suspect.rail = attachment.nic.rail
            suspect.port = f"{attachment.switch}:{attachment.port}"
            suspect.optic = graph.optic_at(f"{suspect.node}:{suspect.nic}")


def _place_group(suspect: Suspect, facts: Facts, graph: FabricGraph | None,
                 placement_known: bool) -> None:
    """A suspect standing for several ranks: their nodes in the reason, and the node and NIC of
    the first one (where a pairwise test of the paths between them can start)."""
    first = Suspect(kind="stuck", rank=suspect.ranks[0], reason="")
    _place(first, facts, graph, placement_known)
    nodes: list[str] = []
    for rank in suspect.ranks:
        probe = Suspect(kind="stuck", rank=rank, reason="")
        _place(probe, facts, graph, placement_known)
        if probe.node and probe.node not in nodes:
            nodes.append(probe.node)
    if nodes:
        suspect.node, suspect.nic, suspect.rail = first.node, first.nic, first.rail
        shown = ", ".join(nodes[:8]) + (f" and {len(nodes) - 8} more" if len(nodes) > 8 else "")
        suspect.reason += f" (on {shown})"


def _placement_on(graph: FabricGraph, node: str, gpu: int | None) -> RankPlacement | None:
    """The placement of whichever rank slot runs on `node`'s GPU `gpu` (same NICs, cables)."""
    if gpu is None:
        return None
    for slot in graph.ranks_by_node.get(node, []):
        if slot.gpu == gpu:
            return graph.placement(slot.rank)
    return None


def _place_peer(suspect: Suspect, facts: Facts, graph: FabricGraph | None) -> None:
    ip = address(suspect.peer)
    if ip is None:
        return
    if graph is not None and ip in graph.nic_ips:
        host, nic = graph.nic_ips[ip]
        suspect.peer_node = host
        attachment = graph.attachment_of(f"{host}:{nic}")
        if attachment is not None:
            suspect.peer_port = f"{attachment.switch}:{attachment.port}"
        if suspect.kind == "peer":
            suspect.node, suspect.nic = host, nic
            if attachment is not None:
                suspect.rail = attachment.nic.rail
                suspect.port = suspect.peer_port
                suspect.optic = graph.optic_at(f"{host}:{nic}")
    elif ip in facts.ip_hosts:
        suspect.peer_node = facts.ip_hosts[ip]
        if suspect.kind == "peer":
            suspect.node = suspect.node or suspect.peer_node


def _next_steps(report: TriageReport) -> list[NextStep]:
    steps: list[NextStep] = []
    first = report.suspects[0] if report.suspects else None
    if report.verdict in ("culprit found", "network path") and first is not None \
            and first.node and first.kind != "stuck":
        inputs = {}
        if first.node:
            inputs["log_node"] = first.node
        nodes = sorted({s.node for s in report.suspects if s.node})
        why = f"follow suspect {first.nic or first.node} to its leaf port and optic"
        shown = ", ".join(nodes[:8]) + (f" and {len(nodes) - 8} more, in the suspects"
                                        if len(nodes) > 8 else "")
        steps.append(NextStep(runbook="nccl-hang-triage", inputs=inputs,
                              why=why + (f" (nodes: {shown})" if nodes else "")))
    if first is not None and first.kind == "switch" and first.switch:
        steps.append(NextStep(runbook="pfc-storm", inputs={"leaf": first.switch},
                              why=f"the failed paths chain over the NICs cabled to "
                                  f"{first.switch}: a PFC storm or deadlock there, or the "
                                  "switch itself"))
    if report.verdict == "network path" and first is not None and first.kind == "stuck":
        steps.append(NextStep(runbook="rdma-baseline",
                              inputs={"nic": f"{first.node}:{first.nic}"} if first.nic else {},
                              why=f"measure the paths between ranks {compact_ranges(first.ranks)} "
                                  "pairwise: the logs name no rank"))
    if report.verdict == "culprit found" and first is not None and first.kind in (
            "lagging", "dead", "missing log", "local rank"):
        nodes = sorted({s.node for s in report.suspects if s.node})
        # the runbook checks at most 8 hosts; the rest must be named, not dropped unseen
        rest = f"; job_nodes holds 8 of the {len(nodes)} suspects' nodes, rerun it with the " \
               f"others: {','.join(nodes[8:])}" if len(nodes) > 8 else ""
        steps.append(NextStep(runbook="slow-node",
                              inputs={"job_nodes": ",".join(nodes[:8])} if nodes else {},
                              why="the culprit rank never arrived: check its host (process "
                                  f"state, stacks, Xid, ECC) first{rest}"))
    return steps
