"""What the analysis passes around: per-rank progress in a process group, the analysis context
and its findings (each a verdict with its suspects), and the wavefront."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from fabtui.model.parsed.flight_recorder import FrEntry
from fabtui.model.triage import Collective, Evidence, Suspect, Verdict
from fabtui.triage.ingest import Facts


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

    def arrived(self) -> int | None:
        values = [v for v in (self.enqueued, self.timed_out) if v is not None]
        return max(values) if values else None


@dataclass
class Context:
    """The facts and what the analysis derived from them so far."""

    facts: Facts
    states: dict[tuple[str, int], Progress] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    world: int | None = None
    seen: set[int] = field(default_factory=set)
    ras_healthy: bool = False
    entries: dict[tuple[str, int], dict[int, FrEntry]] = field(default_factory=dict)
    """(pg, seq) -> rank -> Flight Recorder entry."""
    two_threads: list[tuple[int, str, int]] = field(default_factory=list)
    """(rank, pg, seq) where one rank recorded two collectives with one sequence number."""
    inside: dict[int, Evidence] = field(default_factory=dict)
    """Ranks a desync report says joined but did not finish the collective."""

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
    counts = Counter(arrived)
    return max(counts, key=lambda seq: (counts[seq], seq))


def by_pg(ctx: Context) -> dict[str, list[Progress]]:
    """Progress grouped by process group."""
    groups: dict[str, list[Progress]] = defaultdict(list)
    for state in ctx.states.values():
        groups[state.pg].append(state)
    return groups


def rank_at(ctx: Context, node: str | None, gpu: int | None) -> int | None:
    """The global rank NCCL init placed on `node`'s GPU `gpu`, if the logs say."""
    for init in ctx.facts.inits:
        if init.host == node and init.device == gpu and init.nranks == ctx.world:
            return init.rank
    return None
