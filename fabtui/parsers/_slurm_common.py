"""What the Slurm parsers share: host lists, GRES strings, CPU id lists, missing values."""

from __future__ import annotations

import re

from fabtui.hostlist import HostlistError, expand

_GPU_GRES = re.compile(r"(?:^|,)gpu(?::[^,(]*)*\((?:IDX:)?([^)]*)\)")
_NO_VALUE = frozenset({"", "(null)", "none", "none assigned", "n/a", "unknown"})


def missing(value: str | None) -> bool:
    """True for the ways Slurm prints "nothing": `(null)`, `None`, `N/A`, `None assigned`, empty."""
    return value is None or value.strip().lower() in _NO_VALUE


def text_or_none(value: str | None) -> str | None:
    """`value` stripped, or None when Slurm printed no value."""
    return None if value is None or missing(value) else value.strip()


def hosts(nodelist: str | None, warnings: list[str], where: str) -> tuple[str | None, list[str]]:
    """(host list, its host names) of a `NodeList`-like value; a list that does not expand
    is kept as printed, with no names, and noted in `warnings`."""
    text = text_or_none(nodelist)
    if text is None:
        return None, []
    try:
        return text, expand(text)
    except HostlistError as exc:
        warnings.append(f"{where}: node list not expanded: {exc}")
        return text, []


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
    `gg:g0(CNT:1),gpu:1(IDX:3)` -> [3]; `gpu(IDX:0,2-3,5)` -> [0, 2, 3, 5]."""
    if not gres:
        return []
    found: list[int] = []
    for match in _GPU_GRES.finditer(gres):
        inner = match.group(1)
        if not inner.startswith("CNT:"):
            found += ids(inner)
    return sorted(set(found))
