"""Link state over time: when each link is down (flaps, a hang's dead cable, a downed uplink, an
operator's shut), its speed, where it goes, and integration of rates over the timeline.

Rates are piecewise constant between the scenario's breakpoints and the link's own down-window
edges; ramps (a degrading optic) are sampled every `_RAMP_STEP` seconds. `integrate` is exact
for that model, so a counter read twice gives the delta a real device would.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence

from fabtui.model.element import device_of
from fabtui.model.topology import Role
from fabtui.sim.base import INF, SimBase
from fabtui.sim.scenario import FaultKind

_RAMP_STEP = 30.0


class LinkLayer(SimBase):
    """Up/down, speed and place of every link, and the timeline's integral.

    Reads `scenario`, `topology`, `graph`, `_by_link`, `_shut`, `_breakpoints`. Fills the caches
    `_windows`, `_window_indexes`, `_host_link`, `_leaf` and `_uplinks`."""

    def down_windows(self, link: int) -> list[tuple[float, float]]:
        """Intervals during which `link` is down (overlapping causes merged: a flap while the
        link is already down is no new event)."""
        if link in self._windows:
            return self._windows[link]
        windows = _merged(self._causes(link, hang=True))
        self._windows[link] = windows
        return windows

    def outages(self, link: int) -> list[tuple[float, float]]:
        """`down_windows` without the hang's dead cable (its job has its own story: it stalls
        and the watchdog fires), merged: what a job on the link rides out or dies of."""
        return _merged(self._causes(link, hang=False))

    def _causes(self, link: int, *, hang: bool) -> list[tuple[float, float]]:
        """Every down window of `link`, cause by cause (they may overlap)."""
        windows: list[tuple[float, float]] = []
        horizon = max(self.scenario.duration, 86400.0)
        for fault in self._by_link.get(link, []):
            spec, params = fault.spec, fault.spec.params
            end = spec.until if spec.until is not None else horizon
            if fault.kind is FaultKind.LINK_FLAP:
                windows += _periodic(spec.at, end, float(params.get("period_s", 60)),
                                     float(params.get("down_s", 5)))
            elif fault.kind is FaultKind.OPTIC_DEGRADING:
                ramp = float(params.get("ramp_s", 1800))
                start = spec.at + float(params.get("flap_after_s", ramp))
                windows += _periodic(start, end, float(params.get("period_s", 120)),
                                     float(params.get("down_s", 10)))
            elif fault.kind in (FaultKind.UPLINK_DOWN, FaultKind.SWITCH_DOWN,
                                FaultKind.CABLE_MISSING) or (
                    hang and fault.kind is FaultKind.NCCL_HANG):
                windows.append((spec.at, spec.until if spec.until is not None else INF))
        windows += self._receiver_down(link)
        windows += self._shut.get(link, [])
        return windows

    def _receiver_down(self, link: int) -> list[tuple[float, float]]:
        """Windows in which a receiver of `link` cannot hold it (the optics layer knows)."""
        return []

    def link_up(self, link: int, t: float) -> bool:
        """Both ends agree: a port down on the leaf is link down on the NIC."""
        if link not in self._by_link:
            return True  # no fault ever touches it
        starts, reach = self._window_index(link)
        begun = bisect.bisect_right(starts, t)
        return not (begun and reach[begun - 1] > t)

    def down_events(self, link: int, t: float) -> int:
        """Link-down transitions up to `t`."""
        return bisect.bisect_right(self._window_index(link)[0], t)

    def _window_index(self, link: int) -> tuple[list[float], list[float]]:
        """`down_windows(link)`'s starts, and the latest end of the windows up to each: a
        flapping link has a window a minute for a day, scanned on every reading otherwise."""
        index = self._window_indexes.get(link)
        if index is None:
            windows = self.down_windows(link)
            index = ([start for start, _ in windows],
                     list(itertools.accumulate((end for _, end in windows), max)))
            self._window_indexes[link] = index
        return index

    # integration -----------------------------------------------------------------------------
    def segments(self, t: float, link: int | None = None,
                 ramps: Sequence[tuple[float, float]] = ()) -> list[tuple[float, float]]:
        """(midpoint, width) of the pieces of [0, t] over which every rate is constant (ramps
        sampled every `_RAMP_STEP` seconds)."""
        if t <= 0:
            return []
        points = {0.0, t, *[p for p in self.breakpoints() if 0 < p < t]}
        if link is not None:
            for start, end in self.down_windows(link):
                points |= {p for p in (start, end) if 0 < p < t}
        for start, end in ramps:
            step = start
            while step < min(end, t):
                if step > 0:
                    points.add(step)
                step += _RAMP_STEP
        ordered = sorted(points)
        return [((left + right) / 2, right - left) for left, right in itertools.pairwise(ordered)]

    def integrate(self, rate: Callable[[float], float], t: float, link: int | None = None,
                  ramps: Sequence[tuple[float, float]] = ()) -> float:
        """∫₀ᵗ rate, exact for rates constant between breakpoints (ramps sampled)."""
        return sum(rate(mid) * width for mid, width in self.segments(t, link, ramps))

    # what a link is --------------------------------------------------------------------------
    def link_speed(self, link: int) -> int:
        """Gb/s `link` runs at: the topology's, unless a fault's `speed_gbps` says the link
        came up slower (a 100G cable in a 400G port)."""
        for fault in self._by_link.get(link, []):
            if "speed_gbps" in fault.spec.params:
                return int(fault.spec.params["speed_gbps"])
        return self.graph.link_speed(link) or 400

    def _is_host_link(self, link: int) -> bool:
        known = self._host_link.get(link)
        if known is None:
            a, b = (device_of(e) for e in (self.topology.links[link].a,
                                                   self.topology.links[link].b))
            known = self._host_link[link] = (a in self.graph.nodes) != (b in self.graph.nodes)
        return known

    def _leaf_of_link(self, link: int) -> str | None:
        if link in self._leaf:
            return self._leaf[link]
        found = None
        if 0 <= link < len(self.topology.links):
            for end in (self.topology.links[link].a, self.topology.links[link].b):
                device = device_of(end)
                switch = self.graph.switches.get(device)
                if switch is not None and switch.role is Role.LEAF:
                    found = device
                    break
        self._leaf[link] = found
        return found

    def uplinks(self, leaf: str) -> list[int]:
        """Links from `leaf` to the spines (cached)."""
        if leaf not in self._uplinks:
            self._uplinks[leaf] = self.graph.uplinks(leaf)
        return self._uplinks[leaf]


def _merged(windows: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """`windows` sorted, overlapping or touching ones joined."""
    out: list[tuple[float, float]] = []
    for start, end in sorted(windows):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _periodic(start: float, end: float, period: float, down: float) -> list[tuple[float, float]]:
    windows: list[tuple[float, float]] = []
    at = start
    while at < end and len(windows) < 10000:
        windows.append((at, min(at + down, end)))
        at += period
    return windows
