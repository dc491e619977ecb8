"""Helpers shared by the switch CLI parsers (switch-counters, transceiver-dom, pfc-counters,
fec-stats, queue-counters). Not a parser: it defines no KIND.

Switch captures arrive pasted from terminals: a shell prompt and the command at the top, launcher
or pdsh prefixes on every line, mail/markdown quoting, code fences, CRLF, tabs. `clean_lines`
removes what is not the tool's own output while keeping line numbers. Most SONiC commands print
`tabulate` "simple" tables (a header, a rule of dashes, rows); `find_tables` reads them by the
rule's column spans, which survives cells with single spaces ("FLR(P) (Accuracy)",
"7.81e-10 (89%)") and empty cells.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fabtui.parsers.text import clean_lines as shared_clean_lines
from fabtui.parsers.text import is_missing, to_float, to_int

HEAD_CHARS = 40000
"""How much of the input detectors look at."""

_FENCE = re.compile(r"^\s*(?:```|~~~)")
_RULE_GROUPS = re.compile(r"-{2,}")
_UNIT_NUMBER = re.compile(
    r"^\s*([-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan)\s*([A-Za-z%°/]*)\s*$",
    re.IGNORECASE)
PROMPT = re.compile(
    r"^\s*(?:\S+@\S+[:~][^$#>]*[$#>]|\S+(?: \[[^\]]*\])? ?[#>]|\S+[$#])\s*"
    r"(?:sudo\s+)?(?P<command>(?:show|nv|sfputil|portstat|pfcstat|queuestat|l1-show)\b.*)$")
"""A shell or switch prompt followed by a command: `admin@sonic:~$ show ...`, `leaf1# show ...`,
`switch [standalone: master] # show ...`, `cumulus@sw:~$ nv show ...`."""


def clean_lines(text: str) -> list[str]:
    """The input's lines with launcher prefixes and quoting removed (`text.clean_lines`: only
    when most lines carry them, since switch output has `key: value` lines of its own), code
    fences blanked, tabs expanded to 8-column stops and trailing blanks dropped."""
    return ["" if _FENCE.match(line) else line.expandtabs(8).rstrip()
            for line in shared_clean_lines(text)]


_BARE_COMMAND = re.compile(r"^\s*(?P<command>show\s+(?:interfaces?|lldp|pfc|queue)\b.*)$")


def command_of(lines: list[str]) -> str | None:
    """The command typed after a prompt near the top of the capture, if there is one, or the
    bare command as the capture's first line (test suites and docs often keep it so)."""
    for line in lines[:10]:
        match = PROMPT.match(line)
        if match:
            return match.group("command").strip()
    first = next((line for line in lines[:10] if line.strip()), "")
    bare = _BARE_COMMAND.match(first)
    return bare.group("command").strip() if bare else None


def head(text: str) -> str:
    """The part of the input a detector looks at, cleaned of prefixes and quoting."""
    return "\n".join(clean_lines(text[:HEAD_CHARS]))


# ----------------------------------------------------------------------------- numbers

parse_int = to_int
"""`"1,052"` -> 1052, `N/A`/empty/`-` -> None; anything else -> ValueError (`text.to_int`)."""
parse_float = to_float
"""A plain number (`1.48e-20`); `N/A`, `inf`, `nan` -> None; else ValueError (`text.to_float`)."""


def split_unit(value: str) -> tuple[float | None, str, bool]:
    """`"-3.86dBm"` -> (-3.86, "dBm", False); `"-inf dBm"` -> (None, "dBm", True).

    The third item says the tool printed an infinity (no light on an optical lane). Missing
    values give (None, "", False); text that is not a number raises ValueError.
    """
    text = value.strip()
    if is_missing(text):
        return None, "", False
    match = _UNIT_NUMBER.match(text)
    if not match:
        raise ValueError(f"{value!r} is not a measurement")
    number, unit = match.group(1), match.group(2)
    if number.lower().lstrip("+-") in ("inf", "nan"):
        return None, unit, number.lower().startswith("-inf")
    parsed = float(number.replace(",", ""))
    return (parsed if math.isfinite(parsed) else None), unit, False


def try_int(value: str) -> int | None:
    """`parse_int`, but text that is not an integer gives None."""
    try:
        return parse_int(value)
    except ValueError:
        return None


def try_float(value: str) -> float | None:
    """`parse_float`, but text that is not a number gives None."""
    try:
        return parse_float(value)
    except ValueError:
        return None


def snake(name: str) -> str:
    """A printed counter name as a JSON-friendly key: `"Rx pause"` -> `"rx_pause"`."""
    text = re.sub(r"[^0-9A-Za-z]+", "_", name.strip()).strip("_").lower()
    return text or "unnamed"


# ----------------------------------------------------------------------------- tables

@dataclass
class Row:
    """One table row: its 1-based line number and its cells (same count as the header)."""

    line: int
    cells: list[str]


@dataclass
class Table:
    """A `tabulate` "simple" table: header cells, rows, and where it started (1-based)."""

    header: list[str]
    header_line: int
    rows: list[Row] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    """Non-table lines just above the header (e.g. `For namespace asic0:`)."""

    def key(self) -> list[str]:
        """The header in upper case with inner blanks collapsed, for matching columns."""
        return [re.sub(r"\s+", " ", cell).strip().upper() for cell in self.header]


def rule_spans(line: str) -> list[tuple[int, int]] | None:
    """Column spans of a dash rule like `---------  -------  ----`; None if it is not one."""
    if not line.strip() or set(line.strip()) - {"-", " "}:
        return None
    spans = [(m.start(), m.end()) for m in _RULE_GROUPS.finditer(line)]
    return spans if len(spans) >= 2 else None


def split_cells(line: str, spans: list[tuple[int, int]]) -> list[str] | None:
    """The cells of a row, or None when the line does not fit the table's columns.

    Cells are separated by two or more blanks; when that does not give one cell per column
    (an empty cell, a squeezed value), each blank-separated chunk goes to the column whose span
    it overlaps most.
    """
    if not line.strip():
        return None
    cells = re.split(r"\s{2,}", line.strip())
    if len(cells) == len(spans):
        return cells
    out = [""] * len(spans)
    for match in re.finditer(r"\S+(?: \S+)*", line):
        start, end = match.start(), match.end()
        best, overlap = -1, 0
        for index, (lo, hi) in enumerate(spans):
            width = min(end, hi) - max(start, lo)
            if width > overlap:
                best, overlap = index, width
        if best < 0 or out[best]:
            return None
        out[best] = match.group(0)
    return out


def _header_cells(lines: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """Header cells, joining stacked header lines column by column."""
    joined: list[str] = []
    for line in lines:
        cells = split_cells(line, spans) or [line[lo:hi].strip() for lo, hi in spans]
        if not joined:
            joined = cells
        else:
            joined = [f"{a} {b}".strip() for a, b in zip(joined, cells, strict=True)]
    return joined


def find_tables(lines: list[str], header_lines: int = 1) -> list[Table]:
    """Every dash-ruled table in `lines` (already cleaned), rows parsed into cells.

    A table runs from its rule to the first line that cannot be a row (text that does not fit
    the columns, or the header of the next table). Blank lines inside a table (pfcstat puts
    one between ports) do not end it.
    """
    return list(iter_tables(lines, header_lines))


def iter_tables(lines: list[str], header_lines: int = 1) -> Iterator[Table]:
    """`find_tables`, one table at a time: a capture of many tables never holds the cells of
    more than one."""
    index = 0
    while index < len(lines):
        spans = rule_spans(lines[index]) if index >= 1 else None
        if spans is None or not lines[index - 1].strip():
            index += 1
            continue
        first = max(0, index - header_lines)
        header = _header_cells(lines[first:index], spans)
        context = [line.strip() for line in lines[max(0, first - 2):first] if line.strip()]
        table = Table(header=header, header_line=first + 1, context=context)
        index = _read_rows(lines, index + 1, spans, table)
        yield table


def _filled(cells: list[str]) -> bool:
    """Enough non-empty cells for a row (tools print N/A rather than leave cells empty), so a
    trailing prompt or note directly under a table is not taken for a row."""
    needed = min(len(cells), max(2, (len(cells) + 1) // 2))
    return sum(1 for cell in cells if cell.strip()) >= needed


def _read_rows(lines: list[str], index: int, spans: list[tuple[int, int]], table: Table) -> int:
    """Append the rows starting at `index` to `table`; returns the index after the table.

    After a blank line a row must split cleanly on double blanks (one cell per column), so a
    section title or a trailing note ends the table instead of becoming a row.
    """
    after_blank = False
    while index < len(lines):
        line = lines[index]
        if not line.strip() or line.strip() in ("...", "\u2026"):
            after_blank = after_blank or not line.strip()
            index += 1
            continue
        if index + 1 < len(lines) and (rule_spans(lines[index + 1]) is not None
                                       or re.match(r"^\s*=+\s*$", lines[index + 1])):
            break
        if after_blank and len(re.split(r"\s{2,}", line.strip())) != len(spans):
            break
        cells = split_cells(line, spans)
        if cells is None or rule_spans(line) is not None or not _filled(cells):
            break
        table.rows.append(Row(index + 1, cells))
        index += 1
    return index


# ----------------------------------------------------------------------------- JSON

def load_json(text: str) -> Any:
    """The input as JSON (after cleaning), or None if it is not JSON."""
    body = "\n".join(clean_lines(text)).strip()
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        return json.loads(body[start:])
    except (ValueError, RecursionError):
        return None


# ----------------------------------------------------------------------------- states

def normalize_state(value: str | None) -> str | None:
    """An oper/link state as lower-case `up`/`down` where the meaning is clear.

    SONiC prints `U`/`D`/`X` (X: admin down, so the link is down too); other NOSes print words.
    Missing values give None; anything unclear is kept as printed.
    """
    if value is None or is_missing(value):
        return None
    text = value.strip()
    lowered = text.lower()
    if lowered in ("u", "up", "enabled", "active", "connected"):
        return "up"
    if lowered in ("d", "x", "down", "disabled", "notconnect", "lowerlayerdown", "notpresent",
                   "administratively down", "admin down"):
        return "down"
    return text
