"""`sacct --parsable2` (`-P`): one `|`-separated row per job and step.

With its header line the columns are named by it (any `-o` / `--format` list, `--format ALL`
too); `--parsable` (one trailing `|` on every line) is read as well. Without a header (`-n`)
the columns cannot be known from the text: rows are read when they carry exactly fabtui's own
field list (`FIELDS`, what fabtui asks `sacct` for); any other headerless output is refused
with the way to fix it. `parse_rows(text, columns)` reads headerless rows of a known list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import chain

from fabtui.model.parsed.sacct import SacctOutput, SacctRow
from fabtui.parsers._slurm_common import HostBudget, hosts, text_or_none
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import KeptLines, Streamed, row_defaults
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


_ROW = row_defaults(SacctRow)


def _row(columns: list[str], cells: list[str], number: int, warnings: list[str],
         budget: HostBudget) -> dict[str, object]:
    """A row as `SacctRow.model_dump(mode="json")` gives it, built without the model."""
    values = dict(zip(columns, cells, strict=True))
    by_name = {k.lower(): v for k, v in values.items()}
    job_id = by_name.get("jobid", "").strip()
    if not job_id:
        raise ParseError(KIND, number, "row has no JobID")
    _, dot, step = job_id.partition(".")
    state = text_or_none(by_name.get("state"))
    nodelist, names = hosts(by_name.get("nodelist"), warnings, f"line {number}", budget)
    row = dict(_ROW)
    row.update(job_id=job_id, step=step if dot else None, name=text_or_none(by_name.get("jobname")),
               state=state.split()[0] if state else None, nodelist=nodelist, nodes=names,
               fields=values)
    return row


def parse_rows(text: str, columns: list[str] | tuple[str, ...],
               header: bool = False) -> SacctOutput:
    """Rows of `sacct -P` output whose columns are `columns` (the first line is skipped when
    `header`). Raises `ParseError` at a row with the wrong number of fields."""
    numbered = enumerate(split_lines(text), start=1)
    bar = True
    if header:
        first = next(((n, line) for n, line in numbered if line.strip()), None)
        bar = first is None or first[1].endswith("|")
    return _read(numbered, list(columns), bar).assemble()


def _read(numbered: Iterator[tuple[int, str]], columns: list[str],
          bar: bool) -> Streamed[SacctOutput]:
    """The rows of `numbered` lines, checked now, kept as their lines and read again into
    JSON when written (a long listing costs its text, not a model and dict of ~100 cells per
    row). `bar`: the header line (if any) ended with `|`.

    `--parsable` ends every line with `|`: only when all of them do is a row's one extra,
    empty field that bar, so the first error is known only once the last line is read.
    """
    width = len(columns)
    kept = KeptLines()
    warnings: list[str] = []
    trailing = bar
    loose: ParseError | None = None  # a field too many, unless every line ends with `|`
    error: ParseError | None = None  # wrong in either case; the rows after it are not read
    budget = HostBudget()  # each reading of the rows has its own, so both expand the same
    for number, line in numbered:
        if not line.strip():
            continue
        trailing = trailing and line.endswith("|")
        if error is not None:
            continue
        cells = line.split("|")
        if len(cells) == width + 1 and cells[-1] == "":
            loose = loose or _width_error(number, len(cells), columns)
            cells.pop()
        elif len(cells) != width:
            error = _width_error(number, len(cells), columns)
            continue
        try:
            _row(columns, cells, number, warnings, budget)
        except ParseError as exc:
            error = exc
            continue
        kept.add(number, line)
    # On one line, too many fields is said before what the fields hold (as rows are read).
    first = min((e for e in (None if trailing else loose, error) if e is not None),
                key=lambda e: e.line or 0, default=None)
    if first is not None:
        raise first

    def dumped() -> Iterator[dict[str, object]]:
        again = HostBudget()
        for number, line in kept:
            cells = line.split("|")
            if trailing and len(cells) == width + 1:
                cells.pop()
            yield _row(columns, cells, number, [], again)

    def models() -> Iterator[SacctRow]:
        return (SacctRow.model_validate(row) for row in dumped())

    return Streamed(SacctOutput(columns=columns, rows=[], warnings=warnings),
                    {"rows": models}, {"rows": dumped})


def _width_error(number: int, count: int, columns: list[str]) -> ParseError:
    return ParseError(KIND, number, f"row has {count} fields, expected {len(columns)} "
                                    f"({'|'.join(columns[:4])}...)")


def parse(text: str) -> SacctOutput:
    """Parse `sacct -P` output (see the module docstring); raises `ParseError`."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[SacctOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way); the rows on demand."""
    numbered = enumerate(lines, start=1)
    first = next(((n, line) for n, line in numbered if line.strip()), None)
    if first is None:
        raise ParseError(KIND, None, "the input is empty")
    number, line = first
    cells = line.split("|")
    if _is_header(cells):
        return _read(numbered, cells[:-1] if cells[-1] == "" else cells, line.endswith("|"))
    if len(cells) in (len(FIELDS), len(FIELDS) + 1) and _JOB_ID.match(cells[0]):
        return _read(chain([first], numbered), list(FIELDS), True)
    raise ParseError(KIND, number, "sacct output without its header line: the columns are "
                                   "unknown; run sacct without -n (--noheader), or with "
                                   f"-o {','.join(FIELDS)}")
