"""Scoreboard of `fabtui triage slow` on the demo fabric's planted slow-job scenarios.

Every shipped scenario whose name starts with `slow-` plants one or two causes of a slow job.
What the chain must end at is worked out here from the plant itself, as the simulation resolved
it (`Sim.faults`): the fault's kind says fabric or not (and which not-the-fabric cause), its
resolved link, port, switch, host or GPU says which element. Nothing is copied from the
scenario's `expect:` block. A scenario scores when every plant is named by a chain whose
episode overlaps the plant's time, and no chain names something nobody planted.

Healthy windows: the `healthy` scenario under 20 seeds (the noise differs with each): a window
scores when it has no episode.

    python -m tests.support.slowjob_scoreboard        # prints each scenario and right/total
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from fabtui.model.slowjob import SlowChain, SlowJobReport
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.core import Sim
from fabtui.sim.scenario import FaultKind, scenario_files, shipped_scenarios
from fabtui.sim.state import build_sim, fresh_state
from fabtui.workspace.triaging import demo_slow_frame, slow_job

HEALTHY_SEEDS = range(1, 21)


@dataclass(frozen=True)
class Plant:
    """What the chain must say about one planted cause."""

    kind: str
    """`fabric` or `not the fabric`."""
    cause: str | None
    elements: frozenset[str]
    """Acceptable verdict elements (empty: any, for a cause of the whole job)."""
    start: float
    end: float
    label: str


@dataclass
class Score:
    """One scenario's outcome."""

    scenario: str
    right: bool
    why: str
    report: SlowJobReport


def planted_scenarios() -> list[str]:
    """The shipped slow-job scenarios."""
    return sorted(name for name in scenario_files([shipped_scenarios()])
                  if name.startswith("slow-"))


def sim_of(name: str, seed: int = 7) -> Sim:
    """The demo fabric playing `name`."""
    return build_sim(fresh_state(demo_topology(), shipped_scenarios() / f"{name}.yaml",
                                 [shipped_templates()], seed=seed))


def plants(sim: Sim) -> list[Plant]:
    """The causes the scenario planted, from its resolved faults."""
    found: dict[tuple[str, str | None, float], Plant] = {}
    duration = sim.scenario.duration
    for fault in sim.faults:
        spec = fault.spec
        start, end = spec.at, spec.until if spec.until is not None else duration
        label = f"{spec.fault.value} on {spec.component}"
        plant: Plant | None = None
        if fault.kind is FaultKind.SLOW_NODE:
            cause = "host" if spec.params.get("cause") == "host" else "gpu"
            elements = {fault.host or ""} | ({f"{fault.host}:gpu{fault.gpu}"}
                                             if fault.gpu is not None else set())
            plant = Plant("not the fabric", cause, frozenset(elements), start, end, label)
        elif fault.kind is FaultKind.INPUT_STALL:
            plant = Plant("not the fabric", "input pipeline", frozenset(), start, end, label)
        elif fault.kind is FaultKind.MISCONFIG and \
                isinstance(value := spec.params.get("value"), dict) and \
                str(value.get("NCCL_PXN_DISABLE")) == "1":
            plant = Plant("not the fabric", "application", frozenset(), start, end,
                          "misconfig NCCL_PXN_DISABLE=1")
        elif fault.kind is FaultKind.LINK_SPEED and fault.link is not None:
            link = sim.topology.links[fault.link]
            plant = Plant("fabric", None, frozenset({link.a, link.b}), start, end, label)
        elif fault.kind is FaultKind.INTERFERENCE and fault.switch:
            plant = Plant("fabric", None, frozenset({fault.switch}), start, end, label)
        elif fault.kind in (FaultKind.UPLINK_DOWN, FaultKind.OPTIC_DEGRADING) and \
                fault.link is not None:
            link = sim.topology.links[fault.link]
            elements = {link.a, link.b} | ({link.optic} if link.optic else set())
            if fault.kind is FaultKind.OPTIC_DEGRADING:
                elements.add(f"link:{fault.link}")
            plant = Plant("fabric", None, frozenset(elements), start, end, label)
        if plant is not None:
            found.setdefault((plant.kind, plant.cause, plant.start), plant)
    return list(found.values())


def matches(chain: SlowChain, plant: Plant) -> bool:
    """The chain's verdict names the plant, in an episode that overlaps the plant's time."""
    verdict, episode = chain.verdict, chain.episode
    return verdict.kind == plant.kind and (plant.cause is None or verdict.cause == plant.cause) \
        and (not plant.elements or verdict.element in plant.elements) \
        and episode.start <= plant.end and episode.end >= plant.start


def report_of(sim: Sim) -> SlowJobReport:
    """`fabtui triage slow` on the scenario's whole window."""
    frame = demo_slow_frame(sim, start=0.0, end=sim.scenario.duration)
    return slow_job(sim.graph, frame=frame)


def score(name: str) -> Score:
    """One planted scenario, judged."""
    sim = sim_of(name)
    report = report_of(sim)
    planted = [Plant(p.kind, p.cause, p.elements, sim.epoch + p.start, sim.epoch + p.end,
                     p.label) for p in plants(sim)]
    missed = [p.label for p in planted if not any(matches(c, p) for c in report.chains)]
    stray = [f"{c.verdict.kind} {c.verdict.cause or c.verdict.element}" for c in report.chains
             if not any(matches(c, p) for p in planted)]
    said = "; ".join(f"{c.verdict.kind}: {c.verdict.cause or c.verdict.element}"
                     for c in report.chains) or "no episode"
    why = said + (f" | missed: {', '.join(missed)}" if missed else "") + \
        (f" | unplanted: {', '.join(stray)}" if stray else "")
    return Score(name, bool(planted) and not missed and not stray, why, report)


def healthy(seed: int) -> SlowJobReport:
    """The healthy demo job's hour under `seed`."""
    return report_of(sim_of("healthy", seed))


def main() -> int:
    scores = [score(name) for name in planted_scenarios()]
    for s in scores:
        print(f"{'RIGHT' if s.right else 'WRONG'}  {s.scenario:<24} {s.why}")
    quiet = [seed for seed in HEALTHY_SEEDS if not healthy(seed).episodes]
    right = sum(s.right for s in scores)
    print(f"planted: {right}/{len(scores)} chains end at the planted element or cause; "
          f"healthy: {len(quiet)}/{len(HEALTHY_SEEDS)} windows without an episode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
