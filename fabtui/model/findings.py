"""Findings: what a check concluded about one component, located where a user can fix it."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Severity(StrEnum):
    """How bad a finding is: errors break the fabric (or its model), warnings cost performance."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Sort key: errors first."""
        return {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}[self]


class Finding(BaseModel):
    """One conclusion of a validation rule (and later of a probe)."""

    model_config = ConfigDict(frozen=True)

    rule: str
    """Stable rule id, e.g. `rail-symmetry`, so scripts and runbooks can match on it."""
    severity: Severity
    message: str
    component: str
    """The component in the topology's terms: `node01:mlx5_3`, `leaf-g00-r3`, a link label, ..."""
    location: str | None = None
    """`file:line` of the entry to fix."""

    def __str__(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}{self.severity.value} [{self.rule}] {self.message}"
