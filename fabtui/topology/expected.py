"""What a healthy fabric should measure, derived from its topology: the one place for the figures.

Probe evaluators, runbook functions and the simulator all take their expected bandwidths from
here, so a gate, a runbook's prose and the demo fabric cannot disagree. Every figure is a
formula over the topology (nodes, GPUs and rail NICs per node, NIC speed, GPU model, NVLink
domain) with a documented efficiency factor, or a published or measured baseline of that
platform; where there is neither, there is no figure (None), never one carried over from another
GPU generation. docs/thresholds.md cites the source of each. Pure functions, no I/O.

Units: GB/s is 10^9 bytes/s (nccl-tests), Gb/s is 10^9 bits/s (perftest `--report_gbits`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fabtui.model.topology import Node
from fabtui.topology.platform import PLATFORMS, Platform
from fabtui.topology.platform import gpu_generation as gpu_generation

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv")
"""Collectives with an expected figure (nccl-tests binary names without `_perf`)."""

NCCL_NET_EFFICIENCY = 0.96
"""NCCL goodput per NIC as a share of its line rate: ~48 GB/s on a 400G ConnectX-7
(NVIDIA/nccl-tests #267, #319: "around 48GB/s from each CX7 NIC at 400Gbps")."""

NVLINK_SM_EFFICIENCY = 0.8
"""Effective NVLink bandwidth of NCCL's SM copies with 128 B payloads: a 25 GB/s link moves
~20 GB/s (NVIDIA/nccl-tests #149, maintainer)."""

NVLS_ALL_REDUCE_FACTOR = 476 / 450
"""Single-node all_reduce with NVLink SHARP reduces inside the NVSwitch and exceeds the
per-direction NVLink rate: ~476 GB/s on 8xH100 with 450 GB/s of NVLink (NVIDIA/nccl-tests #290,
maintainer: "in the expected range"). Measured on 8 x H100 only: it is never carried over to
another NVLink generation (the B200 figure it gave, 952 GB/s, was such an extrapolation)."""

WARN_SHARE = 0.9
FAIL_SHARE = 0.8
"""Below 90 % of the expected figure warns, below 80 % fails [inference: run-to-run noise of a
healthy fabric is a few per cent (microsoft/superbenchmark flags -5 % against a baseline)]."""

ROCE_V2_OVERHEAD_BYTES = 82
"""Per-packet bytes on the wire besides an RDMA payload: preamble+SFD 8, inter-frame gap 12,
Ethernet header 14, FCS 4, IPv4 20, UDP 8, BTH 12, ICRC 4 (IEEE 802.3; IBTA RoCEv2 annex A17)."""

IB_TIMEOUT_UNIT_S = 4.096e-6
"""The Local ACK Timeout is 4.096 us x 2^NCCL_IB_TIMEOUT (NCCL env docs, NCCL_IB_TIMEOUT)."""

DEFAULT_IB_RETRY_CNT = 7
"""NCCL_IB_RETRY_CNT default (NCCL env docs; NCCL_PARAM(IbRetryCnt, "IB_RETRY_CNT", 7))."""

PAUSE_QUANTUM_BITS = 512
PAUSE_MAX_QUANTA = 65535
"""A PFC pause frame holds a priority for up to 65535 quanta of 512 bit times (IEEE 802.1Qbb,
IEEE 802.3 Annex 31D)."""


@dataclass(frozen=True)
class Baseline:
    """A published or measured busbw for one collective on one platform and rank count."""

    value: float
    """The healthy figure, GB/s (a measured run where one is published)."""
    source: str
    gate: float | None = None
    """A published acceptance gate (GB/s): then it is the warn and the fail limit."""
    gate_source: str = ""


SINGLE_NODE_ALL_REDUCE: dict[str, Baseline] = {
    "H100": Baseline(450 * NVLS_ALL_REDUCE_FACTOR,
                     "NVIDIA/nccl-tests #290 (maintainer: ~476 GB/s on 8 x H100 with NVLS)",
                     gate=460, gate_source="Azure/azurehpc-health-checks "
                                           "conf/nd96isr_h100_v5.conf"),
    "H200": Baseline(475, "NVIDIA/nccl-tests #272 (8 x H200: 475 GB/s peak busbw measured)",
                     gate=431, gate_source="Azure/azurehpc-health-checks "
                                           "conf/nd96isr_h200_v5.conf"),
    "GB200": Baseline(679.6, "Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md "
                             "(4 x GB200, all_reduce 8 GB: 679.61 GB/s measured)",
                      gate=432, gate_source="Azure/azurehpc-health-checks "
                                            "conf/nd128isr_ndr_gb200_v6.conf "
                                            "(check_nccl_allreduce 432.0, 16 GB)"),
}
"""Single-node all_reduce figures that were published or measured, per GPU generation. A
generation not here has no figure: B200 and B300 (no gate is published; the one public 8 x B200
report is a user's "830+" GB/s in a question, NVIDIA/nccl #1807), GB300, GH200 (one GPU per
node) and A100 (no NVLS: its ring figure comes from NVLink x the SM copy efficiency)."""

NVLINK_DOMAIN_ALL_REDUCE: dict[tuple[str, int], Baseline] = {
    ("GB200", 72): Baseline(835, "coreweave/nccl-tests PR #43 (a full GB200 NVL72 rack, 72 "
                                 "ranks: all_reduce 834.6-846.8 GB/s busbw at 8 GB)"),
}
"""all_reduce over every GPU of a multi-node NVLink domain (MNNVL), per generation and rank
count, where a measured run was published. Other rank counts inside a domain, and the other
collectives over it, have no figure."""


def _gpu_model(generation: str | None) -> Platform | None:
    return PLATFORMS.get(generation or "")


@dataclass(frozen=True)
class NodeShape:
    """The parts of a node that bound a collective: the slowest node of a set decides."""

    gpus: int
    nics: int
    nic_speed_gbps: int
    gpu: str | None
    """GPU generation (`H100`), None when the topology does not say or it is unknown."""
    nvlink_domain_gpus: int = 0
    """GPUs of these nodes when all of them share one multi-node NVLink domain (an NVL72
    rack: collectives between them cross over NVLink, not the NICs); 0 otherwise."""

    @property
    def nic_goodput_gbs(self) -> float:
        """NCCL goodput of one rail NIC, GB/s."""
        return self.nic_speed_gbps / 8 * NCCL_NET_EFFICIENCY

    @property
    def gpu_net_gbs(self) -> float:
        """Network bandwidth per GPU (rail NICs shared by the GPUs), GB/s."""
        return self.nics * self.nic_goodput_gbs / max(self.gpus, 1)


def node_shape(nodes: Iterable[Node]) -> NodeShape | None:
    """The bounding shape of `nodes` (fewest NICs, slowest NIC, fewest GPUs); None if empty."""
    shapes = [n for n in nodes if n.gpus and n.nics]
    if not shapes:
        return None
    gens = {gpu_generation(g.model) for n in shapes for g in n.gpus[:1]}
    domains = {n.nvlink_domain for n in shapes}
    shared = len(shapes) > 1 and len(domains) == 1 and None not in domains
    return NodeShape(gpus=min(len(n.gpus) for n in shapes),
                     nics=min(len(n.nics) for n in shapes),
                     nic_speed_gbps=min(nic.speed for n in shapes for nic in n.nics),
                     gpu=gens.pop() if len(gens) == 1 else None,
                     nvlink_domain_gpus=sum(len(n.gpus) for n in shapes) if shared else 0)


@dataclass(frozen=True)
class Expected:
    """A healthy figure with its limits and how it was derived."""

    value: float
    warn: float
    """Below this: warn."""
    fail: float
    """Below this: fail."""
    unit: str
    basis: str
    """The formula with this topology's numbers, for findings and reports."""
    source: str


def _limits(value: float, unit: str, basis: str, source: str,
            gate: float | None = None, gate_source: str = "") -> Expected:
    if gate is not None:
        return Expected(round(value, 1), gate, gate, unit,
                        f"{basis}; fail below the published gate {gate:g} {unit}",
                        f"{source}; gate: {gate_source}")
    return Expected(round(value, 1), round(value * WARN_SHARE, 1), round(value * FAIL_SHARE, 1),
                    unit, f"{basis}; warn below {WARN_SHARE:.0%}, fail below {FAIL_SHARE:.0%}",
                    source)


def _baseline(found: Baseline, basis: str) -> Expected:
    return _limits(found.value, "GB/s", basis, found.source, found.gate, found.gate_source)


def expected_busbw(collective: str, nodes: int, shape: NodeShape) -> Expected | None:
    """Expected nccl-tests busbw (GB/s, large messages) of `collective` over `nodes` nodes of
    `shape`, one rank per GPU. None ("no figure") where no published or measured baseline and
    no derivation from published per-part figures exists: a single node of unknown or
    unmeasured GPU model (NVLink decides there), a collective over part of a multi-node NVLink
    domain, a collective with no model."""
    if collective not in COLLECTIVES or nodes < 1:
        return None
    model = _gpu_model(shape.gpu)
    if nodes == 1:
        return _single_node(collective, shape, model)
    if shape.nvlink_domain_gpus:
        # Every rank in one NVLink domain: NCCL crosses trays over NVLink (MNNVL), the NICs do
        # not bound it. Only a measured run says what that reaches.
        found = NVLINK_DOMAIN_ALL_REDUCE.get((shape.gpu or "", shape.nvlink_domain_gpus)) \
            if collective == "all_reduce" else None
        return _baseline(found, f"{shape.gpu} NVLink domain, {shape.nvlink_domain_gpus} GPUs "
                                "(multi-node NVLink): measured baseline") if found else None
    goodput = shape.nic_goodput_gbs
    per_gpu = shape.gpu_net_gbs
    nic_text = f"{shape.nic_speed_gbps}G x {NCCL_NET_EFFICIENCY} = {goodput:.1f} GB/s per NIC"
    if collective in ("all_reduce", "all_gather", "reduce_scatter"):
        # A ring crosses every node boundary once per rail NIC: the node's NICs together bound
        # busbw, NVLink (per direction) only above that.
        value = shape.nics * goodput
        if model is not None:
            value = min(value, model.nvlink_gbs)
        return _limits(value, "GB/s", f"ring: {shape.nics} NICs x {nic_text}",
                       "NVIDIA/nccl-tests #319 (ring ~8 x 48 GB/s on 8x400G); "
                       "nccl-tests doc/PERFORMANCE.md (busbw = bottleneck bandwidth)")
    if collective == "alltoall":
        # Each of n = N x G ranks sends S/n to every rank; the (n - G) / n that leaves the node
        # goes through the GPU's share of the NICs (PXN forwards it over NVLink to the rail's
        # NIC; alltoall cannot aggregate NICs per GPU pair). t = S (n - G) / (n B), algbw = S/t,
        # busbw = algbw (n - 1) / n = B (n - 1) / (n - G).
        n = nodes * shape.gpus
        value = per_gpu * (n - 1) / (n - shape.gpus)
        return _limits(value, "GB/s",
                       f"alltoall: {per_gpu:.1f} GB/s per GPU x (n-1)/(n-G) = "
                       f"({n}-1)/({n}-{shape.gpus}) ({nic_text})",
                       "NVIDIA/nccl-tests #130 (busbw ~ N/(N-1) x network bandwidth per GPU), "
                       "#267 (alltoall cannot aggregate NICs)")
    # sendrecv between nodes: a GPU pair crosses on one NIC, busbw = algbw.
    return _limits(per_gpu, "GB/s", f"sendrecv: one GPU's network share, {nic_text}",
                   "nccl-tests doc/PERFORMANCE.md (sendrecv busbw = algbw); #267")


def _single_node(collective: str, shape: NodeShape, model: Platform | None) -> Expected | None:
    """One node: NVLink decides. all_reduce (NVLS on H100 and later) has a figure only where
    one was published or measured for that generation; the other collectives move NVLink x the
    SM copy efficiency."""
    if model is None or shape.gpus < 2:
        return None
    if collective == "all_reduce" and model.nvls:
        found = SINGLE_NODE_ALL_REDUCE.get(model.generation)
        return _baseline(found, f"{shape.gpus} x {model.generation}, NVLS: measured "
                                "baseline") if found else None
    return _limits(model.nvlink_gbs * NVLINK_SM_EFFICIENCY, "GB/s",
                   f"{shape.gpu} NVLink {model.nvlink_gbs:g} GB/s x {NVLINK_SM_EFFICIENCY} "
                   "(SM copy efficiency)", "NVIDIA/nccl-tests #149; NCCL src/graph/topo.h "
                   "(per-link NVLink model: SM90 20.6, SM100 40.1 GB/s)")


def expected_rdma_gbps(speed_gbps: int, mtu: int = 4096) -> Expected:
    """ib_write_bw / ib_read_bw / ib_send_bw ceiling (Gb/s) between two NICs of `speed_gbps`:
    the line rate less RoCEv2 per-packet overhead at the RDMA `mtu` (392 Gb/s at 400G)."""
    value = speed_gbps * mtu / (mtu + ROCE_V2_OVERHEAD_BYTES)
    return _limits(value, "Gb/s", f"{speed_gbps}G x {mtu}/({mtu}+{ROCE_V2_OVERHEAD_BYTES}) "
                   "RoCEv2 framing", "IEEE 802.3 framing; IBTA RoCEv2 headers")


def ib_timeout_default(nccl_version: str | None) -> int:
    """NCCL_IB_TIMEOUT default of a NCCL release: 14 before 2.14, 18 from 2.14 to 2.22, 20 from
    2.23 (`NCCL_PARAM(IbTimeout, "IB_TIMEOUT", ...)` in the v2.13.4-1, v2.14.3-1 and v2.23.4-1
    sources). Unknown: 18, the 2.14-2.22 default the runbooks assume without a job log."""
    match = re.match(r"(\d+)\.(\d+)", nccl_version or "")
    if not match:
        return 18
    release = (int(match.group(1)), int(match.group(2)))
    if release >= (2, 23):
        return 20
    return 18 if release >= (2, 14) else 14


def ib_retry_window_s(nccl_version: str | None, env: Mapping[str, str] | None = None) -> float:
    """Seconds a link may stay down before NCCL's IB QPs give up (completion error 12):
    4.096 us x 2^NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1), from the job's version and env."""
    env = env or {}
    timeout = _int(env.get("NCCL_IB_TIMEOUT"), ib_timeout_default(nccl_version))
    retries = _int(env.get("NCCL_IB_RETRY_CNT"), DEFAULT_IB_RETRY_CNT)
    return float(IB_TIMEOUT_UNIT_S * 2 ** timeout * (retries + 1))


def _int(text: str | None, default: int) -> int:
    try:
        return int(str(text).strip().rstrip(".")) if text is not None else default
    except ValueError:
        return default


def pause_frame_hold_s(speed_gbps: float) -> float:
    """How long one pause frame at the maximum quanta holds a priority on a `speed_gbps` link
    (83.9 us at 400G, 336 us at 100G)."""
    return PAUSE_MAX_QUANTA * PAUSE_QUANTUM_BITS / (speed_gbps * 1e9)


def pause_share(frames_per_s: float, speed_gbps: float) -> float:
    """The share of time a priority is held paused by `frames_per_s` pause frames at the maximum
    quanta, capped at 1: a fully paused 400G port receives ~11.9k frames/s, a 100G one ~3k. It
    is an upper estimate (senders refresh XOFF early, or send smaller quanta): use the measured
    pause duration where the counters give it."""
    return min(frames_per_s * pause_frame_hold_s(speed_gbps), 1.0)
