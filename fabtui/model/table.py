"""A table as data: named columns and rows of plain values, for any face to draw.

Parsers describe what their results look like as tables (`tables(result)` in each parser
module); the terminal renderer (`fabtui.render.table`) and the TUI draw the same columns. Cells
hold values, not text: a number stays a number so a screen can sort it, `None` means "the tool
printed no value". Nothing here knows about widths or fonts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Align = Literal["left", "right"]
Cell = str | int | float | bool | None
"""One value of a row. `None` is a missing value (drawn as `-`)."""


@dataclass(frozen=True)
class Column:
    """One column: a stable `name` (for code and the TUI), the `title` shown, its alignment."""

    name: str
    title: str | None = None
    """The heading drawn above the column; the name when None (`""` draws none)."""
    align: Align = "left"
    """Numbers are usually right-aligned so their digits line up."""

    @property
    def heading(self) -> str:
        """The text drawn above the column."""
        return self.name if self.title is None else self.title


def left(name: str, title: str | None = None) -> Column:
    """A left-aligned column (text)."""
    return Column(name, title, "left")


def right(name: str, title: str | None = None) -> Column:
    """A right-aligned column (numbers)."""
    return Column(name, title, "right")


@dataclass(frozen=True)
class Table:
    """Columns, rows, and the lines of context drawn above (`title`) and below (`notes`).

    A table without columns is only its title and notes: a summary with nothing to tabulate.
    Raises ValueError when a row has not one cell per column.
    """

    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...] = ()
    title: tuple[str, ...] = ()
    """Summary lines shown above the column headings (tool version, run status, ...)."""
    notes: tuple[str, ...] = field(default=())
    """Lines shown below the rows (totals, messages that belong to no one row)."""

    def __post_init__(self) -> None:
        for number, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {number} has {len(row)} cells for "
                                 f"{len(self.columns)} columns")

    @classmethod
    def build(cls, columns: Sequence[Column], rows: Iterable[Sequence[Cell]] = (),
              title: Iterable[str] = (), notes: Iterable[str] = ()) -> Table:
        """A table from lists (stored as tuples, so a table is immutable)."""
        return cls(tuple(columns), tuple(tuple(row) for row in rows), tuple(title),
                   tuple(notes))

    def column(self, name: str) -> list[Cell]:
        """Every cell of the column called `name`; KeyError when there is none."""
        for index, col in enumerate(self.columns):
            if col.name == name:
                return [row[index] for row in self.rows]
        raise KeyError(name)
