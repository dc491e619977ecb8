"""Typed results of parsing tool output: the `fabtui parse` JSON contract.

Every result has `kind` (which tool output it is) and `schema_version`; the field names are a
documented contract (docs/parse-json.md, generated from these models) that scripts and the
evaluation rely on. Change them only with a new `schema_version`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1


class ParsedOutput(BaseModel):
    """Fields every parse result carries."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    """Which tool output this is, e.g. `nccl-tests`; fixed per model."""
    schema_version: int = SCHEMA_VERSION
    """Version of this JSON contract."""
    warnings: list[str] = []
    """Things the parser noticed but could not use, e.g. `line 12: unrecognised row skipped`."""
