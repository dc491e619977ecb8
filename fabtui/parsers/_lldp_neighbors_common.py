"""What the LLDP neighbor readers share (`lldp_neighbors.py`, `_lldp_neighbors_*.py`). Not a
parser: it defines no KIND.

The neighbor as read (`Neighbor`, a tuple in `LldpNeighbor`'s field order, and `Draft`, one being
read), what a reader returns (`Result`), printed-value helpers, the walk over a table's rows after
its header (underline, rows, elided rows, footer, prompt) and the column-table reader the SONiC and
Cumulus tables use (columns from the dash segments under the header, else from its labels).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Protocol

from fabtui.parsers.text import is_missing

LLDP_KIND = "lldp-neighbors"
"""The parser's kind (`lldp_neighbors.KIND`); not named KIND, so the registry takes no
`_lldp_neighbors_*` module for a parser."""


TOTAL = re.compile(r"^\s*Total\s+entries\s+displayed\s*:\s*(\d+)\s*$", re.I)
DASHES = re.compile(r"^\s*-{3,}[\s-]*$")
_CELL = re.compile(r"\S+(?: \S+)*")
INT = re.compile(r"^\d+$")
_PROMPT = re.compile(r"^\S*[@:]\S*[$#>](?:\s|$)|^\S+[#>]\s*$")
_ELIDED = re.compile(r"^\s*(?:\.\.\.|…)(?:\s+(?:\.\.\.|…))*\s*$")
Flavor = Literal["sonic", "eos", "nxos", "lldpd", "nvue"]


class Neighbor(NamedTuple):
    """A neighbor as read: `LldpNeighbor`'s fields, in its order, as a tuple (a big switch's
    table has thousands of rows; a model each cost ~7x its text)."""

    local_port: str
    device: str | None
    port_id: str | None
    port_id_subtype: str | None = None
    port_description: str | None = None
    chassis_id: str | None = None
    capabilities: str | None = None
    ttl: int | None = None
    management_address: str | None = None
    protocol: str | None = None


@dataclass
class Draft:
    """A neighbor being read; becomes an `LldpNeighbor` once its block or row ends."""

    local_port: str
    line: int
    device: str | None = None
    port_id: str | None = None
    port_id_subtype: str | None = None
    port_description: str | None = None
    chassis_id: str | None = None
    capabilities: list[str] = field(default_factory=list)
    capabilities_text: str | None = None
    ttl: int | None = None
    management_address: str | None = None
    protocol: str | None = None

    def empty(self) -> bool:
        """True when nothing but the local port was read (a block cut off by truncation)."""
        return self.device is None and self.port_id is None and self.chassis_id is None

    def build(self) -> Neighbor:
        """The finished neighbor."""
        caps = self.capabilities_text
        if caps is None and self.capabilities:
            caps = ", ".join(self.capabilities)
        return Neighbor(local_port=self.local_port, device=self.device, port_id=self.port_id,
                        port_id_subtype=self.port_id_subtype,
                        port_description=self.port_description, chassis_id=self.chassis_id,
                        capabilities=caps, ttl=self.ttl,
                        management_address=self.management_address, protocol=self.protocol)


class NeighborRows(Protocol):
    """Neighbors a reader keeps in its own form (EOS keeps its rows' lines: `EosRows`), counted and
    iterated, never held as tuples."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Neighbor]: ...


@dataclass
class Result:
    """What a layout reader found."""

    flavor: Flavor
    view: str
    neighbors: list[Neighbor] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    total: int | None = None
    rows: NeighborRows | None = None
    """The neighbors instead of `neighbors`, where a reader keeps them as their lines."""

    def all(self) -> list[Neighbor] | NeighborRows:
        """Every neighbor read."""
        return self.rows if self.rows is not None else self.neighbors


def value_of(text: str | None) -> str | None:
    """A printed value, or None for N/A, `-`, empty and NX-OS's `not advertised`."""
    if text is None:
        return None
    text = text.strip()
    if is_missing(text) or text.lower() in ("not advertised", "(none)"):
        return None
    return text


def first_int(text: str | None) -> int | None:
    """The first integer in `120 seconds`, `120`; None when there is none."""
    match = re.search(r"\d+", text or "")
    return int(match.group()) if match else None


def first(lines: list[str], pattern: re.Pattern[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if pattern.match(line)), None)


def header_index(lines: list[str], pattern: re.Pattern[str]) -> int:
    index = first(lines, pattern)
    assert index is not None  # _choose picked this reader because the header is there
    return index


def tokens_of(line: str) -> list[re.Match[str]]:
    return list(re.finditer(r"\S+", line))


def finish_block(draft: Draft | None, result: Result) -> None:
    if draft is None:
        return
    if draft.empty():
        result.warnings.append(f"line {draft.line}: neighbor block of {draft.local_port} has no "
                               "chassis or port lines (truncated?); skipped")
        return
    result.neighbors.append(draft.build())


def table_rows(lines: list[str], header: int) -> Iterator[tuple[int, str | None, str]]:
    """(line number, kind, text) after a header: kind `underline`, `row`, `end` (footer dashes,
    a total, a prompt) or `elided`."""
    seen_row = False
    for index in range(header + 1, len(lines)):
        line = lines[index]
        if not line.strip():
            continue
        if TOTAL.match(line):
            yield index + 1, "total", line
            return
        if DASHES.match(line):
            if not seen_row and index == _next_nonblank(lines, header):
                yield index + 1, "underline", line
                continue
            yield index + 1, "end", line
            continue
        if _ELIDED.match(line):
            yield index + 1, "elided", line
            continue
        if _PROMPT.match(line):
            return
        seen_row = True
        yield index + 1, "row", line


def _next_nonblank(lines: list[str], index: int) -> int:
    for i in range(index + 1, len(lines)):
        if lines[i].strip():
            return i
    return len(lines)


@dataclass
class _Columns:
    """Where each column of a table starts, and which neighbor field it fills."""

    starts: list[int]
    fields: list[str | None]

    def cells(self, line: str) -> list[str]:
        """The row's cells: sliced at the column starts, else split on wide gaps."""
        if self._slices_cleanly(line):
            bounds = [*self.starts[1:], max(len(line), self.starts[-1]) + 1]
            return [line[start:end].strip() for start, end in zip(self.starts, bounds, strict=True)]
        cells = [""] * len(self.starts)
        for match in re.finditer(r"\S+(?: \S+)*", line):
            column = min(range(len(self.starts)),
                         key=lambda i: abs(self.starts[i] - match.start()))
            cells[column] = f"{cells[column]}  {match.group()}".strip()
        return cells

    def _slices_cleanly(self, line: str) -> bool:
        """False when a column start falls inside a word (a misaligned row)."""
        for start in self.starts[1:]:
            if 0 < start < len(line) and line[start - 1] != " " and line[start] != " ":
                return False
        return True


def _columns(header: str, underline: str | None, names: dict[str, str]) -> _Columns:
    """Column starts from the dash segments under the header when they match its labels, else
    from the labels (tabulate right-aligns numeric columns, so the dashes are the better guide)."""
    labels = [(m.start(), m.group()) for m in _CELL.finditer(header)]
    starts = [start for start, _ in labels]
    if underline is not None:
        segments = [m.start() for m in re.finditer(r"-+", underline)]
        if len(segments) == len(labels):
            starts = segments
    fields = [names.get(label.lower()) for _, label in labels]
    return _Columns(starts, fields)


def read_column_table(lines: list[str], header: int, names: dict[str, str],
                      fixed: dict[str, str] | None = None) -> tuple[list[Draft], list[str],
                                                                    int | None, bool]:
    """Rows of a column table as drafts, warnings, the printed total, and whether the table
    reached its footer."""
    drafts: list[Draft] = []
    warnings: list[str] = []
    total = None
    footer = False
    underline = None
    columns = None
    ended = False
    for number, kind, line in table_rows(lines, header):
        if kind == "underline":
            underline = line
            continue
        if kind == "total":
            total = int(TOTAL.match(line).group(1))  # type: ignore[union-attr]
            footer = True
            break
        if kind == "end":
            footer = ended = True
            continue
        if kind == "elided":
            warnings.append(f"line {number}: rows elided (`...`)")
            continue
        if ended:
            break
        if columns is None:
            columns = _columns(lines[header], underline, names)
        draft = _row_draft(columns, line, number, fixed or {})
        if draft is None:
            warnings.append(f"line {number}: unrecognised row skipped: {line.strip()[:80]}")
        elif draft is not _NO_NEIGHBOR:
            drafts.append(draft)
    return drafts, warnings, total, footer


_NO_NEIGHBOR = Draft(local_port="", line=0)


def _row_draft(columns: _Columns, line: str, number: int, fixed: dict[str, str]) -> Draft | None:
    """A draft from one row; None when it has no local port; `_NO_NEIGHBOR` for a port row
    without any neighbor (NVUE lists those)."""
    values: dict[str, str | None] = dict(fixed)
    for name, cell in zip(columns.fields, columns.cells(line), strict=True):
        if name is not None:
            values[name] = value_of(cell)
    local = values.get("local_port")
    if not local:
        return None
    if values.get("device") is None and values.get("port_id") is None:
        return _NO_NEIGHBOR
    return Draft(local_port=local, line=number, device=values.get("device"),
                 port_id=values.get("port_id"), port_description=values.get("port_description"),
                 capabilities_text=values.get("capabilities"),
                 management_address=values.get("management_address"),
                 ttl=first_int(values.get("ttl")))
