"""`fabtui runbook test`: each runbook's declared cases, run headless on the simulated fabric.

A case names a scenario (and where on its timeline to start), the fabric it plays on (the demo
fabric, or a topology template such as `gb200-nvl72`), the inputs, the answers to the
runbook's gates, what the operator repairs when answering a gate (the simulated fabric drops
those faults, as a swapped optic would), and what must come out: the path of steps, the outcome,
variables, and texts of the summary. Everything above the transports is the code an on-call
engineer runs; the simulated devices answer in this process, as a run is not about the
client-and-server path: node commands (`InProcessSimSshTransport`) and switch CLI sessions
(`InProcessSimCliTransport`: the real pexpect session code, over a socket pair to the simulated
switch in a thread), with the same results, clock and latency as that path. A block for this
machine goes to the simulated operator's machine (`InProcessSimLocalTransport`): testing a
runbook someone sent runs nothing of it for real, and the answers its cases declare confirm
dangerous steps on the simulation only.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabtui.durations import parse_duration
from fabtui.errors import InputError
from fabtui.journal.store import Journal
from fabtui.model.events import Decision, Event
from fabtui.model.probe import ProbeDef
from fabtui.model.runbook import Runbook, RunbookTest
from fabtui.probes.runner import ProbeRunner, Transports
from fabtui.runbooks.engine import Engine, Observer, RunSummary, ScriptedOperator
from fabtui.runbooks.inputs import resolve_inputs
from fabtui.sim.inprocess import InProcessSimLocalTransport, InProcessSimSshTransport
from fabtui.sim.inprocess_cli import InProcessSimCliTransport
from fabtui.sim.scenario import find_scenario, load_scenario
from fabtui.sim.state import build_sim, fresh_state, repair, write_state

FAST_INTERVAL = 1.0
"""Seconds between a counter probe's two samples in tests (on the simulated clock: the runner
moves it on instead of sleeping; kept at 1 s because the cases' expectations were set so)."""


@dataclass
class TestOutcome:
    """One case's result."""

    runbook: str
    test: str | None
    """The case's name; None when the runbook's cases were not run (`not_run` says why)."""
    passed: bool
    problems: list[str] = field(default_factory=list)
    summary: RunSummary | None = None
    seconds: float = 0.0
    not_run: str | None = None
    """Why no case of the runbook ran (lint errors, no case declared), else None."""

    def as_json(self) -> dict[str, Any]:
        """The row `fabtui runbook test --json` prints."""
        row: dict[str, Any] = {"runbook": self.runbook, "test": self.test,
                               "passed": self.passed, "problems": self.problems,
                               "seconds": round(self.seconds, 1)}
        if self.test is not None:
            row["path"] = self.summary.path if self.summary else None
        return row


async def run_test(runbook: Runbook, test: RunbookTest, *, topology: Path,
                   template_dirs: list[Path], catalog: dict[str, ProbeDef],
                   folder: Path | None = None) -> TestOutcome:
    """Run one case in a fresh simulated fabric. Never raises for a failing runbook."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fabtui-rbtest-") as scratch:
        where = folder or Path(scratch)
        try:
            summary = await _run(runbook, test, topology, template_dirs, catalog, where)
        except InputError as exc:
            return TestOutcome(runbook.meta.id, test.name, False,
                               [str(p) for p in exc.problems],
                               seconds=time.monotonic() - started)
        except ValueError as exc:
            return TestOutcome(runbook.meta.id, test.name, False, [f"cannot run: {exc}"],
                               seconds=time.monotonic() - started)
    problems = expectation_problems(test, summary)
    return TestOutcome(runbook.meta.id, test.name, not problems, problems, summary,
                       time.monotonic() - started)


async def _run(runbook: Runbook, test: RunbookTest, topology: Path, template_dirs: list[Path],
               catalog: dict[str, ProbeDef], folder: Path) -> RunSummary:
    at = float(parse_duration(test.at)) if test.at is not None else None
    scenario = find_scenario(test.scenario)
    if test.topology is not None:
        topology = case_topology(test.topology, template_dirs)
    elif (own := load_scenario(scenario).scenario.topology) is not None:
        topology = case_topology(own, template_dirs)  # an ib-* scenario's own fabric
    state = fresh_state(topology, scenario, template_dirs, at=at)
    state_path = folder / "state.json"
    write_state(state_path, state)
    graph = build_sim(state).graph
    # Every transport answers from the simulated fabric, this machine's too: a tested runbook
    # runs nothing real, and its answers confirm dangerous steps only on the simulation.
    runner = ProbeRunner(graph, Transports(ssh=InProcessSimSshTransport(state_path),
                                           cli=InProcessSimCliTransport(state_path),
                                           local=InProcessSimLocalTransport(state_path)))
    runner.server_start_s = 0.3  # a simulated perftest server is ready at once
    fast = {name: probe.model_copy(update={"interval": min(probe.interval, FAST_INTERVAL)})
            for name, probe in catalog.items()}
    journal = Journal(folder / "journal.sqlite")
    operator = ScriptedOperator(answers=dict(test.answers))
    try:
        inputs = resolve_inputs(runbook, test.inputs, graph, source=f"test {test.name!r}")
        engine = Engine(runbook, inputs=inputs, runner=runner, catalog=fast, journal=journal,
                        operator=operator, operator_name="runbook-test",
                        observers=[Repairer(test.repairs, state_path)])
        return await engine.run()
    finally:
        await runner.close()
        journal.close()


def case_topology(name: str, template_dirs: list[Path]) -> Path:
    """The file of a case's `topology`: a topology file, or a template of `template_dirs` by
    name. Raises `ValueError` naming the templates when there is no such one."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    for folder in template_dirs:
        for suffix in (".yaml", ".yml"):
            if (folder / f"{name}{suffix}").is_file():
                return folder / f"{name}{suffix}"
    known = sorted(p.stem for folder in template_dirs for p in folder.glob("*.y*ml"))
    raise ValueError(f"topology {name!r} is neither a topology file nor a template "
                     f"(templates: {', '.join(known)})")


class Repairer(Observer):
    """The operator's repairs of a test case: when a gate is accepted, the component it names
    is repaired on the simulated fabric (its faults drop from then on), as a swapped optic
    would be."""

    def __init__(self, repairs: dict[str, str], state_path: Path) -> None:
        self.repairs = repairs
        self.state_path = state_path

    def event(self, event: Event) -> None:
        """Repair on an accepted gate's decision (journaled before the run goes on)."""
        if isinstance(event.data, Decision) and event.data.accepted and event.block:
            component = self.repairs.get(event.block)
            if component:
                repair(self.state_path, component)


def expectation_problems(test: RunbookTest, summary: RunSummary) -> list[str]:
    """What the run did that the case did not expect."""
    expect = test.expect
    problems = []
    if expect.path is not None and summary.path != expect.path:
        problems.append(f"path {' -> '.join(summary.path)}; expected "
                        f"{' -> '.join(expect.path)}")
    missing = [s for s in expect.visits if s not in summary.path]
    if missing:
        problems.append(f"did not visit {', '.join(missing)} (path "
                        f"{' -> '.join(summary.path)})")
    if expect.outcome is not None and summary.outcome.value != expect.outcome:
        problems.append(f"outcome {summary.outcome.value}; expected {expect.outcome}"
                        + (f" ({summary.reason})" if summary.reason else ""))
    if expect.ends_at is not None and summary.ended_at != expect.ends_at:
        problems.append(f"ended at {summary.ended_at}; expected {expect.ends_at}")
    for name, wanted in expect.vars.items():
        actual: Any = summary.vars.get(name)
        if actual != wanted and str(actual) != str(wanted):
            problems.append(f"{name} = {actual!r}; expected {wanted!r}")
    text = summary.text()
    for phrase in expect.says:
        if phrase not in text:
            problems.append(f"the summary does not say {phrase!r}")
    return problems
