"""Issue 38, Deliver 4: one incident, one case. Journey (a) on the demo fabric, headless: an
NCCL hang triaged, handed over to the optic replacement, the optic swapped, then `cases file
last`. The filed case spans both sessions, and its title, symptom, root cause, resolution and
linked sessions need no editing; the demo fabric's doing never reaches it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

PORT = "leaf-g00-r5:Ethernet16"


@pytest.fixture
def fab(run: Callable[..., Result], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    (tmp_path / "config.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n')
    monkeypatch.chdir(tmp_path)
    return lambda *args: run("--config", str(tmp_path / "config.toml"), *args)


def _journey(fab: Callable[..., Result]) -> tuple[str, str]:
    """Journey (a): the hang triaged, the optic repair stopped at the swap gate, the optic
    swapped on the demo fabric, the repair resumed to its end. (triage, repair) session ids."""
    triage = fab("--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage", "--json",
                 "--answer", "cordon=node003", "--answer", "restart=yes")
    assert json.loads(triage.stdout)["handover"] == "optic-replacement", triage.output
    repair = fab("runbook", "run", "optic-replacement", "--json", "--input", f"port={PORT}",
                 "--input", "soak_s=300", "--answer", "drain=node003", "--answer",
                 "drained=yes", "--answer", f"shut-port={PORT}", "--answer", "cleaned=yes",
                 "--answer", f"shut-again={PORT}")
    repair_id = json.loads(repair.stdout)["session"]
    assert fab("sim", "repair", PORT).exit_code == 0  # the optic swapped
    resumed = fab("runbook", "resume", repair_id, "--json", "--answer", "swapped=yes",
                  "--answer", "resume=node003")
    assert json.loads(resumed.stdout)["outcome"] == "ok", resumed.output
    return json.loads(triage.stdout)["session"], repair_id


def test_journey_a_files_one_case_for_the_incident_that_needs_no_editing(
        fab: Callable[..., Result]) -> None:
    triage, repair = _journey(fab)
    filed = fab("cases", "file", "last", "--json")
    assert filed.exit_code == 0, filed.output
    case = json.loads(filed.stdout)
    assert case["id"] == f"session-{triage}" and case["status"] == "draft"
    assert case["sessions"] == [triage, repair]  # linked, in order
    assert case["runbooks"] == ["nccl-hang-triage", "optic-replacement"]
    assert case["title"] == ("NCCL hang on node003 (node003:mlx5_5, rank 13, 21): dark optic "
                             "MT24000043 in leaf-g00-r5:Ethernet16 replaced")
    assert case["symptom"].startswith(
        "NCCL job hung: 62 rank(s) timed out in ALLREDUCE #1276. Stuck rank(s) 13, 21, "
        "missing none; the completion errors' failed paths meet at node003:mlx5_5 on "
        "node003, cabled to leaf-g00-r5:Ethernet16 (optic MT24000043). The link is down at "
        "both ends and leaf-g00-r5:Ethernet16 receives no light.")
    assert "gate swapped needs an answer" not in case["symptom"]  # a stop later resumed
    assert case["root_cause"] == (
        "The optic in leaf-g00-r5:Ethernet16 (serial MT24000043) had failed: no light on any "
        "lane (Rx -inf, -inf, -inf, -inf dBm); cleaning and re-seating did not restore it, "
        "the replacement did.")
    resolution = case["resolution"]
    assert re.fullmatch(
        r"leaf-g00-r5:Ethernet16 \(node003:mlx5_5\) repaired: replaced the optic: old serial "
        r"MT24000043, new serial (MT\d+)\. Rx before -inf, -inf, -inf, -inf dBm, after "
        r"(-?\d+\.\d+, ){3}-?\d+\.\d+ dBm; FEC clean over 300 s; resumed node003 in the "
        r"scheduler\.", resolution), resolution
    assert "MT24000043" not in resolution.split("new serial")[1]
    environment = case["environment"]
    assert environment["gpu"] == "8x NVIDIA H100 80GB HBM3"
    assert environment["nic"] == "ConnectX-7 (MT4129)" and environment["switch"] == "SONiC"
    assert environment["nccl"] == "2.21.5+cuda12.4"
    assert environment["driver"].startswith("NVIDIA ") and environment["firmware"]
    assert "400GBASE-DR4" in environment["optic"]
    everything = json.dumps(case)
    assert "demo fabric" not in everything and not re.search(r"(?i)fabtui-sim|-SIM\b",
                                                              everything)
    assert case["lessons"] == ""  # no simulator note under Lessons


def test_the_triage_alone_files_its_own_case_and_the_repair_then_replaces_it(
        fab: Callable[..., Result]) -> None:
    triage = fab("--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage", "--json",
                 "--answer", "cordon=node003", "--answer", "restart=yes")
    session = json.loads(triage.stdout)["session"]
    alone = json.loads(fab("cases", "file", session, "--json").stdout)
    assert alone["sessions"] == [session]
    assert alone["title"].startswith("NCCL hang on node003 (node003:mlx5_5")
    assert alone["root_cause"] == ""  # the triage does not say why the optic died
