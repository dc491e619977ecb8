"""`scontrol show job [-d]`: Slurm's view of jobs, one record per job."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabtui.model.parsed import ParsedOutput
from fabtui.model.parsed._slurm_common import SlurmJob


class ScontrolJobOutput(ParsedOutput):
    """`scontrol show job [-d] [JOBID]`: one record per job, key=value fields."""

    kind: Literal["scontrol-job"] = "scontrol-job"
    jobs: list[SlurmJob] = Field(default_factory=list)
    """The jobs, in the order printed."""
