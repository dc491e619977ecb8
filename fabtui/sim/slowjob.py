"""The demo job over a window, as `fabtui triage slow` reads a real one: per-rank step times,
NCCL Inspector busbw per communicator and rank, and the fabric's series per element.

Deterministic from the simulation's seed and scenario (numpy's PCG64 seeded with both), on a grid
of `resolution` seconds (15 s: a Prometheus scrape). The faults come from the scenario's
timeline as the simulation resolved them (`Sim.faults`), and where the simulation already models
a quantity the series read it from there, so a probe on the demo and this series agree: the
light, pre-FEC BER, FEC and link state of every cable a fault touches (`Sim.rx_power`,
`pre_fec_ber`, `fec_rates`, `link_up`), GPU clocks and throttle (`Sim.gpu`).

The job is a Megatron-style MoE run on every rank of the placement: tensor parallel inside a
node (NVLink, not followed), one data-parallel all_reduce communicator per local GPU index
(`dp-rN`: one rank per node, so it rides rail N's leaf) and one expert-parallel alltoall over
all ranks (`ep`). A step is compute, then the dp all_reduce, then the ep alltoall
(`COMPUTE_SHARE`, `DP_SHARE`, `EP_SHARE` of the workload's step time). What each fault does:

- `slow-node` (a node, or `node:gpuN`): its ranks compute `1 / job_factor` as long and arrive
  late at every collective; the others wait (their Inspector busbw falls, the late ranks' does
  not). Its GPUs throttle unless `cause: host`.
- `input-stall` (`job`): every rank waits for its batch, its GPUs idle meanwhile; the
  collectives are untouched. Each wait is exponential with mean `extra_s`; a sample reports
  the mean of the ~4 steps it spans (Gamma(4, extra_s / 4)).
- `interference` (a leaf): another tenant fills the leaf's shared buffer: the leaf pauses the
  job's NICs on it (pause share ~0.25), marks ECN, the NICs return CNPs, its uplinks carry
  the other traffic; what crosses the leaf runs at 0.7 of its pace (the sim's busbw factor).
- `optic-degrading`, `dirty-connector`, `link-flap` on any cable: the cable's ends as the sim
  has them; lost frames cost the flows through it 1 / (1 + loss x 32) of their pace (RoCE
  go-back-N, `GO_BACK_N_FRAMES`); a host link slows its rail's dp communicator and the ep
  alltoall, an uplink only what crosses the spines.
- `link-speed` on a NIC: while the fault lasts, both ends report the slower speed and the flows
  through it (its rail's dp all_reduce, the ep alltoall) run at that share of their pace (a
  ring runs at its slowest link).
- `pfc-storm`, `pfc-deadlock`: the pause as the sim has it (`Sim.pause_rates`) on every cable
  of the switches involved, each sample the mean over the 15 s it closes: frames/s both ways
  and the share held paused (0.95 for back-to-back XOFF). A host link keeps 1 - the share
  either end is held paused of its pace (the storming NIC's own link: 0.05, as the sim's
  traffic has it), nothing while a PFC watchdog drops its queue; its rail's dp all_reduce and
  the ep alltoall run at that pace (a ring at its slowest link), and a sample that moved less
  than 1 % ends no step (the job dies one retry window later, `Sim.job_failure`).
- `uplink-down`: the link is down; what crosses the spines through that leaf squeezes through
  the rest (the sim's uplink share).
- `NCCL_PXN_DISABLE=1` (the workload's `nccl_env`, or a `misconfig` fault's `nccl_env`): the
  alltoall sends (G-1)/G of its bytes over the spines, where ECMP hashing packs flows unevenly:
  random hashing of n flows on n links uses 1 - 1/e of them (`ECMP_SHARE`), so that part runs
  at 63 % pace [inference: balls into bins]; every leaf's uplinks carry it.

Other faults are not modelled here (the fabric series stay healthy around them) and are named in
the play's warnings; where the job stops with them (`Sim.job_factor` 0: a hang, a NIC cut off past
the IB retry window by a PFC watchdog or a dead leaf) its step times end there. Noise: 0.6 % per
step, a slow 0.4 % drift, single-sample checkpoint or
garbage-collection spikes (2 % of samples, +10-35 %), 1 % per Inspector record, counters with
their own Poisson or relative noise. No side effects.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from fabtui.model.slowjob import BusbwSeries, Communicator, Series, SlowJobInputs, StepSeries
from fabtui.sim.core import GO_BACK_N_FRAMES, Sim
from fabtui.sim.faults import Fault
from fabtui.sim.optics import LANES
from fabtui.sim.programs.nccl_log import JOB_LOG
from fabtui.sim.scenario import FaultKind
from fabtui.sim.traffic import BACKGROUND_UPLINK_SHARE
from fabtui.topology.expected import pause_frame_hold_s

Array = npt.NDArray[np.float64]
COMPUTE_SHARE, DP_SHARE, EP_SHARE = 0.375, 0.125, 0.5
"""Shares of the workload's step time (PXN on, healthy): an MoE step's alltoall is as long as its
compute or longer [inference: why DeepSeek-V3 overlaps them, DualPipe]."""
DP_BUSBW, EP_BUSBW = 46.0, 40.0
"""GB/s per rank: a ring all_reduce on one 400G rail, an alltoall on 8 x 400G nodes
(nccl-tests #130: 54 GB/s on 8 nodes with NVLink inside them) [inference]."""
ECMP_SHARE = 1 - 1 / math.e
PAUSED_AT_MOST = 0.95
"""The share of time a port held by back-to-back pause frames is paused (the sim's
`pause_duration_rate`: refreshes leave gaps)."""
MIN_PACE = 0.01
"""Below this pace a sample ends no step (a NIC cut off by a PFC watchdog: the job dies one
retry window later, `Sim.job_failure`)."""
INTERFERENCE_PACE = 0.7
"""What crosses a leaf another tenant fills keeps this share of its pace (the sim's busbw)."""
_LINK_FAULTS = (FaultKind.OPTIC_DEGRADING, FaultKind.DIRTY_CONNECTOR, FaultKind.LINK_FLAP,
                FaultKind.UPLINK_DOWN)
_PAUSE_FAULTS = (FaultKind.PFC_STORM, FaultKind.PFC_DEADLOCK)
_MODELLED = (*_LINK_FAULTS, *_PAUSE_FAULTS, FaultKind.LINK_SPEED, FaultKind.SLOW_NODE,
             FaultKind.INPUT_STALL, FaultKind.INTERFERENCE, FaultKind.MISCONFIG)
SUBSAMPLES = 15
"""Points a pause-driven sample is averaged over: a storm stall prevention ends after 8 s, or a
watchdog that cuts a NIC off 200 ms in, changes a 15 s sample part-way (a scraped counter's
rate is the interval's mean too)."""


@dataclass
class PlayedComm:
    """One communicator of the demo job and its ranks' busbw (ranks x time)."""

    info: Communicator
    ranks: npt.NDArray[np.int64]
    busbw: Array


@dataclass
class SlowJobPlay:
    """The demo job's window as arrays on one grid (the fields of the engine's `Frame`)."""

    job: str
    t: Array
    ranks: npt.NDArray[np.int64]
    steps: Array
    comms: list[PlayedComm] = field(default_factory=list)
    fabric: dict[str, dict[str, Array]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    job_log: str = JOB_LOG
    """Where the simulated job's log is on its nodes (what `logs.nccl` reads there)."""

    def to_inputs(self) -> SlowJobInputs:
        """The same window as `SlowJobInputs` (lists, JSON)."""
        times = [float(x) for x in self.t]
        keep = [np.isfinite(row) for row in self.steps]
        return SlowJobInputs(
            job=self.job, start=times[0], end=times[-1],
            steps=[StepSeries(rank=int(r), t=[x for x, k in zip(times, ok, strict=True) if k],
                              step_s=[float(v) for v in row[ok]], source="demo")
                   for r, row, ok in zip(self.ranks, self.steps, keep, strict=True)],
            communicators=[c.info for c in self.comms],
            busbw=[BusbwSeries(comm=c.info.id, rank=int(r), t=times,
                               busbw_gbs=[float(v) for v in row])
                   for c in self.comms for r, row in zip(c.ranks, c.busbw, strict=True)],
            fabric={element: {metric: Series(t=times, v=[float(v) for v in values])
                              for metric, values in metrics.items()}
                    for element, metrics in self.fabric.items()},
            sources=list(self.sources), warnings=list(self.warnings), job_log=self.job_log)


def _pxn_off(sim: Sim, ts: Array) -> npt.NDArray[np.bool_]:
    """Samples at which the job runs with NCCL_PXN_DISABLE=1."""
    if str(sim.scenario.workload.nccl_env.get("NCCL_PXN_DISABLE", "0")) == "1":
        return np.ones(ts.shape, dtype=bool)
    off = np.zeros(ts.shape, dtype=bool)
    for fault in sim.faults:
        value = fault.spec.params.get("value")
        if fault.kind is FaultKind.MISCONFIG and fault.spec.params.get("setting") == \
                "nccl_env" and isinstance(value, dict) and \
                str(value.get("NCCL_PXN_DISABLE", "0")) == "1":
            off |= _active(fault, ts)
    return off


def _active(fault: Fault, ts: Array) -> npt.NDArray[np.bool_]:
    until = fault.spec.until if fault.spec.until is not None else np.inf
    active: npt.NDArray[np.bool_] = (ts >= fault.spec.at) & (ts < until)
    return active


def _unplayed(fault: Fault, ts: Array, alive: npt.NDArray[np.bool_]) -> str:
    """The warning for a fault this play does not model: where the job stops while it lasts
    (a hang, a watchdog or a dead switch cutting a NIC off past the retry window), the stop is
    played (no steps after it) but not the fault's own series."""
    what = f"{fault.kind.value} on {fault.spec.component}"
    if (~alive & (ts >= fault.spec.at)).any():
        return f"{what}: the job's stop is played (no step times after it), not the " \
               f"fault's fabric series"
    return f"{what} is not played in the step-time series"


class _Builder:
    """Accumulates one play (see the module)."""

    def __init__(self, sim: Sim, ts: Array, rng: np.random.Generator) -> None:
        self.sim, self.ts, self.rng = sim, ts, rng
        self.n = ts.size
        self.fabric: dict[str, dict[str, Array]] = {}
        graph = sim.graph
        self.links = graph.topology.links
        self.host_links = {a.link_index: (f"{h}:{nic}", f"{a.switch}:{a.port}", a.nic.rail)
                           for (h, nic), a in graph.attachments.items()}
        self.leaf_rail = {a.switch: a.nic.rail for a in graph.attachments.values()}
        self.uplinks = {i: (s, o) for s, o, i in graph.switch_edges}

    def noise(self, scale: float) -> Array:
        noise: Array = self.rng.normal(0.0, scale, self.n)
        return noise

    def put(self, element: str, metric: str, values: Array) -> None:
        self.fabric.setdefault(element, {})[metric] = values

    def port(self, key: str, link: int, util: Array, *, nic: bool) -> None:
        """A NIC or switch port at health: light, FEC, pause, ECN or CNP, load."""
        device, part = key.split(":", 1)
        sim = self.sim
        power = min((p for lane in range(LANES)
                     if (p := sim.rx_power(link, device, part, lane, 0.0)) is not None),
                    default=-40.0)
        ber = sim.pre_fec_ber(link, device, part, 0.0)
        fec = sim.fec_rates(link, device, part, 0.0)
        self.put(key, "rx_power_dbm", power + self.noise(0.03))
        self.put(key, "pre_fec_ber", ber * np.exp(self.noise(0.05)))
        self.put(key, "fec_corrected_per_s", fec.corrected_codewords * np.exp(self.noise(0.02)))
        self.put(key, "fec_uncorrectable_per_s", np.zeros(self.n))
        self.put(key, "link_up", np.ones(self.n))
        self.put(key, "speed_gbps", np.full(self.n, float(self.sim.graph.link_speed(link) or 400)))
        self.put(key, "util", np.clip(util * (1 + self.noise(0.02)), 0, 1))
        self.put(key, "pause_share_rx", np.abs(self.noise(0.002)))
        self.put(key, "pause_share_tx", np.abs(self.noise(0.002)))
        marks = 8.0 + 12.0 * sim.noise("ecn", key)
        if nic:
            self.put(key, "cnp_per_s", marks * 0.4 * np.exp(self.noise(0.2)))
            self.put(key, "out_of_sequence_per_s", self.rng.poisson(0.5, self.n).astype(float))
        else:
            self.put(key, "ecn_marked_per_s", marks * np.exp(self.noise(0.2)))

    def paused(self, faults: list[Fault], resolution: float) -> dict[int, Array]:
        """Pause as the sim has it (`Sim.pause_rates`) on every cable of the switches that
        PFC storms and deadlocks involve, added to both ends' pause series (frames/s and the
        share of the sample held paused, each the mean over the sample); the share of its pace
        each host link keeps, by its link index: what its NIC may send (1 - the share it is
        held paused), what it may receive (1 - the share its leaf port is held), nothing while
        a PFC watchdog drops its lossless queue."""
        sim = self.sim
        switches: set[str] = set()
        for fault in faults:
            if fault.kind is FaultKind.PFC_STORM and fault.link in self.host_links:
                switches.add(self.host_links[fault.link][1].split(":", 1)[0])
            elif fault.kind is FaultKind.PFC_DEADLOCK:
                switches |= {w for w, _, _ in sim.deadlock_cycle(fault)}
                switches |= {h for _, h, _ in sim.deadlock_cycle(fault)}
        paces: dict[int, Array] = {}
        # the interval each sample closes (a step that ended at t, a rate scraped at t)
        offsets = ((np.arange(SUBSAMPLES) + 0.5) / SUBSAMPLES - 1.0) * resolution
        for link in range(len(self.links)):
            keys = self.cable(link)
            if not any(k.split(":", 1)[0] in switches for k in keys) or \
                    not all(k in self.fabric for k in keys):
                continue
            hold = pause_frame_hold_s(sim.link_speed(link))  # as trained (a 100G cable)
            held = {}
            for key in keys:
                device, part = key.split(":", 1)
                rates = np.array([[sim.pause_rates(device, part, link, float(t + o))
                                   for o in offsets] for t in self.ts])  # n x sub x (rx, tx)
                share = np.minimum(rates * hold, 1.0) * PAUSED_AT_MOST
                rx, tx = rates.mean(axis=1).T
                if not rx.any() and not tx.any():
                    continue
                self.put(key, "pause_rx_per_s", rx * np.exp(self.noise(0.01)))
                self.put(key, "pause_tx_per_s", tx * np.exp(self.noise(0.01)))
                got = self.fabric[key]
                got["pause_share_rx"] = np.clip(got["pause_share_rx"] +
                                                share[:, :, 0].mean(axis=1), 0, 1)
                got["pause_share_tx"] = np.clip(got["pause_share_tx"] +
                                                share[:, :, 1].mean(axis=1), 0, 1)
                held[key] = share[:, :, 0]
            if link in self.host_links and held:
                blocked = np.max(np.stack(list(held.values())), axis=0)
                dropped = np.array([[sim.dropping(link, float(t + o)) for o in offsets]
                                    for t in self.ts])
                paces[link] = np.where(dropped, 0.0, 1.0 - blocked).mean(axis=1)
        return paces

    def cable(self, link: int) -> tuple[str, str]:
        """Both element keys of a cable (the NIC first for a host link)."""
        if link in self.host_links:
            nic, port, _ = self.host_links[link]
            return nic, port
        return self.links[link].a, self.links[link].b

    def from_sim(self, link: int) -> Array:
        """Overwrite both ends of a faulted cable with the sim's readings; the share of its pace
        a flow through it keeps (go-back-N on the worse end's lost frames)."""
        sim, pace = self.sim, np.ones(self.n)
        for key in self.cable(link):
            device, part = key.split(":", 1)
            power = np.empty(self.n)
            ber, corrected, lost, up = (np.empty(self.n) for _ in range(4))
            for i, t in enumerate(self.ts):
                lanes = [p for lane in range(LANES)
                         if (p := sim.rx_power(link, device, part, lane, float(t))) is not None]
                power[i] = min(lanes) if lanes else -40.0
                ber[i] = sim.pre_fec_ber(link, device, part, float(t))
                fec = sim.fec_rates(link, device, part, float(t))
                up[i] = 1.0 if sim.link_up(link, float(t)) else 0.0
                corrected[i] = fec.corrected_codewords * up[i]
                lost[i] = fec.uncorrectable * up[i]
                loss = sim.frame_loss(link, device, part, float(t))
                pace[i] = min(pace[i], 1.0 / (1.0 + loss * GO_BACK_N_FRAMES))
            self.put(key, "rx_power_dbm", np.where(up > 0, power, -40.0) + self.noise(0.03))
            self.put(key, "pre_fec_ber", ber * np.exp(self.noise(0.05)))
            self.put(key, "fec_corrected_per_s", corrected * np.exp(self.noise(0.02)))
            self.put(key, "fec_uncorrectable_per_s", lost)
            self.put(key, "link_up", up)
            self.fabric[key]["util"] = self.fabric[key]["util"] * up
        return pace


def play_slow_job(sim: Sim, *, resolution: float = 15.0, start: float = 0.0,
                  end: float | None = None, job: str = "4242") -> SlowJobPlay:
    """The demo job's window [start, end) (seconds of the scenario; default its duration)."""
    scenario = sim.scenario
    end = scenario.duration if end is None else end
    ts = np.arange(start, end, resolution, dtype=float)
    n = ts.size
    seed = [sim.seed, zlib.crc32(scenario.name.encode())]
    rng = np.random.default_rng(seed)
    b = _Builder(sim, ts, rng)
    graph = sim.graph
    slots = graph.ranks
    ranks = np.array([s.rank for s in slots], dtype=np.int64)
    alive = np.array([sim.job_factor(float(t)) > 0 for t in ts])
    warnings = [_unplayed(f, ts, alive) for f in sim.faults if f.kind not in _MODELLED]

    step_s = scenario.workload.step_s
    compute, dp_s, ep_s = (share * step_s for share in (COMPUTE_SHARE, DP_SHARE, EP_SHARE))
    rails = sorted({a.nic.rail for a in graph.attachments.values()})
    dp_pace = {rail: np.ones(n) for rail in rails}
    ep_pace = np.ones(n)
    cross = np.where(_pxn_off(sim, ts), (len(rails) - 1) / max(len(rails), 1), 0.0)
    cross_pace = {leaf: np.ones(n) for leaf in b.leaf_rail}
    late = np.zeros((len(slots), n))
    stall = np.zeros(n)
    idle = np.zeros(n)
    tenant: dict[str, Array] = {}
    for fault in sim.faults:
        active = _active(fault, ts)
        if fault.kind is FaultKind.SLOW_NODE:
            factor = float(fault.spec.params.get("job_factor", 0.6))
            for i, slot in enumerate(slots):
                if slot.node == fault.host and fault.gpu in (None, slot.gpu):
                    late[i] = np.maximum(late[i], active * compute * (1 / factor - 1))
        elif fault.kind is FaultKind.INPUT_STALL:
            extra = float(fault.spec.params.get("extra_s", 0.8))
            waits = rng.gamma(4.0, extra / 4.0, n) * active
            stall += waits
            idle = np.maximum(idle, waits)
        elif fault.kind is FaultKind.INTERFERENCE and fault.switch:
            tenant[fault.switch] = np.maximum(tenant.get(fault.switch, np.zeros(n)), active)
            rail = b.leaf_rail.get(fault.switch)
            if rail is not None:
                dp_pace[rail] *= np.where(active, INTERFERENCE_PACE, 1.0)
            ep_pace *= np.where(active, INTERFERENCE_PACE, 1.0)

    # the job: step time per sample, each rank's, and the fabric's load
    jitter = b.noise(0.006) + 0.004 * np.sin(2 * np.pi * ts / max(end - start, 1.0))
    spikes = (rng.random(n) < 0.02) * rng.uniform(0.10, 0.35, n) * step_s

    # healthy fabric first, then the cables faults touch, read from the sim
    nic_util = 0.55
    up_util = BACKGROUND_UPLINK_SHARE + nic_util * cross
    for link, (nic, port, _rail) in b.host_links.items():
        b.port(nic, link, np.full(n, nic_util), nic=True)
        b.port(port, link, np.full(n, nic_util), nic=False)
    for link, (one, other) in b.uplinks.items():
        leaf = one if one in b.leaf_rail else other
        load = up_util + 0.45 * tenant.get(leaf, np.zeros(n))
        b.port(b.links[link].a, link, load, nic=False)
        b.port(b.links[link].b, link, load, nic=False)
    for fault in sim.faults:
        if fault.kind not in _LINK_FAULTS or fault.link is None:
            continue
        pace = b.from_sim(fault.link)
        if fault.link in b.host_links:
            dp_pace[b.host_links[fault.link][2]] *= pace
            ep_pace *= pace
        elif fault.link in b.uplinks:
            one, other = b.uplinks[fault.link]
            leaf = one if one in b.leaf_rail else other
            ups = graph.uplinks(leaf)
            share = np.array([sum(sim.link_up(u, float(t)) for u in ups) / len(ups)
                              for t in ts]) if ups else np.ones(n)
            cross_pace[leaf] = np.minimum(cross_pace[leaf], pace * share)
            for u in ups:
                for key in b.cable(u):
                    if b.fabric[key]["link_up"].min() > 0:
                        b.fabric[key]["util"] = np.clip(b.fabric[key]["util"] / share, 0, 1)
    pause_faults = [f for f in sim.faults if f.kind in _PAUSE_FAULTS]
    for link, pace in (b.paused(pause_faults, resolution) if pause_faults else {}).items():
        # a ring runs at its slowest link: a NIC that cannot receive holds its rail's
        # all_reduce and the alltoall; a sample in which it moved (almost) nothing ends no step
        alive &= pace >= MIN_PACE
        pace = np.maximum(pace, MIN_PACE)
        dp_pace[b.host_links[link][2]] = np.minimum(dp_pace[b.host_links[link][2]], pace)
        ep_pace = np.minimum(ep_pace, pace)
    for fault in sim.faults:  # a link that came up slower, while the fault lasts
        if fault.kind is not FaultKind.LINK_SPEED or fault.link not in b.host_links:
            continue
        active = _active(fault, ts)
        nominal = float(graph.link_speed(fault.link) or 400)
        slower = float(fault.spec.params.get("speed_gbps", nominal))
        for key in b.cable(fault.link):
            b.fabric[key]["speed_gbps"] = np.where(active, slower, nominal)
        pace = np.where(active, min(1.0, slower / nominal), 1.0)
        dp_pace[b.host_links[fault.link][2]] *= pace
        ep_pace *= pace
    worst_cross = np.min(np.vstack(list(cross_pace.values())), axis=0) if cross_pace else \
        np.ones(n)
    ep_time = ep_s * ((1 - cross) + cross / (ECMP_SHARE * worst_cross)) / ep_pace
    dp_time = {rail: dp_s / pace for rail, pace in dp_pace.items()}
    late_max = late.max(axis=0) if late.size else np.zeros(n)
    job_step = compute * (1 + jitter) + spikes + stall + late_max + \
        np.max(np.vstack(list(dp_time.values())), axis=0) + ep_time
    job_step = np.where(alive, job_step, np.nan)
    steps = job_step[None, :] * (1 + rng.normal(0, 0.002, (len(slots), n)))
    baseline = float(np.nanmedian(job_step)) if np.isfinite(job_step).any() else step_s

    # tenants: the leaf pauses and marks the job's NICs on it, which return CNPs
    for leaf, on in tenant.items():
        for attachment in graph.hosts_behind(leaf):
            nic = f"{attachment.node.hostname}:{attachment.nic.name}"
            port = f"{leaf}:{attachment.port}"
            share = on * np.clip(0.25 + b.noise(0.04), 0.05, 0.6)
            b.fabric[port]["pause_share_tx"] = b.fabric[port]["pause_share_tx"] + share
            b.fabric[nic]["pause_share_rx"] = b.fabric[nic]["pause_share_rx"] + share
            marks = on * 52000.0 * np.exp(b.noise(0.1))
            b.fabric[port]["ecn_marked_per_s"] = b.fabric[port]["ecn_marked_per_s"] + marks
            b.fabric[nic]["cnp_per_s"] = b.fabric[nic]["cnp_per_s"] + 0.4 * marks
    # the job's own load follows its pace
    pace_now = np.where(np.isfinite(job_step), baseline / np.where(np.isfinite(job_step),
                                                                    job_step, 1.0), 0.0)
    for nic, port, _rail in b.host_links.values():
        for key in (nic, port):
            b.fabric[key]["util"] = b.fabric[key]["util"] * np.minimum(pace_now, 1.2)

    # GPUs: clocks and throttle as the sim reads them (at one moment of each fault's window:
    # a GPU's state only changes where a slow-node fault starts or ends); busy unless waiting
    # for input
    slow_faults = [f for f in sim.faults if f.kind is FaultKind.SLOW_NODE]
    for slot in slots:
        key = f"{slot.node}:gpu{slot.gpu}"
        first = float(ts[np.argmax(alive)]) if alive.any() else float(ts[0])
        clocks = np.full(n, float(sim.gpu(slot.node, slot.gpu, first).sm_clock_mhz))
        hot = np.zeros(n)
        for fault in slow_faults:
            if fault.host != slot.node or fault.gpu not in (None, slot.gpu):
                continue
            active = _active(fault, ts) & alive
            if not active.any():
                continue
            state = sim.gpu(slot.node, slot.gpu, float(ts[np.argmax(active)]))
            clocks = np.where(active, float(state.sm_clock_mhz), clocks)
            hot = np.where(active & ("hw_thermal_slowdown" in state.reasons), 1.0, hot)
        b.put(key, "gpu_sm_clock_mhz", clocks + np.where(hot > 0, 0.0, b.noise(4.0)))
        b.put(key, "gpu_throttle", hot)
        busy = np.clip(0.97 * (1 - idle / np.maximum(job_step, 1e-9)) + b.noise(0.008), 0, 1)
        b.put(key, "gpu_util", np.where(alive, busy, 0.0))
        b.put(key, "xid", np.zeros(n))
        b.put(key, "nvlink_errors_per_s", np.zeros(n))

    # Inspector: each rank's busbw of each communicator (a late rank times it short)
    comms: list[PlayedComm] = []
    rank_index = {int(r): i for i, r in enumerate(ranks)}

    def inspected(members: list[int], ideal: Array, transfer: Array) -> Array:
        rows = late[[rank_index[m] for m in members]]
        wait = rows.max(axis=0)[None, :] - rows
        bw = ideal[None, :] * transfer[None, :] / (transfer[None, :] + wait)
        noisy: Array = bw * (1 + rng.normal(0, 0.01, bw.shape))
        return np.where(alive[None, :], noisy, np.nan)

    gpus = sorted({s.gpu for s in slots})
    for gpu in gpus:
        members = [s.rank for s in slots if s.gpu == gpu]
        if len(members) < 2:
            continue
        rail = min(rails, key=lambda r: abs(r - gpu)) if rails else 0
        ideal = DP_BUSBW * dp_pace.get(rail, np.ones(n))
        info = Communicator(id=f"0x{zlib.crc32(f'dp{gpu}'.encode()):08x}", nranks=len(members),
                            collective="AllReduce", msg_bytes=256 << 20, ranks=members,
                            label=f"dp-r{gpu}")
        comms.append(PlayedComm(info, np.array(members, dtype=np.int64),
                                inspected(members, ideal, dp_time.get(rail, np.full(n, dp_s)))))
    everyone = [int(r) for r in ranks]
    ep_ideal = EP_BUSBW * ep_s / ep_time
    comms.append(PlayedComm(
        Communicator(id=f"0x{zlib.crc32(b'ep'):08x}", nranks=len(everyone),
                     collective="AllToAll", msg_bytes=64 << 20, ranks=everyone, label="ep"),
        np.array(everyone, dtype=np.int64), inspected(everyone, ep_ideal, ep_time)))
    return SlowJobPlay(job=job, t=sim.epoch + ts, ranks=ranks, steps=steps, comms=comms,
                       fabric=b.fabric, warnings=warnings,
                       sources=[f"demo fabric: scenario {scenario.name}, seed {sim.seed}"])


__all__ = ["PlayedComm", "SlowJobPlay", "play_slow_job"]
