"""`sacct --parsable2` (`-P`): one `|`-separated row per job and step.

With its header line the columns are named by it (any `-o` / `--format` list, `--format ALL`
too); `--parsable` (one trailing `|` on every line) is read as well. Without a header (`-n`)
the columns cannot be known from the text: rows are read when they carry exactly fabtui's own
field list (`FIELDS`, what fabtui asks `sacct` for); any other headerless output is refused
with the way to fix it. `parse_rows(text, columns)` reads headerless rows of a known list.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.slurm import SacctOutput, SacctRow
from fabtui.parsers._slurm_common import hosts, text_or_none
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import split_lines

KIND = "sacct"
MODEL = SacctOutput
DESCRIPTION = "sacct --parsable2 (-P): jobs and steps, their state and node list"

FIELDS = ("JobID", "JobName", "State", "NodeList", "NNodes", "NTasks", "AllocCPUS",
          "Partition", "Start", "End")
"""The columns fabtui asks for: `sacct -X -n -P -o JobID,JobName,State,NodeList,...`."""

_STATES = ("COMPLETED|RUNNING|PENDING|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|PREEMPTED|"
           "OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|REQUEUED|RESIZING|REVOKED|SUSPENDED|COMPLETING")
_STATE = re.compile(rf"^(?:{_STATES})\b")
_JOB_ID = re.compile(r"^\d+(?:_(?:\d+|\[[\d,\-%]+\]))?(?:\+\d+)?(?:\.[\w+-]+)?$")
_HEADER_FIELD = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def detect(text: str) -> float:
    """How sure we are that `text` is `sacct -P` output (0..1)."""
    for line in split_lines(text[:65536]):
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) < 2:
            return 0.0
        if _is_header(cells):
            return 0.9
        if _JOB_ID.match(cells[0]) and any(_STATE.match(c) for c in cells[1:]):
            return 0.6
        return 0.0
    return 0.0


def _is_header(cells: list[str]) -> bool:
    names = [c for c in cells if c]
    return bool(names) and all(_HEADER_FIELD.match(c) for c in names) and \
        any(c.lower() == "jobid" for c in names)


def _row(columns: list[str], cells: list[str], number: int,
         warnings: list[str]) -> SacctRow:
    values = dict(zip(columns, cells, strict=True))
    by_name = {k.lower(): v for k, v in values.items()}
    job_id = by_name.get("jobid", "").strip()
    if not job_id:
        raise ParseError(KIND, number, "row has no JobID")
    _, dot, step = job_id.partition(".")
    state = text_or_none(by_name.get("state"))
    nodelist, names = hosts(by_name.get("nodelist"), warnings, f"line {number}")
    return SacctRow(job_id=job_id, step=step if dot else None,
                    name=text_or_none(by_name.get("jobname")),
                    state=state.split()[0] if state else None, nodelist=nodelist,
                    nodes=names, fields=values)


def parse_rows(text: str, columns: list[str] | tuple[str, ...],
               header: bool = False) -> SacctOutput:
    """Rows of `sacct -P` output whose columns are `columns` (the first line is skipped when
    `header`). Raises `ParseError` at a row with the wrong number of fields."""
    result = SacctOutput(columns=list(columns))
    lines = split_lines(text)
    width = len(columns)
    trailing = all(line.endswith("|") for line in lines if line.strip())
    for number, line in enumerate(lines, start=1):
        if not line.strip() or (header and number == _first(lines)):
            continue
        cells = line.split("|")
        if trailing and len(cells) == width + 1 and cells[-1] == "":
            cells = cells[:-1]
        if len(cells) != width:
            raise ParseError(KIND, number, f"row has {len(cells)} fields, expected {width} "
                                           f"({'|'.join(columns[:4])}...)")
        result.rows.append(_row(list(columns), cells, number, result.warnings))
    return result


def _first(lines: list[str]) -> int:
    return next((i for i, line in enumerate(lines, start=1) if line.strip()), 0)


def parse(text: str) -> SacctOutput:
    """Parse `sacct -P` output (see the module docstring); raises `ParseError`."""
    lines = split_lines(text)
    first = _first(lines)
    if not first:
        raise ParseError(KIND, None, "the input is empty")
    cells = lines[first - 1].split("|")
    if _is_header(cells):
        columns = cells[:-1] if cells[-1] == "" else cells
        return parse_rows(text, columns, header=True)
    if len(cells) in (len(FIELDS), len(FIELDS) + 1) and _JOB_ID.match(cells[0]):
        return parse_rows(text, FIELDS)
    raise ParseError(KIND, first, "sacct output without its header line: the columns are "
                                  "unknown; run sacct without -n (--noheader), or with "
                                  f"-o {','.join(FIELDS)}")
