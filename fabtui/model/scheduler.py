"""The scheduler's view of the fabric: Slurm's tree topology as fabtui generates it, and what an
audit of a live one (or of a job's placement) concludes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SchedulerRule = Literal["unplaced", "multi-leaf", "unknown-node", "merged-groups",
                        "split-group", "disconnected", "cabling", "rail-locality"]


class SchedulerFinding(BaseModel):
    """One way the scheduler's topology (or a job's placement) disagrees with the fabric."""

    model_config = ConfigDict(frozen=True)

    rule: SchedulerRule
    """`unplaced` (a node under no leaf switch), `multi-leaf` (under several), `unknown-node`
    (not in the topology), `merged-groups` (one Slurm leaf over nodes that reach each other
    only through the spines), `split-group` (nodes one hop apart under different Slurm
    leaves), `disconnected` (more than one root: jobs cannot span them), `cabling` (the plant
    puts a node elsewhere than the design Slurm was given), `rail-locality` (a job's rail
    peers behind different leaves)."""
    nodes: list[str]
    message: str
    fix: str


class SchedulerAudit(BaseModel):
    """An audit of a live Slurm topology (or a job's placement) against design and cabling."""

    model_config = ConfigDict(frozen=True)

    source: str
    """What was audited: a file, `scontrol show topology`, a job."""
    agrees: bool
    """A live tree: it groups the nodes exactly as the generated one does (False with no
    finding: the input could not tell, the notes say why). A job: nothing is flagged."""
    findings: list[SchedulerFinding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """What the audit could not judge, and why."""
