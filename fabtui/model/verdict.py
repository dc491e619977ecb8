"""The one verdict vocabulary: how a metric, a probe, a block, a step or a run came out.

Probes use ok / warn / fail / error; runbook blocks add pending and running (not finished yet),
skipped, waiting (a gate answered "no", "not yet", or mistyped: the session waits there,
resumable), aborted (abandoned by the operator, with a reason) and cancelled (interrupted:
Ctrl-C, a cancelled worker; the session stays resumable).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Verdict(StrEnum):
    """How something ended (or that it has not yet)."""

    PENDING = "pending"
    RUNNING = "running"
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIPPED = "skipped"
    ERROR = "error"
    """Could not run or could not measure (unreachable, timeout, unparseable): not a fabric
    verdict."""
    WAITING = "waiting"
    """A gate not passed yet (answered no, mistyped, or nobody to answer): not finished, the
    session waits at that gate and a resume asks it again."""
    ABORTED = "aborted"
    CANCELLED = "cancelled"

    @property
    def rank(self) -> int:
        """Worse is higher: ok = skipped < warn < fail < error = aborted = cancelled; -1 for a
        verdict not reached yet (pending, running)."""
        return SEVERITY.get(self, -1)

    @property
    def finished(self) -> bool:
        """True for a verdict that ends something (not pending or running)."""
        return self in SEVERITY

    @staticmethod
    def worst(verdicts: Iterable[Verdict]) -> Verdict:
        """Kept for callers written before `worst()` was the one function: same thing."""
        return worst(verdicts)


SEVERITY = {Verdict.OK: 0, Verdict.SKIPPED: 0, Verdict.WARN: 1, Verdict.FAIL: 2,
            Verdict.ERROR: 3, Verdict.ABORTED: 3, Verdict.CANCELLED: 3}


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The most severe finished verdict of `verdicts` (ok when there is none)."""
    finished = [v for v in verdicts if v in SEVERITY]
    return max(finished, key=lambda v: SEVERITY[v], default=Verdict.OK)
