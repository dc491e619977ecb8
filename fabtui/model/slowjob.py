""""Why is the job slow?": the inputs over a window and the answer (`fabtui triage slow`).

Inputs (`SlowJobInputs`): per-rank step times, per-communicator busbw in NCCL Inspector's shape
(one series per communicator and reporting rank) and the fabric's series keyed by topology
element (`node004:gpu3`, `node004:mlx5_3`, `leaf-g00-r3:Ethernet16`, ...) and metric name
(`FABRIC_METRICS`). Output (`SlowJobReport`): the slow or jittery `Episode`s of the window and,
for each, the `SlowChain` of hops from the job down to the element the evidence ends at, and a
verdict: a fabric element, not the fabric (host, GPU, application, input pipeline), or cannot
tell.

Series are plain lists here so a report is JSON (`--json`, schema in docs/triage-slow.md); the
engine (fabtui/triage/slowjob) works on numpy arrays made from them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA = "fabtui.slowjob/1"
"""The `schema` field of `SlowJobReport` (bumped when a field changes meaning)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Series(_Strict):
    """Samples of one quantity: times (Unix seconds, ascending) and values, equally long."""

    t: list[float]
    v: list[float]

    @model_validator(mode="after")
    def _same_length(self) -> Series:
        if len(self.t) != len(self.v):
            raise ValueError(f"t has {len(self.t)} samples but v has {len(self.v)}")
        return self


class StepSeries(_Strict):
    """One rank's training step times: at `t[i]` a step ended that took `step_s[i]` seconds
    (from the trainer's log or a Prometheus gauge)."""

    rank: int = Field(ge=0)
    t: list[float]
    step_s: list[float]
    source: str = ""

    @model_validator(mode="after")
    def _same_length(self) -> StepSeries:
        if len(self.t) != len(self.step_s):
            raise ValueError(f"t has {len(self.t)} samples but step_s has {len(self.step_s)}")
        return self


class Communicator(_Strict):
    """An NCCL communicator as NCCL Inspector names it (its `header.id` hash), its size, the
    collective and message size whose busbw is followed, and its members as global ranks
    (empty: not known, e.g. Inspector without the job's rank map)."""

    id: str = Field(min_length=1)
    nranks: int = Field(ge=1)
    collective: str = "AllReduce"
    msg_bytes: int = Field(0, ge=0)
    ranks: list[int] = Field(default_factory=list)
    label: str = ""
    """What the job uses it for, when known (`dp`, `tp`, `pp`, `world`)."""


class BusbwSeries(_Strict):
    """busbw (GB/s, Inspector's `coll_busbw_gbs`) of one communicator's collectives as one of
    its ranks measured them. A rank that arrives late at a collective measures it short, so its
    busbw is above its peers' (they waited for it): that is how arrival shows here."""

    comm: str
    rank: int = Field(ge=0)
    """Global rank of the reporter."""
    t: list[float]
    busbw_gbs: list[float]

    @model_validator(mode="after")
    def _same_length(self) -> BusbwSeries:
        if len(self.t) != len(self.busbw_gbs):
            raise ValueError(f"t has {len(self.t)} samples but busbw_gbs has "
                             f"{len(self.busbw_gbs)}")
        return self


FABRIC_METRICS: dict[str, str] = {
    # switch ports and NICs (the element: `leaf:port`, `spine:port` or `node:mlx5_N`)
    "pause_share_rx": "share of the sample the port was held paused by its peer (0-1; PFC)",
    "pause_share_tx": "share of the sample the port held its peer paused (0-1; PFC)",
    "pause_rx_per_s": "PFC pause frames received per second",
    "pause_tx_per_s": "PFC pause frames sent per second",
    "util": "transmit rate as a share of the line rate (0-1)",
    "link_up": "1 while the link is up, 0 while down",
    "speed_gbps": "the speed the link trained at (Gb/s; node_exporter's speed, ibstat's rate)",
    "ecn_marked_per_s": "packets ECN-marked per second (switch port, lossless queues)",
    "cnp_per_s": "congestion notification packets handled per second (NIC, DCQCN)",
    "out_of_sequence_per_s": "RoCE out-of-sequence packets per second (NIC)",
    "fec_corrected_per_s": "FEC codewords corrected per second",
    "fec_uncorrectable_per_s": "FEC codewords uncorrectable per second",
    "pre_fec_ber": "pre-FEC bit error ratio",
    "rx_power_dbm": "optic receive power, lowest lane (dBm; the element is the port it sits in)",
    # GPUs (`node:gpuN`) and hosts (`node`)
    "gpu_sm_clock_mhz": "SM clock (MHz)",
    "gpu_throttle": "1 while a slowdown reason other than idle is active (thermal, power)",
    "gpu_util": "share of the sample a kernel was running (0-1)",
    "xid": "Xid events in the sample",
    "nvlink_errors_per_s": "NVLink replay + CRC + recovery errors per second",
}
"""The fabric metrics the engine reads, by name (others are kept and ignored)."""


class SlowJobInputs(_Strict):
    """Everything `fabtui triage slow` reads for one job over one window."""

    job: str
    """The Slurm job id or name."""
    start: float
    end: float
    """The window (Unix seconds)."""
    steps: list[StepSeries] = Field(default_factory=list)
    communicators: list[Communicator] = Field(default_factory=list)
    busbw: list[BusbwSeries] = Field(default_factory=list)
    fabric: dict[str, dict[str, Series]] = Field(default_factory=dict)
    """Element key -> metric name (`FABRIC_METRICS`) -> samples."""
    sources: list[str] = Field(default_factory=list)
    """Where the series came from (files, a Prometheus URL, the demo's seed)."""
    warnings: list[str] = Field(default_factory=list)
    job_log: str | None = None
    """The job's log as a path on its nodes, where its NCCL INFO lines go (Slurm's `StdOut`, or
    `NCCL_DEBUG_FILE`): the `logs.nccl` check a chain prints reads it. None: not known, and
    that check prints `‹job-log›` for the person to fill in."""

    @model_validator(mode="after")
    def _window(self) -> SlowJobInputs:
        if self.end < self.start:
            raise ValueError(f"the window ends ({self.end}) before it starts ({self.start})")
        return self


EpisodeKind = Literal["slow", "jitter"]


class Episode(_Strict):
    """A stretch of the window where the job's step time ran above its baseline (`slow`) or
    spread wider than it (`jitter`)."""

    start: float
    end: float
    kind: EpisodeKind
    magnitude: float
    """`slow`: episode median / baseline median - 1 (0.18: 18 % slower); `jitter`: the
    episode's standard deviation over the baseline median."""
    baseline_s: float
    """Median step time outside every episode."""
    median_s: float
    """Median step time in the episode."""
    samples: int


HopLayer = Literal["job", "communicator", "rank", "host", "gpu", "nic", "rail", "leaf",
                   "leaf port", "spine", "spine port", "optic"]
HOP_LAYERS: tuple[HopLayer, ...] = ("job", "communicator", "rank", "host", "gpu", "nic", "rail",
                                    "leaf", "leaf port", "spine", "spine port", "optic")
"""Top (what the job sees) to bottom (the light in the fibre)."""


class Probe(_Strict):
    """The cheapest check that would confirm a hop: a catalog probe and where to run it, the
    command a person would type, and the runbook that walks the rest."""

    probe: str | None = None
    """A probe of the catalog (probes/*.toml), e.g. `switch.fec`."""
    target: str | None = None
    command: str
    """`fabtui probe run ...` (values quoted for a shell)."""
    runbook: str | None = None
    """A runbook of the library (runbooks/*.md) by name."""


class Hop(_Strict):
    """One layer of the chain: the element that moves with the episode at that layer, why it
    is believed (evidence) and what speaks against (counter-evidence)."""

    layer: HopLayer
    element: str
    """Element key (`leaf-g00-r3:Ethernet16`, `node004`, a communicator id, `rail 3`)."""
    claim: str
    evidence: list[str] = Field(default_factory=list)
    counter_evidence: list[str] = Field(default_factory=list)
    confidence: float = Field(ge=0, le=1)
    probe: Probe | None = None


VerdictKind = Literal["fabric", "not the fabric", "cannot tell"]
NotFabric = Literal["host", "gpu", "application", "input pipeline"]


class SlowVerdict(_Strict):
    """Where the chain ends: a fabric element, not the fabric (and what instead), or cannot
    tell (and what is missing)."""

    kind: VerdictKind
    element: str | None = None
    """The deepest element the evidence reaches (fabric: a port, optic, NIC or rail; not the
    fabric: the node or GPU)."""
    layer: HopLayer | None = None
    cause: NotFabric | None = None
    """Set when `kind` is `not the fabric`."""
    confidence: float = Field(0.0, ge=0, le=1)
    summary: str


class SlowChain(_Strict):
    """One episode, walked from the job down."""

    episode: Episode
    hops: list[Hop]
    verdict: SlowVerdict


class SlowJobReport(_Strict):
    """`fabtui triage slow --json`."""

    schema_: str = Field(SCHEMA, alias="schema")
    job: str
    start: float
    end: float
    ranks: int
    baseline_s: float | None
    """Median step time of the window outside its episodes (None: no step times)."""
    episodes: list[Episode]
    chains: list[SlowChain]
    """One per episode, in time order; two for one episode when two causes move at its
    moments (a throttling GPU and an ageing optic at once)."""
    healthy: bool
    """No episode: the step time held its baseline over the window, the job stepped to its
    end and nothing on its path shows a fault (`stopped_at`, `path_faults`)."""
    timeline: Series | None = None
    """The job's step time per sample (median over its ranks; samples nobody reported are left
    out): what a face draws the episodes on."""
    summary: str
    sources: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    stopped_at: float | None = None
    """When the job's last step time ended, where its step times end well before the window
    (Unix s): it hangs or ended; None: it stepped to the window's end."""
    path_faults: list[str] = Field(default_factory=list)
    """Without an episode: faults the fabric series show on the job's path (a link down,
    uncorrectable FEC, a pre-FEC BER past its critical limit, a storm of pauses), one sentence
    each; a "healthy" step time would hide them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
