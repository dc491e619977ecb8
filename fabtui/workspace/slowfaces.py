"""A slow-job analysis handed to the faces (issue 39): filed as a draft case; the runbook for
the deepest element its evidence confirms is `fabtui.views.slowjob`'s. One place for the CLI
and the app.

Side effects: `file_slow_case` writes the case library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabtui.cases.slowjob import case_id_for_slow, draft_slow_case
from fabtui.errors import RequestError
from fabtui.model.case import Case, CaseStatus
from fabtui.model.slowjob import SlowJobReport

if TYPE_CHECKING:
    from fabtui.workspace.core import Workspace


def file_slow_case(ws: Workspace, analysis: SlowJobReport, made_from: str) -> Case:
    """Store the analysis as a draft case (masked by the library) and return it. Filing the
    same window again replaces its draft; a case already completed from it is refused."""
    existing = ws.cases.store.get(case_id_for_slow(analysis))
    if existing is not None and existing.status is not CaseStatus.DRAFT:
        raise RequestError(f"this window was filed as {existing.id}, which is "
                           f"{existing.status.value} now; edit it with `fabtui cases export`, "
                           "then `fabtui cases import`")
    return ws.cases.put(draft_slow_case(analysis, made_from))
