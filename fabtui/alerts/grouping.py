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

A rail is one more shared element, between the leaf and the spine: host cables of one rail
behind different leaves (a fabric of several groups, where rail r of each group has its own
leaf) that no node or leaf explains name the rail (`rail:3`) when two or more of them fail at
once. In a fabric of one group the rail's leaf explains them first.

Then job impact: groups of one unit with no cause alert (symptoms only, such as out-of-sequence
packets or CNPs, that no shared element joined to anything) on nodes that run one job (`Jobs`,
from Slurm) are one group whose suspect is the job (`job:4242`): the evidence cannot tell which
element is at fault, and the reason says what to read next. Groups with a cause, or explained
by a shared element, keep their element (two faults in one big job are two incidents); the
jobs behind them are listed by the workspace's `enrich`.

Pure: no I/O (the jobs come from a callable, asked only when two such groups exist);
deterministic for the same alerts and jobs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
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


RAIL = "rail:"
JOB = "job:"
RAIL_TIER = 1.5
"""Where a rail sits among the shared elements: above its leaves, below the spines."""


@dataclass(frozen=True)
class Jobs:
    """The jobs running now: job id -> node -> its ranks there, and where that came from."""

    ranks: Mapping[str, Mapping[str, tuple[int, ...]]]
    source: str = ""
    names: Mapping[str, str] = field(default_factory=dict)

    def on(self, node: str) -> list[str]:
        """The jobs running on `node`, by id."""
        return sorted(j for j, nodes in self.ranks.items() if node in nodes)

    def placement(self, job: str, nodes: Sequence[str]) -> str:
        """`ranks 16-23 on node003, 40-47 on node006` for the job's ranks on `nodes`."""
        parts = [f"{spans(self.ranks[job][n])} on {n}" for n in nodes
                 if self.ranks.get(job, {}).get(n)]
        return ("ranks " + ", ".join(parts)) if parts else "no ranks there"


def spans(ranks: Sequence[int]) -> str:
    """`0-7, 9` for ranks 0..7 and 9."""
    ordered = sorted(ranks)
    if not ordered:
        return "-"
    found: list[str] = []
    start = prev = ordered[0]
    for r in ordered[1:]:
        if r != prev + 1:
            found.append(str(start) if start == prev else f"{start}-{prev}")
            start = r
        prev = r
    found.append(str(start) if start == prev else f"{start}-{prev}")
    return ", ".join(found)


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


def group_alerts(placed: Sequence[Placed], tier: Callable[[str], int],
                 jobs: Callable[[], Jobs | None] | None = None) -> list[Group]:
    """The groups of `placed` (firing alerts), suspect first in each; `tier(device)` is 0 for a
    node, 1 for a leaf, 2 for a spine; `jobs()` the running jobs (asked only when symptoms
    could group by one). Linear in the alerts (a flood of thousands is grouped in one pass per
    step)."""

    def rank(device: str) -> float:
        return RAIL_TIER if device.startswith(RAIL) else tier(device)

    groups = _by_element(placed, rank)
    return _by_job(groups, jobs, rank) if jobs is not None else groups


def _by_element(placed: Sequence[Placed], tier: Callable[[str], float]) -> list[Group]:
    """Steps 1-4 of the module docstring (rails among the shared elements)."""
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
            kind = "rail" if shared.startswith(RAIL) else \
                "node" if tier(shared) == 0 else "switch"
            groups.append(Group(shared, kind, _shared_reason(shared, unit_names, alerts),
                                alerts))
        else:
            groups.append(_single(alerts, tier))
    groups.sort(key=lambda g: (-sum(p.cause for p in g.alerts), g.suspect))
    return groups


def _devices(placed: list[Placed]) -> tuple[str, ...]:
    """The nodes and switches a unit touches, then its rails."""
    seen: dict[str, None] = {}
    for p in placed:
        for d in (*p.where.devices, *p.where.rails):
            seen[d] = None
    return tuple(seen)


def _shared_reason(device: str, units: list[str], alerts: list[Placed]) -> str:
    own = sorted({p.alert.name for p in alerts if p.where.element == device})
    cables = sum(1 for u in units if u.startswith("link:"))
    if device.startswith(RAIL):
        leaves = sorted({d for p in alerts for d in p.where.devices[1:]})
        return (f"{cables} cable(s) of {device} alert at once behind {len(leaves)} leaves "
                f"({', '.join(leaves[:4])}{' ...' if len(leaves) > 4 else ''}) and no node "
                "or leaf explains them: the nearest element they share is the rail (the "
                "spines its leaves share, or a setting every NIC of the rail has)")
    if own:
        return f"{device} itself alerts ({', '.join(own)}) and {cables} of its cable(s) do"
    return f"{cables} cable(s) of {device} alert at once: the nearest element they share"


def _single(alerts: list[Placed], tier: Callable[[str], float]) -> Group:
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


def _nodes(group: Group, tier: Callable[[str], float]) -> list[str]:
    """The nodes a group's alerts touch, in order."""
    return list(dict.fromkeys(d for p in group.alerts for d in p.where.devices
                              if tier(d) == 0))


def _by_job(groups: list[Group], jobs: Callable[[], Jobs | None],
            tier: Callable[[str], float]) -> list[Group]:
    """Symptom-only groups on nodes of one running job, that no fabric element joined, become
    one group per job (see the module docstring)."""
    loose = [i for i, g in enumerate(groups)
             if not any(p.cause for p in g.alerts) and _nodes(g, tier) and
             len({p.where.unit for p in g.alerts}) == 1]  # a shared element explains the rest
    if len(loose) < 2:
        return groups
    found = jobs()
    if found is None or not found.ranks:
        return groups
    union = _Union()
    behind: dict[int, set[str]] = {}
    by_job: dict[str, list[int]] = defaultdict(list)
    for i in loose:
        behind[i] = {j for n in _nodes(groups[i], tier) for j in found.on(n)}
        for j in sorted(behind[i]):
            by_job[j].append(i)
    for members in by_job.values():
        for i in members[1:]:
            union.join(f"{members[0]:09d}", f"{i:09d}")
    sets: dict[str, list[int]] = defaultdict(list)
    for i in loose:
        if behind[i]:
            sets[union.find(f"{i:09d}")].append(i)
    merged: set[int] = set()
    result: list[Group] = []
    for members in sets.values():
        if len(members) < 2:
            continue
        shared = Counter(j for i in members for j in behind[i])
        job = min(shared, key=lambda j: (-shared[j], j))
        alerts = [p for i in members for p in groups[i].alerts]
        nodes = list(dict.fromkeys(n for i in members for n in _nodes(groups[i], tier)))
        causes = [g.suspect for g in groups if any(p.cause for p in g.alerts) and
                  set(_nodes(g, tier)) & set(found.ranks.get(job, {}))]
        result.append(Group(f"{JOB}{job}", "job",
                            _job_reason(job, found, nodes, alerts, causes), alerts))
        merged.update(members)
    if not result:
        return groups
    kept = [g for i, g in enumerate(groups) if i not in merged] + result
    kept.sort(key=lambda g: (-sum(p.cause for p in g.alerts), g.suspect))
    return kept


def _job_reason(job: str, found: Jobs, nodes: list[str], alerts: list[Placed],
                causes: list[str]) -> str:
    name = found.names.get(job)
    elements = list(dict.fromkeys(p.where.element for p in alerts))
    shown = ", ".join(elements[:4]) + (" ..." if len(elements) > 4 else "")
    text = (f"shared: job {job}{f' ({name})' if name else ''} "
            f"({found.placement(job, nodes[:8])}{' ...' if len(nodes) > 8 else ''}): "
            f"symptoms on {len(elements)} element(s) of {len(nodes)} node(s) that share no "
            "fabric element, none accusing its own; the evidence cannot tell which element is "
            f"at fault. Read next: `fabtui triage slow --job {job}` (its slow ranks and "
            f"rails), its NCCL log (`fabtui triage nccl`), the counters of {shown}")
    if causes:
        text += (f"; in the same job {', '.join(sorted(causes)[:3])} alerts as a cause: "
                 "read that incident first, it may explain these")
    return text
