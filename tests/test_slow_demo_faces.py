"""The slow-job report and case on the engine's own answers (issue 39): for every slow-* demo
scenario and the healthy fabric, the report's verdict follows the chains, its failing elements
are exactly the chains' fabric verdicts, every hop's claim, evidence and counter-evidence is in
the text, and nothing is named on a healthy window."""

from __future__ import annotations

import pytest

from fabtui.cases.slowjob import draft_slow_case
from fabtui.model.slowjob import SlowJobReport
from fabtui.model.verdict import Verdict
from fabtui.paths import demo_topology, shipped_templates
from fabtui.reports.build import optics_of
from fabtui.reports.markdown import render_markdown
from fabtui.reports.slowjob import build_slow_report
from fabtui.sim.scenario import find_scenario, scenario_files, shipped_scenarios
from fabtui.sim.state import build_sim, fresh_state
from fabtui.workspace.triaging import demo_slow_frame, slow_job

SCENARIOS = sorted(n for n in scenario_files([shipped_scenarios()]) if n.startswith("slow-"))


def _analysed(name: str) -> tuple[SlowJobReport, dict[str, str]]:
    state = fresh_state(demo_topology(), find_scenario(name), [shipped_templates()])
    sim = build_sim(state)
    end = sim.scenario.duration
    return (slow_job(sim.graph, frame=demo_slow_frame(sim, start=0.0, end=end)),
            optics_of(sim.topology))


@pytest.mark.parametrize("name", [*SCENARIOS, "healthy"])
def test_the_report_of_every_demo_answer_follows_its_chains(name: str) -> None:
    found, optics = _analysed(name)
    report = build_slow_report(found, made_from=name, optics=optics)
    text = render_markdown(report)
    fabric = [c for c in found.chains if c.verdict.kind == "fabric"]
    if found.healthy:
        assert report.verdict is Verdict.OK and not report.problems
        assert "**Result: PASS**" in text
        return
    assert report.verdict is (Verdict.FAIL if fabric else Verdict.WARN), name
    assert [p.element for p in report.problems] == [c.verdict.element for c in fabric
                                                    if c.verdict.element]
    for chain in found.chains:
        for hop in chain.hops:
            for line in (hop.claim, *hop.evidence, *hop.counter_evidence):
                shown = " ".join(text.replace("\\", "").split())  # markdown escapes `<`
                assert " ".join(line.split()) in shown, (name, line)
    case = draft_slow_case(found, name)
    assert case.root_cause == ""
    assert {c.verdict.element for c in found.chains if c.verdict.element} <= set(case.components)
