"""Runbooks as data: front matter, steps, executable blocks, declared tests; and session events.

A runbook file is CommonMark: YAML front matter, a `# Title`, then one `## Step` heading per step
with prose for the operator and fenced blocks that fabtui executes. These models are what the
markdown reader produces and what the engine, the linter, the journal and the TUI share.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fabtui.model.verdict import SEVERITY as SEVERITY
from fabtui.model.verdict import Verdict as Verdict
from fabtui.model.verdict import worst as worst


class InputType(StrEnum):
    """What an input holds; fabric types are checked against the topology."""

    STRING = "string"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    CHOICE = "choice"
    NODE = "node"
    NIC = "nic"
    SWITCH = "switch"
    PORT = "port"
    RANK = "rank"
    PATH = "path"


class InputSpec(BaseModel):
    """One runbook input (front matter `inputs:`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: InputType = InputType.STRING
    description: str = ""
    required: bool = False
    default: Any = None
    choices: list[str] | None = None
    choices_from: str | None = None
    """A probe whose metric components are the choices (e.g. `node.ibdev2netdev`)."""
    pattern: str | None = None
    """A regular expression the whole value must match (e.g. `Ethernet[0-9]+`)."""
    secret: bool = False
    """Never stored: redacted from the journal, cases and logs."""

    @field_validator("pattern")
    @classmethod
    def _pattern_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"pattern is not a valid regex: {exc}") from None
        return value


class TestExpect(BaseModel):
    """What a runbook test expects of a headless run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: list[str] | None = None
    """The step ids visited, in order (exactly)."""
    visits: list[str] = Field(default_factory=list)
    """Steps that must be among those visited (any order)."""
    outcome: str | None = None
    """ok / warn / fail / error / aborted."""
    ends_at: str | None = None
    """The last step visited."""
    vars: dict[str, Any] = Field(default_factory=dict)
    """Variables and their expected values at the end."""
    says: list[str] = Field(default_factory=list)
    """Texts that must appear in the run's summary (e.g. the port to fix)."""


class RunbookTest(BaseModel):
    """A test case: run headless on the demo fabric playing `scenario`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    scenario: str = "healthy"
    topology: str | None = None
    """The fabric the case runs on: a shipped topology template's name (`gb200-nvl72`,
    `b200-64gpu`) or a topology file; default: the demo fabric."""
    at: str | float | None = None
    """Where on the scenario's timeline the run starts (default: the scenario's start)."""
    inputs: dict[str, Any] = Field(default_factory=dict)
    answers: dict[str, str] = Field(default_factory=dict)
    """Gate and input block ids -> the operator's answer."""
    repairs: dict[str, str] = Field(default_factory=dict)
    """Gate id -> a component the operator repairs when answering it (the simulated fabric
    drops its faults from then on), e.g. `swap-optic: leaf-g00-r3:Ethernet16`."""
    expect: TestExpect = TestExpect()


class FrontMatter(BaseModel):
    """The YAML at the top of a runbook."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str = Field(min_length=1)
    version: str | int = 1
    summary: str = ""
    symptoms: list[str] = Field(default_factory=list)
    """Phrases an engineer would use for the problem (matching and search, any language)."""
    tags: list[str] = Field(default_factory=list)
    inputs: list[InputSpec] = Field(default_factory=list)
    requires: list[str] = Field(default_factory=list)
    """Other runbooks this one hands over to or builds on."""
    owner: str = ""
    report: Literal["acceptance", "test", "repair", "incident", "rdma", "nccl"] | None = None
    """The report its sessions make (`fabtui report`): an acceptance, a test, a repair judged
    on its after-state, an incident review (a triage); None: acceptance if tagged so, else a
    test report."""
    tests: list[RunbookTest] = Field(default_factory=list)


class BlockKind(StrEnum):
    """What a fenced block does."""

    SH = "sh"
    PROBE = "probe"
    CHECK = "check"
    CONFIRM = "confirm"
    INPUT = "input"
    DECIDE = "decide"
    NOTE = "note"


class Block(BaseModel):
    """One executable fenced block."""

    model_config = ConfigDict(frozen=True)

    kind: BlockKind
    id: str
    attrs: dict[str, str] = Field(default_factory=dict)
    body: str = ""
    line: int
    """1-based line of the opening fence in the file."""
    step: str


class Step(BaseModel):
    """A `##` heading: its prose and blocks."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    prose: str = ""
    blocks: list[Block] = Field(default_factory=list)
    line: int


class Runbook(BaseModel):
    """A parsed runbook file."""

    model_config = ConfigDict(frozen=True)

    meta: FrontMatter
    title: str
    intro: str = ""
    steps: list[Step]
    path: str
    digest: str
    """Hash of the file as read: a session records which text it ran."""
    lines: dict[str, int] = Field(default_factory=dict)
    """Front-matter key path (`inputs.0.type`) -> file line, for messages."""
    problems: list[tuple[int | None, str]] = Field(default_factory=list)
    """What the reader could not accept in the steps (read leniently, for lint only)."""

    def step(self, step_id: str) -> Step | None:
        """The step called `step_id`, if any."""
        return next((s for s in self.steps if s.id == step_id), None)

    def blocks(self) -> list[Block]:
        """Every block in document order."""
        return [b for s in self.steps for b in s.blocks]


class SessionInfo(BaseModel):
    """A recorded session, as listed."""

    model_config = ConfigDict(frozen=True)

    id: str
    runbook: str
    title: str
    started_at: float
    status: str
    """running / ok / warn / fail / error / aborted / cancelled (interrupted, resumable)."""
    operator: str = ""
    path: str = ""
