"""The cheapest check of a rail hop: a pair test that crosses what moved, or the port's read.

A rail-pinned pair (`NCCL_IB_HCA==<the rail's NIC>`) crosses its two nodes' NICs, their leaf
ports, and the spines only when the two NICs sit under different leaves of that rail. On a
rail-optimised fabric with one leaf per rail (the demo: one group, leaf-gNN-rR) every pair of
the job's nodes meets on that leaf, so no pair test crosses a leaf<->spine uplink or its optic:
there the port's own read (FEC counters or optic light) is the check, and the hop says why.
Pure: reads the `Reach` join only.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabtui.model.element import device_of
from fabtui.model.slowjob import Probe
from fabtui.triage.slowjob import probes
from fabtui.triage.slowjob.reach import Port, Reach


@dataclass(frozen=True)
class RailCheck:
    """The probe for a rail hop and, when it is not a pair test, why."""

    probe: Probe | None
    note: str | None = None


def _leaf_of(reach: Reach, node: str, rail: int) -> tuple[str, str] | None:
    """(NIC name, leaf) of `node`'s NIC on `rail`, None when the job does not use one."""
    for port in reach.ports.values():
        if port.layer == "nic" and port.rail == rail and device_of(port.key) == node and \
                port.far is not None:
            return port.key.partition(":")[2], device_of(port.far)
    return None


def _leaf_side(port: Port) -> str:
    """The leaf an uplink port belongs to (its own switch, or the far end of a spine port)."""
    if port.layer == "spine port" and port.far is not None:
        return device_of(port.far)
    return port.switch or ""


def rail_check(rail: int, moved: list[Port], nodes: list[str], reach: Reach,
               down: frozenset[str] = frozenset()) -> RailCheck:
    """The probe of rail `rail`: `moved` are its ports that moved (strongest first), `nodes`
    the job's nodes with the suspects first, `down` the keys of ports whose link went down
    (their switch's port states are the read, not FEC)."""
    order = list(dict.fromkeys(n for n in nodes if _leaf_of(reach, n, rail)))
    under = {n: found for n in order if (found := _leaf_of(reach, n, rail))}
    nic = next(iter(under.values()))[0] if under else f"mlx5_{rail}"
    uplinks = [p for p in moved if p.uplink]
    if not uplinks or len(uplinks) < len(moved):  # a NIC or host-facing port moved: a pair
        return RailCheck(probes.rail_pair(order or nodes, nic) if len(order or nodes) >= 2
                         else None)
    # Spine-side: the pair must cross the spines, one node under the suspect uplink's leaf and
    # one under another leaf of this rail.
    suspect = uplinks[0]
    leaf = _leaf_side(suspect)
    near = [n for n in order if under[n][1] == leaf]
    far = [n for n in order if under[n][1] != leaf]
    if near and far:
        return RailCheck(probes.rail_pair([near[0], far[0]], under[near[0]][0]),
                         f"{near[0]} (under {leaf}) and {far[0]} (under {under[far[0]][1]}) "
                         f"meet only through the spines on rail {rail}; ECMP may still hash "
                         f"the pair past {suspect.key}")
    switch = suspect.switch or device_of(suspect.key)
    spec = reach.graph.switches.get(switch)
    flavor = spec.flavor.value if spec is not None else None
    leaves = sorted({v[1] for v in under.values()})
    read = probes.port_state(switch) if suspect.key in down or suspect.far in down else \
        probes.port_errors(switch, flavor, suspect.key)
    return RailCheck(read,
                     f"no pair test crosses {suspect.key}: the job's rail-{rail} NICs all sit "
                     f"under {', '.join(leaves) or leaf}, so a rail-{rail} pair never leaves "
                     f"that leaf; the port's own read is the check")
