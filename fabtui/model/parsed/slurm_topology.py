"""Slurm's tree topology: `scontrol show topology` output, or a `topology.conf` file
(topology/tree plugin), as one list of switches."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class SlurmSwitch(BaseModel):
    """One `SwitchName=` line: a switch and its children (nodes or switches)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """`SwitchName=` as printed (a name internal to Slurm)."""
    level: int | None = None
    """`Level=` (scontrol only): 0 for a leaf switch, one more per tier above."""
    link_speed: int | None = None
    """`LinkSpeed=` as printed (arbitrary units; scontrol prints 1 when the file gives none)."""
    nodes: str | None = None
    """`Nodes=` as printed (a host list), null when absent or `(null)`. scontrol prints every
    node below a switch of a higher level too."""
    switches: str | None = None
    """`Switches=` as printed (child switches), null when absent or `(null)`."""
    node_names: list[str]
    """`nodes` expanded (empty when the list does not expand: a warning says so)."""
    switch_names: list[str]
    """`switches` expanded."""
    line: int
    """1-based input line of `SwitchName=`."""


class SlurmTopologyOutput(ParsedOutput):
    """Every switch in printed order."""

    kind: Literal["slurm-topology"] = "slurm-topology"
    source: Literal["scontrol", "topology.conf"]
    """`scontrol` when the lines carry `Level=` (`scontrol show topology`), else
    `topology.conf` (the file, whose lines scontrol does not print)."""
    switches: list[SlurmSwitch]
