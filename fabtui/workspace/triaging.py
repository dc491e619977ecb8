"""Hang triage joined to the rest of the workspace: past cases like this hang (the case
library), and the evidence chain for the first located suspect (probes through the fabric).
`Workspace.triage`, `similar_cases` and `evidence_chain` are the doors; these take what they
use, not the workspace."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabtui.model.case import Case, CaseStatus, SymptomClass
from fabtui.model.triage import Suspect, TriageReport

if TYPE_CHECKING:
    from fabtui.cases.library import CaseLibrary
    from fabtui.model.chain import EvidenceChain
    from fabtui.topology.graph import FabricGraph
    from fabtui.triage.chain import ProbeRunning

_VERDICT_CLASS = {"application desync": SymptomClass.NCCL_HANG,
                  "network path": SymptomClass.NCCL_HANG,
                  "culprit found": SymptomClass.NCCL_HANG}


def as_case(report: TriageReport) -> Case:
    """The triage as a draft case (not stored): what similar-case matching compares."""
    statuses = sorted({w.status for w in report.warnings
                       if w.status is not None and w.role == "signal"})
    components: list[str] = []
    for s in report.suspects[:4]:
        for part in (s.node, f"{s.node}:{s.nic}" if s.node and s.nic else None, s.port,
                     f"optic:{s.optic}" if s.optic else None,
                     f"rail{s.rail}" if s.rail is not None else None):
            if part and part not in components:
                components.append(part)
    collective = report.collective
    symptom = report.summary + (f" ({collective.op} seq {collective.seq})"
                                if collective is not None and collective.op else "")
    codes = [f"ib-status-{status}" for status in statuses]
    return Case(id="triage-draft", title=f"NCCL hang: {report.verdict}",
                status=CaseStatus.DRAFT,
                symptom_class=_VERDICT_CLASS.get(str(report.verdict), SymptomClass.NCCL_HANG),
                error_codes=codes, components=components, symptom=symptom,
                localization="\n".join(s.reason for s in report.suspects[:4]),
                tags=["nccl-hang", "triage"])


def similar_cases(library: CaseLibrary, report: TriageReport, limit: int = 3) -> list[str]:
    """Ids of the past cases in `library` most like this hang, best first ([] when the
    library cannot search or nothing matches)."""
    from fabtui.errors import RequestError

    try:
        found = library.similar(as_case(report), limit=limit)
    except (RequestError, OSError):
        return []
    return [hit.id for hit in found.cases]


async def evidence_chain(report: TriageReport, graph: FabricGraph, runner: ProbeRunning,
                         timeout: float = 120.0, *,
                         suspect: Suspect | None = None) -> EvidenceChain | None:
    """The cross-layer chain (job -> busbw -> rail -> PFC -> FEC -> optic) for `suspect`
    (default: the first suspect placed on a node), probed through `runner`; None when it is
    on no node. Runs probes on the fabric."""
    from fabtui.triage.chain import SuspectLocation, build_chain

    first = suspect if suspect is not None else next((s for s in report.suspects if s.node),
                                                     None)
    if first is None or first.node is None:
        return None
    location = SuspectLocation(node=first.node, nic=first.nic, leaf_port=first.port,
                               optic=first.optic, rank=first.rank)
    return await build_chain(location, graph, runner, timeout=timeout)
