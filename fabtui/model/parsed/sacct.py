"""`sacct --parsable2`: Slurm's accounting of jobs and their steps."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class SacctRow(BaseModel):
    """One `sacct` row: a job or one of its steps (`123.batch`, `123.0`)."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    """`JobID` as printed, step suffix included (`278952.batch`)."""
    step: str | None = None
    """The step part of `JobID` (`batch`, `extern`, `0`), null for the job itself."""
    name: str | None = None
    """`JobName`."""
    state: str | None = None
    """`State`, its first word (`CANCELLED by 1000` -> `CANCELLED`)."""
    nodelist: str | None = None
    """`NodeList` as a host list; null for `None assigned`."""
    nodes: list[str] = []
    """`nodelist` expanded to host names."""
    fields: dict[str, str] = {}
    """Every column by its header name, as printed."""


class SacctOutput(ParsedOutput):
    """`sacct --parsable2` (`-P`), with its header line or with fabtui's own `-o` field list."""

    kind: Literal["sacct"] = "sacct"
    columns: list[str] = Field(default_factory=list)
    """The column names, from the header (or fabtui's field list for headerless rows)."""
    rows: list[SacctRow] = Field(default_factory=list)
    """The rows, in the order printed."""
