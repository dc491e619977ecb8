"""The scheduler's topology through the workspace: generate Slurm's `topology.conf` /
`topology.yaml` from the fabric (as designed, or as cabled), audit a live one (a file or
`scontrol show topology` output) against the design and the cabling, and check a job's rank
placement for rail locality. `Workspace.scheduler_*` are the doors.

Side effects: with `cabled=True` reads the fabric as `Workspace.cabling` does (read-only
probes); `audit` reads nothing but the text it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from fabtui.errors import InputError, Problem, RequestError
from fabtui.hostlist import fold
from fabtui.model.element import device_of, split_key
from fabtui.model.scheduler import SchedulerAudit
from fabtui.topology.scheduler import (
    SchedulerTopologyError,
    audit_tree,
    rail_locality,
    scheduler_tree,
    topology_conf,
    topology_yaml,
)

if TYPE_CHECKING:
    from fabtui.model.cabling import CablingReport
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.ranks import RankSlot


def plant_leaves(report: CablingReport) -> dict[str, frozenset[str]]:
    """Node -> the switches its NICs were heard on (the plant as the cabling check read it)."""
    found: dict[str, set[str]] = {}
    for nic, port in report.heard.items():
        found.setdefault(device_of(nic), set()).add(device_of(port))
    return {node: frozenset(switches) for node, switches in found.items()}


def plant_nics(report: CablingReport) -> dict[tuple[str, str], str]:
    """(node, NIC) -> the switch it was heard on."""
    return {split_key(nic): device_of(port) for nic, port in report.heard.items()}


def generate(graph: FabricGraph, fmt: str, header: str,
             leaves: Mapping[str, frozenset[str]] | None = None) -> str:
    """`topology.conf` (`fmt` conf) or `topology.yaml` (yaml) text. Raises `RequestError` for
    a fabric with no tree."""
    try:
        tree = scheduler_tree(graph, leaves)
    except SchedulerTopologyError as exc:
        raise RequestError(str(exc)) from None
    placed = {node for switch in tree for node in switch.nodes}
    left = [node for node in graph.nodes if node not in placed]
    if left:  # Slurm places them with no regard to the fabric: say so where the file is read
        header += (f"\nLeft out, cabled to no switch{' as heard' if leaves else ''}: "
                   f"{fold(left)}")
    if fmt == "yaml":
        return topology_yaml(tree, graph.topology.cluster.name, header)
    return topology_conf(tree, header)


def audit(graph: FabricGraph, text: str, source: str,
          nics: Mapping[tuple[str, str], str] | None = None) -> SchedulerAudit:
    """The live tree in `text` (topology.conf or `scontrol show topology` output, named
    `source` in messages) against the design, and the plant when `nics` ((node, NIC) -> the
    switch it was heard on) is given. Raises
    `InputError` (`source:line: what`) for text that is neither."""
    from fabtui.parsers.errors import ParseError
    from fabtui.parsers.slurm_topology import parse

    try:
        live = parse(text)
    except ParseError as exc:
        raise InputError([Problem(source, exc.line, exc.message)]) from None
    try:
        agrees, findings = audit_tree(graph, live, nics)
    except SchedulerTopologyError as exc:
        raise RequestError(str(exc)) from None
    notes = [f"{source}: {w}" for w in live.warnings]
    if any(s.nodes and not s.node_names for s in live.switches):
        notes.append("a node list did not expand: which nodes are under no switch cannot be "
                     "told, and the tree is not said to agree")
    if nics is None:
        notes.append("the cabling was not read (--cabling): judged against the design only")
    return SchedulerAudit(source=f"{source} ({live.source})", agrees=agrees,
                          findings=findings, notes=notes)


def job_locality(graph: FabricGraph, slots: Sequence[RankSlot], source: str,
                 nics: Mapping[tuple[str, str], str] | None = None,
                 unread: Sequence[str] = ()) -> SchedulerAudit:
    """A job's rank placement checked for rail locality (`fabtui.topology.scheduler`); with the
    cabling read (`nics`), a NIC of the job heard on no switch is flagged too, unless some
    switch could not be read (`unread`: then it is taken as designed, and a note says so)."""
    assumed, findings = rail_locality(graph, slots, nics, complete=not unread)
    notes = [] if assumed else [
        "the placement does not assume rail locality (its nodes' ranks are not on the same "
        "GPU indexes, or it runs on one node): not judged"]
    if nics is None:
        notes.append("the cabling was not read (--cabling): rails placed as designed")
    elif unread:
        notes.append("some cabling could not be read (" + "; ".join(unread) + "): a NIC heard "
                     "on no switch is taken as designed")
    return SchedulerAudit(source=source, agrees=not findings, findings=findings, notes=notes)
