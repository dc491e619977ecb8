"""The scheduler's topology from the fabric: Slurm's tree (`topology.conf`, topology/tree;
`topology.yaml` for Slurm 25.05 and later), the audit of a live one against the design and the
cabling, and the rail-locality check of a job's placement. Pure: no I/O.

How the fabric becomes a tree. Slurm's tree plugin wants each node under one leaf switch
(slurmctld 22.05 warns "Multiple leaf switches contain nodes" otherwise), but on a
rail-optimized fabric a node is cabled to one leaf per rail. What placement needs is the set
of nodes that reach each other in one hop on every rail: the nodes cabled to the same set of
leaves (a scalable unit). Each such set becomes one Slurm leaf switch (named after the leaves'
group, `leaves-g00`, or the leaf itself when a node has one), each distinct set of spines above
them one switch of the next level, and a root joins those when there are several (Slurm:
"Jobs can only span nodes connected by the same switch fabric", topology.conf(5)).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from fabtui.hostlist import fold
from fabtui.model.parsed.slurm_topology import SlurmTopologyOutput
from fabtui.model.scheduler import SchedulerFinding
from fabtui.model.topology import Role
from fabtui.topology.graph import FabricGraph
from fabtui.topology.pairing import gpu_map
from fabtui.topology.ranks import RankSlot

YAML_SINCE = "25.05"
"""The first Slurm release that reads topology.yaml: its release notes' highlight "Support for
defining multiple topologies" (SchedMD/slurm RELEASE_NOTES, 25.05; topology.yaml(5) is dated
March-May 2025). 22.05 to 24.11 read topology.conf only."""


class SchedulerTopologyError(ValueError):
    """A fabric that gives Slurm no tree (no node is cabled to a switch)."""


@dataclass(frozen=True)
class SchedSwitch:
    """One switch of Slurm's tree."""

    name: str
    level: int
    nodes: tuple[str, ...] = ()
    """Leaf level: the nodes directly below."""
    children: tuple[str, ...] = ()
    """Higher levels: the switches directly below."""
    fabric: tuple[str, ...] = ()
    """The fabric switches it stands for."""


def designed_leaves(graph: FabricGraph) -> dict[str, frozenset[str]]:
    """Node -> the leaf switches the design cables its NICs to (nodes without a cable left
    out)."""
    found: dict[str, set[str]] = {}
    for (host, _), attachment in graph.attachments.items():
        found.setdefault(host, set()).add(attachment.switch)
    return {host: frozenset(leaves) for host, leaves in found.items()}


def _named(prefix: str, groups: Sequence[int | None], taken: set[str], index: int) -> str:
    common = {g for g in groups}
    base = f"{prefix}-g{common.pop():02d}" if len(common) == 1 and None not in common else \
        f"{prefix}-{index}"
    name, extra = base, 2
    while name in taken:
        name, extra = f"{base}-{extra}", extra + 1
    taken.add(name)
    return name


def scheduler_tree(graph: FabricGraph,
                   node_leaves: Mapping[str, frozenset[str]] | None = None) -> list[SchedSwitch]:
    """Slurm's tree for `graph` (see the module docstring); `node_leaves` (default: the
    design's) says which leaves each node is really cabled to. Leaves first, then upwards."""
    leaves_of = dict(node_leaves) if node_leaves is not None else designed_leaves(graph)
    leaves_of = {n: s for n, s in leaves_of.items() if s and n in graph.nodes}
    if not leaves_of:
        raise SchedulerTopologyError(f"{graph.topology.cluster.name}: no node is cabled to a "
                                     "switch, so Slurm has no tree to place jobs on")
    order = {node.hostname: index for index, node in enumerate(graph.topology.nodes)}
    sets: dict[frozenset[str], list[str]] = {}
    for node in sorted(leaves_of, key=lambda n: order.get(n, 0)):
        sets.setdefault(leaves_of[node], []).append(node)
    taken: set[str] = set()
    level0: list[SchedSwitch] = []
    for index, (leaves, nodes) in enumerate(sorted(sets.items(),
                                                   key=lambda item: order[item[1][0]])):
        if len(leaves) == 1:
            name = next(iter(leaves))
            taken.add(name)
        else:
            name = _named("leaves", [graph.switches[s].group if s in graph.switches else None
                                     for s in leaves], taken, index)
        level0.append(SchedSwitch(name, 0, nodes=tuple(nodes), fabric=tuple(sorted(leaves))))
    tree = list(level0)
    tops = level0
    level = 0
    while len(tops) > 1 and level < 3:
        level += 1
        above: dict[frozenset[str], list[SchedSwitch]] = {}
        for switch in tops:
            parents = frozenset(p for s in switch.fabric if s in graph.switches
                                for p in graph.neighbours_above(s))
            above.setdefault(parents, []).append(switch)
        if len(above) == 1 and not next(iter(above)):
            break  # nothing above: the tree stays a forest (the audit says so)
        if len(above) == 1 or level == 3:
            everything = frozenset(p for parents in above for p in parents)
            roles = {graph.switches[p].role for p in everything if p in graph.switches}
            name = next(iter(everything)) if len(everything) == 1 else \
                "super-spines" if Role.SUPER_SPINE in roles else \
                "spines" if roles == {Role.SPINE} else "fabric"
            while name in taken:
                name += "-root"
            taken.add(name)
            root = SchedSwitch(name, level, children=tuple(s.name for s in tops),
                               fabric=tuple(sorted(everything)))
            tree.append(root)
            tops = [root]
            break
        nxt = []
        for index, (parents, children) in enumerate(above.items()):
            name = next(iter(parents)) if len(parents) == 1 else _named(
                "spines", [graph.switches[p].group for p in parents], taken, index)
            taken.add(name)
            nxt.append(SchedSwitch(name, level, children=tuple(c.name for c in children),
                                   fabric=tuple(sorted(parents))))
        tree += nxt
        if len(nxt) == len(tops):
            break  # no grouping happened: stop rather than loop
        tops = nxt
    return tree


def topology_conf(tree: Sequence[SchedSwitch], header: str = "") -> str:
    """`topology.conf` (topology/tree) for `tree`."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for switch in tree:
        what = f"Nodes={fold(switch.nodes)}" if switch.nodes else \
            f"Switches={fold(switch.children)}"
        fabric = f"  # {fold(switch.fabric)}" if switch.fabric else ""
        lines.append(f"SwitchName={switch.name} {what}{fabric}")
    return "\n".join(lines) + "\n"


def topology_yaml(tree: Sequence[SchedSwitch], name: str = "fabric", header: str = "") -> str:
    """`topology.yaml` (Slurm 25.05 and later): one tree topology, the cluster default."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [f"- topology: {name}", "  cluster_default: true", "  tree:", "    switches:"]
    for switch in tree:
        lines.append(f"      - switch: {switch.name}")
        if switch.nodes:
            lines.append(f"        nodes: {fold(switch.nodes)}")
        else:
            lines.append(f"        children: {fold(switch.children)}")
    return "\n".join(lines) + "\n"


# audit ------------------------------------------------------------------------------------------
def _live_leaves(live: SlurmTopologyOutput) -> dict[str, list[str]]:
    """Live leaf switch -> its nodes (scontrol prints every node below a higher switch too: a
    leaf is level 0 there, a switch without child switches in the file)."""
    found = {}
    for switch in live.switches:
        leaf = switch.level == 0 if live.source == "scontrol" else not switch.switch_names
        if leaf and switch.node_names:
            found[switch.name] = switch.node_names
    return found


def audit_tree(graph: FabricGraph, live: SlurmTopologyOutput,
               nic_switch: Mapping[tuple[str, str], str] | None = None) -> \
        tuple[bool, list[SchedulerFinding]]:
    """(agrees, findings): the live tree against the one the design gives, and, with
    `nic_switch` ((node, NIC) -> the switch the cabling check heard it on), against the
    plant."""
    expected = scheduler_tree(graph)
    want = {s.name: s for s in expected if s.nodes}
    group_of = {node: s.name for s in want.values() for node in s.nodes}
    leaves = _live_leaves(live)
    placed: dict[str, list[str]] = {}
    for switch, nodes in leaves.items():
        for node in nodes:
            placed.setdefault(node, []).append(switch)
    findings: list[SchedulerFinding] = []
    unreadable = [s.name for s in live.switches if s.nodes and not s.node_names]
    unplaced = [n for n in group_of if n not in placed]
    if unplaced and not unreadable:  # a list that did not expand may hold them: cannot tell
        findings.append(SchedulerFinding(
            rule="unplaced", nodes=unplaced,
            message=f"{fold(unplaced)} under no leaf switch of the live topology: Slurm "
                    "places them with no regard to the fabric (topology.conf(5): every node "
                    "must be connected to at least one switch)",
            fix="add them as the generated topology.conf does: " + "; ".join(
                f"SwitchName={g} Nodes={fold(want[g].nodes)}"
                for g in sorted({group_of[n] for n in unplaced}))))
    multi = sorted(n for n, under in placed.items() if len(under) > 1)
    if multi:
        example = multi[0]
        findings.append(SchedulerFinding(
            rule="multi-leaf", nodes=multi,
            message=f"{fold(multi)} under several leaf switches ({example}: "
                    f"{', '.join(placed[example])}): slurmctld warns \"Multiple leaf "
                    "switches contain nodes\" and cannot tell which nodes share a leaf (a "
                    "per-rail listing of a rail-optimized fabric does this)",
            fix="one Slurm leaf per group of nodes cabled to the same leaves: "
                "`fabtui topo slurm generate`"))
    unknown = sorted(n for n in placed if n not in graph.nodes)
    if unknown:
        findings.append(SchedulerFinding(
            rule="unknown-node", nodes=unknown,
            message=f"{fold(unknown)} not in the topology: not judged",
            fix="add them to the topology file, or remove them from Slurm's"))
    for switch, nodes in sorted(leaves.items()):
        groups = sorted({group_of[n] for n in nodes if n in group_of})
        if len(groups) > 1:
            parts = "; ".join(f"{fold([n for n in nodes if group_of.get(n) == g])} "
                              f"behind {fold(want[g].fabric)}" for g in groups)
            findings.append(SchedulerFinding(
                rule="merged-groups", nodes=sorted(n for n in nodes if n in group_of),
                message=f"SwitchName={switch} puts nodes that reach each other only through "
                        f"the spines under one leaf ({parts}): Slurm packs a job there as if "
                        "one hop apart, and its rail traffic crosses the spines",
                fix=f"split {switch}: " + "; ".join(
                    f"SwitchName={g} Nodes={fold(want[g].nodes)}" for g in groups)))
    for group, expected_leaf in sorted(want.items()):
        live_under = sorted({leaf for n in expected_leaf.nodes for leaf in placed.get(n, [])})
        if len(live_under) > 1 and all(len(placed.get(n, [])) <= 1 for n in expected_leaf.nodes):
            findings.append(SchedulerFinding(
                rule="split-group", nodes=list(expected_leaf.nodes),
                message=f"{fold(expected_leaf.nodes)} reach each other in one hop on every rail "
                        f"({fold(expected_leaf.fabric)}) but sit under {', '.join(live_under)}: "
                        "Slurm keeps jobs apart that could share a leaf",
                fix=f"SwitchName={group} Nodes={fold(expected_leaf.nodes)}"))
    roots = _roots(live)
    if len(roots) > 1:
        findings.append(SchedulerFinding(
            rule="disconnected", nodes=[],
            message=f"the live tree has {len(roots)} roots ({', '.join(roots)}): jobs can only "
                    "span nodes connected by the same switch fabric (topology.conf(5))",
            fix=f"add a switch above them: SwitchName=fabric Switches={fold(roots)}"))
    if nic_switch is not None:
        findings += _cabling(graph, nic_switch, group_of, want)
    agrees = not findings and not unreadable and {frozenset(n) for n in leaves.values()} == \
        {frozenset(s.nodes) for s in want.values()}
    return agrees, findings


def _roots(live: SlurmTopologyOutput) -> list[str]:
    children = {c for s in live.switches for c in s.switch_names}
    return [s.name for s in live.switches if s.name not in children]


def _cabling(graph: FabricGraph, nic_switch: Mapping[tuple[str, str], str],
             group_of: Mapping[str, str], want: Mapping[str, SchedSwitch]) -> \
        list[SchedulerFinding]:
    """Each node with a NIC heard on another switch than the design's (or on none)."""
    wrong: dict[str, list[str]] = {}
    for (node, nic), attachment in sorted(graph.attachments.items()):
        real = nic_switch.get((node, nic))
        if node in group_of and real != attachment.switch:
            wrong.setdefault(node, []).append(
                f"{nic} is cabled to {real}, not {attachment.switch}" if real else
                f"{nic} is heard on no switch (designed: {attachment.switch})")
    return [SchedulerFinding(
        rule="cabling", nodes=[node],
        message=f"{node}: {'; '.join(said)}. Slurm (from the design) places {node} with "
                f"{group_of[node]} ({fold(want[group_of[node]].fabric)}): the traffic of those "
                "rails crosses the spines (or stops) until it is re-cabled",
        fix=f"re-cable {node} (`fabtui topo cabling --node {shlex.quote(node)}` says how), or "
            f"drain it until then: scontrol update nodename={shlex.quote(node)} state=drain "
            "reason=miscabled")
        for node, said in wrong.items()]


# a job's rail locality ----------------------------------------------------------------------------
def rail_locality(graph: FabricGraph, slots: Sequence[RankSlot],
                  nic_switch: Mapping[tuple[str, str], str] | None = None,
                  complete: bool = True) -> tuple[bool, list[SchedulerFinding]]:
    """(assumed, findings): whether the placement assumes rail locality (every node's ranks, in
    rank order, on the same GPU indexes: local rank i on GPU i, so ranks i, i+8, ... are rail
    peers), and, when it does, each rail whose peers sit behind more than one leaf (the design's
    cabling, or `nic_switch`: (node, NIC) -> the switch it is really cabled to). With
    `nic_switch` read from every switch (`complete`), a NIC of the job absent from it has no
    link: its ranks have no way onto that rail (a `cabling` finding); with some switch unread,
    such a NIC is taken as designed (the evidence says nothing of it)."""
    by_node: dict[str, list[RankSlot]] = {}
    for slot in sorted(slots):
        by_node.setdefault(slot.node, []).append(slot)
    sequences = {tuple(s.gpu for s in ranks) for ranks in by_node.values()}
    if len(by_node) < 2 or len(sequences) != 1:
        return False, []
    findings = []
    rails: dict[int, dict[str, list[RankSlot]]] = {}
    dark: dict[int, dict[str, list[RankSlot]]] = {}
    for node, ranks in by_node.items():
        found = graph.nodes.get(node)
        if found is None:
            continue
        pairing = gpu_map(found)
        for slot in ranks:
            for nic in found.nics:
                if slot.gpu in pairing.get(nic.name, ()):
                    if complete and nic_switch is not None and \
                            (node, nic.name) not in nic_switch:
                        # read and heard on no switch: no link, not "as designed"
                        dark.setdefault(nic.rail, {}).setdefault(
                            f"{node}:{nic.name}", []).append(slot)
                        continue
                    attachment = graph.attachments.get((node, nic.name))
                    switch = (nic_switch or {}).get((node, nic.name)) or \
                        (attachment.switch if attachment else None)
                    if switch:
                        rails.setdefault(nic.rail, {}).setdefault(switch, []).append(slot)
    for rail, behind in sorted(rails.items()):
        if len(behind) < 2:
            continue
        parts = "; ".join(f"{_ranks(s)} behind {leaf}" for leaf, s in sorted(behind.items()))
        nodes = sorted({s.node for group in behind.values() for s in group})
        findings.append(SchedulerFinding(
            rule="rail-locality", nodes=nodes,
            message=f"rail {rail}: the job's rail peers sit behind {len(behind)} leaves "
                    f"({parts}): the rank file assumes one hop between them, their traffic "
                    "crosses the spines",
            fix="place the job within one group of leaves (sbatch --switches=1 with the "
                "generated topology.conf), or re-cable the node whose NIC is on another "
                "rail's leaf (`fabtui topo cabling`)"))
    for rail, nics in sorted(dark.items()):
        names = ", ".join(sorted(nics))
        slots_dark = [s for group in nics.values() for s in group]
        nodes = sorted({s.node for s in slots_dark})
        findings.append(SchedulerFinding(
            rule="cabling", nodes=nodes,
            message=f"rail {rail}: {names} is heard on no switch, so {_ranks(slots_dark)} have "
                    "no link on the rail: NCCL leaves a NIC that is down out and sends those "
                    "GPUs' traffic through another NIC (another rail's leaf, across the "
                    "spines), or the job fails to start",
            fix=f"cable it (`fabtui topo cabling --node {nodes[0]}` says where), or keep the "
                f"job off {', '.join(nodes)} until then (sbatch --exclude={','.join(nodes)})"))
    return True, findings


def _ranks(slots: Iterable[RankSlot]) -> str:
    numbers = sorted(s.rank for s in slots)
    shown = ", ".join(str(n) for n in numbers[:6])
    return f"ranks {shown}{', ...' if len(numbers) > 6 else ''}"
