"""Named counters held compactly, for captures that print millions of them.

A `dict[str, int]` costs ~150 bytes a counter in CPython (the name's string object, the int,
the table slot): 485 MB for the 3.3 million counters of 100 MB of `ethtool -S` text, against
the 3x-input memory rule of `fabtui parse`. `CounterTable` keeps the names as newline-joined
text, one string per block of lines, and the values in an `array` of 64-bit integers: about the
capture's own size. It has the semantics of filling a dict in order (a name printed twice keeps
its first place and its last value), resolved once the table is complete (`finish`).

It is written, never looked up: `fabtui parse` streams it out as JSON (`batches`), and a
parser's model gets a plain dict (`to_dict`) where the tables are of a real NIC's size.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

_BLOCK = 4096
"""Names per block of joined text (and entries per batch written)."""
_SMALL = 65536
"""Up to this many names, duplicates are found with a dict; past it, by hashes in numpy."""
_SPILLED = -(2**63)
"""The stored value of a counter beyond 64-bit signed range (kept in `_overflow`)."""


class CounterTable:
    """Counter name -> integer in first-seen order, built by `add` and closed by `finish`."""

    def __init__(self) -> None:
        self._blocks: list[str] = []
        self._pending: list[str] = []
        self._values = array("q")
        self._overflow: dict[int, int] = {}
        self._dropped: set[int] = set()
        """Positions of names printed again later: their value moved to the first place."""
        self._finished = False

    def add(self, name: str, value: int) -> None:
        """Record `name` = `value` (a later `add` of the same name wins). `name` has no newline."""
        position = len(self._values)
        if -(2**63) < value < 2**63:
            self._values.append(value)
        else:
            self._values.append(_SPILLED)
            self._overflow[position] = value
        self._pending.append(name)
        if len(self._pending) == _BLOCK:
            self._blocks.append("\n".join(self._pending))
            self._pending = []

    def finish(self) -> CounterTable:
        """Close the table: resolve names printed more than once. Returns the table."""
        if self._finished:
            return self
        if self._pending:
            self._blocks.append("\n".join(self._pending))
            self._pending = []
        self._finished = True
        if len(self._values) <= _SMALL:
            first: dict[str, int] = {}
            for position, name in enumerate(self._names()):
                self._merge(first.setdefault(name, position), position)
        else:
            self._merge_by_hash()
        return self

    def __len__(self) -> int:
        return len(self._values) - len(self._dropped)

    def batches(self) -> Iterator[dict[str, int]]:
        """The counters in order, as dicts of at most one block each (what a writer encodes
        without holding the whole table as objects)."""
        self.finish()
        position = 0
        for block in self._blocks:
            names = block.split("\n")
            batch: dict[str, int] = {}
            for name in names:
                if position not in self._dropped:
                    batch[name] = self._value(position)
                position += 1
            yield batch

    def items(self) -> Iterator[tuple[str, int]]:
        """(name, value) in order."""
        for batch in self.batches():
            yield from batch.items()

    def to_dict(self) -> dict[str, int]:
        """The table as a plain dict (for a model; costs what a dict costs)."""
        return dict(self.items())

    def _names(self) -> Iterator[str]:
        for block in self._blocks:
            yield from block.split("\n")

    def _value(self, position: int) -> int:
        value = self._values[position]
        return self._overflow[position] if value == _SPILLED else value

    def _merge(self, keep: int, later: int) -> None:
        """The name at `later` repeats the one at `keep`: its value goes there, it is dropped."""
        if keep == later:
            return
        self._values[keep] = self._values[later]
        if later in self._overflow:
            self._overflow[keep] = self._overflow[later]
        self._dropped.add(later)

    def _merge_by_hash(self) -> None:
        # numpy holds one 8-byte hash a name: a set or dict of the names would cost what the
        # table saves. Equal hashes are checked on the names themselves.
        import numpy as np

        count = len(self._values)
        hashes = np.fromiter((hash(name) for name in self._names()), dtype=np.int64, count=count)
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
        del hashes
        repeats = np.flatnonzero(ordered[1:] == ordered[:-1])
        if not repeats.size:
            return
        suspects = sorted({int(order[i]) for i in repeats} | {int(order[i + 1]) for i in repeats})
        names = self._names_at(suspects)
        first: dict[str, int] = {}
        for position in suspects:  # ascending: the first place is seen first
            self._merge(first.setdefault(names[position], position), position)

    def _names_at(self, positions: list[int]) -> dict[int, str]:
        wanted = set(positions)
        return {position: name for position, name in enumerate(self._names())
                if position in wanted}
