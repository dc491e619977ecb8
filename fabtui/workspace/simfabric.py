"""The demo fabric a workspace talks to when it is simulated: one rule for which one plays.

Nobody named a scenario (config or `--scenario`): the running demo keeps the scenario it plays
(faults injected with `fabtui sim inject` included). A scenario was named, or nothing runs yet:
that scenario starts (or keeps running, if it already is).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fabtui.config import Settings
from fabtui.errors import InputError
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import SimState, build_sim, ensure_state, read_state, state_file

if TYPE_CHECKING:
    from fabtui.probes.runner import Transports

RETURN_TO_HEALTHY = "fabtui sim start"
"""The way back to a healthy demo fabric: `sim start` without `--scenario` plays the configured
scenario (healthy unless the config names another), injected faults gone."""
IN_PROCESS_VAR = "FABTUI_SIM_IN_PROCESS"
"""Set (not `0`): the demo fabric's node commands and switch sessions are answered in this
process (`fabtui.sim.inprocess`), not by a device client process per command. For tests and
benchmarks of what sits above the transport; the replies, clock, latencies and errors are the
same (both paths are checked against each other in `tests/test_sim_inprocess*.py`)."""


def sim_transports(path: Path) -> Transports:
    """Transports to the demo fabric in state file `path`: device client processes answered by
    the sim server, as over ssh (the default), or this process (`IN_PROCESS_VAR`)."""
    from fabtui.probes.runner import Transports

    if os.environ.get(IN_PROCESS_VAR, "") not in ("", "0"):
        from fabtui.sim.inprocess import InProcessSimSshTransport
        from fabtui.sim.inprocess_cli import InProcessSimCliTransport

        return Transports(ssh=InProcessSimSshTransport(path), cli=InProcessSimCliTransport(path))
    from fabtui.sim.transports import SimCliTransport, SimSshTransport

    return Transports(ssh=SimSshTransport(path), cli=SimCliTransport(path))


def unhealthy_notice(state: SimState) -> str | None:
    """`demo fabric: scenario X playing, ... (how to return to healthy)`; None when healthy.

    The demo keeps its state between commands, so a result that depends on it must not surprise
    whoever forgot what was played: every face shows this line once per command."""
    differs = state.not_healthy()
    return f"demo fabric: {differs} ({RETURN_TO_HEALTHY} returns to healthy)" if differs else None


def switch_notice(s: Settings) -> str | None:
    """Said once, when a command makes the demo play another scenario than the one running
    (`--scenario X`, or a config that names one): that it goes on playing for every later
    command and app start, and how to return to healthy; None when nothing switches (the
    scenario already plays, or nobody named one)."""
    if not s.scenario_chosen:
        return None
    try:
        wanted = find_scenario(s.scenario)
    except InputError:
        return None  # said when the demo is started with it
    running = read_state(state_file(s.data_dir))
    if running is not None and running.scenario.resolve() == wanted.resolve() and \
            running.topology == s.topology.resolve():
        return None
    if wanted.stem == "healthy":
        return None
    return (f"demo fabric: now playing scenario {wanted.stem}; it keeps playing for every "
            f"later command and app start (no need to repeat --scenario) until "
            f"`{RETURN_TO_HEALTHY}` returns to healthy")


def follow_running_demo(s: Settings) -> Settings:
    """Settings that follow the running demo when nobody named a scenario: a demo started on
    another shipped fabric (an `ib-*` scenario brings the InfiniBand variant) keeps being
    that fabric for later commands on the default topology. Reads the state file only."""
    import dataclasses

    if s.scenario_chosen or not s.topology_is_default or not s.simulated:
        return s
    running = read_state(state_file(s.data_dir))
    if running is None or running.topology == s.topology.resolve() or \
            not running.topology.is_file() or not running.scenario.is_file():
        return s
    return dataclasses.replace(s, topology=running.topology)


def sim_state(s: Settings, *, restart: bool = False) -> tuple[Path, SimState]:
    """The running demo fabric for these settings (started now if needed) and its state file.

    Note: writes the state file when the demo (re)starts.
    """
    path = state_file(s.data_dir)
    running = read_state(path)
    if not s.scenario_chosen and not restart and running is not None and \
            running.topology == s.topology.resolve() and running.scenario.is_file():
        build_sim(running)
        return path, running  # nobody named a scenario: keep the one playing
    scenario = find_scenario(s.scenario)
    state = ensure_state(path, s.topology, scenario, list(s.template_dirs), restart=restart)
    build_sim(state)  # a scenario that does not fit the topology fails here, with file:line
    return path, state


# what the app's demo screen does (the same as `fabtui sim start` and `fabtui sim inject`) ------
def playing(s: Settings) -> str | None:
    """The name of the scenario the running demo fabric plays (None: not simulated or not
    started yet). Reads the state file only."""
    if not s.simulated:
        return None
    running = read_state(state_file(s.data_dir))
    return running.scenario.stem if running is not None else None


def scenario_list() -> list[tuple[str, str]]:
    """(name, description) of every shipped scenario, by name."""
    from fabtui.sim.scenario import load_scenario, scenario_files, shipped_scenarios

    return [(name, load_scenario(path).scenario.description)
            for name, path in sorted(scenario_files([shipped_scenarios()]).items())]


def fault_kinds() -> list[str]:
    """The faults `inject` can add."""
    from fabtui.sim.scenario import FaultKind

    return [kind.value for kind in FaultKind]


def play(s: Settings, name: str) -> Settings:
    """Restart the demo fabric on scenario `name` (clock restarts, injected faults go), as
    `fabtui --scenario NAME sim start` does; the settings to use from now on (they keep what
    plays rather than restarting the old scenario). Raises `InputError` for an unknown one.

    Note: writes the state file.
    """

    from fabtui.config import with_scenario
    from fabtui.sim.state import fresh_state, write_state

    s = with_scenario(s, name, chosen=False)
    scenario = find_scenario(name)
    state = fresh_state(s.topology, scenario, list(s.template_dirs))
    build_sim(state)
    write_state(state_file(s.data_dir), state)
    return s


@dataclass(frozen=True)
class Injection:
    """A fault added to the running demo fabric: what, where, and when on its clock."""

    fault: str
    component: str
    at: float
    """Scenario-clock seconds it starts."""
    until: float | None
    now: float
    """Scenario-clock seconds when it was added."""
    params: dict[str, object]
    injected: int
    """Faults injected into the running demo now, this one included."""

    @property
    def said(self) -> str:
        """What was done, in one line."""
        when = "now" if self.at <= self.now else f"in {self.at - self.now:g}s"
        return f"injected {self.fault} on {self.component} {when}"


def add_fault(s: Settings, fault: str, component: str, *, delay_s: float = 0.0,
              length_s: float | None = None, params: dict[str, object] | None = None,
              running: tuple[Path, SimState] | None = None) -> Injection:
    """Add a fault to the running demo fabric (`running`: its state file and state, when the
    caller already read them). The one implementation behind `fabtui sim inject` and the app's
    demo screen. Raises `RequestError` when the fault is unknown or does not fit the component.

    Note: writes the state file.
    """
    from fabtui.errors import RequestError
    from fabtui.sim.scenario import FaultKind, FaultSpec
    from fabtui.sim.state import write_state

    try:
        kind = FaultKind(fault)
    except ValueError:
        raise RequestError(f"no fault {fault!r} (faults: {', '.join(fault_kinds())})") from None
    path, state = running or sim_state(s)
    now = state.now()
    begin = now + delay_s
    end = begin + length_s if length_s is not None else None
    spec = FaultSpec(fault=kind, component=component, at=begin, until=end,
                     params=dict(params or {}))
    trial = state.model_copy(update={"injected": [*state.injected, spec]})
    try:
        build_sim(trial)
    except InputError as exc:
        reason = exc.problems[-1].message.split(": ", 1)[-1]
        raise RequestError(f"cannot inject {fault} on {component}: {reason}") from None
    write_state(path, trial)
    return Injection(fault, component, begin, end, now, dict(spec.params), len(trial.injected))


def inject(s: Settings, fault: str, component: str, *, delay_s: float = 0.0,
           length_s: float | None = None, params: dict[str, object] | None = None) -> str:
    """`add_fault`, said in one line (what the app's demo screen notifies)."""
    return add_fault(s, fault, component, delay_s=delay_s, length_s=length_s,
                     params=params).said


def repair(s: Settings, component: str) -> list[str]:
    """Record that `component` was fixed now (an optic swapped, a cable replaced), as `fabtui
    sim repair` does: the kinds of the faults active on it that end (empty: none was).

    Note: writes the state file.
    """
    from fabtui.sim.state import repair as record_repair

    path, state = sim_state(s)
    simulation = build_sim(state)
    link = simulation.link_of(component)
    hit = [f for f in simulation.faults if f.active(state.now()) and (
        f.spec.component == component or f.host == component or
        (link is not None and f.link == link))]
    record_repair(path, component)
    return [f.kind.value for f in hit]
