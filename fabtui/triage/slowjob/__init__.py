""""Why is the job slow?" (issue 39): from step-time jitter to the port and the optic, over time.

`analyze(frame, graph)` finds the slow and jittery episodes of a job's window (`episodes`, with
change points from `changepoints`) and walks each one down the topology (`walk`): the
communicators that slowed (`collectives`), the ranks that arrived late and their hosts and GPUs
(`hostside`), or the rail against its siblings, the ports and the optic that moved at the same
moments (`fabricside`), each hop with its evidence, counter-evidence, a confidence and the
cheapest probe that would confirm it (`probes`). `frame` puts the inputs on one grid; `reach`
joins rank -> node -> GPU -> NIC -> rail -> leaf port -> spine port once. JSON schema:
docs/triage-slow.md. No side effects: reading the inputs is the caller's (the workspace).
"""

from __future__ import annotations

import numpy as np

from fabtui.model.slowjob import (
    Series,
    SlowChain,
    SlowJobInputs,
    SlowJobReport,
    SlowVerdict,
)
from fabtui.topology.graph import FabricGraph
from fabtui.triage.slowjob import words
from fabtui.triage.slowjob.changepoints import MIN_SEGMENT
from fabtui.triage.slowjob.episodes import find_episodes, hot_moments
from fabtui.triage.slowjob.frame import Array, Frame, frame_from_inputs
from fabtui.triage.slowjob.guards import path_faults, stopped_at
from fabtui.triage.slowjob.reach import build_reach
from fabtui.triage.slowjob.walk import walk_episode

__all__ = ["Frame", "analyze", "analyze_inputs", "frame_from_inputs"]


def analyze(frame: Frame, graph: FabricGraph) -> SlowJobReport:
    """The episodes of the frame's window and the chain of each."""
    found = find_episodes(frame)
    reach = build_reach(graph, job_ranks(frame, len(graph.ranks)))
    chains: list[SlowChain] = []
    for episode, mask in zip(found.episodes, found.masks, strict=True):
        chains += walk_episode(frame, reach, episode, hot_moments(found, mask), found.baseline)
    # fewer step times than the change-point search needs (a job minutes old) is no verdict:
    # "healthy" from one sample would send a real slowdown back to sleep
    judged = int(np.isfinite(found.job).sum()) >= 2 * MIN_SEGMENT
    start = float(frame.t[0]) if frame.t.size else 0.0
    end = float(frame.t[-1]) if frame.t.size else 0.0
    # steps that held their baseline say nothing of steps that never came, nor of a path
    # already losing frames: neither may read "healthy"
    stopped = stopped_at(frame, found.job)
    faults = [] if found.episodes else path_faults(frame, reach)
    summary = _summary(found.baseline_s, chains, frame) if judged or chains else \
        _too_few(int(np.isfinite(found.job).sum()), frame)
    if stopped is not None:
        summary = _stopped(stopped, end, faults) if not chains else \
            f"{summary}; then no step time after {words.second(stopped)} UTC: the job hangs " \
            f"or ended"
    elif faults and not chains:
        summary = _faulty(found.baseline_s, faults, judged)
    return SlowJobReport(
        job=frame.job, start=start, end=end, ranks=int(frame.ranks.size),
        baseline_s=round(found.baseline_s, 4) if found.baseline_s is not None else None,
        episodes=found.episodes, chains=chains,
        healthy=judged and not found.episodes and stopped is None and not faults,
        timeline=_timeline(frame, found.job), summary=summary, sources=list(frame.sources),
        warnings=list(frame.warnings), stopped_at=stopped, path_faults=faults)


def job_ranks(frame: Frame, placed: int) -> list[int] | None:
    """The job's ranks: those with step times or in a communicator; None (every rank the
    placement has) when they are fewer than two, e.g. a trainer that logs on its last rank
    only."""
    ranks = {int(r) for r in frame.ranks} | {int(r) for c in frame.comms for r in c.ranks} | \
        {r for c in frame.comms for r in c.info.ranks}
    known = sorted(r for r in ranks if 0 <= r < placed)
    return known if len(known) > 1 else None


def analyze_inputs(inputs: SlowJobInputs, graph: FabricGraph) -> SlowJobReport:
    """`analyze` on inputs as read (lists), put on one grid first."""
    return analyze(frame_from_inputs(inputs), graph)


def _timeline(frame: Frame, job: Array) -> Series | None:
    keep = np.isfinite(job)
    if not keep.any():
        return None
    return Series(t=[float(x) for x in frame.t[keep]], v=[round(float(x), 4) for x in job[keep]])


def _too_few(samples: int, frame: Frame) -> str:
    if samples == 0 or frame.ranks.size == 0:
        return "no step times in the window: nothing to judge"
    return f"cannot tell yet: {samples} step-time sample(s) in the window, " \
           f"{2 * MIN_SEGMENT} needed to tell a slow stretch from the baseline"


def _stopped(stopped: float, end: float, faults: list[str]) -> str:
    gap = end - stopped
    span = f"{gap:.0f} s" if gap < 120 else f"{gap / 60:.0f} min"
    on_path = f"; on its path: {faults[0]}" + (f" (and {len(faults) - 1} more)"
                                                if len(faults) > 1 else "") if faults else ""
    return f"stopped: no step time after {words.second(stopped)} UTC, the window's last " \
           f"{span}: the job hangs or ended, not a slow job (a hang: `fabtui triage " \
           f"nccl` reads its logs){on_path}"


def _faulty(baseline: float | None, faults: list[str], judged: bool) -> str:
    held = f"the step time held {baseline:.2f} s" if judged and baseline is not None else \
        "too few step times to judge"
    more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
    return f"cannot tell: {held}, but the job's path shows a fault: {faults[0]}{more}; " \
           f"it can slow or end the job as it grows"


def _summary(baseline: float | None, chains: list[SlowChain], frame: Frame) -> str:
    if baseline is None or frame.ranks.size == 0:
        return "no step times in the window: nothing to judge"
    if not chains:
        return f"healthy: the step time held {baseline:.2f} s over the window (no slow or " \
               f"jittery stretch)"
    worst = max(chains, key=lambda c: c.episode.magnitude)
    episodes = len({(c.episode.start, c.episode.end) for c in chains})
    span = f"{words.clock(worst.episode.start)}-{words.clock(worst.episode.end)} UTC"
    what = f"{words.pct(worst.episode.magnitude)} slower" if worst.episode.kind == "slow" \
        else f"jitter {worst.episode.magnitude * 100:.0f} %"
    # the other causes of the same episode are named too: "not the fabric" alone in the
    # headline would hide a dying optic that slows the same steps
    also = [c.verdict for c in chains if c is not worst and c.episode == worst.episode]
    more = "".join(f"; also in this episode: {_short(v)}" for v in also)
    return f"{episodes} episode{'s' if episodes > 1 else ''}; the worst {what} {span}: " \
           f"{worst.verdict.summary}{more}"


def _short(verdict: SlowVerdict) -> str:
    """A verdict in a few words: its kind and the element it ends at."""
    if verdict.kind == "fabric":
        return f"fabric, {verdict.element} ({verdict.layer})"
    if verdict.kind == "not the fabric":
        return f"not the fabric, {verdict.cause} ({verdict.element})"
    return "cannot tell"
