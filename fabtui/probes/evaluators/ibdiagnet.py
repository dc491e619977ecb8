"""An ibdiagnet sweep: ibdiagnet's own verdict per stage, and every port counter that grew
during its run.

ibdiagnet's `Summary` table counts, per stage, the warnings and errors it found; an error in
any stage fails (the tool's own judgement), a warning warns (firmware-version notes and MADs a
node did not answer are common on healthy fabrics). A port whose symbol errors, link downs or
receive errors grew between its two counter samples (`--pm_pause_time`) fails, named as
ibdiagnet names ports (`S<guid>/N<guid>/P<n>`). Source: ibdiagnet User Manual (NVIDIA
ibutils2/ibdiagnet documentation, current 2.13: the stages and "Ports counters Difference
Check (during run)").
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator

_SOURCE = "ibdiagnet's own Summary table (ibdiagnet User Manual 2.13)"


def _slug(stage: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", stage.lower()).strip("_")


@evaluator("ibdiagnet")
def ibdiagnet(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Errors and warnings per stage; port-counter increases per port."""
    where = ctx.component()
    metrics = []
    # No `limit` on these: the rule is "any" (one error fails), which a report would otherwise
    # print as "> 1"; the source names it (docs/thresholds.md section 2).
    for stage, row in after.stages.items():
        slug = _slug(stage)
        metrics.append(Metric(name=f"errors.{slug}", value=row.errors, component=where,
                              verdict=Verdict.FAIL if row.errors else Verdict.OK, source=_SOURCE))
        metrics.append(Metric(name=f"warnings.{slug}", value=row.warnings, component=where,
                              verdict=Verdict.WARN if row.warnings else Verdict.OK, source=_SOURCE))
    for error in after.port_errors:
        metrics.append(Metric(
            name=f"port_error.{error.counter}", value=error.difference, component=error.port,
            verdict=Verdict.FAIL,
            source="ibdiagnet Ports counters Difference Check (during run)"))
    if after.master_sm_lid is not None:
        metrics.append(Metric(name="master_sm_lid", value=after.master_sm_lid, component=where))
    return metrics
