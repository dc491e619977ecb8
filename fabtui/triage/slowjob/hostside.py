"""Not the fabric: the answer that saves a needless page.

Two shapes say the network is not why the job slowed:

- **late ranks** (`collectives.late_ranks`): some ranks reach the collectives late and the rest
  wait for them. Their GPUs decide between **gpu** (SM clock falls, a throttle reason, Xid or
  NVLink errors move at the same moments) and **host** (GPUs as before: CPU, memory, OS noise,
  the rank's own process). Their NICs and leaf ports are read as counter-evidence: quiet ports
  strengthen the verdict, moving ones weaken it.
- **collectives hold**: no communicator slowed and no rank arrived late, yet steps take longer.
  The time went outside the collectives: **input pipeline** when the GPUs sit idle at the same
  moments (utilisation falls on most of them), **application** when they stay busy (more compute
  per step). Without GPU utilisation the two cannot be told apart, and the verdict says so.

No side effects.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import numpy.typing as npt

from fabtui.model.slowjob import Hop, SlowVerdict
from fabtui.triage.slowjob import probes, words
from fabtui.triage.slowjob.collectives import Late
from fabtui.triage.slowjob.frame import Frame
from fabtui.triage.slowjob.moves import moves
from fabtui.triage.slowjob.reach import Reach

GPU_METRICS = frozenset({"gpu_sm_clock_mhz", "gpu_throttle", "xid", "nvlink_errors_per_s"})
PORT_METRICS = frozenset({"pause_share_rx", "pause_share_tx", "fec_uncorrectable_per_s",
                          "pre_fec_ber", "rx_power_dbm", "link_up", "cnp_per_s",
                          "out_of_sequence_per_s", "ecn_marked_per_s"})
NODE_SHARE = 0.75
"""A node is the unit when this share of its ranks (or GPUs) is late (or moves)."""
IDLE_SHARE = 0.5
"""The input pipeline is named when the GPUs of this share of the job idle with the episode."""

Mask = npt.NDArray[np.bool_]


def late_chain(frame: Frame, reach: Reach, late: list[Late], inside: Mask,
               outside: Mask) -> tuple[list[Hop], SlowVerdict]:
    """Hops from the late ranks to their node or GPU, and the not-the-fabric verdict."""
    ahead: dict[int, float] = {}
    comms: dict[int, set[str]] = defaultdict(set)
    for item in late:
        ahead[item.rank] = max(ahead.get(item.rank, 0.0), item.ahead)
        comms[item.rank].add(item.comm)
    ranks = sorted(ahead)
    by_node: dict[str, list[int]] = defaultdict(list)
    for rank in ranks:
        by_node[reach.rank_node.get(rank, "?")].append(rank)
    node, node_ranks = max(by_node.items(), key=lambda kv: len(kv[1]))
    on_node = [r for r, n in reach.rank_node.items() if n == node]
    whole_node = len(node_ranks) >= NODE_SHARE * max(len(on_node), 1)
    first = max(ahead.values())
    one = len(ranks) == 1
    rank_hop = Hop(
        layer="rank", element=words.ranks(ranks),
        claim=f"{words.ranks(ranks)} reach{'es' if one else ''} the collectives late; the other "
              f"ranks wait for {'it' if one else 'them'}",
        evidence=[f"{'its' if one else 'their'} busbw runs up to {first:.2f}x their peers' "
                  f"during the episode (a late rank times its collective short), in "
                  f"{len(set().union(*comms.values()))} communicator(s)",
                  f"{len(ranks)} of {len(reach.rank_node)} ranks: "
                  f"{'all on ' + node if len(by_node) == 1 else words.listing(sorted(by_node))}"],
        confidence=0.9)
    gpu_moves = {}
    for rank in node_ranks:
        gpu = reach.rank_gpu.get(rank)
        found = moves(frame.fabric.get(gpu, {}), inside, outside, GPU_METRICS) if gpu else []
        if found:
            gpu_moves[gpu] = found
    quiet_gpus = [reach.rank_gpu[r] for r in node_ranks
                  if r in reach.rank_gpu and reach.rank_gpu[r] not in gpu_moves]
    measured = [g for r in node_ranks if (g := reach.rank_gpu.get(r)) and g in frame.fabric]
    port_lines, quiet_ports = [], 0
    for rank in node_ranks:
        for nic in reach.rank_nics.get(rank, []):
            for key in (nic, reach.ports[nic].far if nic in reach.ports else None):
                if key is None or key not in frame.fabric:
                    continue
                found = moves(frame.fabric[key], inside, outside, PORT_METRICS)
                if found:
                    port_lines.append(f"{key}: {words.moved(found[0])}")
                else:
                    quiet_ports += 1
    others = sorted(set(ranks) - set(node_ranks))
    if others:
        rank_hop.evidence.append(f"also late, on other nodes: {words.ranks(others)} "
                                 f"({words.listing(sorted(set(by_node) - {node}))}); the "
                                 f"chain follows {node}, which has the most")
    hops = [rank_hop]
    counter = words.first([f"moving at the same moments: {line}" for line in port_lines], 3,
                          "NIC or leaf port(s) moving at the same moments",
                          [line.split(": ", 1)[0] for line in port_lines])
    port_note = f"their NICs and leaf ports are quiet ({quiet_ports} read: no pause, FEC, " \
                f"CNP or link change at the same moments)" if quiet_ports and not port_lines \
        else None
    if gpu_moves:
        element = node if whole_node and len(gpu_moves) >= NODE_SHARE * len(node_ranks) \
            else next(iter(gpu_moves))
        lines = words.first([f"{gpu}: {words.moves_of(found, 3)}"
                             for gpu, found in gpu_moves.items()], 4,
                            "GPU(s) moving at the same moments", [str(g) for g in gpu_moves])
        evidence = [*lines, *([port_note] if port_note else [])]
        confidence = max(0.5, 0.9 - 0.15 * min(len(port_lines), 3))
        what = "the GPUs of " + node if element == node else element
        verb = "slow" if element == node else "slows"
        hops.append(Hop(layer="gpu", element=element,
                        claim=f"{what} {verb} down at the same moments (clocks, throttle, "
                              f"errors)",
                        evidence=evidence, counter_evidence=counter, confidence=confidence,
                        probe=probes.gpu_clocks(node)))
        verdict = SlowVerdict(
            kind="not the fabric", element=element, layer="gpu", cause="gpu",
            confidence=confidence,
            summary=f"not the fabric: {what} throttle{'' if element == node else 's'}; "
                    f"{words.ranks(node_ranks)} arrive{'' if len(node_ranks) > 1 else 's'} late "
                    f"and every collective waits. Check: "
                    f"{probes.gpu_clocks(node).command}")
        return hops, verdict
    evidence = []
    if measured:
        evidence.append(f"GPUs as before: {len(quiet_gpus)} of {len(measured)} GPUs of "
                        f"{words.ranks(node_ranks)} hold their clocks, no throttle, no Xid, "
                        f"NVLink quiet")
    if port_note:
        evidence.append(port_note)
    element = node if whole_node else reach.rank_gpu.get(node_ranks[0], node)
    confidence = (0.85 if measured else 0.6) - 0.15 * min(len(port_lines), 3)
    hops.append(Hop(layer="host", element=element,
                    claim=f"{node} delivers its ranks late with its GPUs and ports as before: "
                          f"the host (CPU, memory, OS noise or the rank's own process)",
                    evidence=evidence or ["no GPU or port series for these ranks"],
                    counter_evidence=counter, confidence=max(confidence, 0.3),
                    probe=probes.host_log(node)))
    verdict = SlowVerdict(
        kind="not the fabric", element=element, layer="host", cause="host",
        confidence=max(confidence, 0.3),
        summary=f"not the fabric: {node} is slow ({words.ranks(node_ranks)} arrive late, GPUs "
                f"and ports as before). Check: {probes.host_log(node).command}")
    return hops, verdict


def outside_collectives(frame: Frame, reach: Reach, inside: Mask,
                        outside: Mask) -> tuple[list[Hop], SlowVerdict]:
    """Collectives hold and nobody is late: input pipeline or application (see the module)."""
    gpus = sorted(set(reach.rank_gpu.values()))
    read = [g for g in gpus if "gpu_util" in frame.fabric.get(g, {})]
    idle = [g for g in read if moves({"gpu_util": frame.fabric[g]["gpu_util"]}, inside,
                                     outside)]
    node = next(iter(reach.rank_node.values()), "")
    if read and len(idle) >= IDLE_SHARE * len(read):
        before, during = _util(frame, idle, inside, outside)
        hop = Hop(layer="job", element=frame.job,
                  claim="the GPUs wait for their data between steps: the input pipeline",
                  evidence=[f"{len(idle)} of {len(read)} GPUs idle at the same moments: busy "
                            f"{before * 100:.0f} % -> {during * 100:.0f} %",
                            "every communicator holds its busbw and no rank arrives late"],
                  confidence=0.85, probe=probes.gpu_busy(node))
        return [hop], SlowVerdict(
            kind="not the fabric", element=frame.job, layer="job", cause="input pipeline",
            confidence=0.85,
            summary="not the fabric: the input pipeline stalls (GPUs idle between steps while "
                    "the collectives hold their busbw). Look at the data loader and its storage")
    if read:
        hop = Hop(layer="job", element=frame.job,
                  claim="the steps take longer with the GPUs busy and the collectives on "
                        "time: the application (more work per step)",
                  evidence=[f"{len(read) - len(idle)} of {len(read)} GPUs stay busy",
                            "every communicator holds its busbw and no rank arrives late"],
                  confidence=0.7, probe=probes.gpu_busy(node))
        return [hop], SlowVerdict(
            kind="not the fabric", element=frame.job, layer="job", cause="application",
            confidence=0.7,
            summary="not the fabric: the collectives hold and the GPUs stay busy; the job does "
                    "more per step (batch, sequence length, a code change)")
    hop = Hop(layer="job", element=frame.job,
              claim="the time goes outside the collectives: the application or its input",
              evidence=["every communicator holds its busbw and no rank arrives late"],
              counter_evidence=["no GPU utilisation read: input pipeline and application "
                                "cannot be told apart"],
              confidence=0.55, probe=probes.gpu_busy(node))
    return [hop], SlowVerdict(
        kind="not the fabric", element=frame.job, layer="job", cause="application",
        confidence=0.55,
        summary="not the fabric: the collectives hold their busbw and no rank is late; the "
                "application or its input pipeline (no GPU utilisation to tell which)")


def _util(frame: Frame, gpus: list[str], inside: Mask, outside: Mask) -> tuple[float, float]:
    rows = np.vstack([frame.fabric[g]["gpu_util"] for g in gpus])
    return float(np.nanmedian(rows[:, outside])), float(np.nanmedian(rows[:, inside]))
