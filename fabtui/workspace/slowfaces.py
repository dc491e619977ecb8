"""A slow-job analysis handed to the faces (issue 39): filed as a draft case, and the runbook
for the deepest element its evidence confirms. One place for the CLI and the app.

Side effects: `file_slow_case` writes the case library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabtui.cases.slowjob import case_id_for_slow, draft_slow_case
from fabtui.errors import RequestError
from fabtui.model.case import Case, CaseStatus
from fabtui.model.slowjob import Hop, SlowJobReport

if TYPE_CHECKING:
    from fabtui.workspace.core import Workspace

CONFIRMED = 0.6
"""A hop at or above this confidence counts as confirmed by the evidence (the engine's scale:
0-1); below it, the chain is a lead, not a finding."""


def file_slow_case(ws: Workspace, analysis: SlowJobReport, made_from: str) -> Case:
    """Store the analysis as a draft case (masked by the library) and return it. Filing the
    same window again replaces its draft; a case already completed from it is refused."""
    existing = ws.cases.store.get(case_id_for_slow(analysis))
    if existing is not None and existing.status is not CaseStatus.DRAFT:
        raise RequestError(f"this window was filed as {existing.id}, which is "
                           f"{existing.status.value} now; edit it with `fabtui cases export`, "
                           "then `fabtui cases import`")
    return ws.cases.put(draft_slow_case(analysis, made_from))


def deepest_confirmed(analysis: SlowJobReport, episode: int = 0) -> Hop | None:
    """The deepest hop of an episode's chain the evidence confirms (confidence at least
    `CONFIRMED`), or None when no hop is."""
    if not 0 <= episode < len(analysis.chains):
        return None
    return next((h for h in reversed(analysis.chains[episode].hops)
                 if h.confidence >= CONFIRMED), None)


def runbook_for(analysis: SlowJobReport, episode: int = 0) -> str | None:
    """The runbook for the deepest confirmed element of an episode: its hop's own, else the
    nearest one above it that names one (None: no confirmed hop names a runbook)."""
    if not 0 <= episode < len(analysis.chains):
        return None
    deepest = deepest_confirmed(analysis, episode)
    if deepest is None:
        return None
    hops = analysis.chains[episode].hops
    for hop in reversed(hops[:hops.index(deepest) + 1]):
        if hop.probe is not None and hop.probe.runbook:
            return hop.probe.runbook
    return None
