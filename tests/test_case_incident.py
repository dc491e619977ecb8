"""Issue 38, Deliver 4: one incident, one case. Journey (a) on the demo fabric, headless: an
NCCL hang triaged, handed over to the optic replacement, the optic swapped, then `cases file
last`. The filed case spans both sessions, and its title, symptom, root cause, resolution and
linked sessions need no editing; the demo fabric's doing never reaches it."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from fabtui.config import load_settings
from fabtui.model.events import HandedOverFrom, HandedOverTo
from fabtui.sim.scenario import scenario_files, shipped_scenarios
from fabtui.workspace import Workspace
from fabtui.yamldoc import load_yaml

PORT = "leaf-g00-r5:Ethernet16"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "config.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path / "config.toml"


@pytest.fixture
def fab(run: Callable[..., Result], config: Path) -> Callable[..., Result]:
    return lambda *args: run("--config", str(config), *args)


def _triage(fab: Callable[..., Result]) -> tuple[str, list[str]]:
    """The NCCL-hang triage on the demo fabric: its session id and the command it prints to
    hand over (`hand over with: fabtui runbook run ...`), as arguments after `fabtui`."""
    triage = fab("--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage",
                 "--answer", "cordon=node003", "--answer", "restart=yes")
    assert "next: runbook optic-replacement" in triage.stdout, triage.output
    line = next(x for x in triage.stdout.splitlines() if x.startswith("hand over with: "))
    args = shlex.split(line.removeprefix("hand over with: "))[1:]
    return args[args.index("--handed-over-from") + 1], args


def _journey(fab: Callable[..., Result], *, explicit: bool = True) -> tuple[str, str]:
    """Journey (a): the hang triaged, the hand-over taken with the command the triage printed
    (`explicit`; else the repair opened by hand, as before the journal linked them), the
    optic repair stopped at the swap gate, the optic swapped on the demo fabric, the repair
    resumed to its end. (triage, repair) session ids."""
    triage_id, handover = _triage(fab)
    if not explicit:  # the link the journal kept before: none, only the inputs carried
        cut = handover.index("--handed-over-from")
        handover = handover[:cut] + handover[cut + 2:]
    repair = fab(*handover, "--json", "--input", "soak_s=300", "--answer", f"shut-port={PORT}",
                 "--answer", "cleaned=yes", "--answer", f"shut-again={PORT}")
    repair_id = json.loads(repair.stdout)["session"]
    assert json.loads(repair.stdout)["waiting"] == "swapped", repair.output
    assert fab("sim", "repair", PORT).exit_code == 0  # the optic swapped
    resumed = fab("runbook", "resume", repair_id, "--json", "--answer", "swapped=yes",
                  "--answer", "resume=node003")
    assert json.loads(resumed.stdout)["outcome"] == "ok", resumed.output
    return triage_id, repair_id


def _links(config: Path, session: str) -> list[tuple[str, str]]:
    """The hand-over links `session`'s journal holds: (event kind, the other session)."""
    with Workspace(load_settings(config)) as ws:
        return [(e.kind.value, e.data.session) for e in ws.events(session)
                if isinstance(e.data, HandedOverFrom | HandedOverTo)]


def test_journey_a_files_one_case_for_the_incident_that_needs_no_editing(
        fab: Callable[..., Result], config: Path) -> None:
    triage, repair = _journey(fab)
    # The hand-over is journaled in both sessions, each naming the other.
    assert _links(config, repair) == [("handed_over_from", triage)]
    assert _links(config, triage) == [("handed_over_to", repair)]
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
        r"(-?\d+\.\d+, ){3}-?\d+\.\d+ dBm; FEC clean over 300 s, NIC raw BER "
        r"\d(\.\d+)?e-\d+ over it \(counters cleared after the swap\); resumed node003 in "
        r"the scheduler\.", resolution), resolution
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


def test_a_journal_without_the_hand_over_link_still_links_by_inference(
        fab: Callable[..., Result], config: Path) -> None:
    """Sessions journaled before the hand-over was linked (the repair opened by hand with the
    inputs the triage carried): the case still spans both."""
    triage, repair = _journey(fab, explicit=False)
    assert _links(config, repair) == [] and _links(config, triage) == []
    case = json.loads(fab("cases", "file", repair, "--json").stdout)
    assert case["sessions"] == [triage, repair]


def test_the_journaled_link_wins_over_a_later_look_alike(fab: Callable[..., Result],
                                                        config: Path) -> None:
    """Two triages of the same hang both hand over to the optic replacement with the same
    port; the repair taken up from the first is that one's (inference alone would pick the
    newest)."""
    first, handover = _triage(fab)
    second, _ = _triage(fab)
    repair = json.loads(fab(*handover, "--json", "--answer", f"shut-port={PORT}").stdout)
    case = json.loads(fab("cases", "file", repair["session"], "--json").stdout)
    assert case["sessions"] == [first, repair["session"]] and second not in case["sessions"]
    with Workspace(load_settings(config)) as ws:  # the draft the app shows beside the session
        assert [r.id for r in ws.incident(repair["session"])] == case["sessions"]


def test_a_hand_over_from_a_session_that_did_not_hand_over_is_refused(
        fab: Callable[..., Result], config: Path) -> None:
    triage, handover = _triage(fab)
    wrong = fab("runbook", "run", "link-flap", "--input", f"port={PORT}",
                "--handed-over-from", triage)
    assert wrong.exit_code != 0
    assert f"session {triage} (nccl-hang-triage) handed over to optic-replacement, not to " \
        "link-flap" in wrong.stderr
    unknown = fab(*handover[:-1], "20990101-000000-abcdef")
    assert unknown.exit_code != 0 and "no session '20990101-000000-abcdef'" in unknown.stderr
    assert _links(config, triage) == []  # nothing linked by a refused run


def _planted() -> dict[str, Any]:
    """What the nccl-hang scenario plants (its `expect:`): the rank, NIC, port and optic."""
    path = scenario_files([shipped_scenarios()])["nccl-hang"]
    expect: dict[str, Any] = load_yaml(path).data["expect"]
    return expect


def test_journey_a_case_states_what_the_fabric_showed_and_nothing_simulated(
        fab: Callable[..., Result]) -> None:
    """Journey (a) as a user runs it (the triage, the hand-over command it prints, the swap,
    the resume, `cases file last`): the filed case is checked against what the scenario
    planted and what the switch reads after the swap, as an engineer would check it before
    sending it on."""
    plant = _planted()
    port, optic, nic, rank = plant["port"], plant["optic"], plant["component"], plant["rank"]
    triage, repair = _journey(fab)
    case = json.loads(fab("cases", "file", "last", "--json").stdout)
    now = json.loads(fab("probe", "run", "switch.dom", "--target", port, "--json").stdout)
    reads = now["parsed"]["interfaces"][port.split(":")[1]]
    new_serial = reads["serial"]
    rx_after = [float(m["value"]) for m in now["metrics"] if m["name"] == "rx_power_dbm"
                and m["component"].startswith(f"{port}/lane")]
    assert len(rx_after) == 4
    assert new_serial != optic

    assert case["sessions"] == [triage, repair]
    # Title: the hang, where, the optic by port and serial, what was done.
    title = case["title"]
    assert title.startswith("NCCL hang") and nic in title and port in title
    assert optic in title and title.endswith("replaced") and str(rank) in title
    # Symptom: the hang (timed-out collective, stuck ranks including the planted one).
    symptom = case["symptom"].split("\n\n")[0]
    stuck = re.search(r"Stuck rank\(s\) ([\d, ]+),", symptom)
    assert "NCCL job hung" in symptom and stuck, symptom
    assert rank in {int(r) for r in stuck.group(1).split(", ")}
    assert nic in symptom and port in symptom and optic in symptom
    # Root cause: the planted optic by port and serial, dark.
    assert f"The optic in {port} (serial {optic}) had failed" in case["root_cause"]
    assert "no light on any lane" in case["root_cause"]
    # Resolution: old and new serial as the switch reads them, Rx before and after as read.
    resolution = case["resolution"]
    assert f"old serial {optic}, new serial {new_serial}." in resolution
    assert "Rx before -inf, -inf, -inf, -inf dBm" in resolution
    assert f"after {', '.join(f'{v:.2f}' for v in rx_after)} dBm" in resolution
    # Environment: the parts as the probes read them, the optics by their real part number.
    environment = case["environment"]
    assert environment["optic"] == "switch side NVIDIA MMS4X00-NS (400GBASE-DR4)"
    assert environment["nic"] == "ConnectX-7 (MT4129)"
    # Nothing of the simulator: no sim word, no placeholder part, no scenario's name (the
    # symptom class and runbook ids are words of the case, not of the demo fabric).
    prose = json.dumps({k: v for k, v in case.items()
                        if k not in ("symptom_class", "tags", "runbooks")})
    assert not re.search(r"(?i)\bsim\b|fabtui-sim|-SIM\b|\bSIM\d|demo fabric|scenario", prose)
    for name in scenario_files([shipped_scenarios()]):
        hit = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", prose)
        assert hit is None, f"scenario name {name!r} in the case: " \
            f"{prose[max(0, hit.start() - 80):hit.end() + 80]}"
    # Components: the elements of the incident, never the host a log was read on.
    assert {nic, port, f"optic:{optic}"} <= set(case["components"])
    assert not [c for c in case["components"] if c.startswith("node001")]
