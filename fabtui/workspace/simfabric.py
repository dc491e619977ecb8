"""The demo fabric a workspace talks to when it is simulated: one rule for which one plays.

Nobody named a scenario (config or `--scenario`): the running demo keeps the scenario it plays
(faults injected with `fabtui sim inject` included). A scenario was named, or nothing runs yet:
that scenario starts (or keeps running, if it already is).
"""

from __future__ import annotations

from pathlib import Path

from fabtui.config import Settings
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import SimState, build_sim, ensure_state, read_state, state_file

RETURN_TO_HEALTHY = "fabtui --scenario healthy sim start"


def unhealthy_notice(state: SimState) -> str | None:
    """`demo fabric: scenario X playing, ... (how to return to healthy)`; None when healthy.

    The demo keeps its state between commands, so a result that depends on it must not surprise
    whoever forgot what was played: every face shows this line once per command."""
    differs = state.not_healthy()
    return f"demo fabric: {differs} ({RETURN_TO_HEALTHY} returns to healthy)" if differs else None


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
