"""Counter deltas and rates between two samples, surviving resets and wraps.

Counters only tell a story as changes over a window: pause frames per second, CNPs per second,
FEC-corrected codewords per second, pre-FEC bit error ratio. Between two reads a counter can also
go *down*: either it wrapped (a 32-bit IB PortCounter passing 2^32, a 48-bit hardware counter) or
somebody cleared it (`sonic-clear counters`, a driver reload, a reboot). A wrap is recognised when
the earlier value sat in the top quarter of the counter's range and the new one is small; anything
else is a reset, and the delta is taken as the new value (what accrued since the reset), never a
negative number or a 2^64-sized spike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

WIDTHS = (32, 48, 64)
"""Counter widths seen in practice: IB PortCounters (32), some ASIC stats (48), most (64)."""


@dataclass(frozen=True)
class Change:
    """How one counter moved between two samples."""

    before: int
    after: int
    delta: int
    rate: float
    """Per second over the window."""
    event: str | None = None
    """`wrap` or `reset` when the counter went down; None otherwise."""


def delta(before: int, after: int, width: int | None = None) -> tuple[int, str | None]:
    """The increase from `before` to `after`, and `wrap` / `reset` if the counter went down."""
    if after >= before:
        return after - before, None
    widths = (width,) if width is not None else WIDTHS
    for bits in widths:
        top = 1 << bits
        if before < top and before >= top - (top >> 2) and after < (top >> 2):
            return top - before + after, "wrap"
    return after, "reset"


def changes(before: Mapping[str, int | None], after: Mapping[str, int | None], interval: float,
            width: int | None = None) -> dict[str, Change]:
    """Changes of every counter present (and numeric) in both samples."""
    if interval <= 0:
        raise ValueError("the interval between samples must be positive")
    result = {}
    for name, new in after.items():
        old = before.get(name)
        if old is None or new is None:
            continue
        amount, event = delta(int(old), int(new), width)
        result[name] = Change(int(old), int(new), amount, amount / interval, event)
    return result


def ratio(numerator: Change | None, denominator: Change | None) -> float | None:
    """Δnumerator / Δdenominator, e.g. pre-FEC BER = Δcorrected bits / Δbits; None if undefined."""
    if numerator is None or denominator is None or denominator.delta <= 0:
        return None
    return numerator.delta / denominator.delta
