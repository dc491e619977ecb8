"""The whole triage: read the inputs, analyze, place the suspects on the fabric."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fabtui.errors import InputError, Problem
from fabtui.model.triage import TriageReport
from fabtui.topology.graph import FabricGraph
from fabtui.triage.analyze import analyze
from fabtui.triage.ingest import read_all
from fabtui.triage.locate import locate


def triage_paths(paths: Sequence[Path], graph: FabricGraph | None = None,
                 placement_known: bool = False,
                 world: tuple[int, str] | None = None) -> TriageReport:
    """Triage the logs, dumps and RAS outputs at `paths` (files or folders). `graph` places
    suspects on the fabric; `placement_known` says its rank placement comes from a rank file
    (otherwise only host names the logs print place ranks); `world` is the job's size and where
    it came from, when known outside the logs. Raises `InputError` for an input that cannot be
    read (a missing path, an unsafe pickle), and when no input holds text to read (each empty,
    binary or unreadable: each file named with what is wrong); an unusable file beside usable
    ones is only listed in `TriageReport.sources`."""
    facts = read_all(paths)
    if facts.sources and all(source.kind == "unreadable" for source in facts.sources):
        # Nothing was read: a verdict ("the logs do not say") would blame logs never given.
        raise InputError(Problem(source.file, None, source.note or "cannot be read")
                         for source in facts.sources)
    facts.job_world = world
    if graph is not None:
        facts.addresses = {ip: host for ip, (host, _) in graph.nic_ips.items()}
        facts.addresses.update({node.mgmt: name for name, node in graph.nodes.items()
                                if node.mgmt})
    report = analyze(facts)
    locate(report, facts, graph, placement_known)
    return report
