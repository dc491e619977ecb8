"""`fabtui triage nccl --json` output: the hang triage report (docs/triage.md), read back.

    {"verdict": "culprit found", "summary": "...", "suspects": [...], "similar_cases": [], ...}
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from fabtui.model.parsed.nccl_triage import NcclTriage
from fabtui.model.table import Table, left, right
from fabtui.model.triage import TriageReport
from fabtui.parsers.errors import ParseError

KIND = "nccl-triage"
MODEL = NcclTriage
DESCRIPTION = "fabtui triage nccl --json: hang triage report (verdict, suspects, collective)"


def detect(text: str) -> float:
    """How sure we are that `text` is a triage report (0..1)."""
    head = text[:65536]
    if '"verdict"' in head and '"suspects"' in head and '"similar_cases"' in head:
        return 0.95 if head.lstrip().startswith("{") else 0.5
    return 0.0


def parse(text: str) -> NcclTriage:
    """Parse the report; `ParseError` when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(KIND, exc.lineno, f"not JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ParseError(KIND, None, "not a triage report: the JSON is not an object")
    try:
        return NcclTriage(report=TriageReport.model_validate(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ParseError(KIND, None, f"not a triage report: {where}: {first['msg']}") from None


def tables(result: NcclTriage) -> list[Table]:
    """The verdict, then the suspects."""
    report = result.report
    rows = [(s.fault, s.kind, s.rank, s.node, s.nic, s.port, s.reason) for s in report.suspects]
    return [Table.build([], title=[f"verdict: {report.verdict}", report.summary]),
            Table.build([right("fault"), left("kind"), left("rank"), left("node"), left("nic"),
                         left("port"), left("reason")], rows)]
