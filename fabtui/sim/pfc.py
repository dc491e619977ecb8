"""Priority flow control: PFC storms and the pause they spread, mlx5's stall prevention, SONiC's
PFC watchdog, and PFC deadlocks.

Pause follows link speed (a fully paused port receives one maximum-quanta frame per 65535 x 512
bit times), a storming NIC pauses until mlx5 stall prevention gives up on its receiver, and
SONiC's watchdog storms a queue held paused for its detection time. docs/thresholds.md
(section 7) gives the source of each rule.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from fabtui.model.element import device_of
from fabtui.model.topology import Flavor, Role
from fabtui.sim.base import INF
from fabtui.sim.faults import Fault
from fabtui.sim.links import LinkLayer
from fabtui.sim.scenario import FaultKind
from fabtui.topology.expected import pause_frame_hold_s
from fabtui.topology.headroom import XON, xoff_needed

STALL_PREVENTION_S = 8.0
"""mlx5 PFC stall prevention: a receiver stalled this long stops sending pause (the critical
timeout's maximum and default, MLX5E_PFC_PREVEN_TOUT_MAX_MSEC 8000 in the kernel's
en_ethtool.c); the warning event fires at 85 % of it (MLX5E_PFC_PREVEN_MINOR_PRECENT)."""
PFCWD_DETECTION_S = PFCWD_RESTORATION_S = 0.2
"""SONiC pfcwd defaults: detection and restoration time 200 ms (sonic-utilities pfcwd)."""

INTERFERENCE_PAUSE_PER_S = 3000.0
"""Pause frames/s a leaf sends each host when another job congests it with ECN off: a share of
~0.25 of the time at 400G (warns) [inference]."""

DCQCN_PAUSE_PER_S = 300.0
"""Pause frames/s a leaf still sends each host under another job's congestion while ECN marks:
~0.025 of the time at 400G, well under the warn limit [inference]."""


class PfcLayer(LinkLayer):
    """Pause frames on every port, storms, the watchdog's view and deadlock loops.

    Reads `faults`, `topology`, `graph` and the link layer (up/down, speed, which leaf a link
    hangs off, host or switch link). Fills the cache `_cycles` (each deadlock's loop)."""

    def switch_setting(self, switch: str | None, name: str, t: float) -> Any:
        """The value a misconfig fault gives switch-wide setting `name` on `switch` at `t`, or
        None (the healthy default; fabtui/sim/misconfig.py prints the settings)."""
        for fault in self.faults:
            if fault.kind is FaultKind.MISCONFIG and fault.switch == switch and \
                    fault.spec.params.get("setting") == name and fault.active(t):
                return fault.spec.params.get("value")
        return None

    def ecn_marking(self, switch: str | None, t: float) -> bool:
        """False where `switch`'s lossless WRED profile marks nothing at `t` (a misconfig
        `ecn: ecn_none`, SONiC's WRED_PROFILE `ecn` field): its queues then build until PFC
        pauses instead of DCQCN slowing the senders."""
        return self.switch_setting(switch, "ecn", t) not in ("ecn_none", "off")

    def headroom_overflow(self, switch: str, link: int, t: float) -> int:
        """Bytes that overflow the lossless PG of `switch`'s port on `link` after each XOFF:
        what its cable really holds in flight (the topology's `length_m`) beyond the xoff of
        the profile the switch configured (its CABLE_LENGTH, or a misconfigured
        `headroom_kb`); 0 where the topology gives no length."""
        length = self.topology.links[link].length_m
        if length is None:
            return 0
        speed = self.link_speed(link)
        size = self.switch_setting(switch, "headroom_kb", t)
        stale = self.switch_setting(switch, "cable_length_m", t)
        have = int(size) * 1024 - XON if size is not None else \
            xoff_needed(speed, float(stale) if stale is not None else math.ceil(length))
        return max(0, xoff_needed(speed, length) - have)

    def storming(self, t: float) -> list[Fault]:
        """PFC storms whose NIC is sending pause at `t` (stall prevention not yet fired)."""
        return [f for f in self.faults if f.kind is FaultKind.PFC_STORM and
                self.storm_pause_window(f)[0] <= t < self.storm_pause_window(f)[1]]

    def storm_pause_window(self, fault: Fault) -> tuple[float, float]:
        """When a storming NIC actually sends pause: from the fault's start until mlx5's PFC
        stall prevention gives up on its stalled receiver (`stall_prevention_s`, default
        8 s; 0 is prevention turned off, `ethtool --set-tunable IF pfc-prevention-tout 0`),
        or the fault's end."""
        end = fault.spec.until if fault.spec.until is not None else INF
        stall = self.stall_timeout(fault)
        return fault.spec.at, min(end, fault.spec.at + stall) if stall > 0 else end

    @staticmethod
    def stall_timeout(fault: Fault) -> float:
        """Seconds mlx5 lets its receiver stall while pausing before it stops (0: never)."""
        return float(fault.spec.params.get("stall_prevention_s", STALL_PREVENTION_S))

    @staticmethod
    def pfcwd_on(fault: Fault) -> bool:
        """Whether the storming NIC's leaf runs its PFC watchdog on the storm's queue (param
        `pfcwd: false`: not running there, never started or stopped by an operator; the pause
        then spreads up the fabric until the NIC stops)."""
        return fault.spec.params.get("pfcwd", True) is not False

    def watchdog_drops(self, fault: Fault) -> tuple[float, float] | None:
        """When the storming NIC's leaf runs SONiC's PFC watchdog (action drop), the window in
        which it has stormed the NIC's lossless queue: from the detection time after the pause
        began until the restoration time after it stopped. In it the leaf ignores the NIC's
        pause and drops that queue's traffic both ways, so nothing spreads and nothing is
        delivered (sonic-utilities pfcwd; SONiC PFC watchdog design: drop action). None when
        the leaf has no watchdog."""
        leaf = self._leaf_of_link(fault.link or -1)
        switch = self.graph.switches.get(leaf or "")
        if switch is None or switch.flavor is not Flavor.SONIC or not self.pfcwd_on(fault):
            return None
        start, end = self.storm_pause_window(fault)
        if end - start <= PFCWD_DETECTION_S:
            return None
        return start + PFCWD_DETECTION_S, end + PFCWD_RESTORATION_S

    def dropping(self, link: int, t: float) -> bool:
        """True when a PFC watchdog drops the lossless traffic of host link `link` at `t`."""
        for fault in self.faults:
            if fault.kind is FaultKind.PFC_STORM and fault.link == link:
                window = self.watchdog_drops(fault)
                if window is not None and window[0] <= t < window[1]:
                    return True
        return False

    def full_pause_rate(self, link: int) -> float:
        """Pause frames/s that hold a priority paused all the time at the link's speed (one
        frame of 65535 quanta holds it 65535 x 512 bit times): ~11.9k at 400G, ~3k at 100G."""
        return 1.0 / pause_frame_hold_s(self.link_speed(link))

    def pause_rates(self, device: str, port: str, link: int, t: float) -> tuple[float, float]:
        """(received, sent) PFC pause frames per second on priority 3 at `device:port`."""
        rx = tx = 0.0
        for fault in self.faults:
            if fault.kind is FaultKind.PFC_STORM:
                start, end = self.storm_pause_window(fault)
                if not start <= t < end or not self.link_up(fault.link or -1, t):
                    continue
                storm_host, storm_leaf = fault.host, self._leaf_of_link(fault.link or -1)
                if link == fault.link:
                    full = self.full_pause_rate(link)
                    if device == storm_host:
                        tx += full  # the NIC keeps its receiver paused: the storm itself
                    else:
                        rx += full  # the leaf port facing it receives every pause frame
                elif self._spreading(fault, t) and device == storm_leaf:
                    # The leaf cannot drain toward the storming host: it pauses its other ports
                    # until its watchdog storms the queue and drops what it holds.
                    tx += 2000.0 if not self._is_host_link(link) else 600.0
                elif self._spreading(fault, t) and self._leaf_of_link(link) == storm_leaf:
                    rx += 2000.0 if not self._is_host_link(link) else 600.0
            elif fault.kind is FaultKind.INTERFERENCE and fault.active(t) and \
                    self._is_host_link(link) and self._leaf_of_link(link) == fault.switch:
                # Another job congests the leaf's uplinks. DCQCN (ECN marks) keeps the lossless
                # PGs mostly below XOFF: a little pause. With nothing marking ECN the PGs fill
                # to XOFF and the leaf pauses its hosts a quarter of the time at 400G
                # [inference].
                rate = INTERFERENCE_PAUSE_PER_S if not self.ecn_marking(fault.switch, t) \
                    else DCQCN_PAUSE_PER_S
                if device == fault.switch:
                    tx += rate
                else:
                    rx += rate
            elif fault.kind is FaultKind.PFC_DEADLOCK and fault.active(t):
                for waiter, holder, cycle_link in self.deadlock_cycle(fault):
                    if cycle_link == link:
                        full = self.full_pause_rate(link)
                        rx += full if device == waiter else 0.0
                        tx += full if device == holder else 0.0
                leaves = {w for w, _, _ in self.deadlock_cycle(fault)
                          if self.graph.switches[w].role is Role.LEAF}
                if self._is_host_link(link) and self._leaf_of_link(link) in leaves:
                    # The stuck leaf pauses its hosts too; they receive pause, send none.
                    if device in leaves:
                        tx += 600.0
                    else:
                        rx += 600.0
        return rx, tx

    def _spreading(self, fault: Fault, t: float) -> bool:
        """True while a storm's pause spreads from its leaf (no watchdog has stormed it)."""
        window = self.watchdog_drops(fault)
        return window is None or not window[0] <= t < window[1]

    def deadlock_cycle(self, fault: Fault) -> list[tuple[str, str, int]]:
        """(waiter, holder, link) around a PFC deadlock's loop: `waiter` cannot send to
        `holder` on `link` because `holder` pauses it, and so on back to the start
        (leaf -> via spine -> to leaf -> back spine -> leaf)."""
        cached = self._cycles.get(id(fault))
        if cached is not None:
            return cached
        params = fault.spec.params
        hops = [fault.switch or "", str(params.get("via", "")), str(params.get("to", "")),
                str(params.get("back", ""))]
        cycle = []
        for waiter, holder in itertools.pairwise([*hops, hops[0]]):
            link = next((index for index in self.graph.uplinks(waiter) +
                         self.graph.downlinks(waiter)
                         if holder in {device_of(e) for e in
                                       (self.topology.links[index].a,
                                        self.topology.links[index].b)}), None)
            if link is not None:
                cycle.append((waiter, holder, link))
        self._cycles[id(fault)] = cycle
        return cycle

    def pfcwd_windows(self, switch: str, port: str,
                      t: float) -> list[tuple[float, float | None]]:
        """(detected, restored) storms SONiC's PFC watchdog saw on the lossless queue of
        `switch:port` up to `t`: a queue held paused for the detection time (200 ms) is
        stormed until pause has stopped for the restoration time (200 ms). Ports that are
        only partly paused (the storm's spread) are never stormed."""
        link = self.real_link(switch, port, t)
        windows: list[tuple[float, float | None]] = []
        for fault in self.faults:
            if fault.kind is FaultKind.PFC_STORM and fault.link == link and \
                    switch == self._leaf_of_link(fault.link or -1):
                if not self.pfcwd_on(fault):
                    continue
                start, end = self.storm_pause_window(fault)
            elif fault.kind is FaultKind.PFC_DEADLOCK and any(
                    w == switch and c == link for w, _, c in self.deadlock_cycle(fault)):
                start = fault.spec.at
                end = fault.spec.until if fault.spec.until is not None else INF
            else:
                continue
            detected = start + PFCWD_DETECTION_S
            if detected <= t and detected < end:
                restored = end + PFCWD_RESTORATION_S
                windows.append((detected, restored if restored <= t else None))
        return windows

    def pause_duration_rate(self, device: str, link: int, t: float) -> tuple[float, float]:
        """(rx, tx) microseconds paused per second: the share of time the port was held."""
        rx, tx = self.pause_rates(device, "", link, t)
        hold = pause_frame_hold_s(self.link_speed(link))
        return min(rx * hold, 1.0) * 0.95e6, min(tx * hold, 1.0) * 0.95e6
