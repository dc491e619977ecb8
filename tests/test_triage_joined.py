"""Triage joined to the rest of fabtui: the case library answers "seen before?" for a hang, and
`--chain` probes the demo fabric along the first suspect's path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.config import load_settings
from fabtui.sim.hangjob import JobSpec, generate
from fabtui.workspace import Workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")


def _hang(tmp_path: Path) -> Path:
    out = tmp_path / "job"
    with Workspace(load_settings()) as ws:
        generate(out, JobSpec(case="optic", ranks=32, nccl="2.21"), ws.graph())
    return out


def test_a_hang_like_a_shipped_case_names_it_and_the_chain_confirms_the_optic(
        run: Callable[..., Result], tmp_path: Path) -> None:
    logs = _hang(tmp_path)
    result = run("--scenario", "nccl-hang", "triage", "nccl", str(logs), "--json", "--chain")
    report = json.loads(result.stdout)
    assert report["suspects"][0]["port"] == "leaf-g00-r5:Ethernet16"
    assert report["similar_cases"][0] == "nccl-hang-optic-rail5-node003"
    links = {link["layer"]: link["status"] for link in report["chain"]["links"]}
    assert links["optic"] == "confirmed" and links["pfc"] == "contradicted"
    text = run("--scenario", "nccl-hang", "triage", "nccl", str(logs)).stdout
    assert "seen before: fabtui cases show nccl-hang-optic-rail5-node003" in text


def test_no_similar_skips_the_case_library(run: Callable[..., Result], tmp_path: Path) -> None:
    logs = _hang(tmp_path)
    report = json.loads(run("triage", "nccl", str(logs), "--json", "--no-similar").stdout)
    assert report["similar_cases"] == [] and report["chain"] is None
