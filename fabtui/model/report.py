"""A report a customer can read, as data: what was tested, against which criteria, with which
figures, and what it concludes. Built from journaled sessions (and a case, for an incident);
rendered as markdown or HTML. Every figure keeps the session and block it came from."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.verdict import Verdict


class ReportKind(StrEnum):
    """The documents a fabric team hands over."""

    ACCEPTANCE = "acceptance"
    RDMA = "rdma"
    NCCL = "nccl"
    FAULT_INJECTION = "fault-injection"
    INCIDENT = "incident"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class Source(_Model):
    """Where a figure was recorded: a session, and the step and block inside it."""

    session: str
    step: str | None = None
    block: str | None = None

    def anchor(self) -> str:
        """A stable id for links inside the report (`s-<session>-<block>`)."""
        return "-".join(part for part in ("s", self.session, self.block or self.step) if part)

    def label(self) -> str:
        return f"{self.session}" + (f" / {self.block}" if self.block else "")


class SessionRef(_Model):
    """One session the report is built from (the method section lists them)."""

    id: str
    runbook: str
    title: str
    status: str
    operator: str = ""
    started: str = ""
    """ISO time the session started (UTC)."""
    finished: str | None = None
    """ISO time of its last event; None when it never finished."""
    inputs: dict[str, object] = Field(default_factory=dict)
    scenario: str | None = None
    """The demo fabric's scenario when the session ran on it (the report says so)."""
    probes: list[str] = Field(default_factory=list)
    """Probe names the session ran, in first-use order."""
    blocks: int = 0


class Criterion(_Model):
    """One acceptance criterion: what is required, what was measured, and the verdict."""

    name: str
    requirement: str
    """The threshold in words (`busbw >= 340 GB/s`, `no uncorrectable FEC`)."""
    measured: str
    """The measured value or the worst one (`382.43 GB/s`, `1474 on leaf-g00-r3:Ethernet16`)."""
    verdict: Verdict
    source: Source
    reference: str | None = None
    """Where the threshold comes from (a document, an issue thread)."""


class Check(_Model):
    """One runbook check block as it came out: the statement it made about the fabric."""

    step: str
    id: str
    verdict: Verdict
    statement: str
    source: Source


class CurvePoint(_Model):
    size_bytes: int
    busbw: float | None
    algbw: float | None = None


class Curve(_Model):
    """busbw against message size of one nccl-tests run."""

    collective: str
    target: str
    ranks: int | None = None
    points: list[CurvePoint]
    peak_busbw: float | None = None
    expected_busbw: float | None = None
    """The figure expected for this hardware (the line the plot draws)."""
    verdict: Verdict
    source: Source


class PairResult(_Model):
    """One RDMA pair (perftest) measurement."""

    client: str
    server: str
    bandwidth_gbps: float | None
    peak_gbps: float | None = None
    message_bytes: int | None = None
    verdict: Verdict
    source: Source


class Failure(_Model):
    """A check or probe that did not pass, with the component it names."""

    what: str
    component: str | None = None
    verdict: Verdict
    source: Source


class InjectedFault(_Model):
    """A fault planted in the demo fabric (or a drill) and what the runbook made of it."""

    scenario: str
    planted: list[str]
    """The components and kinds of fault the scenario plants."""
    detected: bool
    detected_by: list[str] = Field(default_factory=list)
    """The checks that failed or warned on it."""
    degradation: list[str] = Field(default_factory=list)
    """Figures that fell below their expectation while the fault was active."""
    recovered: bool | None = None
    """Whether a later session (the hand-over runbook) verified the repair; None if not run."""
    source: Source


class SeriesPoint(_Model):
    at: str
    """ISO time of the reading."""
    value: float
    source: Source


class Series(_Model):
    """One counter of one component read more than once across the sessions (before / after a
    repair, a soak): its values over time."""

    metric: str
    component: str
    unit: str = ""
    points: list[SeriesPoint]


class TimelineEntry(_Model):
    at: str
    what: str
    source: Source | None = None


class Inventory(_Model):
    """Hardware from the topology: models and counts."""

    cluster: str
    fabric: str
    nodes: int
    gpus: dict[str, int] = Field(default_factory=dict)
    nics: dict[str, int] = Field(default_factory=dict)
    switches: dict[str, int] = Field(default_factory=dict)
    links: int = 0
    optics: int = 0
    speeds: dict[str, int] = Field(default_factory=dict)
    """Link speed -> count of NIC ports at that speed."""


class Report(_Model):
    """The whole report; renderers only lay it out."""

    kind: ReportKind
    title: str
    generated: str
    """ISO time the report was generated."""
    sessions: list[SessionRef]
    inventory: Inventory | None = None
    software: dict[str, list[str]] = Field(default_factory=dict)
    """Component kind (`NCCL`, `NIC firmware`, ...) -> the distinct versions read."""
    criteria: list[Criterion] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    curves: list[Curve] = Field(default_factory=list)
    pairs: list[PairResult] = Field(default_factory=list)
    series: list[Series] = Field(default_factory=list)
    failures: list[Failure] = Field(default_factory=list)
    faults: list[InjectedFault] = Field(default_factory=list)
    timeline: list[TimelineEntry] = Field(default_factory=list)
    sections: dict[str, str] = Field(default_factory=dict)
    """Prose sections of an incident review (summary, impact, root cause, ...), in order."""
    action_items: list[str] = Field(default_factory=list)
    risks: list[str] = Field(default_factory=list)
    recommendations: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    """What the sessions do not hold that this kind of report needs (said, not invented)."""
    verdict: Verdict
    conclusion: str
