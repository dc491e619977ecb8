"""Added latency per simulated device, as a slow or congested management network gives.

`FABTUI_SIM_LATENCY` holds a default delay in seconds and per-device overrides, by name or glob:
`0.5` (every device), `0.5,node003=20` (node003 answers after 20 s, the rest after 0.5 s),
`leaf-*=2` (only the leaves are slow). The simulated device programs read it: a node program
waits before it answers its command, a switch session before each reply, so the command's
process is alive (and can be killed) for the whole delay, as a remote command over ssh is.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field

from fabtui.errors import InputError

LATENCY_VAR = "FABTUI_SIM_LATENCY"
_MAX_S = 3600.0


@dataclass(frozen=True)
class Latency:
    """A default delay and per-device overrides (first matching glob wins)."""

    default: float = 0.0
    overrides: tuple[tuple[str, float], ...] = field(default_factory=tuple)

    def of(self, device: str) -> float:
        """Seconds `device` waits before it answers."""
        for pattern, seconds in self.overrides:
            if fnmatch.fnmatchcase(device, pattern):
                return seconds
        return self.default


def parse(text: str) -> Latency:
    """Read a `FABTUI_SIM_LATENCY` value. Raises `InputError` saying what is wrong."""
    default = 0.0
    overrides: list[tuple[str, float]] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = item.rpartition("=")
        seconds = _seconds(value, item)
        if sep:
            if not name.strip():
                raise InputError.single(LATENCY_VAR, None, f"{item!r}: a device name or "
                                       "glob goes before the '='")
            overrides.append((name.strip(), seconds))
        else:
            default = seconds
    return Latency(default, tuple(overrides))


def _seconds(value: str, item: str) -> float:
    try:
        seconds = float(value.strip().removesuffix("s"))
    except ValueError:
        raise InputError.single(LATENCY_VAR, None, f"{item!r}: expected seconds, e.g. "
                               "0.5 or node003=20") from None
    if not 0 <= seconds <= _MAX_S:
        raise InputError.single(LATENCY_VAR, None, f"{item!r}: seconds between 0 and "
                               f"{_MAX_S:g}")
    return seconds


def from_env() -> Latency:
    """The latency configured in the environment (none when unset)."""
    return parse(os.environ.get(LATENCY_VAR, ""))
