"""The `/` filter every view shares: which lines of a list a typed text keeps.

Every word of the text must appear (case-insensitive) in one of a line's cells, so `optic
node003` keeps the lines that mention both; an empty text keeps everything. Pure functions:
the screens call them on their own rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def filter_words(text: str) -> tuple[str, ...]:
    """The words of a typed filter, lower-cased (empty: no filter)."""
    return tuple(text.lower().split())


def keeps(words: Sequence[str], cells: Iterable[object]) -> bool:
    """Whether a line with `cells` is kept by the filter `words` (see the module docstring)."""
    if not words:
        return True
    text = " ".join(str(cell).lower() for cell in cells)
    return all(word in text for word in words)
