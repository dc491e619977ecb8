"""Letting time pass on the devices between a probe's readings.

On real devices the time really passes: the runner sleeps the probe's interval. On the
simulated fabric its clock is moved on instead, for the commands of the current asyncio task
only (`SKEW`, a context variable: concurrent probes each see their own), so a counter's two
readings lie the interval apart on the simulated clock while no real time is spent.
"""

from __future__ import annotations

from contextvars import ContextVar

SKEW: ContextVar[float] = ContextVar("fabtui_sim_skew", default=0.0)
"""Seconds the simulated devices' clock runs ahead for this task's commands."""


def advance(seconds: float) -> None:
    """Move the simulated clock on by `seconds` for this task's next commands."""
    SKEW.set(SKEW.get() + seconds)
