"""A report a customer can read, as data: what was tested, against which criteria, with which
figures, and what it concludes. Built from journaled sessions (and a case, for an incident);
rendered as markdown or HTML. Every figure keeps the session and block it came from."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.verdict import Verdict


class ReportKind(StrEnum):
    """The documents a fabric team hands over."""

    ACCEPTANCE = "acceptance"
    TEST = "test"
    REPAIR = "repair"
    RDMA = "rdma"
    NCCL = "nccl"
    FAULT_INJECTION = "fault-injection"
    INCIDENT = "incident"
    SLOW_JOB = "slow-job"
    """Why a job ran slow (`fabtui triage slow`): its episodes and their chains (issue 39)."""


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


class Bound(_Model):
    """One limit of a rule: `verdict` when the value `op` `limit` (`FAIL if >= 100`)."""

    verdict: Verdict
    op: Literal["<", "<=", ">", ">="]
    limit: float

    def holds(self, value: float) -> bool:
        """Whether `value` crosses this limit."""
        return {"<": value < self.limit, "<=": value <= self.limit,
                ">": value > self.limit, ">=": value >= self.limit}[self.op]


def judged_by(bounds: list[Bound], value: float) -> Verdict:
    """The verdict `bounds` (worst first) give `value`: the first limit it crosses, else ok."""
    return next((b.verdict for b in bounds if b.holds(value)), Verdict.OK)


class Criterion(_Model):
    """One acceptance criterion: what is required, what was measured, and the verdict.

    One reading decides the row (the worst): its value, the limits applied to it (`bounds`)
    and its verdict, so the row cannot contradict itself: with `bounds`, the verdict is what
    they give the value (`judged_by`); a value that is no number (no light, a link down, a
    state) has the rule in words and is never ok when it is a fault."""

    name: str
    requirement: str
    """The threshold in numbers and words (`FAIL if >= 100; WARN if >= 1`), with the rule."""
    measured: str
    """The deciding reading and where (`-inf dBm (no light) on leaf-g00-r3:Ethernet16/lane2`)."""
    verdict: Verdict
    source: Source
    reference: str | None = None
    """Where the threshold comes from (a document, an issue thread)."""
    value: float | str | None = None
    """The deciding reading's value (a number, or what was read: `Disable`, `link down`)."""
    unit: str = ""
    component: str | None = None
    bounds: list[Bound] = Field(default_factory=list)
    """The limits applied to that reading, worst first; empty when the rule is not a number."""
    readings: int = 1
    not_ok: int = 0
    """How many of the readings were not ok."""
    before: str | None = None
    """A repair: the worst reading of the same criterion before the repair, and its verdict."""


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


class Problem(_Model):
    """One failing element (a port, a NIC, a node) with everything wrong with it, lanes folded
    (`no light on lanes 1-4 (rx_power_dbm -inf dBm)`)."""

    element: str
    optic: str | None = None
    """The optic serial the topology records for that port."""
    what: list[str]
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
    other_criteria: list[Criterion] = Field(default_factory=list)
    """A repair: the same criteria on the other ports of a device a probe read whole (the
    leaf's other ports in `switch.fec`). Not part of the repair: they decide nothing in it."""
    checks: list[Check] = Field(default_factory=list)
    curves: list[Curve] = Field(default_factory=list)
    pairs: list[PairResult] = Field(default_factory=list)
    series: list[Series] = Field(default_factory=list)
    failures: list[Failure] = Field(default_factory=list)
    problems: list[Problem] = Field(default_factory=list)
    """The failures grouped per element (one line each), then the failing checks."""
    before_problems: list[Problem] = Field(default_factory=list)
    """A repair: what was wrong before it (the after-state is `problems`)."""
    summary: list[str] = Field(default_factory=list)
    """The report in plain words, first: what was wrong, what was done, how it ended."""
    symptoms: list[str] = Field(default_factory=list)
    """An incident: what the job's logs said (events, not failing elements)."""
    faults: list[InjectedFault] = Field(default_factory=list)
    timeline: list[TimelineEntry] = Field(default_factory=list)
    sections: dict[str, str] = Field(default_factory=dict)
    """Prose sections of an incident review (summary, impact, root cause, ...), in order."""
    case: str | None = None
    """An incident review of a case: its id."""
    environment: dict[str, str] = Field(default_factory=dict)
    """An incident review of a case: the environment the case records (GPU, NIC, switch, ...),
    shown instead of the configured fabric's inventory when no session of it is recorded here
    (the incident may have happened on another cluster)."""
    action_items: list[str] = Field(default_factory=list)
    risks: list[str] = Field(default_factory=list)
    recommendations: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    """What the sessions do not hold that this kind of report needs (said, not invented)."""
    verdict: Verdict
    conclusion: str
