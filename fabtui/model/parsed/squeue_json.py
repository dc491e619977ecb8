"""`squeue --json`: Slurm's view of jobs, as JSON."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabtui.model.parsed import ParsedOutput
from fabtui.model.parsed._slurm_common import SlurmJob


class SqueueJsonOutput(ParsedOutput):
    """`squeue --json` (Slurm 21.08 to 24.x; also slurmrestd's `/slurm/vX/jobs` answer)."""

    kind: Literal["squeue-json"] = "squeue-json"
    slurm_release: str | None = None
    """The Slurm release that printed it (`meta.Slurm.release`), e.g. `23.02.6`."""
    data_parser: str | None = None
    """The JSON schema plugin (`data_parser/v0.0.39`), when the output names it."""
    jobs: list[SlurmJob] = Field(default_factory=list)
    """The jobs, in the order printed."""
