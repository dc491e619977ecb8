"""Straggler scores and the pairwise sweep that isolates a slow node or link (JSON schema of
`fabtui triage stragglers --json`, documented in docs/triage-evidence.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

STRAGGLER_BELOW = 0.75
"""A unit whose score (fastest median / own median) is below this is a straggler."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Score(_Strict):
    """One rank, node or node set, scored against the fastest."""

    unit: Literal["rank", "node", "nodes"]
    """What was timed: one rank (step logs, per-rank timings), one node (a single-node
    nccl-tests run), or a set of nodes (a multi-node nccl-tests run)."""
    name: str
    """`rank 5`, `node004`, or `node001+node004`."""
    rank: int | None = None
    nodes: list[str] = Field(default_factory=list)
    metric: Literal["time", "busbw"]
    """`time`: seconds per step or operation (lower is faster); `busbw`: GB/s (higher is)."""
    samples: int
    median: float
    """Median of the samples, in seconds for `time`, GB/s for `busbw`."""
    score: float
    """Fastest median / own median for times (own / fastest for busbw): 1.0 is the fastest."""
    straggler: bool
    """`score` below `STRAGGLER_BELOW`."""
    source: str
    """The file (and line) the samples came from."""


class SweepRun(_Strict):
    """One collective over a set of nodes, planned or run."""

    round: int
    kind: Literal["pairs", "check", "halving"]
    """`pairs`: disjoint node pairs; `check`: a suspect beside a node known to be fast;
    `halving`: one half of a set that is slow as a whole."""
    nodes: list[str]
    probe: str
    target: str
    params: dict[str, str]
    busbw: float | None = None
    """GB/s measured (null: planned only, or the run failed)."""
    score: float | None = None
    """busbw / the best busbw of the sweep."""
    slow: bool | None = None
    error: str | None = None


class SweepPlan(_Strict):
    """What to run to isolate a slow node or link, and (once run) what it found."""

    nodes: list[str]
    steps: list[str]
    """The plan in words: pairs first, then each slow pair's nodes beside a fast node, halving
    a set that is slow only as a whole."""
    runs: list[SweepRun] = Field(default_factory=list)
    """The first round (planned), or every run made (with `--run-plan`)."""
    executed: bool = False
    slow_nodes: list[str] = Field(default_factory=list)
    slow_links: list[list[str]] = Field(default_factory=list)
    """Node pairs slow together while each is fast with another node: the path between them."""
    conclusion: str = ""


class StragglerReport(_Strict):
    """`fabtui triage stragglers`: scores, stragglers first, and the sweep plan."""

    threshold: float = STRAGGLER_BELOW
    inputs: list[str]
    scores: list[Score]
    """Slowest first."""
    stragglers: list[Score]
    plan: SweepPlan | None = None
    warnings: list[str] = Field(default_factory=list)
