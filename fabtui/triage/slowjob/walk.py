"""One episode, walked from the job down: job -> communicators -> ranks -> host / GPU, or
job -> communicators -> rail -> leaf / spine port -> optic.

The order of the questions is the order an on-call engineer asks them, cheapest answer first:

1. did some ranks arrive late? Then the others waited for them: the host or its GPUs
   (`hostside.late_chain`), not the fabric. The fabric is still read, and a fabric element that
   moved on its own evidence at the same moments gets a second chain for the same episode (two
   causes at once);
2. did the collectives hold their busbw? Then the time went outside them: input pipeline or
   application (`hostside.outside_collectives`), not the fabric;
3. otherwise the network: the fabric side (`fabricside.fabric_chain`) to the element that moved;
   and when nothing on the job's path moved, say so: cannot tell, with the probe that would
   split it.

No side effects.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fabtui.model.slowjob import Episode, Hop, SlowChain, SlowVerdict
from fabtui.triage.slowjob import probes, words
from fabtui.triage.slowjob.collectives import comm_moves, late_ranks
from fabtui.triage.slowjob.fabricside import comm_hops, fabric_chain
from fabtui.triage.slowjob.frame import Frame
from fabtui.triage.slowjob.hostside import late_chain, outside_collectives
from fabtui.triage.slowjob.reach import Reach

Mask = npt.NDArray[np.bool_]


def job_hop(frame: Frame, episode: Episode) -> Hop:
    """The symptom: the job's step time in the episode against its baseline."""
    span = f"{words.clock(episode.start)}-{words.clock(episode.end)} UTC"
    if episode.kind == "slow":
        claim = f"steps take {episode.median_s:.2f} s against {episode.baseline_s:.2f} s " \
                f"({words.pct(episode.magnitude)}) from {span}"
    else:
        claim = f"steps jitter by {episode.magnitude * 100:.0f} % of the {episode.baseline_s:.2f}" \
                f" s step from {span}"
    return Hop(layer="job", element=frame.job, claim=claim,
               evidence=[f"median step time over {frame.ranks.size} ranks, {episode.samples} "
                         f"samples in the episode"], confidence=1.0)


def _cannot_tell(frame: Frame, reach: Reach, head: list[Hop], why: str) -> SlowVerdict:
    nodes = sorted(set(reach.rank_node.values()))
    rails = sorted(set(reach.leaf_rail.values()))
    probe = probes.rail_pair(nodes, f"mlx5_{rails[0]}") if len(nodes) >= 2 and rails else None
    step = f" Next: {probe.command} (one rail at a time, to split the rails)" if probe else ""
    return SlowVerdict(kind="cannot tell", confidence=0.0, summary=f"cannot tell: {why}.{step}")


def walk_episode(frame: Frame, reach: Reach, episode: Episode, inside: Mask,
                 outside: Mask) -> list[SlowChain]:
    """The chains of one episode (usually one; two when a host and a fabric element both move
    at its moments)."""
    top = job_hop(frame, episode)
    moved = comm_moves(frame, inside, outside)
    dropped = [c for c in moved if c.dropped]
    held = [c for c in moved if not c.dropped]
    late = late_ranks(frame, inside, outside)
    if late:
        hops, verdict = late_chain(frame, reach, late, inside, outside)
        chains = [SlowChain(episode=episode, hops=[top, *hops], verdict=verdict)]
        second = fabric_chain(frame, reach, [], [], inside, outside)
        if second is not None and second[1].kind == "fabric":
            chains.append(SlowChain(episode=episode, hops=[top, *second[0]],
                                    verdict=second[1]))
        return chains
    if moved and not dropped:
        hops, verdict = outside_collectives(frame, reach, inside, outside)
        hops[0:0] = [top]
        return [SlowChain(episode=episode, hops=hops, verdict=verdict)]
    found = fabric_chain(frame, reach, dropped, held, inside, outside)
    if found is not None:
        return [SlowChain(episode=episode, hops=[top, *found[0]], verdict=found[1])]
    head = comm_hops(dropped, held, reach)
    read = sum(1 for key in reach.ports if key in frame.fabric)
    if dropped:
        why = (f"the collectives slowed ({words.listing([c.name for c in dropped])}) "
               f"and no rank arrived late, yet none of the {read} NICs and ports read on the "
               f"job's path moved at the same moments")
    elif read:
        why = f"no busbw was read and none of the {read} NICs and ports read on the job's " \
              f"path moved at the same moments"
    else:
        why = "no busbw was read and no NIC, port or GPU series: nothing to walk the step " \
              "time down to"
    verdict = _cannot_tell(frame, reach, head, why)
    return [SlowChain(episode=episode, hops=[top, *head], verdict=verdict)]
