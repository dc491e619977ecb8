"""Polling a live status source: the `Poller` (its own thread and event loop; rounds that never
pile up; a failed round shown and retried after a back-off), the poll plan (`probe@targets`
items, `DEFAULT_PLAN`) and what `r` runs on an element now (`on_demand`)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from fabtui.errors import one_line
from fabtui.model.element import Kind
from fabtui.views.fabricmap import FabricMap
from fabtui.views.status import FabricSnapshot, FabricStatus, PollState
from fabtui.views.updates import SourceFailed, StatusSource

RETRY_CAP_S = 60.0
"""The longest wait between tries after failed rounds (the interval when it is longer)."""

DEFAULT_PLAN = ("node.ibstat@node*", "nic.ethtool@node*:*", "switch.pfc@*", "switch.fec@*",
                "switch.dom_all@*", "switch.counters@*", "gpu.smi@node*")
"""What the live view polls when the config names nothing: `probe@target set`.

`node.ibstat` reads every NIC port's state: counters alone (`nic.ethtool`) cannot show a link
that was down before the first poll, as nothing on it moves. One command per node, first in the
round: a single fast read (sysfs), where each ethtool read waits its sampling interval.

It runs every round, as every item does (there is no per-item cadence: a reading not renewed
within two poll periods shows stale): a port that goes down between two ethtool samples and
stays down moves no counter in any later round, and an InfiniBand port held in Init or Armed
(physically up, no subnet manager) moves none at all; the leaf's side (`switch.counters`
`state_down`) shows only where a switch CLI is configured and answers."""


@dataclass(frozen=True)
class PlanItem:
    """One probe over one target set, as the config names it (`probe@targets`)."""

    probe: str
    targets: str

    @classmethod
    def parse(cls, text: str) -> PlanItem:
        probe, sep, targets = text.partition("@")
        if not sep or not probe.strip() or not targets.strip():
            raise ValueError(f"{text!r}: expected probe@targets, e.g. nic.ethtool@node*:*")
        return cls(probe.strip(), targets.strip())


class Poller:
    """Polls a `StatusSource` on an interval on its own thread; see the module docstring."""

    def __init__(self, source: StatusSource, status: FabricStatus, interval: float,
                 emit: Callable[[FabricSnapshot], None], *, batch_s: float = 0.5) -> None:
        self.source = source
        self.status = status
        self.interval = interval
        self.emit = emit
        self.batch_s = batch_s
        """During a round, a snapshot at most this often (then one when the round ends)."""
        self.rounds = 0
        self._stop = threading.Event()
        self._wake = threading.Event()

    def cancel(self) -> None:
        """Stop after the result in hand (the sweep's targets still running are cancelled)."""
        self._stop.set()
        self._wake.set()

    def poll_now(self) -> None:
        """Start the next round at once instead of after the interval."""
        self._wake.set()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        """Poll until cancelled (blocks: call it on a worker thread)."""
        asyncio.run(self._loop())

    def retry_after(self, failures: int) -> float:
        """Seconds to wait after `failures` failed rounds in a row: the interval, doubling with
        each one, at most `RETRY_CAP_S` (or the interval, when that is longer)."""
        return min(self.interval * 2.0 ** min(failures - 1, 32),
                   max(self.interval, RETRY_CAP_S))

    async def _loop(self) -> None:
        note: str | None = None
        round_s: float | None = None
        failures = 0
        while not self._stop.is_set():
            started = time.monotonic()
            self.rounds += 1
            self.emit(self.status.snapshot(self.rounds - 1, PollState.POLLING, round_s, note))
            last_emit = time.monotonic()
            failed: str | None = None
            try:
                async with contextlib.aclosing(self.source.poll()) as stream:
                    async for update in stream:
                        if isinstance(update, SourceFailed):
                            failed = update.reason
                            break
                        self.status.take(update)
                        if self._stop.is_set():
                            return
                        if time.monotonic() - last_emit >= self.batch_s:
                            self.emit(self.status.snapshot(self.rounds - 1, PollState.POLLING,
                                                           round_s, note))
                            last_emit = time.monotonic()
            except Exception as exc:
                # A source is foreign code (see `StatusSource`): its failure is a failed round,
                # shown, never a dead poller. CancelledError and other BaseExceptions go on.
                failed = one_line(exc)
            if failed is not None:
                failures += 1
                wait = self.retry_after(failures)
                self.emit(self.status.snapshot(self.rounds, PollState.FAILED, round_s, note,
                                               failure=failed, retry_s=wait))
            else:
                failures = 0
                wait = self.interval
                round_s = time.monotonic() - started
                notes = getattr(self.source, "notes", None)
                note = "; ".join(notes) if notes else None
                self.emit(self.status.snapshot(self.rounds, PollState.WAITING, round_s, note))
            self._wake.clear()
            if self._stop.is_set():  # cancelled while the round ended: the wake was cleared
                break
            self._wake.wait(wait)  # this loop runs nothing else meanwhile
        self.emit(self.status.snapshot(self.rounds, PollState.STOPPED, round_s, note))


ON_DEMAND = {Kind.NIC: "nic.ethtool", Kind.HOST_LINK: "nic.ethtool", Kind.GPU: "gpu.smi",
             Kind.NODE: "gpu.smi", Kind.PORT: "switch.port_counters", Kind.OPTIC: "switch.dom",
             Kind.LEAF: "switch.pfc", Kind.SPINE: "switch.counters",
             Kind.SPINE_LINK: "switch.port_counters"}
"""The probe `r` runs on an element of each kind."""


def on_demand(fabric: FabricMap, key: str) -> tuple[str, str] | None:
    """(probe, target) to run now on element `key`, or None when there is none for it."""
    ref = fabric.ref(key)
    kind = ref.kind
    if kind is None:
        return None
    probe = ON_DEMAND[kind]
    members = fabric.members.get(key, ())
    if kind is Kind.GPU:
        return probe, ref.device
    if kind is Kind.HOST_LINK:
        nic = next((m for m in members if fabric.kinds.get(m) is Kind.NIC), None)
        return (probe, nic) if nic else None
    if kind in (Kind.OPTIC, Kind.SPINE_LINK):
        port = next((p for p, o in fabric._optic_of_port.items() if o == key), None) \
            if kind is Kind.OPTIC else next((m for m in members
                                             if fabric.kinds.get(m) is Kind.PORT), None)
        return (probe, port) if port else None
    return probe, key
