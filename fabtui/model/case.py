"""A case: one past incident, as the case library keeps it (现象、指标、定位过程、解决方案、复盘).

What was seen (the symptom, in the reporter's words), where (environment, the topology ids of the
components involved), the evidence with its values, how it was localized, the root cause, the fix,
tuning with measured before/after, and the review sections of a postmortem (summary, impact,
trigger, detection, action items with owners, lessons). Cases are written as markdown
(`docs/case-format.md`), filed from sessions, stored in SQLite and indexed for search; this model
is what all of those share. Validation is the file format's rules, so a bad file fails here with
the field that is wrong.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

CASE_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


class CaseStatus(StrEnum):
    """Where a case stands: a draft (filed, not yet completed), resolved, or unresolved."""

    DRAFT = "draft"
    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"


class Severity(StrEnum):
    """How bad it was: sev1 an outage ... sev4 cosmetic."""

    SEV1 = "sev1"
    SEV2 = "sev2"
    SEV3 = "sev3"
    SEV4 = "sev4"


class SymptomClass(StrEnum):
    """The kind of failure, the first thing similar cases are matched on."""

    NCCL_HANG = "nccl-hang"
    BUSBW_LOW = "busbw-low"
    SLOW_NODE = "slow-node"
    PFC_STORM = "pfc-storm"
    FEC_ERRORS = "fec-errors"
    OPTIC_FAILURE = "optic-failure"
    LINK_FLAP = "link-flap"
    PORT_DROPS = "port-drops"
    RANK_MAPPING = "rank-mapping"
    GDR_NOT_EFFECTIVE = "gdr-not-effective"
    MULTI_JOB_INTERFERENCE = "multi-job-interference"
    IB_COMPLETION_ERROR = "ib-completion-error"
    ROCE_CONFIG_MISMATCH = "roce-config-mismatch"
    GPU_XID = "gpu-xid"
    OTHER = "other"


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Environment(_Part):
    """Hardware, software and scale the incident happened on (each as free text)."""

    gpu: str | None = None
    nic: str | None = None
    switch: str | None = None
    optic: str | None = None
    driver: str | None = None
    cuda: str | None = None
    nccl: str | None = None
    ofed: str | None = None
    firmware: str | None = None
    os: str | None = None
    topology: str | None = None
    scale: str | None = None

    @field_validator("*", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        """`nccl: 2.21` is a number in YAML but a version here."""
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) \
            else value


class EvidenceRow(_Part):
    """One measured fact: a metric of a component with its value, and where it was read."""

    component: str = ""
    metric: str = ""
    value: str = ""
    source: str = ""
    """The probe, tool or log the value came from (`switch.dom`, `ethtool -S`, ...)."""


class TimelineEntry(_Part):
    """Something that happened, and when (an ISO timestamp or a time of day; may be empty)."""

    at: str = ""
    text: str


class TuningAction(_Part):
    """A change made while tuning, with the metric it moved, measured before and after."""

    change: str
    metric: str = ""
    before: str = ""
    after: str = ""


class ActionItem(_Part):
    """A follow-up from the review, who owns it, and whether it is done."""

    text: str
    owner: str | None = None
    done: bool = False


def _iso(value: str) -> str:
    """`value` if it is an ISO date or timestamp (`2026-03-02`, `2026-03-02T03:10Z`)."""
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            date.fromisoformat(value)
        else:
            datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO date (2026-03-02 or "
                         "2026-03-02T03:10:00Z)") from None
    return value


class Case(BaseModel):
    """One incident of the case library (see the module docstring and docs/case-format.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=CASE_ID, max_length=200)
    title: str = Field(min_length=1)
    status: CaseStatus = CaseStatus.DRAFT
    severity: Severity | None = None
    opened: str | None = None
    """ISO date or timestamp the incident began."""
    closed: str | None = None
    lang: str = "en"
    """The language the case is written in: `en` or `zh`."""
    symptom_class: SymptomClass = SymptomClass.OTHER
    error_codes: list[str] = Field(default_factory=list)
    """Exact identifiers: `xid-79`, `ib-status-12`, `cuda-error-700`."""
    environment: Environment = Field(default_factory=Environment)
    components: list[str] = Field(default_factory=list)
    """Topology ids: `node042`, `node042:mlx5_3`, `leaf-g00-r3:Ethernet16`, `rail3`,
    `optic:MT24000043`."""
    tags: list[str] = Field(default_factory=list)
    sessions: list[str] = Field(default_factory=list)
    runbooks: list[str] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    """Links to what the case draws on (a public issue thread, a vendor advisory, a ticket)."""

    symptom: str = ""
    """What was seen, in the reporter's words."""
    root_cause: str = ""
    resolution: str = ""
    summary: str = ""
    impact: str = ""
    trigger: str = ""
    detection: str = ""
    localization: str = ""
    """How it was localized (定位过程)."""
    environment_notes: str = ""
    """Prose of the `Environment` section (the front matter's `environment` holds the facts)."""
    evidence: list[EvidenceRow] = Field(default_factory=list)
    evidence_notes: str = ""
    """Evidence beyond the table: log lines, probe output, prose."""
    timeline: list[TimelineEntry] = Field(default_factory=list)
    timeline_notes: str = ""
    tuning: list[TuningAction] = Field(default_factory=list)
    tuning_notes: str = ""
    reusable_config: str = ""
    risks: str = ""
    """What not to reuse, and why."""
    action_items: list[ActionItem] = Field(default_factory=list)
    action_notes: str = ""
    lessons: str = ""
    sections: dict[str, str] = Field(default_factory=dict)
    """Sections the format does not name, by heading, kept as written."""

    source: str | None = None
    """The markdown file the case was imported from (None: filed or created here)."""

    @field_validator("opened", "closed", mode="before")
    @classmethod
    def _dates(cls, value: object) -> object:
        if isinstance(value, datetime | date):
            value = value.isoformat()
        return _iso(value) if isinstance(value, str) else value

    @field_validator("lang")
    @classmethod
    def _lang(cls, value: str) -> str:
        if value not in ("en", "zh"):
            raise ValueError(f"lang must be en or zh, not {value!r}")
        return value

    @field_validator("error_codes", "tags", "components", "sessions", "runbooks", "authors",
                     "references", mode="before")
    @classmethod
    def _list(cls, value: object) -> object:
        """A single value is a one-item list; numbers (`tags: [400g]` read as text) are text."""
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            value = [value]
        if isinstance(value, list):
            return [str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
                    for v in value]
        return value

    @model_validator(mode="after")
    def _resolved_has_a_cause(self) -> Case:
        if self.status is CaseStatus.RESOLVED and not self.root_cause.strip():
            raise ValueError("status is resolved but the root cause is empty: write the root "
                             "cause, or set status: draft (or unresolved)")
        return self

    @property
    def has_root_cause(self) -> bool:
        """True when a root cause is written down."""
        return bool(self.root_cause.strip())
