"""Hang triage joined to the rest of the workspace: past cases like this hang (the case
library), and the evidence chain for the first located suspect (probes through the fabric);
and the slow-job chain (issue 39): its inputs read from a file or played by the demo fabric.
`Workspace.triage`, `similar_cases`, `evidence_chain` and `slow_job` are the doors; these take
what they use, not the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fabtui.model.case import Case, CaseStatus, SymptomClass
from fabtui.model.triage import Suspect, TriageReport

if TYPE_CHECKING:
    from fabtui.cases.library import CaseLibrary
    from fabtui.model.chain import EvidenceChain
    from fabtui.model.slowjob import SlowJobInputs, SlowJobReport
    from fabtui.sim.core import Sim
    from fabtui.topology.graph import FabricGraph
    from fabtui.triage.chain import ProbeRunning
    from fabtui.triage.slowjob.frame import Frame

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


# "why is the job slow?" (issue 39) ---------------------------------------------------------------
DEMO_JOB = "4242"
"""The Slurm job id the demo fabric's job runs as (`fabtui tui --job 4242`)."""


def read_slow_inputs(path: Path) -> SlowJobInputs:
    """A `SlowJobInputs` JSON file (docs/triage-slow.md). Raises `InputError` naming the file
    and what is wrong with it."""
    import json

    from pydantic import ValidationError

    from fabtui.errors import InputError, Problem
    from fabtui.model.slowjob import SlowJobInputs

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(str(path), None, f"cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.single(str(path), exc.lineno, f"not JSON: {exc.msg}") from None
    try:
        return SlowJobInputs.model_validate(data)
    except ValidationError as exc:
        raise InputError([Problem(str(path), None,
                                  f"{'.'.join(str(p) for p in e['loc']) or 'top'}: {e['msg']}")
                          for e in exc.errors()[:20]]) from None


def demo_slow_frame(sim: Sim, *, start: float, end: float, job: str = DEMO_JOB) -> Frame:
    """The demo job's window [start, end) (seconds on the scenario's clock) as the engine reads
    it: the simulated job's step times, Inspector busbw and fabric series."""
    from fabtui.sim.slowjob import play_slow_job
    from fabtui.triage.slowjob.frame import CommFrame, Frame

    play = play_slow_job(sim, start=start, end=end, job=job)
    return Frame(job=play.job, t=play.t, ranks=play.ranks, steps=play.steps,
                 comms=[CommFrame(c.info, c.ranks, c.busbw) for c in play.comms],
                 fabric=play.fabric, sources=play.sources, warnings=play.warnings,
                 job_log=play.job_log)


def slow_job(graph: FabricGraph, *, inputs: SlowJobInputs | None = None,
             frame: Frame | None = None) -> SlowJobReport:
    """The episodes and chains of a job's window, from inputs as read or a frame built from
    arrays (the demo). No side effects."""
    from fabtui.triage.slowjob import analyze, frame_from_inputs

    if frame is None:
        if inputs is None:
            raise ValueError("slow_job needs inputs or a frame")
        frame = frame_from_inputs(inputs)
    return analyze(frame, graph)
