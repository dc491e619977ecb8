"""Probes: definitions (data in `probes/*.toml`) and results (numbers, verdicts, findings).

A probe is a command or API call, run through a transport against a target, whose output a
parser turns into typed values; evaluation turns those into metrics with verdicts, each naming the
component it is about in the topology's terms (node, NIC, rail, switch, port, optic lane).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.findings import Finding
from fabtui.model.transport import TransportResult
from fabtui.model.verdict import Verdict as Verdict  # the one verdict, for probe code

TargetKind = Literal["node", "nic", "switch", "port", "link", "gpu", "node-pair", "local"]
TransportKind = Literal["local", "ssh", "cli", "nvml"]
ParamType = Literal["string", "int", "float", "bool", "choice", "size"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParamDef(_Strict):
    """A typed probe parameter."""

    type: ParamType = "string"
    description: str = ""
    default: str | int | float | bool | None = None
    required: bool = False
    choices: list[str] | None = None
    source: str | None = Field(None, alias="from")
    """Default taken from the target, e.g. `nic.netdev`, `switch.flavor`, `gpu.index`."""
    pattern: str | None = None
    """Regex a string value must match fully (CLI commands get a strict default)."""


class Threshold(_Strict):
    """A limit on one metric, with where the number comes from."""

    metric: str
    """Metric name as the evaluator emits it, e.g. `busbw_max`, `rate.tx_prio3_pause`."""
    warn: float | None = None
    fail: float | None = None
    direction: Literal["above", "below"] = "above"
    """`above`: values above the limits are bad (errors); `below`: values below are (bandwidth)."""
    hardware: str = "*"
    """Hardware class it applies to (`H100`, `H200`, `NDR`, `400G`...); `*` for any."""
    unit: str = ""
    window: str | None = None
    """The time the rule counts over, as its source states it (`probe interval`: the delta
    between the probe's two samples); None for a reading at one instant. A rule published for
    another window (5 flaps in 24 h) is applied where that window is read, not here."""
    source: str
    """Where the number comes from (URL, repo path) and, for inferences, `[inference]`."""


class CommandSpec(_Strict):
    """What to run. Argv for local/ssh; one command per switch flavor for CLI sessions."""

    argv: list[str] | None = None
    cli: dict[str, str] | None = None
    """Switch flavor -> CLI command."""
    server: list[str] | None = None
    """Node-pair probes: the command started first, on the second node (the server side)."""
    cleanup: list[str] | None = None
    """Run on the target(s) after a timeout, so nothing is left behind (`pkill -x ib_write_bw`)."""


class ProbeDef(_Strict):
    """One probe of the catalog."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    description: str
    target: TargetKind
    transport: TransportKind
    command: CommandSpec = CommandSpec()
    parser: str | None = None
    """Parser kind for the output (`fabtui parse --list`); None for API transports (nvml)."""
    params: dict[str, ParamDef] = Field(default_factory=dict)
    timeout: float = Field(60.0, gt=0, le=3600)
    samples: int = Field(1, ge=1, le=2)
    """2 for counter probes: two reads `interval` seconds apart give deltas and rates."""
    interval: float = Field(5.0, gt=0, le=600)
    thresholds: list[Threshold] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    """What this probe yields for runbooks and cases (metric names or descriptions)."""
    danger: bool = False
    """Changes state on the target: needs an explicit confirmation to run."""
    idempotent: bool = True
    """Safe to resend after a dropped connection."""
    source_file: str | None = None
    """Catalog file (and line) it was read from."""


class Metric(BaseModel):
    """One measured value, judged."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: float | int | str | bool | None
    unit: str = ""
    component: str
    """What it is about, in topology terms: `node001:mlx5_3`, `leaf-g00-r3:Ethernet8`, `GPU2`..."""
    verdict: Verdict = Verdict.OK
    limit: float | None = None
    """The threshold crossed (or checked), when one applied."""
    source: str | None = None
    """Provenance of the threshold used."""


class ProbeResult(BaseModel):
    """What running a probe produced: raw transport results, the parse, metrics, verdict."""

    model_config = ConfigDict(frozen=True)

    probe: str
    target: str
    command: str
    """The command as rendered for the operator (secrets never included)."""
    started_at: datetime
    ended_at: datetime
    verdict: Verdict
    metrics: list[Metric] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    parsed: dict[str, Any] | None = None
    """The parser's JSON of the (last) sample."""
    raw: list[TransportResult] = Field(default_factory=list)
    error: str | None = None
    """Why the probe could not measure (verdict `error`)."""
