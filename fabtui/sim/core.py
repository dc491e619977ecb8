"""The simulated fabric: the state of every link, NIC, port, optic and GPU as a function of time.

Everything is a deterministic function of (topology, scenario, seed, t): the same inputs give the
same counters, so a test, a game day and a benchmark all see one consistent fabric. Counters are
integrals of rates over [0, t] (they only grow, unless a `clear-counters` style reset is part of
the story), both ends of a link share one up/down state, and traffic follows the workload: a
running all_reduce moves bytes on every rail; a stalled job moves none; a PFC storm shows as pause
frames on the storming NIC *and* on its leaf port, spreading to the leaf's uplinks.

Rates are piecewise constant between the scenario's breakpoints (fault starts and ends, link
flap edges); ramps (a degrading optic) are sampled every `_RAMP_STEP` seconds. Integration is
exact for that model, so a counter read twice gives the delta a real device would.

Each end of a cable has its own module (launch power, bias, temperature per lane); what an end
receives is the far module's light less the fibre's loss and dirt; BER follows the light and
FEC follows the BER (physics.py). Pause follows link speed, mlx5 stall prevention and SONiC's
watchdog; with PXN the job's traffic stays on its rails. docs/sim.md describes the model and
docs/thresholds.md (section 6) gives the source of each rule.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from fabtui.model.topology import Nic, Role, Switch, Topology, split_endpoint
from fabtui.sim import physics
from fabtui.sim.faults import Fault, resolve_all
from fabtui.sim.scenario import FaultKind, FaultSpec, Scenario
from fabtui.topology.expected import (
    expected_busbw,
    expected_rdma_gbps,
    ib_retry_window_s,
    node_shape,
    pause_frame_hold_s,
)
from fabtui.topology.graph import FabricGraph
from fabtui.topology.pairing import gpu_map

_RAMP_STEP = 30.0
FRAME = 4160
"""Bytes per RoCE frame (4096 payload + headers), for packet counts."""
PRIORITY = 3
"""The lossless (RoCE) priority."""
INF = math.inf

# Optics: 400G-DR4-like modules, thresholds as the module reports them (dBm / mA / C / V).
RX_LOW_ALARM, RX_LOW_WARNING = -10.4, -8.4
RX_HIGH_WARNING, RX_HIGH_ALARM = 4.0, 5.0
TX_LOW_ALARM, TX_LOW_WARNING, TX_HIGH_WARNING, TX_HIGH_ALARM = -8.4, -6.4, 4.0, 5.0
BIAS_LOW_ALARM, BIAS_LOW_WARNING, BIAS_HIGH_WARNING, BIAS_HIGH_ALARM = 2.0, 4.0, 13.0, 15.0
TEMP_HIGH_ALARM, TEMP_HIGH_WARNING = 75.0, 70.0
BACKGROUND_UPLINK_SHARE = 0.02
"""Share of a leaf uplink's line rate that is not the job's (storage, checkpoints, control)."""
STALL_PREVENTION_S = 8.0
"""mlx5 PFC stall prevention: a receiver stalled this long stops sending pause (the critical
timeout's maximum and default, MLX5E_PFC_PREVEN_TOUT_MAX_MSEC 8000 in the kernel's
en_ethtool.c); the warning event fires at 85 % of it (MLX5E_PFC_PREVEN_MINOR_PRECENT)."""
PFCWD_DETECTION_S = PFCWD_RESTORATION_S = 0.2
"""SONiC pfcwd defaults: detection and restoration time 200 ms (sonic-utilities pfcwd)."""
LANES = 4
DEFAULT_EPOCH = 1_795_996_800.0
"""2026-11-30 00:00:00 UTC: t=0 when no state file says when the scenario started."""


@dataclass(frozen=True)
class LinkEnd:
    """One end of a cable: a NIC (`node`, `nic`) or a switch port (`switch`, `port`)."""

    link: int
    device: str
    port: str
    is_switch: bool


@dataclass(frozen=True)
class PortCounters:
    """What a switch (or NIC) port has counted up to time t, and its state."""

    up: bool
    rx_ok: int
    tx_ok: int
    rx_bytes: int
    tx_bytes: int
    rx_err: int
    tx_err: int
    rx_drp: int
    tx_drp: int
    rx_bps: float
    tx_bps: float
    speed_gbps: int
    rx_pfc: tuple[int, ...]
    tx_pfc: tuple[int, ...]
    fec_corr: int
    fec_uncorr: int
    fec_symbol_err: int
    pre_ber: float
    post_ber: float
    link_down_events: int


@dataclass(frozen=True)
class Dom:
    """Digital optical monitoring of the optic in a port at time t."""

    rx_power_dbm: tuple[float | None, ...]
    """Per lane; None is no light (-inf dBm)."""
    tx_power_dbm: tuple[float | None, ...]
    tx_bias_ma: tuple[float, ...]
    temperature_c: float
    voltage_v: float
    serial: str
    vendor: str = "FABTUI-SIM"
    part_number: str = "400G-DR4-SIM"


@dataclass(frozen=True)
class GpuState:
    """One GPU at time t."""

    index: int
    model: str
    pci: str
    temperature_c: int
    sm_clock_mhz: int
    sm_clock_max_mhz: int
    mem_clock_mhz: int
    power_w: float
    utilization_pct: int
    reasons: tuple[str, ...]
    ecc_volatile_uncorrectable: int
    ecc_volatile_correctable: int


class Sim:
    """A topology playing a scenario."""

    def __init__(self, topology: Topology, scenario: Scenario, *, seed: int = 7,
                 extra: Sequence[FaultSpec] = (), source: str = "scenario",
                 lines: list[int | None] | None = None, epoch: float = DEFAULT_EPOCH,
                 repairs: Sequence[tuple[str, float]] = (),
                 shut: Sequence[tuple[str, float, float | None]] = ()) -> None:
        self.topology = topology
        self.epoch = epoch
        """Wall-clock time (Unix seconds) of the scenario's t=0, for log timestamps."""
        self.scenario = scenario
        self.seed = seed
        self.graph = FabricGraph(topology)
        self.faults: list[Fault] = [self._repaired(f, repairs) for f in resolve_all(
            self.graph, [*scenario.timeline, *extra], source, lines)]
        self._repairs: dict[int, list[tuple[str, float]]] = {}
        """Link -> the repairs done on it (a swapped optic reports a new serial)."""
        for component, at in repairs:
            repaired = self.link_of(component)
            if repaired is not None:
                self._repairs.setdefault(repaired, []).append((component, at))
        self._shut: dict[int, list[tuple[float, float]]] = {}
        """Links whose switch port an operator shut, with when (admin down)."""
        for endpoint, start, end in shut:
            link = self.link_of(endpoint)
            if link is not None:
                self._shut.setdefault(link, []).append((start, INF if end is None else end))
        self._by_link: dict[int, list[Fault]] = {}
        for fault in self.faults:
            if fault.link is not None:
                self._by_link.setdefault(fault.link, []).append(fault)
        for link in self._shut:
            self._by_link.setdefault(link, [])
        self._windows: dict[int, list[tuple[float, float]]] = {}
        self._window_indexes: dict[int, tuple[list[float], list[float]]] = {}
        self._cablings: dict[tuple[int, ...], tuple[dict[tuple[str, str], str],
                                                     dict[str, tuple[str, str]]]] = {}
        edges = {f.spec.at for f in self.faults} | \
            {f.spec.until for f in self.faults if f.spec.until is not None}
        self._cycles: dict[int, list[tuple[str, str, int]]] = {}
        self._failure: tuple[tuple[float, int] | None] | None = None
        self._steady: dict[tuple[int, str], tuple[float, physics.FecRates]] = {}
        edges |= {self.storm_pause_window(f)[1] for f in self.faults
                  if f.kind is FaultKind.PFC_STORM and self.storm_pause_window(f)[1] != INF}
        edges |= {edge for windows in self._shut.values() for window in windows
                  for edge in window if edge != INF}
        self._breakpoints = sorted(edges)
        self._uplinks: dict[str, list[int]] = {}
        self._host_link: dict[int, bool] = {}
        self._leaf: dict[int, str | None] = {}
        self._ports: dict[str, list[str]] | None = None
        failure = self.job_failure()
        if failure is not None:  # the job's traffic stops there
            self._breakpoints = sorted({*self._breakpoints, failure[0]})

    def link_of(self, component: str) -> int | None:
        """The link of a switch port, a NIC (`node:mlx5_N`) or an optic id."""
        if component in self.graph.optics:
            return self.graph.optics[component]
        if component in self.graph.port_links:
            return self.graph.port_links[component]
        device, port = split_endpoint(component)
        nic = self.graph.find_nic(device, port)
        attachment = self.graph.attachments.get((device, nic.name)) if nic else None
        return attachment.link_index if attachment else None

    def _repaired(self, fault: Fault, repairs: Sequence[tuple[str, float]]) -> Fault:
        """`fault` ended at the first repair of its component (or of its link) after it began."""
        for component, at in repairs:
            same = component == fault.spec.component or component == fault.host or (
                fault.link is not None and self.link_of(component) == fault.link)
            if same and fault.spec.at <= at and (fault.spec.until is None or
                                                 at < fault.spec.until):
                return dataclasses.replace(fault, spec=fault.spec.model_copy(
                    update={"until": at}))
        return fault

    # determinism ------------------------------------------------------------------------------
    def noise(self, *key: object) -> float:
        """A stable pseudo-random number in [0, 1) for `key` (and this seed)."""
        digest = hashlib.blake2b(repr((self.seed, *key)).encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64

    def base(self, *key: object, scale: float = 1e9) -> int:
        """A counter's value before the scenario began (devices have been up for a while)."""
        return int(self.noise("base", *key) * scale)

    # faults ----------------------------------------------------------------------------------
    def active(self, kind: FaultKind, t: float) -> list[Fault]:
        """Faults of `kind` in effect at `t`."""
        return [f for f in self.faults if f.kind is kind and f.active(t)]

    def storming(self, t: float) -> list[Fault]:
        """PFC storms whose NIC is sending pause at `t` (stall prevention not yet fired)."""
        return [f for f in self.faults if f.kind is FaultKind.PFC_STORM and
                self.storm_pause_window(f)[0] <= t < self.storm_pause_window(f)[1]]

    def breakpoints(self) -> list[float]:
        """Times at which some fault starts or ends."""
        return self._breakpoints

    def switch_ports(self, switch: str) -> list[str]:
        """The cabled ports of `switch`, in the order the switch lists them (natural order)."""
        if self._ports is None:
            found: dict[str, list[str]] = {}
            for key in self.graph.port_links:
                device, port = split_endpoint(key)
                if device in self.graph.switches:
                    found.setdefault(device, []).append(port)
            self._ports = {name: sorted(names, key=_natural) for name, names in found.items()}
        return self._ports.get(switch, [])

    # cabling ---------------------------------------------------------------------------------
    def _cabling_for(self, t: float | None) -> tuple[dict[tuple[str, str], str],
                                                      dict[str, tuple[str, str]]]:
        """The real cabling at `t` (None: with every rank-mapping swap ever planted), and the
        reverse map `switch:port` -> (host, nic). A re-cabled swap (a repair) undoes itself."""
        swaps = tuple(i for i, f in enumerate(self.faults)
                      if f.kind is FaultKind.RANK_MAPPING and (t is None or f.active(t)))
        cached = self._cablings.get(swaps)
        if cached is not None:
            return cached
        actual = {key: f"{a.switch}:{a.port}" for key, a in self.graph.attachments.items()}
        for index in swaps:
            fault = self.faults[index]
            if fault.host and fault.nic and fault.partner:
                one, other = (fault.host, fault.nic), (fault.host, fault.partner)
                actual[one], actual[other] = actual[other], actual[one]
        landed = {where: key for key, where in actual.items()}
        self._cablings[swaps] = (actual, landed)
        return actual, landed

    def actual_port(self, host: str, nic: str, t: float | None = None) -> str | None:
        """Where the cable of `host:nic` really lands (`switch:port`) at `t`."""
        return self._cabling_for(t)[0].get((host, nic))

    def neighbor(self, switch: str, port: str,
                 t: float | None = None) -> tuple[str, str] | None:
        """What LLDP on `switch:port` sees at `t`: (device, its port) at the far end of the
        real cable."""
        target = f"{switch}:{port}"
        landed = self._cabling_for(t)[1].get(target)
        if landed is not None:
            host, nic = landed
            found = self.graph.find_nic(host, nic)
            return host, (found.netdev or nic) if found else nic
        far = self.graph.far_end(target)
        if far is None:
            return None
        device, far_port = split_endpoint(far)
        return (device, far_port) if device in self.graph.switches else None

    # link state ------------------------------------------------------------------------------
    def down_windows(self, link: int) -> list[tuple[float, float]]:
        """Intervals during which `link` is down."""
        if link in self._windows:
            return self._windows[link]
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
            elif fault.kind in (FaultKind.NCCL_HANG, FaultKind.UPLINK_DOWN):
                windows.append((spec.at, spec.until if spec.until is not None else INF))
        windows += self._shut.get(link, [])
        windows.sort()
        self._windows[link] = windows
        return windows

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

    # workload --------------------------------------------------------------------------------
    def retry_window_s(self) -> float:
        """Seconds a link of the job may be down before its IB QPs give up (completion
        error 12): 4.096 us x 2^NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1), from the job's
        NCCL version and environment (fabtui.topology.expected.ib_retry_window_s)."""
        workload = self.scenario.workload
        return ib_retry_window_s(workload.nccl_version, workload.nccl_env)

    def job_failure(self) -> tuple[float, int] | None:
        """(when, link) the job dies of a flap longer than its retry window, or None: the
        first down window of a host link that outlasts `retry_window_s`."""
        if self._failure is None:
            window = self.retry_window_s()
            found: tuple[float, int] | None = None
            for fault in self.faults:
                if fault.kind is not FaultKind.LINK_FLAP or fault.link is None or \
                        not self._is_host_link(fault.link):
                    continue
                for start, end in self.down_windows(fault.link):
                    if end - start > window and (found is None or start + window < found[0]):
                        found = (start + window, fault.link)
                        break
            self._failure = (found,)
        return self._failure[0]

    def job_factor(self, t: float) -> float:
        """How fast the job runs at `t` (0: stalled by a hang, or dead of a long flap; < 1: a
        straggler holds it)."""
        if self.active(FaultKind.NCCL_HANG, t):
            return 0.0
        failure = self.job_failure()
        if failure is not None and t >= failure[0]:
            return 0.0
        factor = 1.0
        for fault in self.active(FaultKind.SLOW_NODE, t):
            factor = min(factor, float(fault.spec.params.get("job_factor", 0.6)))
        return factor

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
            a, b = (split_endpoint(e)[0] for e in (self.topology.links[link].a,
                                                   self.topology.links[link].b))
            known = self._host_link[link] = (a in self.graph.nodes) != (b in self.graph.nodes)
        return known

    def _leaf_of_link(self, link: int) -> str | None:
        if link in self._leaf:
            return self._leaf[link]
        found = None
        if 0 <= link < len(self.topology.links):
            for end in (self.topology.links[link].a, self.topology.links[link].b):
                device = split_endpoint(end)[0]
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

    def rate(self, link: int, t: float) -> float:
        """Bytes per second the link carries in each direction at `t`."""
        if not self.link_up(link, t):
            return 0.0
        line = self.link_speed(link) * 1e9 / 8
        jitter = 0.97 + 0.06 * self.noise("rate", link)
        if self._is_host_link(link):
            share = self.scenario.workload.utilization * jitter * self.job_factor(t)
            for fault in self.storming(t):
                if fault.link == link:
                    share *= 0.05  # the storming NIC is paused itself: almost nothing moves
            return line * share
        # With PXN (NCCL's default, NCCL_PXN_DISABLE=0) a GPU's traffic to another rail
        # first crosses NVLink to the local GPU of that rail, so the job's collectives stay
        # on their rail's leaf: uplinks carry background traffic (storage, checkpoints) and
        # only the NICs whose cable lands on another rail's leaf (crossed cables).
        share = BACKGROUND_UPLINK_SHARE * jitter
        leaf = self._leaf_of_link(link)
        if leaf is not None:
            ups = self.uplinks(leaf)
            crossing = self._crossing_nics(leaf, t)
            if ups and crossing:
                share += crossing * self.scenario.workload.utilization * \
                    self.job_factor(t) / len(ups)
            alive = len(ups) - sum(1 for u in ups if u in self._by_link and
                                   not self.link_up(u, t)) or 1
            share *= len(ups) / alive
            if any(f.switch == leaf for f in self.active(FaultKind.INTERFERENCE, t)):
                share += 0.45 * jitter  # the other job's traffic shares these uplinks
        return line * min(share, 0.98)

    def _crossing_nics(self, leaf: str, t: float) -> int:
        """NICs whose traffic must cross the spines at `leaf`: the topology cables every NIC
        to its rail's leaf, so only swapped cables (rank-mapping) put a NIC of another rail on
        `leaf` or take one of its rail elsewhere."""
        count = 0
        for fault in self.faults:
            if fault.kind is not FaultKind.RANK_MAPPING or not fault.active(t) or \
                    fault.host is None:
                continue
            for nic in (fault.nic, fault.partner):
                nominal = split_endpoint(self.graph.far_end(f"{fault.host}:{nic}") or "")[0]
                landed = split_endpoint(self.actual_port(fault.host, nic or "", t) or "")[0]
                if nominal != landed and leaf in (nominal, landed):
                    count += 1
        return count

    def bytes_moved(self, link: int, t: float) -> int:
        """Bytes the link carried in one direction over [0, t]."""
        return int(self.integrate(lambda x: self.rate(link, x), t, link))

    # optics: both ends of every cable -------------------------------------------------------
    def side(self, link: int, device: str) -> int:
        """Which end of `link` `device` is: 0 for the topology's `a`, 1 for `b` (a switch
        whose port a swapped cable lands in is the switch end)."""
        ends = [split_endpoint(e)[0] for e in (self.topology.links[link].a,
                                               self.topology.links[link].b)]
        if device in ends:
            return ends.index(device)
        wanted = device in self.graph.switches
        return next((i for i, e in enumerate(ends) if (e in self.graph.switches) == wanted), 0)

    def _at_side(self, fault: Fault, link: int) -> int | None:
        """The end of `link` a degrading optic or a dirty connector is at."""
        named = split_endpoint(fault.spec.component)[0]
        if named in self.graph.nodes or named in self.graph.switches:
            return self.side(link, named)
        return None if fault.switch is None else self.side(link, fault.switch)  # an optic id

    def _degrading(self, link: int, side: int) -> Fault | None:
        """The optic-degrading fault on the module at `side` of `link`."""
        for fault in self._by_link.get(link, []):
            if fault.kind is FaultKind.OPTIC_DEGRADING and self._at_side(fault, link) == side:
                return fault
        return None

    def _ageing(self, link: int, side: int, lane: int, t: float) -> float:
        """0..1: how far the laser of the module at `side` has aged (0: healthy). Two lanes of
        the module go first, the others follow at a third of the pace."""
        fault = self._degrading(link, side)
        if fault is None or not fault.active(t):
            return 0.0
        ramp = float(fault.spec.params.get("ramp_s", 1800))
        progress = min(1.0, max(0.0, (t - fault.spec.at) / ramp))
        return progress * (1.0 if lane in (1, 2) else 0.35)

    def _dead(self, link: int, t: float) -> bool:
        """No light at all on the cable (a dead optic behind a hang, a downed uplink)."""
        return any(f.kind in (FaultKind.NCCL_HANG, FaultKind.UPLINK_DOWN) and f.active(t)
                   for f in self._by_link.get(link, []))

    def healthy_tx(self, link: int, side: int, lane: int) -> float:
        """Launch power (dBm) of a healthy lane: 0.3 .. 1.7 dBm, per lane and module."""
        return round(0.3 + 1.4 * self.noise("tx", link, side, lane), 2)

    def channel_loss(self, link: int, side: int, lane: int) -> float:
        """dB lost between the module at `side` and the far receiver on a clean fibre
        (1.2 .. 2.6 dB: within the 3 dB DR4 channel budget, IEEE 802.3bs clause 124)."""
        return 1.2 + 1.4 * self.noise("loss", link, side, lane)

    def tx_power(self, link: int, side: int, lane: int, t: float) -> float | None:
        """What the module at `side` launches on `lane` (None: dark). A degrading laser loses
        up to ~11 dB over its ramp (the far receiver then sees about `end_dbm`)."""
        if self._dead(link, t):
            return None
        healthy = self.healthy_tx(link, side, lane)
        fault = self._degrading(link, side)
        aged = self._ageing(link, side, lane, t)
        if fault is None or not aged:
            return healthy
        end_dbm = float(fault.spec.params.get("end_dbm", -13.0))
        far_healthy = healthy - self.channel_loss(link, side, lane)
        return round(healthy - (far_healthy - end_dbm) * aged, 2)

    def tx_bias(self, link: int, side: int, lane: int, t: float) -> float:
        """Laser bias (mA): the module's power control raises it as an ageing laser loses
        efficiency (the classic end-of-life signature: bias up, power down)."""
        healthy = 6.2 + 1.6 * self.noise("bias", link, side, lane)
        return round(healthy * (1 + 1.1 * self._ageing(link, side, lane, t)), 2)

    def module_temperature(self, link: int, side: int, t: float) -> float:
        """Case temperature (C) of the module at `side`; an ageing laser runs warmer."""
        healthy = 41 + 8 * self.noise("otemp", link, side)
        return round(healthy + 9 * self._ageing(link, side, 1, t), 1)

    def _dirt_loss(self, link: int, side: int, lane: int, t: float) -> float:
        """Extra dB lost on `lane` by a dirty connector at `side` on the light it sends."""
        loss = 0.0
        for fault in self._by_link.get(link, []):
            if fault.kind is FaultKind.DIRTY_CONNECTOR and fault.active(t) and \
                    self._at_side(fault, link) == side:
                lanes = fault.spec.params.get("lanes", [2, 3])
                if lane in [int(x) for x in lanes]:
                    loss += float(fault.spec.params.get("loss_db", 6.0)) * \
                        (0.85 + 0.3 * self.noise("dirt", link, lane))
        return loss

    def rx_power(self, link: int, device: str, port: str, lane: int, t: float) -> float | None:
        """Received power (dBm) on one lane of the optic at `device:port`; None: no light.
        It is the far module's launch power less the fibre's loss and any dirt on the far
        connector: low light here with a healthy far transmitter is the fibre or a connector."""
        side = self.side(link, device)
        far = 1 - side
        launched = self.tx_power(link, far, lane, t)
        if launched is None:
            return None
        return round(launched - self.channel_loss(link, far, lane)
                     - self._dirt_loss(link, far, lane, t), 2)

    # receivers: BER and RS-FEC ---------------------------------------------------------------
    def lane_ber(self, link: int, device: str, port: str, lane: int, t: float) -> float:
        """Pre-FEC bit error ratio of one lane of the receiver at `device:port`."""
        if not self.link_up(link, t):
            return 0.0
        floor = physics.HEALTHY_BER_FLOOR * (1 + 3 * self.noise("ber", link, device, lane))
        if link not in self._by_link:
            # A cable no fault touches receives -2.3 .. +0.5 dBm (launch 0.3 .. 1.7 less loss
            # 1.2 .. 2.6): above the sensitivity knee, so its BER is the lane's floor.
            return floor
        return physics.lane_ber(self.rx_power(link, device, port, lane, t), floor)

    def pre_fec_ber(self, link: int, device: str, port: str, t: float) -> float:
        """Bit error ratio before FEC at the receiver of `device:port` (the lanes' mean: the
        codewords are spread over every lane)."""
        bers = [self.lane_ber(link, device, port, lane, t) for lane in range(1, LANES + 1)]
        return sum(bers) / len(bers)

    def fec_rates(self, link: int, device: str, port: str, t: float) -> physics.FecRates:
        """What the RS(544,514) decoder at `device:port` does per second at `t`."""
        if not self.link_up(link, t):
            return physics.fec_rates(0.0, 0.0)
        return physics.fec_rates(self.pre_fec_ber(link, device, port, t), self.link_speed(link))

    def _steady_of(self, link: int, device: str, port: str) -> tuple[float, physics.FecRates]:
        """(pre-FEC BER, FEC rates) of the receiver at `device` on a cable no fault touches:
        they never change, so they are worked out once."""
        found = self._steady.get((link, device))
        if found is None:
            ber = self.pre_fec_ber(link, device, port, 0.0)
            found = self._steady[(link, device)] = (
                ber, physics.fec_rates(ber, self.link_speed(link)))
        return found

    def _optic_ramps(self, link: int) -> list[tuple[float, float]]:
        return [(f.spec.at, f.spec.at + float(f.spec.params.get("ramp_s", 1800)))
                for f in self._by_link.get(link, []) if f.kind is FaultKind.OPTIC_DEGRADING]

    def receiver(self, link: int, device: str, port: str, t: float) -> tuple[int, int, int]:
        """(corrected bits, uncorrectable codewords, corrected symbols) counted over [0, t]."""
        bits, lost, symbols, _ = self.receiver_counts(link, device, port, t)
        return bits, lost, symbols

    def receiver_counts(self, link: int, device: str, port: str,
                        t: float) -> tuple[int, int, int, tuple[int, ...]]:
        """(corrected bits, uncorrectable codewords, corrected symbols, histogram BIN0..15)
        counted over [0, t]; every layer's FEC counters are these integrals."""
        totals = [0.0] * (3 + physics.RS_T + 1)
        if link not in self._by_link:
            # No fault ever touches this cable: its light, BER and FEC rates never change.
            steady = self._steady_of(link, device, port)[1]
            pieces = [(0.0, max(t, 0.0))]
        else:
            steady = None
            pieces = self.segments(t, link, self._optic_ramps(link))
        for mid, width in pieces:
            rates = steady if steady is not None else self.fec_rates(link, device, port, mid)
            totals[0] += rates.corrected_bits * width
            totals[1] += rates.uncorrectable * width
            totals[2] += rates.corrected_symbols * width
            for k, value in enumerate(rates.bins):
                totals[3 + k] += value * width
        return (int(totals[0]), int(totals[1]), int(totals[2]),
                tuple(int(v) for v in totals[3:]))

    def lane_corrected_bits(self, link: int, device: str, port: str, t: float) -> list[int]:
        """Corrected bits per lane over [0, t] (mlx5 `rx_err_lane_N_phy`, mlxlink `Raw Physical
        Errors Per Lane`): the total split by each lane's share of the BER at `t` (exact for a
        steady cable, close for a ramp)."""
        total = self.receiver_counts(link, device, port, t)[0]
        bers = [self.lane_ber(link, device, port, lane, t) for lane in range(1, LANES + 1)]
        if not sum(bers):
            return [total // LANES] * LANES
        return [int(total * b / sum(bers)) for b in bers]

    def bits_received(self, link: int, t: float) -> int:
        """Bits the receiver decoded over [0, t] (line rate while the link is up)."""
        speed = self.link_speed(link) * 1e9
        return int(self.integrate(lambda x: speed if self.link_up(link, x) else 0.0, t, link))

    # pause, ECN, CNP -------------------------------------------------------------------------
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
                elif device == storm_leaf:
                    # The leaf cannot drain toward the storming host: it pauses its other ports.
                    tx += 2000.0 if not self._is_host_link(link) else 600.0
                elif self._leaf_of_link(link) == storm_leaf:
                    rx += 2000.0 if not self._is_host_link(link) else 600.0
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
                         if holder in {split_endpoint(e)[0] for e in
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

    def congestion(self, host: str, nic: Nic, t: float) -> tuple[float, float]:
        """(ECN-marked packets received, CNPs) per second for a NIC (another job's traffic)."""
        where = self.actual_port(host, nic.name) or ""
        leaf = split_endpoint(where)[0]
        base = 3.0 + 5.0 * self.noise("cnp", host, nic.name)
        for fault in self.active(FaultKind.INTERFERENCE, t):
            if fault.switch == leaf:
                return 52000.0, 21000.0
        return base * 2.5, base

    # GPUs ------------------------------------------------------------------------------------
    def gpu(self, host: str, index: int, t: float) -> GpuState:
        """A GPU's clocks, temperature and health at `t`."""
        node = self.graph.nodes[host]
        gpu = next(g for g in node.gpus if g.index == index)
        slow = any(f.host == host for f in self.active(FaultKind.SLOW_NODE, t))
        busy = self.job_factor(t) > 0
        temp = 58 + int(6 * self.noise("temp", host, index)) + (33 if slow else 0)
        return GpuState(
            index=index, model=gpu.model or "H100-SXM5-80GB", pci=gpu.pci,
            temperature_c=temp if busy else temp - 20,
            sm_clock_mhz=(1095 if slow else 1980) if busy else 345,
            sm_clock_max_mhz=1980, mem_clock_mhz=2619,
            power_w=round((395.0 if slow else 612.0 + 40 * self.noise("p", host, index))
                          if busy else 71.0, 2),
            utilization_pct=(97 if busy else 0),
            reasons=(("hw_thermal_slowdown", "sw_thermal_slowdown") if slow
                     else ("sw_power_cap",) if busy else ("gpu_idle",)),
            ecc_volatile_uncorrectable=0,
            ecc_volatile_correctable=int(3 * self.noise("ecc", host, index)))

    # collective performance ------------------------------------------------------------------
    def busbw(self, nodes: Sequence[str], t: float, size: int, *,
              collective: str = "all_reduce", pxn: bool = True) -> float:
        """Bus bandwidth (GB/s) of `collective` over `nodes` at message `size`.

        A healthy fabric reaches what fabtui.topology.expected derives from the topology (the
        figure the probes judge against, PXN included); faults take their share from there.
        With PXN (the default) alltoall stays on each rail's leaf; without it
        (`NCCL_PXN_DISABLE=1`) it crosses the spines and each leaf's lost uplinks cut it."""
        slow = {f.host for f in self.active(FaultKind.SLOW_NODE, t)}
        gdr_off = {f.host for f in self.active(FaultKind.GDR_OFF, t)}
        interference = {f.switch for f in self.active(FaultKind.INTERFERENCE, t)}
        shape = node_shape(self.graph.nodes[n] for n in nodes if n in self.graph.nodes)
        expected = None
        if shape is not None:
            # broadcast / reduce have no model of their own: they move what all_reduce moves.
            expected = expected_busbw(collective, max(len(nodes), 1), shape) or \
                expected_busbw("all_reduce", max(len(nodes), 1), shape)
        peak = expected.value if expected is not None else 0.0
        if len(nodes) > 1:
            if gdr_off & set(nodes):
                peak *= 0.52
            if interference and any(self._behind(n) & interference for n in nodes):
                peak *= 0.7
            storming = {self._leaf_of_link(f.link) for f in self.storming(t)
                        if f.link is not None and self.link_up(f.link, t)}
            if storming and any(self._behind(n) & storming for n in nodes):
                peak *= 0.25  # the paused leaf holds every rail flow through it
            if collective == "alltoall" and not pxn:
                # Without PXN a GPU sends to every other rail through its own NIC: (G-1)/G of
                # alltoall crosses the spines, so each leaf's lost uplinks cut it.
                peak *= min((self._uplink_share(leaf, t) for n in nodes
                             for leaf in self._behind(n)), default=1.0)
        if slow & set(nodes):
            peak *= 0.55
        if self.active(FaultKind.NCCL_HANG, t) and len(nodes) > 1:
            return 0.0
        jitter = 0.995 + 0.01 * self.noise("bw", tuple(nodes), size)  # stable run to run
        return peak * size / (size + 6e6) * jitter

    @staticmethod
    def rdma_ceiling(speed_gbps: int) -> float:
        """Gb/s a healthy RDMA write reaches between two NICs of `speed_gbps`."""
        return expected_rdma_gbps(speed_gbps).value

    def _uplink_share(self, leaf: str, t: float) -> float:
        """The share of `leaf`'s uplink capacity that is up at `t`."""
        ups = self.uplinks(leaf) if leaf in self.graph.switches else []
        if not ups:
            return 1.0
        return sum(1 for u in ups if self.link_up(u, t)) / len(ups)

    @cache  # noqa: B019 - a Sim lives as long as its topology; the cache is small
    def _behind(self, host: str) -> frozenset[str]:
        node = self.graph.nodes[host]
        return frozenset(split_endpoint(self.actual_port(host, nic.name) or "")[0]
                         for nic in node.nics)

    # per-port views --------------------------------------------------------------------------
    def port_counters(self, switch: Switch, port: str, t: float,
                      since: float = 0.0) -> PortCounters | None:
        """Counters of `switch:port` (None when nothing is cabled there)."""
        link = self.real_link(switch.name, port, t)
        if link is None:
            return None
        return self._counters(link, switch.name, port, t, since)

    def nic_counters(self, host: str, nic: Nic, t: float) -> PortCounters | None:
        """The same view for a NIC port (what its driver counts)."""
        attachment = self.graph.attachments.get((host, nic.name))
        if attachment is None:
            return None
        return self._counters(attachment.link_index, host, nic.name, t, 0.0)

    def real_link(self, switch: str, port: str, t: float | None = None) -> int | None:
        """The topology link of whatever is really cabled at `switch:port` at `t`."""
        endpoint = f"{switch}:{port}"
        landed = self._cabling_for(t)[1].get(endpoint)
        if landed is not None:
            attachment = self.graph.attachments.get(landed)
            return attachment.link_index if attachment else None
        return self.graph.port_links.get(endpoint)

    def _counters(self, link: int, device: str, port: str, t: float,
                  since: float) -> PortCounters:
        up = self.link_up(link, t)
        moved = self.bytes_moved(link, t) - (self.bytes_moved(link, since) if since else 0)
        key = (link, device)
        rx_bytes = moved + (self.base("rxb", *key) if not since else 0)
        tx_bytes = moved + (self.base("txb", *key) if not since else 0)
        corrected, lost, symbols, bins = self.receiver_counts(link, device, port, t)
        codewords = sum(bins[1:])
        if since:
            before = self.receiver_counts(link, device, port, since)
            corrected, lost, symbols = (corrected - before[0], lost - before[1],
                                        symbols - before[2])
            codewords -= sum(before[3][1:])
        rx_pause = self.integrate(lambda x: self.pause_rates(device, port, link, x)[0], t, link)
        tx_pause = self.integrate(lambda x: self.pause_rates(device, port, link, x)[1], t, link)
        rx_pfc = [0] * 8
        tx_pfc = [0] * 8
        rx_pfc[PRIORITY], tx_pfc[PRIORITY] = int(rx_pause), int(tx_pause)
        now = self.rate(link, t) * 8
        if link not in self._by_link:
            ber, rates = self._steady_of(link, device, port)
        else:
            rates = self.fec_rates(link, device, port, t)
            ber = self.pre_fec_ber(link, device, port, t) if up else 0.0
        line = self.link_speed(link) * 1e9
        post = rates.uncorrectable * physics.RS_N * physics.SYMBOL_BITS / line if up else 0.0
        drops = int(self.noise("drp", *key) * 40)
        return PortCounters(
            up=up, rx_ok=rx_bytes // FRAME, tx_ok=tx_bytes // FRAME, rx_bytes=rx_bytes,
            tx_bytes=tx_bytes, rx_err=lost, tx_err=0, rx_drp=drops, tx_drp=0,
            rx_bps=now, tx_bps=now, speed_gbps=self.link_speed(link), rx_pfc=tuple(rx_pfc),
            tx_pfc=tuple(tx_pfc), fec_corr=codewords, fec_uncorr=lost,
            fec_symbol_err=symbols, pre_ber=ber, post_ber=post,
            link_down_events=self.down_events(link, t))

    def dom(self, switch: str, port: str, t: float) -> Dom | None:
        """The optic in `switch:port`: per-lane power and bias, temperature, voltage."""
        link = self.real_link(switch, port, t)
        if link is None:
            return None
        return self.module_dom(link, switch, port, t)

    def nic_dom(self, host: str, nic: str, t: float) -> Dom | None:
        """The optic in a NIC's cage (what `mlxlink -m` reads), the same model as a switch's."""
        attachment = self.graph.attachments.get((host, nic))
        if attachment is None:
            return None
        dom = self.module_dom(attachment.link_index, host, nic, t)
        serial = f"MT{2400 + attachment.link_index % 100:04d}FT" \
                 f"{int(self.noise('nser', host, nic) * 1e5):05d}"
        return dataclasses.replace(dom, serial=serial, vendor="NVIDIA",
                                   part_number="MMA4Z00-NS400")

    def module_dom(self, link: int, device: str, port: str, t: float) -> Dom:
        """DOM of the module at `device`'s end of `link`: its own launch power, bias and
        temperature, and the light the far module sends it."""
        side = self.side(link, device)
        lanes = range(1, LANES + 1)
        rx = tuple(self.rx_power(link, device, port, lane, t) for lane in lanes)
        tx = tuple(self.tx_power(link, side, lane, t) for lane in lanes)
        bias = tuple(self.tx_bias(link, side, lane, t) for lane in lanes)
        temp = self.module_temperature(link, side, t)
        voltage = round(3.25 + 0.05 * self.noise("v", link, side), 3)
        if device not in self.graph.switches:
            return Dom(rx_power_dbm=rx, tx_power_dbm=tx, tx_bias_ma=bias, temperature_c=temp,
                       voltage_v=voltage, serial="")
        link_optic = self.topology.links[link].optic or f"SIM{link:06d}"
        swaps = sum(1 for _, at in self._repairs.get(link, []) if at <= t)
        if swaps:  # a new module reports its own serial number
            link_optic = f"MT{int(self.noise('serial', link, swaps) * 1e8):08d}"
        return Dom(rx_power_dbm=rx, tx_power_dbm=tx, tx_bias_ma=bias, temperature_c=temp,
                   voltage_v=voltage, serial=link_optic)

    def rank_of(self, host: str, gpu: int) -> int | None:
        """The rank a GPU runs in the default 8-per-node placement."""
        for slot in self.graph.ranks_by_node.get(host, []):
            if slot.gpu == gpu:
                return slot.rank
        return None

    def nic_of_gpu(self, host: str, gpu: int) -> Nic | None:
        """The NIC a GPU sends through."""
        node = self.graph.nodes[host]
        mapping = gpu_map(node)
        return next((n for n in node.nics if gpu in mapping[n.name]), None)

    def describe(self) -> dict[str, Any]:
        """The scenario's faults as resolved, for `fabtui sim show`."""
        return {"scenario": self.scenario.name, "seed": self.seed,
                "faults": [{"fault": f.kind.value, "component": f.spec.component,
                            "at": f.spec.at, "until": f.spec.until,
                            "params": dict(f.spec.params)} for f in self.faults]}


def _natural(name: str) -> list[int | str]:
    """`Ethernet8` before `Ethernet16`."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _periodic(start: float, end: float, period: float, down: float) -> list[tuple[float, float]]:
    windows: list[tuple[float, float]] = []
    at = start
    while at < end and len(windows) < 10000:
        windows.append((at, min(at + down, end)))
        at += period
    return windows
