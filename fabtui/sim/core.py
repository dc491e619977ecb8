"""The simulated fabric: the state of every link, NIC, port, optic and GPU as a function of time.

Everything is a deterministic function of (topology, scenario, seed, t): the same inputs give the
same counters, so a test, a game day and a benchmark all see one consistent fabric. Counters are
integrals of rates over [0, t] (they only grow, unless a `clear-counters` style reset is part of
the story), both ends of a link share one up/down state, and traffic follows the workload: a
running all_reduce moves bytes on every rail; a stalled job moves none; a PFC storm shows as pause
frames on the storming NIC *and* on its leaf port, spreading to the leaf's uplinks.

`Sim` is composed of one layer per module, each a mixin on the one below: base.py (the state,
the faults as resolved, the real cabling), links.py (down windows, speed, integration over the
timeline), optics.py (light, BER and FEC at both ends of a cable, DOM), pfc.py (storms, pause,
the watchdog, deadlocks) and traffic.py (the workload, link rates, congestion, busbw). This
module puts them together and adds what a device reads off a port or a GPU: the counters, the
GPUs' state, rank placement. docs/sim.md describes the model and docs/thresholds.md
(section 7) gives the source of each rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fabtui.model.element import device_of
from fabtui.model.topology import Nic, Switch, Topology
from fabtui.sim import physics
from fabtui.sim.base import DEFAULT_EPOCH, INF
from fabtui.sim.faults import Fault
from fabtui.sim.optics import (
    BIAS_HIGH_ALARM,
    BIAS_HIGH_WARNING,
    BIAS_LOW_ALARM,
    BIAS_LOW_WARNING,
    LANES,
    RX_HIGH_ALARM,
    RX_HIGH_WARNING,
    RX_LOW_ALARM,
    RX_LOW_WARNING,
    TEMP_HIGH_ALARM,
    TEMP_HIGH_WARNING,
    TX_HIGH_ALARM,
    TX_HIGH_WARNING,
    TX_LOW_ALARM,
    TX_LOW_WARNING,
    Dom,
    OpticsLayer,
)
from fabtui.sim.pfc import PFCWD_DETECTION_S, PFCWD_RESTORATION_S, STALL_PREVENTION_S
from fabtui.sim.scenario import FaultKind, FaultSpec, Scenario
from fabtui.sim.traffic import BACKGROUND_UPLINK_SHARE, TrafficLayer
from fabtui.topology.pairing import gpu_map
from fabtui.topology.platform import PLATFORMS, gpu_generation

__all__ = [
    "BACKGROUND_UPLINK_SHARE",
    "BIAS_HIGH_ALARM",
    "BIAS_HIGH_WARNING",
    "BIAS_LOW_ALARM",
    "BIAS_LOW_WARNING",
    "DEFAULT_EPOCH",
    "FRAME",
    "INF",
    "LANES",
    "PFCWD_DETECTION_S",
    "PFCWD_RESTORATION_S",
    "PRIORITY",
    "RX_HIGH_ALARM",
    "RX_HIGH_WARNING",
    "RX_LOW_ALARM",
    "RX_LOW_WARNING",
    "STALL_PREVENTION_S",
    "TEMP_HIGH_ALARM",
    "TEMP_HIGH_WARNING",
    "TX_HIGH_ALARM",
    "TX_HIGH_WARNING",
    "TX_LOW_ALARM",
    "TX_LOW_WARNING",
    "Dom",
    "GpuProduct",
    "GpuState",
    "PortCounters",
    "Sim",
    "gpu_product",
]

FRAME = 4160
"""Bytes per RoCE frame (4096 payload + headers), for packet counts."""
PRIORITY = 3
"""The lossless (RoCE) priority."""
GO_BACK_N_FRAMES = 32
"""Frames a RoCE sender has in flight when a loss makes it go back [inference]."""


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
class GpuProduct:
    """How nvidia-smi names and sizes a GPU of one generation (the demo's values, from public
    `nvidia-smi` outputs of each part)."""

    name: str
    """The product name nvidia-smi and nccl-tests print."""
    architecture: str
    memory_mib: int
    power_limit_w: int
    vbios: str = "96.00.89.00.01"
    """The VBIOS version nvidia-smi prints (the demo's)."""
    temperature_limits_c: tuple[int, int, int, int] | None = None
    """(shutdown, slowdown, max operating, memory max operating) °C as `nvidia-smi -q` prints
    them; None where no public output of the part was found (printed N/A)."""


_TEMPERATURE_LIMITS: dict[str, tuple[int, int, int, int]] = {
    "A100": (92, 89, 85, 95),
    "H100": (92, 89, 87, 95),
}
"""GPU Shutdown / Slowdown / Max Operating / Memory Max Operating Temp per generation: A100
SXM4 80GB from a real `nvidia-smi -q -x` (shared/samples/nvidia-smi, telegraf), H100 80GB HBM3
from public `nvidia-smi -q` outputs (the field review, S5)."""

_PRODUCTS: dict[str, tuple[str, int, int]] = {
    "A100": ("NVIDIA A100-SXM4-80GB", 81920, 400),
    "H100": ("NVIDIA H100 80GB HBM3", 81559, 700),
    "H200": ("NVIDIA H200", 143771, 700),
    "GH200": ("NVIDIA GH200 480GB", 97871, 900),
    "B200": ("NVIDIA B200", 183359, 1000),
    "B300": ("NVIDIA B300 SXM6 AC", 275040, 1100),
    "GB200": ("NVIDIA GB200", 189471, 1200),
    "GB300": ("NVIDIA GB300", 284208, 1400),
}
"""Product name, memory (MiB) and power limit (W) as nvidia-smi prints them per generation."""


def throttles(fault: Fault) -> bool:
    """A slow-node fault whose GPUs throttle (not `cause: host`, where the host is slow)."""
    return str(fault.spec.params.get("cause", "gpu")) != "host"


def gpu_product(model: str | None) -> GpuProduct:
    """What nvidia-smi calls a GPU of topology model `model` (an H100 when unknown)."""
    generation = gpu_generation(model) or "H100"
    name, memory, power = _PRODUCTS[generation]
    return GpuProduct(name, PLATFORMS[generation].architecture, memory, power,
                      temperature_limits_c=_TEMPERATURE_LIMITS.get(generation))


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
    memory_temperature_c: int = 0
    """HBM temperature (°C)."""


class Sim(TrafficLayer, OpticsLayer):
    """A topology playing a scenario.

    Inherits every layer (traffic on PFC, optics, links, the base: the state is built in
    `SimBase.__init__`); adds to `_breakpoints` the edges those layers know, and reads the
    counters, the GPUs and the rank placement off them."""

    def __init__(self, topology: Topology, scenario: Scenario, *, seed: int = 7,
                 extra: Sequence[FaultSpec] = (), source: str = "scenario",
                 lines: list[int | None] | None = None, epoch: float = DEFAULT_EPOCH,
                 repairs: Sequence[tuple[str, float]] = (),
                 shut: Sequence[tuple[str, float, float | None]] = (),
                 cleared: Sequence[tuple[str, float]] = ()) -> None:
        super().__init__(topology, scenario, seed=seed, extra=extra, source=source,
                         lines=lines, epoch=epoch, repairs=repairs, shut=shut, cleared=cleared)
        # Rates also change where a storm's pause stops (stall prevention) and where the job
        # dies of a flap longer than its retry window: breakpoints the base cannot know.
        stops = {self.storm_pause_window(f)[1] for f in self.faults
                 if f.kind is FaultKind.PFC_STORM and self.storm_pause_window(f)[1] != INF}
        # ... and where a leaf's PFC watchdog starts and stops dropping a storming NIC's queue.
        drops = {edge for f in self.faults if f.kind is FaultKind.PFC_STORM
                 for edge in (self.watchdog_drops(f) or ()) if edge != INF}
        self._breakpoints = sorted({*self._breakpoints, *stops, *drops, *self._loss_edges()})
        failure = self.job_failure()
        if failure is not None:  # the job's traffic stops there
            self._breakpoints = sorted({*self._breakpoints, failure[0]})

    # per-port counters -----------------------------------------------------------------------
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

    def _counters(self, link: int, device: str, port: str, t: float,
                  since: float) -> PortCounters:
        up = self.link_up(link, t)
        moved = self.bytes_moved(link, t) - (self.bytes_moved(link, since) if since else 0)
        key = (link, device)
        rx_bytes = moved + (self.base("rxb", *key) if not since else 0)
        tx_bytes = moved + (self.base("txb", *key) if not since else 0)
        corrected, lost, symbols, bins = self.receiver_counts(link, device, port, t)
        codewords = sum(bins[1:])
        bad = self.lost_frames(link, device, port, t)
        if since:
            before = self.receiver_counts(link, device, port, since)
            corrected, lost, symbols = (corrected - before[0], lost - before[1],
                                        symbols - before[2])
            codewords -= sum(before[3][1:])
            bad -= self.lost_frames(link, device, port, since)
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
        if device in self.graph.switches:  # lossless packets past a too-short headroom
            overflow = self.headroom_overflow(device, link, t)
            if overflow:
                drops += int(self.integrate(
                    lambda x: self.pause_rates(device, port, link, x)[1], t, link)
                    * overflow / FRAME) - (int(self.integrate(
                        lambda x: self.pause_rates(device, port, link, x)[1], since, link)
                        * overflow / FRAME) if since else 0)
        return PortCounters(
            up=up, rx_ok=rx_bytes // FRAME - bad, tx_ok=tx_bytes // FRAME, rx_bytes=rx_bytes,
            tx_bytes=tx_bytes, rx_err=bad, tx_err=0, rx_drp=drops, tx_drp=0,
            rx_bps=now, tx_bps=now, speed_gbps=self.link_speed(link), rx_pfc=tuple(rx_pfc),
            tx_pfc=tuple(tx_pfc), fec_corr=codewords, fec_uncorr=lost,
            fec_symbol_err=symbols, pre_ber=ber, post_ber=post,
            link_down_events=self.down_events(link, t))

    def frame_loss(self, link: int, device: str, port: str, t: float) -> float:
        """Share of the frames `device:port` receives at `t` that arrive with a bad FCS: those
        touching an uncorrectable codeword (physics.frame_loss_ratio)."""
        if link not in self._by_link or not self.link_up(link, t):
            return 0.0
        ratio = self.fec_rates(link, device, port, t).uncorrectable_ratio
        return physics.frame_loss_ratio(ratio, FRAME)

    def lost_frames(self, link: int, device: str, port: str, t: float) -> int:
        """Frames `device:port` received with a bad FCS over [0, t]: never more than the frames
        the link carried (CRC errors, the port's RX_ERR, RoCE's lost packets)."""
        if link not in self._by_link:
            return 0
        return int(self.integrate(
            lambda x: self.rate(link, x) / FRAME * self.frame_loss(link, device, port, x), t,
            link, self._optic_ramps(link)))

    def transport_share(self, t: float) -> float:
        """The share of its pace the job keeps while a host link of its loses frames: RoCE
        (go-back-N) resends what was in flight after each lost packet [inference: a window of
        `GO_BACK_N_FRAMES`], so goodput is 1 / (1 + loss x window) on the worst link."""
        worst = 0.0
        for link in self._lossy_links():
            for device in self._link_ends(link):
                worst = max(worst, self.frame_loss(link, device, "", t))
        return 1.0 / (1.0 + worst * GO_BACK_N_FRAMES)

    def nic_path_share(self, nics: list[tuple[str, str]], t: float) -> float:
        """The share of its pace a run keeps whose traffic crosses the host links of `nics`
        ((node, NIC) pairs): as `transport_share`, on the worst of those links only (a run
        pinned by `NCCL_IB_HCA` to a healthy rail does not feel another rail's optic)."""
        worst = 0.0
        lossy = set(self._lossy_links())
        for host, nic in nics:
            attachment = self.graph.attachments.get((host, nic))
            if attachment is None or attachment.link_index not in lossy:
                continue
            for device in self._link_ends(attachment.link_index):
                worst = max(worst, self.frame_loss(attachment.link_index, device, "", t))
        return 1.0 / (1.0 + worst * GO_BACK_N_FRAMES)

    def _lossy_links(self) -> list[int]:
        """Host links whose light a fault weakens (they may lose frames)."""
        return [link for link, faults in self._by_link.items() if self._is_host_link(link) and
                any(f.kind in (FaultKind.OPTIC_DEGRADING, FaultKind.DIRTY_CONNECTOR)
                    for f in faults)]

    def _link_ends(self, link: int) -> tuple[str, str]:
        ends = self.topology.links[link]
        return device_of(ends.a), device_of(ends.b)

    def _loss_edges(self) -> set[float]:
        """Where the job's pace changes with a lossy link: every 5 s over the two minutes before
        its receiver gives up (the loss climbs steeply there), and the edges themselves."""
        edges: set[float] = set()
        for link in self._lossy_links():
            for start, _end in self._receiver_down(link):
                edges |= {start - 5.0 * k for k in range(25) if start - 5.0 * k > 0}
        return edges

    # GPUs and ranks --------------------------------------------------------------------------
    def gpu(self, host: str, index: int, t: float) -> GpuState:
        """A GPU's clocks, temperature and health at `t`."""
        node = self.graph.nodes[host]
        gpu = next(g for g in node.gpus if g.index == index)
        slow = any(f.host == host and f.gpu in (None, index) and throttles(f)
                   for f in self.active(FaultKind.SLOW_NODE, t))
        busy = self.job_factor(t) > 0
        # A thermally throttled GPU sits at its slowdown point, above its max operating
        # temperature (87 °C on an H100) and below its shutdown limit (92 °C): the driver
        # slows its clocks (HW and SW thermal slowdown) precisely to stay there.
        temp = (88 + int(2 * self.noise("temp", host, index))) if slow else \
            58 + int(6 * self.noise("temp", host, index))
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
            ecc_volatile_correctable=int(3 * self.noise("ecc", host, index)),
            # The HBM stacks of a throttled H100 run hot too (85-90 °C; their limit is 95).
            memory_temperature_c=(85 + int(6 * self.noise("temp", host, index))) if slow and busy
            else (temp if busy else temp - 20) - 6)

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
