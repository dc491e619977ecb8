"""The live view's status source that polls probes: each configured `probe@targets` item swept
through the workspace's fan-out (`Workspace.sweep`), one sweep per item, each round.

A plan item that cannot run (an unknown probe, a set that matches nothing, a dangerous probe,
which the poller never runs unattended) is a note the header shows, not a failure.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabtui.views.poller import PlanItem
from fabtui.views.updates import Results, StatusUpdate

if TYPE_CHECKING:
    from fabtui.workspace.core import Workspace


@dataclass
class ProbeSource:
    """Runs the plan's probes through the workspace fan-out, one sweep per plan item."""

    workspace: Workspace
    plan: Sequence[PlanItem]
    interval: float
    target_timeout: float | None = None
    notes: list[str] = field(default_factory=list)
    """Plan items that cannot run (an unknown probe, a set that matches nothing)."""

    last_round_s: float | None = None
    """How long the last whole poll took (None before the first ended)."""

    async def poll(self) -> AsyncGenerator[StatusUpdate, None]:
        from fabtui.errors import RequestError

        self.notes.clear()
        started = time.monotonic()
        # A reading is renewed one poll period later: the interval plus the time a poll takes.
        # Stale means two periods went by without it (before the first poll ended, the probe's
        # timeout stands in for the poll's length).
        period = self.interval + (self.last_round_s if self.last_round_s is not None
                                  else self.target_timeout or 60.0)
        stale_after = 2 * period
        for item in self.plan:
            try:
                definition = self.workspace.probe(item.probe)
                targets = self.workspace.sweep_targets(item.probe, item.targets)
            except RequestError as exc:
                self.notes.append(f"{item.probe}@{item.targets}: {exc}")
                continue
            if definition.danger:  # it changes state: never run unattended, every round
                self.notes.append(f"{item.probe}@{item.targets}: not polled: the probe changes "
                                  "state on its target (danger); run it from the console")
                continue
            if targets is None:
                from fabtui.probes.targets import resolve

                targets = [resolve(self.workspace.graph(), item.targets, definition.target)]
            flavours = definition.command.cli
            if flavours:  # switch probes: only the switches the probe has a command for
                targets = [t for t in targets if t.switch is None or
                           t.switch.flavor.value in flavours]
            timeout = self.target_timeout or min(definition.timeout, 3 * self.interval + 10)
            async with contextlib.aclosing(self.workspace.sweep(
                    item.probe, targets, {}, target_timeout=timeout)) as stream:
                async for result in stream:
                    yield Results(result, stale_after)
        self.last_round_s = time.monotonic() - started
