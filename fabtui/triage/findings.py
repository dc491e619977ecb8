"""What the analysis passes around: per-rank progress in a process group, the analysis context
and its findings (each a verdict with its suspects), and the wavefront."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Literal

from fabtui.model.parsed.flight_recorder import FrEntry
from fabtui.model.triage import Collective, Evidence, Suspect, Verdict
from fabtui.triage.ingest import Facts
from fabtui.triage.placement import Layout, host_of, regular_layout


@dataclass
class Finding:
    """One fault the logs show: its verdict, summary, suspects and collective."""

    verdict: Verdict
    summary: str
    suspects: list[Suspect]
    collective: Collective | None = None


@dataclass
class Progress:
    """How far one rank got in one process group, as the analysis builds it."""

    rank: int
    pg: str
    enqueued: int | None = None
    started: int | None = None
    completed: int | None = None
    timed_out: int | None = None
    op: str | None = None
    numel_in: int | None = None
    numel_out: int | None = None
    dtype: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    pg_known: Literal["said", "inferred"] | None = None
    """Whether a line named this process group (`said`), or the rank's watchdog line named none
    and the group was inferred (`inferred`, see `analyze._pg_of`); None: not known (PyTorch 2.1
    prints no group, so ranks at different numbers may be in different communicators)."""

    def arrived(self) -> int | None:
        values = [v for v in (self.enqueued, self.timed_out) if v is not None]
        return max(values) if values else None

    def waiting(self) -> bool:
        """Whether the rank's watchdog fired on the last collective it arrived at: it waits
        inside that collective (an older timeout, before later work, says nothing now)."""
        return self.timed_out is not None and self.timed_out == self.arrived()


@dataclass
class Context:
    """The facts and what the analysis derived from them so far."""

    facts: Facts
    states: dict[tuple[str, int], Progress] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    world: int | None = None
    world_source: str | None = None
    """Where `world` was read (see `TriageReport.world_size_source`)."""
    group_local: bool = False
    """The logs print only process-group ranks (no launcher prefix, several groups' `[Rank M]`):
    no global rank could be read."""
    seen: set[int] = field(default_factory=set)
    unheard: list[int] = field(default_factory=list)
    """Ranks below the highest rank seen (so in the job) that left no timeout while the others
    wait, where the job's size is not known: named in the summary, not blamed."""
    ras_healthy: bool = False
    entries: dict[tuple[str, int], dict[int, FrEntry]] = field(default_factory=dict)
    """(pg, seq) -> rank -> Flight Recorder entry."""
    two_threads: list[tuple[int, str, int]] = field(default_factory=list)
    """(rank, pg, seq) where one rank recorded two collectives with one sequence number."""
    inside: dict[int, Evidence] = field(default_factory=dict)
    """Ranks a desync report says joined but did not finish the collective."""
    _layout: Layout | bool | None = False

    @property
    def layout(self) -> Layout | None:
        """The regular layout the logged ranks follow (see `placement`), or None."""
        if self._layout is False:
            self._layout = regular_layout(self.facts.hosts, self.facts.devices)
        return self._layout if isinstance(self._layout, Layout) else None

    def host(self, name: str | None) -> str | None:
        """A host name or an address as a host name (None for an address nothing names)."""
        return host_of(name, self.facts.ip_hosts, self.facts.addresses)

    def state(self, pg: str, rank: int) -> Progress:
        key = (pg, rank)
        if key not in self.states:
            self.states[key] = Progress(rank=rank, pg=pg)
        return self.states[key]


def max_of(a: int | None, b: int | None) -> int | None:
    """The larger of two optional values."""
    return b if a is None else a if b is None else max(a, b)


def wavefront(states: list[Progress]) -> int | None:
    """The sequence number most ranks arrived at (the higher one on a tie)."""
    arrived = [s.arrived() for s in states if s.arrived() is not None]
    if not arrived:
        return None
    # Ranks that wait inside a collective define the front when every other rank completed
    # all it enqueued (it is idle in host code, behind): a few ranks ahead and waiting, the many
    # behind, is still a front the many never reached.
    waiting = Counter(s.arrived() for s in states if s.waiting())
    idle = all(s.waiting() or (s.completed is not None and s.completed >= seq)
               for s in states if (seq := s.arrived()) is not None)
    if waiting and idle:
        return max(waiting, key=lambda seq: (waiting[seq], seq))
    counts = Counter(arrived)
    return max(counts, key=lambda seq: (counts[seq], seq))


def by_pg(ctx: Context) -> dict[str, list[Progress]]:
    """Progress grouped by process group."""
    groups: dict[str, list[Progress]] = defaultdict(list)
    for state in ctx.states.values():
        groups[state.pg].append(state)
    return groups


def rank_at(ctx: Context, node: str | None, gpu: int | None,
            infer: bool = False) -> int | None:
    """The global rank NCCL init placed on `node`'s GPU `gpu`, if the logs say; with `infer`,
    else the rank the logged ranks' regular layout puts there (see `placement`)."""
    for init in ctx.facts.inits:
        if init.host == node and init.device == gpu and init.nranks == ctx.world:
            return init.rank
    layout = ctx.layout
    if infer and layout is not None and node is not None and gpu is not None:
        rank = layout.rank_of(node, gpu)
        if rank is not None and rank not in ctx.facts.hosts \
                and (ctx.world is None or rank < ctx.world):
            return rank
    return None
