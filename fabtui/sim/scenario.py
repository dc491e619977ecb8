"""Fault scenarios: a timeline of faults planted in the simulated fabric.

A scenario file (YAML, shipped in `topology/scenarios/`) names its faults, the component each hits
in the topology's terms, when it starts and (optionally) ends, and its parameters:

```yaml
name: optic-degrading
description: the optic on leaf-g00-r3:Ethernet16 loses light over half an hour
timeline:
  - at: 0
    fault: optic-degrading
    component: leaf-g00-r3:Ethernet16
    params: {ramp_s: 1800}
```

Times are seconds since the scenario started (`90`, or `"15m"`, `"1h"`). A component that is not
in the topology, or does not suit the fault, is an input error with `file:line`.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from fabtui.durations import parse_duration
from fabtui.errors import InputError, Problem
from fabtui.schema_errors import problems_from
from fabtui.yamldoc import YamlDoc, load_yaml

Seconds = Annotated[float, BeforeValidator(parse_duration), Field(ge=0)]


class FaultKind(StrEnum):
    """The faults the simulation knows how to play, and what each component is."""

    OPTIC_DEGRADING = "optic-degrading"
    """The laser of the optic in a switch port ages: its launch power falls while its bias and
    temperature climb, so the far end receives less light (its FEC corrects more, then cannot);
    then the link flaps."""
    LINK_FLAP = "link-flap"
    """A link (NIC or switch port, or an optic id) goes down for a few seconds, repeatedly."""
    PFC_STORM = "pfc-storm"
    """A NIC (`node:mlx5_N`) sends pause frames without end; pause spreads to its leaf uplinks."""
    SLOW_NODE = "slow-node"
    """A node's GPUs run with throttled clocks: a straggler in every collective it is in. On
    one GPU (`node:gpuN`) only that GPU throttles; with `params.cause: host` the host itself
    is slow (CPU, memory, OS noise) and its GPUs keep their clocks."""
    NCCL_HANG = "nccl-hang"
    """The rank on a GPU (`node:gpuN`) stops entering collectives: its NIC's link has died."""
    RANK_MAPPING = "rank-mapping"
    """Two NICs (`node:mlx5_A`, param `with: mlx5_B` of the same node or `with: nodeB:mlx5_B`
    of another) are cabled to each other's switch port: swapped cables."""
    MISCABLED = "miscabled"
    """A NIC's cable (`node:mlx5_N`) lands on another switch port (param `to: switch:port`, a
    port the topology leaves empty) than the topology's: the wrong leaf or the wrong port."""
    CABLE_MISSING = "cable-missing"
    """A NIC (`node:mlx5_N`) has no cable: its switch port is dark and LLDP hears nobody."""
    CABLE_EXTRA = "cable-extra"
    """A cable the topology does not have, between two switch ports it leaves empty
    (component `switch:port`, param `to: switch:port`): LLDP hears it on both."""
    NIC_SLOT = "nic-slot"
    """A NIC card (`node:mlx5_N`) sits in another PCIe slot than the topology's: under the
    PCIe switch of GPU `near_gpu` (param), so `nvidia-smi topo -m` pairs it with that GPU."""
    GDR_OFF = "gdr-off"
    """GPUDirect RDMA is not in effect on a node: NCCL bounces traffic through host memory."""
    INTERFERENCE = "interference"
    """Another job shares a leaf's uplinks: ECN marks and CNPs on the nodes behind it."""
    UPLINK_DOWN = "uplink-down"
    """A leaf uplink (`leaf:port`) is down; traffic reroutes over the remaining uplinks."""
    SWITCH_DOWN = "switch-down"
    """A whole switch (`leaf-g00-r2`, a spine) is dead (power, a crashed ASIC): every cable
    of it goes dark at both ends, and its own exporter and CLI stop answering; traffic of a
    leaf's rail has nowhere to go, a spine's reroutes over the other spines."""
    MISCONFIG = "misconfig"
    """A setting differs from the fleet's (`node:mlx5_N`, `node` or a switch; params `setting`,
    `value`): what configuration commands print (fabtui/sim/misconfig.py)."""
    DIRTY_CONNECTOR = "dirty-connector"
    """The connector at one end of a cable (a switch port or `node:mlx5_N`) is dirty on some
    fibres (`lanes`, `loss_db`): the far end receives less light there, while the module at
    the dirty end launches normally."""
    PFC_DEADLOCK = "pfc-deadlock"
    """Pause circulates between switches with no host source: a cyclic buffer dependency over
    `leaf` -> `via` spine -> `to` leaf (params) -> back, each paused by the next."""
    NVLINK_DOWN = "nvlink-down"
    """The NVLinks of a GPU (`node:gpuN`) or of every GPU of a node (`node`) to the NVLink
    switch trays are down: on a multi-node NVLink domain (NVL72) those GPUs drop out of it
    (their fabric registration fails) and NCCL crosses that node over the network."""
    NVLINK_ERRORS = "nvlink-errors"
    """The NVLinks of a GPU (`node:gpuN`) or of every GPU of a node (`node`) correct errors by
    replay: `nvidia-smi nvlink -e` counts Replay and CRC errors growing (params `replay_per_s`,
    `crc_per_s`) and a Recovery every `recovery_every_s` on link 0 (the links stay up)."""
    LINK_SPEED = "link-speed"
    """A NIC's link (`node:mlx5_N`) trained below the topology's speed (param `speed_gbps`):
    ibstat's rate, RDMA and the collectives through it run at that speed."""
    XMIT_WAIT = "xmit-wait"
    """InfiniBand: an HCA (`node:mlx5_N`) drains slowly (param `share`, default 0.35): the
    leaf port sending to it waits for credits that share of the time (PortXmitWait), the
    other HCAs on its rail a third of it (fabtui/sim/ib.py)."""
    INPUT_STALL = "input-stall"
    """The job's input pipeline stalls (component `job`): every rank waits for its next batch
    (params `extra_s`, mean seconds added per step, default 0.8), its GPUs idle meanwhile; the
    fabric carries what it always did (fabtui/sim/slowjob.py)."""
    SM_FLAP = "sm-flap"
    """InfiniBand: mastership of the subnet manager changes hands every `period_s` (default
    120) between the SM on node001 and the standby on node002 (component: the SM's node):
    each handover is a heavy sweep in the OpenSM log and a new SM LID on every port."""


class FaultSpec(BaseModel):
    """One fault on the timeline."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fault: FaultKind
    component: str = Field(min_length=1)
    at: Seconds = 0.0
    """When it starts, seconds after the scenario starts."""
    until: Seconds | None = None
    """When it ends (None: it lasts)."""
    params: dict[str, Any] = Field(default_factory=dict)

    def active(self, t: float) -> bool:
        """True while the fault is in effect at time `t`."""
        return self.at <= t and (self.until is None or t < self.until)


class Workload(BaseModel):
    """The training job the fabric carries while the scenario plays."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    job: str = "llama3-70b-pretrain"
    utilization: float = Field(0.55, gt=0, le=1)
    """Average share of each NIC's line rate the job uses."""
    step_s: float = Field(4.0, gt=0)
    """Seconds per training step (each step ends in an all_reduce)."""
    timeout_ms: int = Field(600_000, gt=0)
    """ProcessGroupNCCL watchdog timeout."""
    nccl_version: str = "2.21.5"
    """The job's NCCL: it sets the default NCCL_IB_TIMEOUT (14 before 2.14, 18 to 2.22, 20
    from 2.23)."""
    nccl_env: dict[str, str] = Field(default_factory=dict)
    """NCCL_* variables the job sets (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT, ...): its log says
    so, and they decide how long a link may be down before the job fails."""


class Scenario(BaseModel):
    """A named timeline of faults on a fabric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = ""
    topology: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9-]*$")
    """The shipped fabric template the scenario is written for (`h100-64gpu-ib`: the demo's
    InfiniBand variant); played on it when no topology is configured. None: the demo."""
    duration: Seconds = 3600.0
    start: Seconds = 0.0
    """Where on the timeline a freshly started demo joins the story (e.g. when the fault already
    shows)."""
    workload: Workload = Workload()
    timeline: tuple[FaultSpec, ...] = ()
    expect: dict[str, Any] = Field(default_factory=dict)
    """What the scenario plants, for tests and game-day answers: components and the probes that
    should catch them."""


class LoadedScenario(BaseModel):
    """A scenario and the document it came from (for locating problems)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    scenario: Scenario
    path: Path
    doc: YamlDoc


def load_scenario(path: Path) -> LoadedScenario:
    """Read a scenario file. Raises `InputError` with `file:line` problems."""
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise InputError([doc.problem((), "a scenario file must be a mapping")])
    try:
        scenario = Scenario.model_validate(doc.data)
    except ValidationError as exc:
        raise InputError(problems_from(exc, doc, Scenario)) from None
    return LoadedScenario(scenario=scenario, path=path, doc=doc)


def scenario_files(folders: list[Path]) -> dict[str, Path]:
    """Scenario name (file stem) -> file, earlier folders first."""
    found: dict[str, Path] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
            found.setdefault(path.stem, path)
    return found


def unknown_scenario(name: str, known: list[str], source: str = "--scenario") -> InputError:
    """The error for a scenario name that does not exist."""
    import difflib

    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(sorted(known))}"
    return InputError([Problem(source, None, f"unknown scenario {name!r}{hint}")])


def shipped_scenarios() -> Path:
    """The folder of the scenarios shipped beside the demo fabric."""
    from fabtui.paths import shipped_dir

    return shipped_dir("topology") / "scenarios"


def find_scenario(name: str, folders: list[Path] | None = None) -> Path:
    """The scenario file for `name` (a shipped scenario's name, or a path to a YAML file).

    Raises `InputError` naming the known scenarios when there is no such scenario."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml") and candidate.is_file():
        return candidate
    known = scenario_files([*(folders or []), shipped_scenarios()])
    if name in known:
        return known[name]
    raise unknown_scenario(name, list(known))
