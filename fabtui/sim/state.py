"""The running demo fabric: which topology and scenario it plays, since when, and what was injected.

The state lives in one small JSON file (`<data dir>/sim/state.json`), so `fabtui`, the TUI, the
switch CLI programs and the node program all see the same fabric at the same moment: simulation
time is `(now - epoch) * speed`. `FABTUI_SIM_TIME` pins it (tests, reproducing a moment).
Writes replace the file atomically; a game-day `inject` appends a fault that starts "now".
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabtui.errors import InputError, Problem
from fabtui.model.topology import Topology
from fabtui.paths import write_file
from fabtui.sim.core import Sim
from fabtui.sim.scenario import FaultSpec, LoadedScenario, load_scenario
from fabtui.topology.loader import load_topology

TIME_VAR = "FABTUI_SIM_TIME"
"""Environment variable that pins simulation time (seconds since the scenario's t=0)."""
STATE_VAR = "FABTUI_SIM_STATE"
"""Environment variable naming the state file (the sim programs get it from their parent)."""


class Repair(BaseModel):
    """A component repaired at a moment of the scenario's clock."""

    model_config = ConfigDict(extra="forbid")

    component: str
    at: float


class Shutdown(BaseModel):
    """A switch port administratively down from `at` until `until` (None: still down)."""

    model_config = ConfigDict(extra="forbid")

    endpoint: str
    at: float
    until: float | None = None


class CounterClear(BaseModel):
    """A NIC's physical counters cleared (`mlxlink -d DEV --pc`) at a moment of the scenario's
    clock: what it counts from then on starts at zero."""

    model_config = ConfigDict(extra="forbid")

    endpoint: str
    """`node:nic`."""
    at: float


class SimState(BaseModel):
    """What the demo fabric is playing."""

    model_config = ConfigDict(extra="forbid")

    topology: Path
    scenario: Path
    """The scenario file."""
    template_dirs: list[Path] = Field(default_factory=list)
    seed: int = 7
    epoch: float
    """Wall-clock time (Unix seconds) at which simulation time was 0."""
    speed: float = Field(1.0, gt=0)
    """Simulation seconds per wall-clock second."""
    injected: list[FaultSpec] = Field(default_factory=list)
    """Faults added by `fabtui sim inject` (times on the scenario's clock)."""
    repairs: list[Repair] = Field(default_factory=list)
    """Components an operator repaired (an optic swapped): their faults end then."""
    shut: list[Shutdown] = Field(default_factory=list)
    """Switch ports an operator shut (`config interface shutdown`), and when."""
    cleared: list[CounterClear] = Field(default_factory=list)
    """NIC counters an operator cleared (`mlxlink --pc`), and when."""

    def not_healthy(self) -> str | None:
        """What makes the demo fabric differ from a healthy one (the scenario playing,
        injected faults, ports left shut), in one line; None when it is healthy."""
        now = self.now()
        parts = [f"scenario {self.scenario.stem} playing"] if self.scenario.stem != "healthy" \
            else []
        if self.injected:
            count = len(self.injected)
            parts.append(f"{count} injected fault{'s' if count != 1 else ''}")
        shut = [s.endpoint for s in self.shut if s.until is None or s.until > now]
        if shut:
            parts.append(f"port{'s' if len(shut) != 1 else ''} {', '.join(shut)} shut")
        return ", ".join(parts) or None

    def now(self) -> float:
        """Simulation time now (pinned by `FABTUI_SIM_TIME` when set)."""
        return sim_time(self, os.environ.get(TIME_VAR), 0.0)


def sim_time(state: SimState, pinned: str | None, skew: float) -> float:
    """Simulation time for a command: `pinned` (a `FABTUI_SIM_TIME` value) or the state's clock
    now, moved on by the `skew` its probe skipped."""
    if pinned:
        return float(pinned) + skew
    return (time.time() - state.epoch) * state.speed + skew


def state_file(data_dir: Path) -> Path:
    """Where the state of the demo fabric is kept."""
    override = os.environ.get(STATE_VAR)
    return Path(override) if override else data_dir / "sim" / "state.json"


def read_state(path: Path) -> SimState | None:
    """The state in `path`, or None when there is none (or it is unreadable: start afresh)."""
    try:
        return SimState.model_validate_json(path.read_text())
    except (OSError, ValidationError, ValueError):
        return None


def write_state(path: Path, state: SimState) -> None:
    """Replace the state file atomically (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, json.dumps(state.model_dump(mode="json"), indent=1) + "\n")


def fresh_state(topology: Path, scenario: Path, template_dirs: list[Path], *, seed: int = 7,
                speed: float = 1.0, at: float | None = None) -> SimState:
    """A state that starts now at the scenario's `start` (or at `at`) on its clock."""
    loaded = load_scenario(scenario)
    start = loaded.scenario.start if at is None else at
    return SimState(topology=topology.resolve(), scenario=scenario.resolve(),
                    template_dirs=[d.resolve() for d in template_dirs], seed=seed,
                    epoch=time.time() - start / speed, speed=speed)


def _finder(dirs: tuple[Path, ...]):  # type: ignore[no-untyped-def]
    def find(name: str) -> Path | None:
        for folder in dirs:
            for suffix in (".yaml", ".yml"):
                candidate = folder / f"{name}{suffix}"
                if candidate.is_file():
                    return candidate
        return None

    return find


@cache
def _topology(path: Path, dirs: tuple[Path, ...], mtime: float) -> Topology:
    return load_topology(path, find_template=_finder(dirs)).topology


def build_sim(state: SimState) -> Sim:
    """The simulation the state describes. Raises `InputError` for a bad scenario or fault."""
    topology = _topology(state.topology, tuple(state.template_dirs),
                         state.topology.stat().st_mtime)
    loaded = load_scenario(state.scenario)
    return sim_for(topology, loaded, seed=state.seed, epoch=state.epoch,
                   extra=state.injected, repairs=[(r.component, r.at) for r in state.repairs],
                   shut=[(s.endpoint, s.at, s.until) for s in state.shut],
                   cleared=[(c.endpoint, c.at) for c in state.cleared])


def sim_for(topology: Topology, loaded: LoadedScenario, *, seed: int = 7,
            epoch: float | None = None, extra: list[FaultSpec] | None = None,
            repairs: list[tuple[str, float]] | None = None,
            shut: list[tuple[str, float, float | None]] | None = None,
            cleared: list[tuple[str, float]] | None = None) -> Sim:
    """A Sim of `loaded` on `topology`; fault problems point at the scenario's timeline lines."""
    lines = [loaded.doc.line_of(("timeline", i, "component"))
             for i in range(len(loaded.scenario.timeline))]
    lines += [None] * len(extra or [])
    kwargs = {} if epoch is None else {"epoch": epoch}
    return Sim(topology, loaded.scenario, seed=seed, extra=extra or [],
               source=str(loaded.path), lines=lines, repairs=repairs or (), shut=shut or (),
               cleared=cleared or (), **kwargs)


NO_STATE = ("no simulated fabric state here; run `fabtui sim start` (or any fabtui command "
            "on the demo fabric) first")
"""What a device of the demo fabric (and `load_or_problem`) says after the state file's
name when there is no state."""


def load_or_problem(path: Path) -> SimState:
    """The state at `path`; InputError when there is none."""
    state = read_state(path)
    if state is None:
        raise InputError([Problem(str(path), None, NO_STATE)])
    return state


def ensure_state(path: Path, topology: Path, scenario: Path, template_dirs: list[Path], *,
                 restart: bool = False) -> SimState:
    """The demo fabric's state for this topology and scenario, started now if it is not running
    (or plays something else, or `restart`). Writes the state file when it starts one."""
    current = None if restart else read_state(path)
    if current is not None and current.topology == topology.resolve() and \
            current.scenario == scenario.resolve():
        return current
    state = fresh_state(topology, scenario, template_dirs)
    write_state(path, state)
    return state


def update_state(path: Path, change: Callable[[SimState], SimState]) -> SimState | None:
    """Apply `change` to the state file (read, change, atomic replace). None: no state."""
    state = read_state(path)
    if state is None:
        return None
    changed = change(state)
    write_state(path, changed)
    return changed


def repair(path: Path, component: str) -> SimState | None:
    """Record that `component` was repaired now (its faults end)."""
    return update_state(path, lambda s: s.model_copy(update={
        "repairs": [*s.repairs, Repair(component=component, at=s.now())]}))


def set_port_admin(path: Path, endpoint: str, up: bool,
                   now: Callable[[SimState], float] | None = None) -> SimState | None:
    """Shut (`up=False`) or start up a switch port now: at `now(state)`, the clock of the
    session that typed the command (the sim server's own environment is whichever client
    started it: its `FABTUI_SIM_TIME` is not this session's), else `state.now()`."""
    def change(state: SimState) -> SimState:
        at = (now or SimState.now)(state)
        shut = [s.model_copy(update={"until": at}) if s.endpoint == endpoint and
                s.until is None and up else s for s in state.shut]
        if not up and not any(s.endpoint == endpoint and s.until is None for s in shut):
            shut.append(Shutdown(endpoint=endpoint, at=at))
        return state.model_copy(update={"shut": shut})

    return update_state(path, change)


def clear_counters(path: Path, endpoints: list[str], at: float) -> SimState | None:
    """Record that the NICs `endpoints` (`node:nic`) had their counters cleared at `at` (the
    clock of the session that sent `mlxlink --pc`, as `set_port_admin`'s)."""
    if not endpoints:
        return None
    return update_state(path, lambda s: s.model_copy(update={
        "cleared": [*s.cleared, *(CounterClear(endpoint=e, at=at) for e in endpoints)]}))


class FabricCache:
    """The state and built simulation of each state file, rebuilt when the file changes."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[tuple[int, int, int], SimState, Sim]] = {}

    def get(self, path: str) -> tuple[SimState, Sim] | None:
        """The fabric in `path` as it is now; None when there is no readable state."""
        try:
            info = os.stat(path)
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        state = read_state(Path(path))
        if state is None:
            return None
        sim = build_sim(state)
        if len(self._cache) > 64:
            self._cache.clear()
        self._cache[path] = (stamp, state, sim)
        return state, sim
