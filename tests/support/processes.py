"""The processes a test left behind: a /proc scan of this process's descendants."""

from __future__ import annotations

import os
from pathlib import Path


def descendants(*, zombies: bool = True) -> set[int]:
    """Pids of every process below this one; `zombies=False` leaves out the exited ones that
    are merely not reaped yet (they hold no resources and run nothing)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if zombies or fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found
