"""Slurm-style host lists (`node[001-128,200]`, `gpu-a[01-04]-b[1-2]`): the one place fabtui reads
and writes them.

ClusterShell's `NodeSet` does the work (the hostlist implementation HPC sites keep up, the one
`clush` and many Slurm tools use); this module puts a small, typed face on it, turns its errors into
`HostlistError` with a message a user can act on, and refuses ranges so large that expanding them
would exhaust memory (NodeSet builds every index of a range before it can count them). Globs
(`node00*`) are not host lists: callers that accept them match them themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_HOSTS = 100_000
"""The most names one expression may stand for (a typo like `node[1-100000000]` is refused)."""

_RANGE = re.compile(r"\[([^\[\]]*)\]")
_GLOB = re.compile(r"[*?]")


class HostlistError(ValueError):
    """An expression that is not a host list; the message names the expression and the fault."""


def _size(text: str) -> int:
    """How many names the bracket ranges of `text` stand for, counted without expanding them."""
    total = 0
    for part in _split(text):
        count = 1
        for inner in _RANGE.findall(part):
            width = 0
            for item in inner.split(","):
                low, sep, high = item.strip().partition("-")
                if sep and low.isdigit() and high.isdigit():
                    if int(high) < int(low):
                        raise HostlistError(f"{text!r}: the range {item.strip()} runs backwards")
                    width += int(high) - int(low) + 1
                else:
                    width += 1
            count *= max(width, 1)
        total += count
    return total


def _split(text: str) -> list[str]:
    """Split at commas outside brackets: `a[1,2],b` -> `a[1,2]`, `b`."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def expand(expression: str) -> list[str]:
    """Every host name `expression` stands for, in NodeSet's order (sorted by name and index,
    each once). Raises `HostlistError` for a malformed expression, a glob, or one over
    `MAX_HOSTS` names."""
    from ClusterShell.NodeSet import NodeSet, NodeSetException

    text = expression.strip()
    if not text:
        return []
    if _GLOB.search(text):
        raise HostlistError(f"{expression!r}: a glob is not a host list")
    if any(c.isspace() for c in text):
        raise HostlistError(f"{expression!r}: a host list has no spaces")
    try:
        if _size(text) > MAX_HOSTS:
            raise HostlistError(f"{expression!r}: stands for more than {MAX_HOSTS} hosts")
        return [str(name) for name in NodeSet(text)]
    except HostlistError:
        raise
    # ValueError: NodeSet's own for some ranges (`a[--]1`), and int()'s for a number of
    # thousands of digits; neither is a NodeSetException.
    except (NodeSetException, ValueError) as exc:
        raise HostlistError(f"{expression!r}: {exc}") from None


def fold(names: Iterable[str]) -> str:
    """The compressed host list of `names` (`node001,node002,node004` -> `node[001-002,004]`);
    empty for none. Raises `HostlistError` for a name NodeSet cannot hold (a bracket, a glob)."""
    from ClusterShell.NodeSet import NodeSet, NodeSetException

    listed = [n.strip() for n in names if n.strip()]
    for name in listed:
        if _GLOB.search(name) or "[" in name or "]" in name or "," in name:
            raise HostlistError(f"{name!r}: not a host name")
    try:
        return str(NodeSet.fromlist(listed)) if listed else ""
    except NodeSetException as exc:
        raise HostlistError(f"{listed!r}: {exc}") from None


def is_hostlist(text: str) -> bool:
    """True when `text` uses host-list syntax (a bracket range or a comma list)."""
    return bool(_RANGE.search(text)) or "," in text
