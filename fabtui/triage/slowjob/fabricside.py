"""The fabric side of the chain: from the communicators that slowed to the rail, the port and
the optic that moved at the same moments.

Every NIC, leaf port and spine port on the job's path (`reach.Reach`) is compared inside the
episode with outside it (`moves`). What moved is read in this order, the first that applies
ends the chain:

1. **a link went down** (`link_up`): its leaf-side port; the leaf's other uplinks carrying more
   is the evidence that traffic rerouted;
2. **the light or the bits** (receive power, pre-FEC BER, FEC corrected / uncorrectable): the
   link whose ends moved most, then its optic; the end whose receiver degrades names the far
   end's transmitter or the fibre between;
   then **a link that trained slower** (`speed_gbps`): its NIC end;
3. **congestion concentrated on one leaf** (pause, ECN marks, CNPs, out-of-sequence): that leaf,
   when its sibling leaves stay quiet (fabric symmetry); if the job's own load on the leaf did
   not grow, the traffic that fills it is not the job's;
4. **the job's traffic moved, not an element**: the uplinks of most leaves carry more at the same
   moments with nothing down, erring or concentrated: the job crosses the spines it did not
   cross before (NCCL configuration such as `NCCL_PXN_DISABLE=1`, or a new collective): not
   the fabric.

Before any of that, the rail: the rails of the communicators that slowed and of the ports that
moved, against their sibling rails. Nothing moved: `None`, and the caller says it cannot tell.
No side effects.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fabtui.model.element import device_of
from fabtui.model.slowjob import Hop, HopLayer, SlowVerdict
from fabtui.topology.ranks import compact_ranges
from fabtui.triage.slowjob import probes, words
from fabtui.triage.slowjob.collectives import CommMove
from fabtui.triage.slowjob.frame import Frame
from fabtui.triage.slowjob.moves import Move, move, moves
from fabtui.triage.slowjob.railprobe import rail_check
from fabtui.triage.slowjob.reach import Port, Reach

DOWN = frozenset({"link_up"})
SLOWER = frozenset({"speed_gbps"})
PHYSICAL = frozenset({"fec_uncorrectable_per_s", "fec_corrected_per_s", "pre_fec_ber",
                      "rx_power_dbm"})
CONGESTION = frozenset({"pause_share_rx", "pause_share_tx", "pause_rx_per_s", "pause_tx_per_s",
                        "ecn_marked_per_s", "cnp_per_s", "out_of_sequence_per_s"})
ALL = DOWN | SLOWER | PHYSICAL | CONGESTION
SPREAD_SHARE = 0.75
"""Evidence on this share of the leaves is the whole fabric, not one leaf."""
PAUSE_WARN, PAUSE_FAIL = 0.1, 0.5
"""The catalog's limits on a port's pause share (`switch.pfc`, docs/thresholds.md section 3)."""
BER_WARN, BER_FAIL = 1e-6, 1e-5
"""The catalog's limits on pre-FEC BER (`switch.fec` `fec_pre_ber`, `nic.ethtool`)."""


def _against(value: float, warn: float, fail: float, what: str) -> str | None:
    """`what` against the catalog's limits, or None below its warn limit."""
    if value >= fail:
        return f"{what} is past the catalog's fail limit ({fail:g})"
    if value >= warn:
        return f"{what} is past the catalog's warn limit ({warn:g})"
    return None

Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Moved:
    """A port and what moved on it."""

    port: Port
    moves: list[Move]

    def of(self, kinds: frozenset[str]) -> list[Move]:
        """Its moves of those metrics."""
        return [m for m in self.moves if m.metric in kinds]

    @property
    def z(self) -> float:
        """Its strongest move."""
        return max((m.z for m in self.moves), default=0.0)


def _confidence(z: float, *, comm: bool, counter: int = 0) -> float:
    base = 0.55 + 0.04 * min(z, 10.0) + (0.05 if comm else -0.1) - 0.15 * counter
    return round(min(0.95, max(0.3, base)), 2)


def _leaf_of(port: Port) -> str | None:
    if port.layer == "nic":
        return device_of(port.far or "")
    if port.layer == "leaf port":
        return port.switch
    return device_of(port.far or "")  # a spine port: the leaf it faces


def comm_hops(dropped: list[CommMove], held: list[CommMove], reach: Reach) -> list[Hop]:
    """One hop for the communicators that slowed, against those that held."""
    if not dropped:
        return []
    worst = dropped[0]
    rails = reach.rails_of(int(r) for c in dropped for r in c.comm.ranks)
    names = [c.name for c in dropped]
    evidence = words.first([f"{c.name} ({c.comm.info.collective}, "
                            f"{c.comm.ranks.size} ranks): {words.moved(c.move)} "
                            f"({words.pct(c.move.relative)})" for c in dropped], 4,
                           "communicator(s) slowed", [c.name for c in dropped])
    if held:
        spread = max(abs(c.move.relative) for c in held)
        evidence.append(f"{len(held)} sibling communicator(s) hold within "
                        f"{max(spread * 100, 1):.0f} %: {words.listing([c.name for c in held])}")
    rail_note = f" (rail{'s' if len(rails) > 1 else ''} {compact_ranges(sorted(rails))})" \
        if rails and len(rails) < len(set(reach.leaf_rail.values()) or {0}) else ""
    return [Hop(layer="communicator", element=worst.comm.info.id,
                claim=f"{words.listing(names)}{rail_note} slow{'s' if len(names) == 1 else ''} "
                      f"at the same moments, with no rank arriving late",
                evidence=evidence, confidence=_confidence(worst.move.z, comm=True))]


def _rail_hop(moved: list[Moved], dropped: list[CommMove], reach: Reach) -> Hop | None:
    all_rails = sorted(set(reach.leaf_rail.values()))
    if len(all_rails) < 2:
        return None
    by_rail: dict[int, list[Moved]] = defaultdict(list)
    for item in moved:
        if item.port.rail is not None:
            by_rail[item.port.rail].append(item)
    comm_rails = reach.rails_of(int(r) for c in dropped for r in c.comm.ranks) \
        if dropped else set()
    if len(comm_rails) >= len(all_rails):
        comm_rails = set()
    rails = set(by_rail) | comm_rails
    if not rails or len(rails) > len(all_rails) / 2:
        return None
    siblings = [r for r in all_rails if r not in rails]
    evidence = [f"rail {rail}: {len(by_rail.get(rail, []))} port(s) moving "
                f"({words.listing([i.port.key for i in by_rail.get(rail, [])], 3) or 'none'})"
                for rail in sorted(rails)]
    if comm_rails:
        evidence.append(f"the communicators that slowed ride rail "
                        f"{compact_ranges(sorted(comm_rails))}")
    evidence.append(f"sibling rails {compact_ranges(siblings)}: nothing moves at the same "
                    f"moments")
    label = compact_ranges(sorted(rails))
    z = max((i.z for r in rails for i in by_rail.get(r, [])), default=4.0)
    suspects = [device_of(i.port.key if i.port.layer == "nic" else i.port.far or "")
                for r in rails for i in by_rail.get(r, [])]
    nodes = [n for n in suspects if n in reach.graph.nodes] + \
        sorted(set(reach.rank_node.values()))
    rail = min(rails)
    on_rail = by_rail.get(rail, [])
    check = rail_check(rail, [i.port for i in on_rail], nodes, reach,
                       frozenset(i.port.key for i in on_rail if i.of(DOWN)))
    if check.note:
        evidence.append(check.note)
    return Hop(layer="rail", element=f"rail {label}",
               claim=f"rail {label} is out of line with its sibling rails",
               evidence=evidence, confidence=_confidence(z, comm=bool(dropped)),
               probe=check.probe)


def _moved_ports(frame: Frame, reach: Reach, inside: Mask, outside: Mask) -> list[Moved]:
    found = []
    for key, port in reach.ports.items():
        metrics = frame.fabric.get(key)
        if not metrics:
            continue
        result = moves(metrics, inside, outside, ALL)
        if result:
            found.append(Moved(port, result))
    return sorted(found, key=lambda m: -m.z)


def _flavor(reach: Reach, switch: str) -> str | None:
    """The switch's flavor (`sonic`, `eos`, ...), None when the topology does not hold it."""
    found = reach.graph.switches.get(switch)
    return found.flavor.value if found is not None else None


def _port_layer(port: Port) -> HopLayer:
    return "nic" if port.layer == "nic" else "spine port" if port.layer == "spine port" \
        else "leaf port"


def _down(down: list[Moved], frame: Frame, reach: Reach, inside: Mask, outside: Mask,
          comm: bool) -> tuple[list[Hop], SlowVerdict]:
    item = max(down, key=lambda m: m.z)
    port = item.port
    if port.layer != "leaf port" and port.far in reach.ports and \
            reach.ports[port.far].layer == "leaf port":
        port = reach.ports[port.far]
    leaf = port.switch or device_of(port.key)
    evidence = [f"{port.key} <-> {port.far}: link down during the episode"]
    siblings = [k for k in reach.leaf_ports.get(leaf, []) if reach.ports[k].uplink and
                k != port.key]
    carrying = []
    for key in siblings:
        series = frame.fabric.get(key, {}).get("util")
        result = move("util", series, inside, outside) if series is not None else None
        if result is not None and result.moving:
            carrying.append(result)
    if carrying:
        before = float(np.median([m.before for m in carrying]))
        during = float(np.median([m.during for m in carrying]))
        evidence.append(f"{len(carrying)} of {len(siblings)} sibling uplinks of {leaf} carry "
                        f"more at the same moments: load {before * 100:.0f} % -> "
                        f"{during * 100:.0f} %")
    confidence = _confidence(item.z, comm=comm)
    hop = Hop(layer="leaf port", element=port.key,
              claim=f"{port.key} is down; what crossed it reroutes over {leaf}'s other uplinks",
              evidence=evidence, confidence=confidence, probe=probes.port_state(leaf))
    return [hop], SlowVerdict(
        kind="fabric", element=port.key, layer="leaf port", confidence=confidence,
        summary=f"fabric: {port.key} (uplink to {device_of(port.far or '')}) is down and the "
                f"job's cross-spine traffic squeezes through the rest. Check: "
                f"{probes.port_state(leaf).command}")


def _physical(items: list[Moved], reach: Reach, comm: bool) -> tuple[list[Hop], SlowVerdict]:
    by_link: dict[int, list[Moved]] = defaultdict(list)
    for item in items:
        by_link[item.port.link].append(item)
    link, ends = max(by_link.items(), key=lambda kv: max(m.z for m in kv[1]))
    ends = sorted(ends, key=lambda m: -m.z)
    hops = []
    for end in ends:
        switch = end.port.switch or device_of(end.port.key)
        found = end.of(PHYSICAL)
        ber = next((m.during for m in found if m.metric == "pre_fec_ber"), 0.0)
        limit = _against(ber, BER_WARN, BER_FAIL, f"pre-FEC BER {ber:.1e}")
        hops.append(Hop(
            layer=_port_layer(end.port), element=end.port.key,
            claim=f"{end.port.key} receives with errors at the same moments",
            evidence=words.first([words.moved(m) for m in found], 4, "counter(s) moving")
            + ([limit] if limit else []),
            confidence=_confidence(end.z, comm=comm),
            probe=probes.port_errors(switch, _flavor(reach, switch), end.port.key)
            if end.port.layer != "nic" else probes.nic_link(end.port.key)))
    receiving = ends[0].port
    optic = receiving.optic or f"link:{link}"
    power = next((m for m in ends[0].moves if m.metric == "rx_power_dbm"), None)
    light = f"the light arriving at {receiving.key} fell " \
            f"{words.value('rx_power_dbm', power.before)} -> " \
            f"{words.value('rx_power_dbm', power.during)}" if power else \
        f"{receiving.key} corrects more and more of what it receives"
    other = f" (other links of {receiving.switch or device_of(receiving.key)} and its sibling " \
            f"leaves stay clean)" if len(by_link) == 1 else \
        f" ({len(by_link) - 1} other link(s) move less)"
    confidence = _confidence(max(m.z for m in ends), comm=comm)
    dom_port = receiving.key if receiving.layer != "nic" else (receiving.far or receiving.key)
    switch = receiving.switch or device_of(receiving.key)
    confirm = probes.nic_link(receiving.key) if receiving.layer == "nic" else \
        probes.port_errors(switch, _flavor(reach, switch), receiving.key)
    hops.append(Hop(
        layer="optic", element=optic,
        claim=f"the optic on {receiving.far} <-> {receiving.key} is failing: {light}",
        evidence=[light + other, f"the far end {receiving.far} launches it: an ageing laser "
                  f"there, or dirt or a bend in the fibre between"],
        confidence=confidence, probe=probes.port_dom(dom_port)))
    return hops, SlowVerdict(
        kind="fabric", element=optic, layer="optic", confidence=confidence,
        summary=f"fabric: the optic {optic} on {receiving.far} <-> {receiving.key}; its errors "
                f"rise with the step time. Confirm: {confirm.command}; then runbook "
                f"optic-replacement")


def _slower(items: list[Moved], comm: bool) -> tuple[list[Hop], SlowVerdict]:
    """A link that trained below its speed: its NIC end (what `ibstat` on the host reads)."""
    item = max(items, key=lambda m: (m.port.layer == "nic", m.z))
    port = item.port
    speed = item.of(SLOWER)[0]
    also = [m for m in item.moves if m.metric not in SLOWER]
    confidence = _confidence(item.z, comm=comm)
    probe = probes.nic_rate(port.key) if port.layer == "nic" else \
        probes.port_state(port.switch or device_of(port.key))
    hop = Hop(layer=_port_layer(port), element=port.key,
              claim=f"{port.key} <-> {port.far} runs at {speed.during:.0f} Gb/s, not "
                    f"{speed.before:.0f}: every ring through it runs at that link's pace",
              evidence=[f"{words.moved(speed)} at the same moments"] +
              ([] if also else ["no pause, ECN or CNP moving on it: the link trained slower "
                                "(a retrain after a flap, a cable or module of a lower rate)"]),
              counter_evidence=words.first([f"also moving: {words.moved(m)}" for m in also], 3,
                                           "counter(s) also moving"),
              confidence=confidence, probe=probe)
    return [hop], SlowVerdict(
        kind="fabric", element=port.key, layer=_port_layer(port), confidence=confidence,
        summary=f"fabric: {port.key} trained at {speed.during:.0f} Gb/s instead of "
                f"{speed.before:.0f}. Confirm: {probe.command}")


def _congestion(items: list[Moved], frame: Frame, reach: Reach, inside: Mask, outside: Mask,
                comm: bool) -> tuple[list[Hop], SlowVerdict] | None:
    by_leaf: dict[str, list[Moved]] = defaultdict(list)
    for item in items:
        leaf = _leaf_of(item.port)
        if leaf:
            by_leaf[leaf].append(item)
    leaves = sorted(reach.leaf_ports)
    if not by_leaf or (len(leaves) > 1 and len(by_leaf) >= SPREAD_SHARE * len(leaves)):
        return None
    ranked = sorted(by_leaf.items(), key=lambda kv: (-len(kv[1]), -max(m.z for m in kv[1])))
    leaf, moved = ranked[0]
    runner = len(ranked[1][1]) if len(ranked) > 1 else 0
    if runner and len(moved) < 2 * runner:
        return None
    lines = words.first([f"{m.port.key}: {words.moves_of(m.of(CONGESTION), 2)}"
                         for m in moved], 4, f"port(s) of {leaf} pausing or marking",
                        [m.port.key for m in moved])
    quiet = [x for x in leaves if x not in by_leaf]
    evidence = [*lines, f"sibling leaves quiet: {len(quiet)} of {len(leaves) - 1}"]
    pause = max((m.during for item in moved for m in item.of(CONGESTION)
                 if m.metric.startswith("pause_share")), default=0.0)
    limit = _against(pause, PAUSE_WARN, PAUSE_FAIL, f"a pause share of {pause * 100:.0f} %")
    if limit:
        evidence.append(limit)
    own = [move("util", frame.fabric[k]["util"], inside, outside)
           for k in reach.leaf_ports.get(leaf, []) if not reach.ports[k].uplink
           and "util" in frame.fabric.get(k, {})]
    counter: list[str] = []
    tenant = ""
    if own and all(m is not None and m.during <= m.before * 1.05 for m in own):
        evidence.append(f"the job sends no more through {leaf} than before: the traffic that "
                        f"fills it is not the job's (another tenant, a storage flow)")
        tenant = " from traffic that is not the job's"
    elif own:
        counter.append(f"the job's own load on {leaf} grew: it may be congesting itself")
    confidence = _confidence(max(m.z for m in moved), comm=comm, counter=len(counter))
    hop = Hop(layer="leaf", element=leaf,
              claim=f"{leaf} pauses and marks at the same moments{tenant}",
              evidence=evidence, counter_evidence=counter, confidence=confidence,
              probe=probes.leaf_pfc(leaf))
    return [hop], SlowVerdict(
        kind="fabric", element=leaf, layer="leaf", confidence=confidence,
        summary=f"fabric: congestion on {leaf}{tenant} (pause and ECN at the same moments as "
                f"the slow steps). Confirm: {probes.leaf_pfc(leaf).command}")


def _pattern(frame: Frame, reach: Reach, inside: Mask, outside: Mask,
             comm: bool) -> tuple[list[Hop], SlowVerdict] | None:
    leaves = sorted(reach.leaf_ports)
    busier = []
    for leaf in leaves:
        ups = [k for k in reach.leaf_ports[leaf] if reach.ports[k].uplink and
               "util" in frame.fabric.get(k, {})]
        if not ups:
            continue
        load = np.nanmean(np.vstack([frame.fabric[k]["util"] for k in ups]), axis=0)
        result = move("util", load, inside, outside)
        if result is not None and result.moving:
            busier.append((leaf, result))
    if not leaves or len(busier) < SPREAD_SHARE * len(leaves):
        return None
    before = float(np.median([m.before for _, m in busier]))
    during = float(np.median([m.during for _, m in busier]))
    node = next(iter(reach.rank_node.values()), "")
    check = probes.nccl_log(node, frame.job_log)
    fill = "" if frame.job_log else \
        f" ({probes.JOB_LOG}: the job's log on {node}, where its NCCL INFO lines go)"
    hop = Hop(layer="job", element=frame.job,
              claim="the job's traffic moved onto the spines on every leaf at once: a change in "
                    "how NCCL routes it, not a fabric element",
              evidence=[f"uplinks of {len(busier)} of {len(leaves)} leaves carry more at the "
                        f"same moments: load {before * 100:.0f} % -> {during * 100:.0f} %",
                        "no port down, no FEC or light moving, no leaf out of line with its "
                        "siblings"],
              confidence=0.75 if comm else 0.6, probe=check)
    return [hop], SlowVerdict(
        kind="not the fabric", element=frame.job, layer="job", cause="application",
        confidence=hop.confidence,
        summary="not the fabric: the job now crosses the spines with cross-rail traffic (NCCL "
                "PXN off, NCCL_PXN_DISABLE=1, or a new collective pattern); the fabric carries "
                f"it as built. Check the job's NCCL settings: {check.command}{fill}")


def fabric_chain(frame: Frame, reach: Reach, dropped: list[CommMove], held: list[CommMove],
                 inside: Mask, outside: Mask) -> tuple[list[Hop], SlowVerdict] | None:
    """Hops from the communicators down to the element, and the verdict; None when no
    element on the job's path moved with the episode."""
    moved = _moved_ports(frame, reach, inside, outside)
    comm = bool(dropped)
    head = comm_hops(dropped, held, reach)
    dark = {m.port.link for m in moved if m.of(DOWN)}
    # a link that is down receives no light: its power falling says nothing more, while FEC
    # errors before it went down do (then its own errors took it down: the optic's story)
    physical = [Moved(m.port, errs) for m in moved
                if (errs := [x for x in m.of(PHYSICAL) if m.port.link not in dark or
                             x.metric != "rx_power_dbm"])]
    erring = {m.port.link for m in physical}
    down = [m for m in moved if m.of(DOWN) and m.port.link not in erring]
    congested = [Moved(m.port, m.of(CONGESTION)) for m in moved if m.of(CONGESTION)]
    if down:
        rail = _rail_hop(down, dropped, reach)
        hops, verdict = _down(down, frame, reach, inside, outside, comm)
        return [*head, *([rail] if rail else []), *hops], verdict
    if physical:
        rail = _rail_hop(physical, dropped, reach)
        hops, verdict = _physical(physical, reach, comm)
        return [*head, *([rail] if rail else []), *hops], verdict
    slower = [m for m in moved if m.of(SLOWER) and m.port.link not in dark]
    if slower:
        rail = _rail_hop(slower, dropped, reach)
        hops, verdict = _slower(slower, comm)
        return [*head, *([rail] if rail else []), *hops], verdict
    if congested:
        found = _congestion(congested, frame, reach, inside, outside, comm)
        if found is not None:
            rail = _rail_hop(congested, dropped, reach)
            return [*head, *([rail] if rail else []), *found[0]], found[1]
    found = _pattern(frame, reach, inside, outside, comm)
    if found is not None:
        return [*head, *found[0]], found[1]
    return None
