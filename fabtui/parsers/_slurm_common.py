"""What the Slurm parsers share: host lists, GRES strings, CPU id lists, missing values.

What a few bytes of output stand for is bounded: a GRES string lists at most
`MAX_GPU_INDEXES` GPUs (`IDX:0-99999999` is refused, not expanded), and the node lists of one
output expand to at most `MAX_LISTED_HOSTS` names together (`fabtui.hostlist` already refuses
one list of more than 100,000; a thousand such lines are a few kilobytes). Past that a list is
kept as printed, with no names, and a warning says why.
"""

from __future__ import annotations

import re

from fabtui.hostlist import HostlistError, expand

MAX_GPU_INDEXES = 1_024
"""Most GPU indexes one node's GRES may list. The densest real nodes hold 8 GPUs (HGX, DGX),
16 (HGX-2, DGX-2) or 20 (single-width cards in a 10-slot PCIe chassis): fifty times that."""
MAX_LISTED_HOSTS = 1_000_000
"""Most host names the node lists of one output may expand to together. The largest Slurm
clusters have 10,000-20,000 nodes (Frontier: 9,408); a listing of every job on one names a
node a few times (the job's `NodeList` and its `-d` detail lines): over fifteen times that."""

_GPU_GRES = re.compile(r"(?:^|,)gpu(?::[^,(]*)*\((?:IDX:)?([^)]*)\)")
_NO_VALUE = frozenset({"", "(null)", "none", "none assigned", "n/a", "unknown"})


def missing(value: str | None) -> bool:
    """True for the ways Slurm prints "nothing": `(null)`, `None`, `N/A`, `None assigned`, empty."""
    return value is None or value.strip().lower() in _NO_VALUE


def text_or_none(value: str | None) -> str | None:
    """`value` stripped, or None when Slurm printed no value."""
    return None if value is None or missing(value) else value.strip()


class TooLarge(ValueError):
    """A value that stands for more than any cluster holds (the message says how much)."""


class HostBudget:
    """The host names the node lists of one output may still expand to (`MAX_LISTED_HOSTS`);
    a parser makes one per reading of its input."""

    def __init__(self) -> None:
        self.left = MAX_LISTED_HOSTS


def hosts(nodelist: str | None, warnings: list[str], where: str,
          budget: HostBudget) -> tuple[str | None, list[str]]:
    """(host list, its host names) of a `NodeList`-like value; a list that does not expand,
    or would take the output past its `budget`, is kept as printed, with no names, and noted
    in `warnings`."""
    text = text_or_none(nodelist)
    if text is None:
        return None, []
    try:
        names = expand(text)
    except HostlistError as exc:
        warnings.append(f"{where}: node list not expanded: {exc}")
        return text, []
    if len(names) > budget.left:
        warnings.append(f"{where}: node list not expanded: the output's node lists stand for "
                        f"more than {MAX_LISTED_HOSTS:,} host names together")
        budget.left = 0
        return text, []
    budget.left -= len(names)
    return text, names


def count_ids(text: str | None) -> int | None:
    """How many ids `0-3,16-19` lists (None when it is empty or cut short, like `115-`)."""
    if text is None or not text.strip():
        return None
    total = 0
    for item in text.strip().split(","):
        low, sep, high = item.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            return None
        total += int(high) - int(low) + 1 if sep else 1
    return total


def ids(text: str) -> list[int]:
    """`0,2-3,5` -> [0, 2, 3, 5]; anything unreadable -> []."""
    found: list[int] = []
    for item in text.split(","):
        low, sep, high = item.strip().partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            return []
        found += list(range(int(low), int(high) + 1)) if sep else [int(low)]
    return found


def gpu_ids(gres: str | None) -> list[int]:
    """The GPU indexes a per-node GRES string holds: `gpu:a100:2(IDX:0-1)` -> [0, 1];
    `gg:g0(CNT:1),gpu:1(IDX:3)` -> [3]; `gpu(IDX:0,2-3,5)` -> [0, 2, 3, 5]. Raises `TooLarge`
    for more than `MAX_GPU_INDEXES`, counted before any is listed."""
    if not gres:
        return []
    found: list[int] = []
    listed = 0
    for match in _GPU_GRES.finditer(gres):
        inner = match.group(1)
        if not inner.startswith("CNT:"):
            listed += count_ids(inner) or 0
            if listed > MAX_GPU_INDEXES:
                raise TooLarge(f"lists {listed:,} GPU indexes on one node; no node holds more "
                               f"than {MAX_GPU_INDEXES:,}")
            found += ids(inner)
    return sorted(set(found))


def quoted(text: str, limit: int = 80) -> str:
    """`text` for a message, cut at `limit` characters (an output's value can be megabytes)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"
