"""The simulator's faults added for issue 40: a whole switch dead (`switch-down`, scenario
leaf-down) and a PFC storm whose leaf runs no PFC watchdog (`pfcwd: false`, scenario
pfc-storm-spreading), as their cables, counters and exporter show them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.errors import InputError
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.exporter import FabricCollector
from fabtui.sim.scenario import FaultKind, FaultSpec, find_scenario
from fabtui.sim.state import build_sim, fresh_state, state_file, write_state
from fabtui.topology.expected import pause_frame_hold_s


def state(name: str, **changes: object):  # type: ignore[no-untyped-def]
    return fresh_state(demo_topology(), find_scenario(name), [shipped_templates()]) \
        .model_copy(update=changes)


def test_a_dead_leaf_darkens_every_cable_of_it_and_its_exporter(tmp_path: Path) -> None:
    played = state("leaf-down")
    sim = build_sim(played)
    t = played.now()
    leaf = "leaf-g00-r2"
    links = sim.graph.switch_links(leaf)
    assert len(links) == 16  # 8 hosts, 8 uplinks
    assert not any(sim.link_up(link, t) for link in links)
    assert sim.link_up(sim.graph.switch_links("leaf-g00-r3")[0], t)
    assert sim.switch_dead(leaf, t) and not sim.switch_dead("leaf-g00-r3", t)
    assert not sim.switch_dead(leaf, 60.0)  # before the fault (at 2m)
    path = state_file(tmp_path)
    write_state(path, played)
    served = {m.name: m for m in FabricCollector(path, "switch").collect()}
    instances = {s.labels["instance"] for s in served["sonic_interface_operational_status"]
                 .samples}
    assert leaf not in instances and "leaf-g00-r3" in instances
    spine_down = [s for s in served["sonic_interface_operational_status"].samples
                  if s.labels["instance"].startswith("spine") and s.value == 0]
    assert len(spine_down) == 8  # both spines' four ports to it


def test_switch_down_needs_a_switch() -> None:
    played = state("healthy", injected=[FaultSpec(fault=FaultKind.SWITCH_DOWN,
                                                  component="node001")])
    with pytest.raises(InputError, match="switch-down needs a switch; 'node001'"):
        build_sim(played)


def test_without_a_watchdog_the_storm_spreads_to_the_uplinks() -> None:
    for name, spreads in (("pfc-storm-spreading", True), ("pfc-storm", False)):
        played = state(name)
        sim = build_sim(played)
        t = played.now()
        uplink = sim.graph.uplinks("leaf-g00-r4")[0]
        end = next(e for e in (sim.topology.links[uplink].a, sim.topology.links[uplink].b)
                   if e.startswith("leaf-g00-r4:"))
        _, sent = sim.pause_rates("leaf-g00-r4", end.split(":", 1)[1], uplink, t)
        share = sent * pause_frame_hold_s(sim.link_speed(uplink))
        assert (share >= 0.1) is spreads, (name, share)
        assert bool(sim.pfcwd_windows("leaf-g00-r4", "Ethernet40", t)) is not spreads
