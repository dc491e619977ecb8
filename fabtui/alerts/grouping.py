"""Simultaneous alerts -> groups, each explained by one suspect element (issue 40).

The alerts firing at one moment are grouped by their nearest shared element, following the
fabric's containment: an optic is in a port, a port and the NIC at its far end share their
cable, a cable is on a leaf (and a node), a leaf under its spines; a GPU is in a node.

1. Alerts are gathered into units: the cable of a port or NIC (both ends of one link), a GPU, or
   a device (its exporter down). A unit with an alert of role `cause` is a cause unit; one with
   only `symptom` alerts (pause spreading, out-of-sequence packets, CNPs) is explained by a
   cause near it, if any.
2. Cause units that share a device merge into one group with that device as the suspect when
   the device is itself alerting (its exporter is down: a dead leaf) or when two or more cause
   units touch it (two of a leaf's cables failing at once point at the leaf; two of a node's
   NICs at the node). Alerting devices go first, then the others lowest tier first (nodes,
   then leaves, then spines), so a leaf explains its cables before a spine explains the
   leaves; a group a lower device explains joins a higher one only when all its cables are
   that device's too (every alerting uplink of a leaf goes to the dead spine).
3. A symptom unit joins the group that touches its lowest-tier device (pause on a leaf's
   uplinks joins the storm on that leaf's host port); symptoms with no cause near them group
   among themselves the same way.
4. A single-unit group's suspect is the end its alerts accuse (`fabtui_suspect`: the element
   itself, its far end, or the link: both ends); a tie names the lowest-tier switch port of the
   cable (the leaf port of a host cable or of an uplink).

Pure: no I/O; deterministic for the same alerts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from fabtui.alerts.locate import ROLE, SUSPECT, Located
from fabtui.alerts.payload import Alert
from fabtui.model.element import device_of


@dataclass(frozen=True)
class Placed:
    """A firing alert and where it points."""

    alert: Alert
    where: Located

    @property
    def cause(self) -> bool:
        return self.alert.labels.get(ROLE, "cause") != "symptom"


@dataclass
class Group:
    """Alerts explained by one suspect element."""

    suspect: str
    kind: str
    """`port`, `nic`, `gpu`, `switch`, `node` or `link` (a cable, named by one end)."""
    reason: str
    alerts: list[Placed] = field(default_factory=list)

    @property
    def fingerprints(self) -> set[str]:
        return {p.alert.fingerprint for p in self.alerts}


class _Union:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        root = self.parent.setdefault(x, x)
        while root != self.parent[root]:
            root = self.parent[root]
        while x != root:
            x, self.parent[x] = self.parent[x], root
        return root

    def join(self, a: str, b: str) -> str:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            keep, gone = sorted((ra, rb))
            self.parent[gone] = keep
            return keep
        return ra


def group_alerts(placed: Sequence[Placed], tier: Callable[[str], int]) -> list[Group]:
    """The groups of `placed` (firing alerts), suspect first in each; `tier(device)` is 0 for a
    node, 1 for a leaf, 2 for a spine. Linear in the alerts (a flood of thousands is grouped in
    one pass per step)."""
    units: dict[str, list[Placed]] = defaultdict(list)
    for p in placed:
        units[p.where.unit].append(p)
    touches = {u: _devices(ps) for u, ps in units.items()}
    cause_units = sorted(u for u, ps in units.items() if any(p.cause for p in ps))
    union = _Union()
    by_device: dict[str, list[str]] = defaultdict(list)
    for u in cause_units:
        union.find(u)
        for d in touches[u]:
            by_device[d].append(u)
    alerting = {p.where.element for p in placed if p.where.kind in ("switch", "node") and p.cause}
    merged_at: dict[str, str] = {}
    """Root of a group merged at a device -> that device."""
    members: dict[str, list[str]] = {u: [u] for u in cause_units}
    # Devices that alert themselves first (a dead leaf takes its cables before a node could
    # take one of them), then the others; lowest tier first in each.
    order = sorted(by_device, key=lambda d: (d not in alerting, tier(d), d))
    for device in order:
        roots = sorted({union.find(u) for u in by_device[device]})
        # A group already explained by a lower device counts here only when all of it is
        # this device's (a leaf whose every alerting cable goes to one spine).
        free = [r for r in roots if r not in merged_at or
                all(device in touches[u] for u in members[r])]
        if device in alerting:
            chosen = roots
        elif len(free) >= 2:
            chosen = free
        else:
            continue
        root = chosen[0]
        for other in chosen[1:]:
            kept = union.join(root, other)
            gone = other if kept == root else root
            members[kept] = members[kept] + members.pop(gone)
            root = kept
        for r in chosen:
            merged_at.pop(r, None)
        merged_at[root] = device
    # Symptom-only units join the cause group touching their lowest-tier device.
    size: Counter[str] = Counter()
    reach: dict[str, list[str]] = defaultdict(list)
    for u in cause_units:
        root = union.find(u)
        size[root] += len(units[u])
    for u in cause_units:
        root = union.find(u)
        for d in touches[u]:
            if root not in reach[d]:
                reach[d].append(root)
    lonely: list[str] = []
    for u in sorted(set(units) - set(cause_units)):
        home = None
        for device in sorted(touches[u], key=lambda d: (tier(d), d)):
            if reach.get(device):
                home = max(sorted(reach[device]), key=lambda r: size[r])
                break
        if home is None:
            lonely.append(u)
        else:
            union.parent[u] = home
    # Symptoms alone: grouped among themselves by a shared device, lowest tier first.
    first_at: dict[str, str] = {}
    for u in lonely:
        union.find(u)
        for device in sorted(touches[u], key=lambda d: (tier(d), d)):
            if device in first_at:
                root = union.join(first_at[device], u)
                merged_at.setdefault(root, device)
                break
            first_at[device] = u
    final: dict[str, list[str]] = defaultdict(list)
    for u in units:
        final[union.find(u)].append(u)
    groups = []
    for root, unit_names in sorted(final.items()):
        alerts = [p for u in sorted(unit_names) for p in units[u]]
        shared = merged_at.get(root)
        if shared is not None and (len(unit_names) > 1 or shared in alerting):
            kind = "node" if tier(shared) == 0 else "switch"
            groups.append(Group(shared, kind, _shared_reason(shared, unit_names, alerts),
                                alerts))
        else:
            groups.append(_single(alerts, tier))
    groups.sort(key=lambda g: (-sum(p.cause for p in g.alerts), g.suspect))
    return groups


def _devices(placed: list[Placed]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for p in placed:
        for d in p.where.devices:
            seen[d] = None
    return tuple(seen)


def _shared_reason(device: str, units: list[str], alerts: list[Placed]) -> str:
    own = sorted({p.alert.name for p in alerts if p.where.element == device})
    cables = sum(1 for u in units if u.startswith("link:"))
    if own:
        return f"{device} itself alerts ({', '.join(own)}) and {cables} of its cable(s) do"
    return f"{cables} cable(s) of {device} alert at once: the nearest element they share"


def _single(alerts: list[Placed], tier: Callable[[str], int]) -> Group:
    """One unit's group: the accused end, else the lowest-tier switch port of the cable."""
    first = alerts[0].where
    if not first.unit.startswith("link:"):
        return Group(first.element, first.kind, "the element its alerts name", alerts)
    ends = first.ends
    score: Counter[str] = Counter()
    for p in alerts:
        if not p.cause:
            continue
        accused = p.alert.labels.get(SUSPECT, "self")
        own = p.where.element
        far = next((e for e in p.where.ends if e != own), own)
        if accused == "far-end":
            score[far] += 2
        elif accused == "link":
            for end in p.where.ends:
                score[end] += 1
        else:
            score[own] += 2
    switch_side = [e for e in ends if tier(device_of(e)) > 0]
    preferred = min(switch_side, key=lambda e: tier(device_of(e))) if switch_side else ends[0]
    best = max(score.values(), default=0)
    top = sorted(e for e, s in score.items() if s == best)
    suspect = preferred if not top or preferred in top else top[0]
    kind = "nic" if tier(device_of(suspect)) == 0 else "port"
    names = ", ".join(sorted({p.alert.name for p in alerts}))
    other = next((e for e in ends if e != suspect), "")
    reason = f"{names} on the cable {suspect} <-> {other}" if other else names
    if len(top) > 1 or not top:
        reason += " (both ends alike: the switch port is named)"
    return Group(suspect, kind, reason, alerts)
