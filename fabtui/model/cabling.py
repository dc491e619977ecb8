"""Design against cabling: what the fabric reports against what the topology file designs.

A `CablingReport` is the answer of `fabtui topo cabling`: each difference between the plant and
the design (a swapped pair of cables, a cable on the wrong leaf or port, a missing or an extra
cable, a NIC card by the wrong GPU) with the exact fix, and what could not be read (then the
evidence cannot tell about those parts).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CablingRule = Literal["swap", "wrong-leaf", "wrong-port", "missing", "extra", "unknown-peer",
                      "nic-slot"]


class CablingFinding(BaseModel):
    """One difference between the plant and the design, and how to fix the plant."""

    model_config = ConfigDict(frozen=True)

    rule: CablingRule
    """`swap` (two cables on each other's ports), `wrong-leaf` / `wrong-port` (a cable on
    another switch / another port of its switch), `missing` (a designed cable nobody hears),
    `extra` (a cable the design does not have), `unknown-peer` (a designed port hears a device
    the design does not know), `nic-slot` (a NIC card by another GPU than the design's)."""
    components: list[str]
    """The ports and NICs involved, in topology names."""
    message: str
    """What the fabric reports, against what the design says."""
    fix: str
    """The exact change to the plant that makes it match the design."""
    evidence: str
    """Which reading shows it (`lldp on leaf-g00-r2`, `ibnetdiscover`, `nvidia-smi topo -m`)."""
    ranks: list[int] = Field(default_factory=list)
    """The job's ranks whose GPUs send through the NICs involved (the workspace's rank
    placement: a rank file, a followed Slurm job, or 8 per node)."""


class CablingReport(BaseModel):
    """The whole comparison."""

    model_config = ConfigDict(frozen=True)

    cluster: str
    sources: list[str] = Field(default_factory=list)
    """What was read, e.g. `lldp on 10 switches`, `nvidia-smi topo -m on 8 nodes`."""
    ports_checked: int = 0
    """Switch ports compared (designed or heard on the switches read)."""
    ports_matched: int = 0
    """Of those, the ports whose neighbour is the design's."""
    findings: list[CablingFinding] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)
    """Switches or nodes that could not be read, with why: the evidence says nothing of them."""
    heard: dict[str, str] = Field(default_factory=dict)
    """NIC (`node:mlx5_N`) -> the switch port it was heard on: the plant, for the scheduler's
    topology and rank placement."""

    @property
    def ok(self) -> bool:
        """No difference found and everything asked for was read."""
        return not self.findings and not self.unread
