"""Ranks absent from the waiting set: every rank whose watchdog fired waits inside the
collective; with the job's size known, a rank of the job that never timed out never reached it
(it is behind, stuck in host code, or its process is gone) and is the suspect. torchrun's
"first observed failure" and the first watchdog are victims, never these.

Without the job's size only the ranks below the highest rank seen are known to exist: they are
named in the summary and in what to collect, not blamed (a pasted excerpt often drops lines).
"""

from __future__ import annotations

from collections import Counter

from fabtui.model.triage import Collective, Evidence, Suspect
from fabtui.topology.ranks import compact_ranges
from fabtui.triage.findings import Context, Finding

MAX_SHARE = 4
"""Ranks are blamed only while at most a quarter of the job (or one rank) is absent: beyond
that, the logs are more likely incomplete than the job stuck on that many ranks."""


_NOT_A_FAILURE = ("init_complete", "child_failed", "watchdog_timeout", "pg_status", "desync",
                  "heartbeat_timeout")
"""Events that do not say a rank failed on its own: torchrun's report lists every rank it
stopped, the culprit too."""


def failed_ranks(ctx: Context) -> set[int]:
    """Global ranks that logged a failure of their own (an NCCL or network error): they did not
    time out because they failed first, which their own lines explain."""
    return {e.rank for e in ctx.facts.events
            if e.rank is not None and e.event.type not in _NOT_A_FAILURE}


def waiting_ranks(ctx: Context) -> set[int]:
    """Global ranks whose watchdog fired (a watchdog line, or PyTorch taking the process down)."""
    waiting = {s.rank for s in ctx.states.values() if s.timed_out is not None}
    return waiting | set(ctx.facts.gave_up)


def absent_findings(ctx: Context) -> list[Finding]:
    """The ranks of the job that did not time out while the others wait (see the module)."""
    if ctx.ras_healthy or ctx.group_local:
        return []
    waiting = waiting_ranks(ctx)
    if len(waiting) < 2:
        return []
    timed = Counter(s.timed_out for s in ctx.states.values() if s.timed_out is not None)
    seq = timed.most_common(1)[0][0] if timed else None
    pg = next((s.pg for s in ctx.states.values() if s.timed_out == seq), None)
    if ctx.world is None:
        ctx.unheard = sorted(set(range(max(ctx.seen | waiting) + 1)) - waiting
                             - failed_ranks(ctx))
        if ctx.unheard:
            ctx.notes.append(
                f"rank(s) {compact_ranges(ctx.unheard)} are in the job (below the highest rank "
                f"seen) and left no timeout while {len(waiting)} rank(s) wait"
                + (f" in sequence number {seq}" if seq is not None else "")
                + ": with the job's size unknown these lines may be only an excerpt, so they "
                "are not blamed; their logs decide")
        return []
    absent = sorted(set(range(ctx.world)) - waiting - failed_ranks(ctx))
    if not absent:
        return []
    if len(absent) > max(1, ctx.world // MAX_SHARE):
        ctx.notes.append(f"{len(absent)} of {ctx.world} ranks left no timeout: more likely logs "
                         "missing than that many ranks stuck; not blamed")
        return []
    where = f"sequence number {seq}" + (f" of process group {pg}" if pg else "")
    suspects = []
    for rank in absent:
        logged = rank in ctx.seen
        suspects.append(Suspect(
            kind="no timeout" if logged else "missing log", rank=rank, confidence="medium",
            reason=(f"in the job ({ctx.world} ranks, from {ctx.world_source}) and "
                    + ("logged, but no timeout" if logged else "left no log")
                    + f" while {len(waiting)} rank(s) time out in {where}: it never reached "
                    "the collective"),
            evidence=[Evidence(file="(none)", line=None,
                               text=f"no watchdog timeout from rank {rank} in any input")]))
    return [Finding(
        verdict="culprit found",
        summary=f"{len(waiting)} rank(s) time out waiting in {where}; rank(s) "
                f"{compact_ranges(absent)} of the {ctx.world}-rank job never did: they never "
                "reached the collective and are the likeliest culprit(s).",
        suspects=suspects,
        collective=Collective(op=None, seq=seq, pg=pg))]
