"""A slow-job analysis as a report and a case (issue 39): every verdict follows the chain, every
hop's evidence and counter-evidence is shown, nothing the chain did not find is written as
found. The analyses here are written out by hand in the engine's model (fabtui.model.slowjob);
the engine's own answers on the demo scenarios are reported in tests/test_slow_demo_faces.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabtui.cases.slowjob import draft_slow_case
from fabtui.cli import cli
from fabtui.model.case import SymptomClass
from fabtui.model.report import ReportKind
from fabtui.model.slowjob import (
    Episode,
    Hop,
    Probe,
    SlowChain,
    SlowJobReport,
    SlowVerdict,
)
from fabtui.model.verdict import Verdict
from fabtui.reports.markdown import render_markdown
from fabtui.reports.slowjob import build_slow_report
from fabtui.views.slowjob import deepest_confirmed, runbook_name

OPTIC_PORT = "spine-01:Ethernet1/1"
T0 = 1_796_400_000.0


def _episode(kind: str = "slow") -> Episode:
    return Episode(start=T0 + 600, end=T0 + 1500, kind=kind, magnitude=0.18, baseline_s=2.4,
                   median_s=2.83, samples=60)


def fabric_chain() -> SlowChain:
    return SlowChain(episode=_episode(), hops=[
        Hop(layer="job", element="4242", claim="steps 18 % slower from 10:10",
            evidence=["median step 2.83 s against 2.40 s"], confidence=0.95),
        Hop(layer="rail", element="rail 3", claim="rail 3 out of line with its siblings",
            evidence=["rail 3 busbw 212 GB/s, siblings 355-361 GB/s"],
            counter_evidence=["NVLink fine, no Xid on any node"], confidence=0.8),
        Hop(layer="spine port", element=OPTIC_PORT, claim="pause at the same moments",
            evidence=["pause share 0.31 during the episode, 0.00 before",
                      "FEC corrected 4.1e6/s rising"], confidence=0.7,
            probe=Probe(probe="switch.fec", target="spine-01",
                        command="fabtui probe run switch.fec --target 'spine-01'",
                        runbook="optic-replacement")),
        Hop(layer="optic", element=f"{OPTIC_PORT}/optic", claim="ageing optic",
            evidence=["rx power -9.8 dBm, down 2.1 dB over the window"], confidence=0.5),
    ], verdict=SlowVerdict(kind="fabric", element=OPTIC_PORT, layer="spine port",
                           confidence=0.7, summary="FEC errors rising on the spine uplink"))


def host_chain() -> SlowChain:
    return SlowChain(episode=_episode(), hops=[
        Hop(layer="job", element="4242", claim="steps slower", confidence=0.9),
        Hop(layer="host", element="node007", claim="rank 49 arrives late",
            evidence=["rank 49 busbw above its peers: it arrives late"],
            counter_evidence=["no pause or FEC change on node007's ports"], confidence=0.85,
            probe=Probe(command="fabtui probe run gpu.nvml --target 'node007'",
                        runbook="slow-node")),
    ], verdict=SlowVerdict(kind="not the fabric", element="node007", layer="host",
                           cause="gpu", confidence=0.85,
                           summary="GPU 1 of node007 throttles (thermal)"))


def analysis(*chains: SlowChain) -> SlowJobReport:
    return SlowJobReport(job="4242", start=T0, end=T0 + 3600, ranks=64,
                         baseline_s=2.4, episodes=[c.episode for c in chains],
                         chains=list(chains), healthy=not chains,
                         summary="one slow episode" if chains else "healthy",
                         sources=["demo"])


def test_a_chain_ending_at_a_port_fails_and_names_it_with_its_optic() -> None:
    report = build_slow_report(analysis(fabric_chain()), made_from="a.json",
                               optics={OPTIC_PORT: "SN-OPT-42"})
    assert report.kind is ReportKind.SLOW_JOB and report.verdict is Verdict.FAIL
    assert [(p.element, p.optic) for p in report.problems] == [(OPTIC_PORT, "SN-OPT-42")]
    text = render_markdown(report)
    for hop in fabric_chain().hops:  # every claim, evidence and counter-evidence, as written
        for line in (hop.claim, *hop.evidence, *hop.counter_evidence):
            assert line in text
    assert "fabtui probe run switch.fec --target 'spine-01'" in text
    assert "**Result: FAIL**" in text


def test_not_the_fabric_names_no_fabric_element() -> None:
    report = build_slow_report(analysis(host_chain()), made_from="a.json")
    assert report.verdict is Verdict.WARN and report.problems == []
    assert report.conclusion == "the job was slow, not because of the fabric: gpu node007"
    assert "FAIL" not in render_markdown(report)


def test_a_healthy_window_passes_and_lists_nothing() -> None:
    report = build_slow_report(analysis(), made_from="a.json")
    assert report.verdict is Verdict.OK and not report.problems and not report.sections
    assert "held its baseline (2.4 s)" in report.conclusion


def test_the_runbook_opened_is_the_deepest_confirmed_elements() -> None:
    found = analysis(fabric_chain())
    deepest = deepest_confirmed(found)
    assert deepest is not None and deepest.element == OPTIC_PORT  # the optic hop is a lead
    assert runbook_name(found) == "optic-replacement"
    assert runbook_name(analysis(host_chain())) == "slow-node"


def test_the_case_keeps_the_chain_and_leaves_the_root_cause_to_the_operator() -> None:
    case = draft_slow_case(analysis(fabric_chain(), host_chain()), "a.json")
    assert case.symptom_class is SymptomClass.FEC_ERRORS and case.root_cause == ""
    assert case.components[:2] == [OPTIC_PORT, f"{OPTIC_PORT}/optic"]
    assert "node007" in case.components
    assert any(row.value == "FEC corrected 4.1e6/s rising" for row in case.evidence)
    # the deepest hop that carries a check (the optic hop has none)
    assert case.action_items[0].text.startswith(f"confirm spine port {OPTIC_PORT}: fabtui")
    assert draft_slow_case(analysis(host_chain()), "a").symptom_class is SymptomClass.SLOW_NODE


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "fabtui.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    return path


def _run(config: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--config", str(config), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_report_and_case_from_a_saved_analysis(config: Path, tmp_path: Path) -> None:
    saved = tmp_path / "slow.json"
    saved.write_text(analysis(fabric_chain()).model_dump_json(by_alias=True))
    code, out, err = _run(config, "report", "--slow", str(saved), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["kind"] == "slow-job" and data["verdict"] == "fail"
    assert data["problems"][0]["optic"]  # the demo topology records the optic in that port
    code, out, err = _run(config, "cases", "file", "--slow", str(saved), "--json")
    assert code == 0, err
    filed = json.loads(out)
    assert filed["id"] == "slow-4242-20261204-1600" and filed["status"] == "draft"
    code, out, _ = _run(config, "cases", "show", filed["id"])
    assert code == 0 and OPTIC_PORT in out


def test_a_file_that_is_not_an_analysis_is_refused_with_what_is_wrong(
        config: Path, tmp_path: Path) -> None:
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"job": "4242"}))
    code, _, err = _run(config, "report", "--slow", str(bad))
    assert code == 2 and f"{bad}: not a `fabtui triage slow --json` analysis: start: " in err
    code, _, err = _run(config, "report", "last", "--kind", "slow-job")
    assert code == 2 and "--slow FILE" in err
