"""Hang triage: from a hung job's logs to the ranks, NICs and leaf ports that explain it.

`ingest` reads the inputs (per-rank or combined logs, Flight Recorder dumps and reports, NCCL RAS
output) into facts, `analyze` turns the facts into a verdict and ordered suspects, `locate` puts
the suspects on the fabric, `report` renders the result. `triage_paths` does all of it.
"""

from __future__ import annotations

from fabtui.triage.run import triage_paths

__all__ = ["triage_paths"]
