"""The JSON report of `fabtui triage nccl --json`, read back as a parse result (probe
`triage.nccl` runs the triage where the logs are and reads its report)."""

from __future__ import annotations

from typing import Literal

from fabtui.model.parsed import ParsedOutput
from fabtui.model.triage import TriageReport


class NcclTriage(ParsedOutput):
    """A hang triage report (docs/triage.md)."""

    kind: Literal["nccl-triage"] = "nccl-triage"
    report: TriageReport
    """The report as `fabtui triage nccl --json` printed it."""
