"""Every verdict of a report follows from its evidence (issue 38).

The acceptance run of every shipped scenario of the demo fabric, and the sessions of the field
review's journeys (an NCCL-hang triage, the optic replacement it hands over to, stopped at its
swap gate and resumed after the swap), are reported, and each criteria row is checked: the
value shown satisfies or violates the limit shown exactly as its verdict says, and a row on a
link the journal recorded as down, or a lane it recorded dark, is never a pass. Then the
journeys' reports are read as a customer reads them: their kind, their verdict, their summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabtui.cli import cli
from fabtui.config import load_settings
from fabtui.model.report import Bound, judged_by
from fabtui.model.verdict import Verdict
from fabtui.reports.markdown import BADGE
from fabtui.reports.rows import show
from fabtui.sim.scenario import load_scenario, scenario_files, shipped_scenarios
from fabtui.workspace import Workspace

pytestmark = pytest.mark.usefixtures("sim_in_process")


def _cli(config: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--config", str(config), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _config(base: Path) -> Path:
    config = base / "fabtui.toml"
    config.write_text(f'data_dir = "{base / "data"}"\n')
    return config


def _newest(config: Path) -> str:
    with Workspace(load_settings(config)) as ws:
        return ws.sessions(1)[0].id


def _report(config: Path, *sessions: str) -> tuple[dict[str, Any], str]:
    code, data, err = _cli(config, "report", *sessions, "--json")
    assert code == 0, err
    code, text, err = _cli(config, "report", *sessions)
    assert code == 0, err
    return json.loads(data), text


def _down_in_journal(config: Path, session: str) -> dict[str, set[str]]:
    """Block id -> the ports and lanes its readings say are down or dark, read from the
    journal directly (not through the report builder)."""
    found: dict[str, set[str]] = {}
    with Workspace(load_settings(config)) as ws:
        for event in ws.events(session):
            result = getattr(event.data, "result", None)
            if not isinstance(result, dict) or not event.block:
                continue
            for metric in result.get("metrics") or []:
                name, value = metric.get("name"), metric.get("value")
                component = str(metric.get("component") or "")
                dead = (name == "state_down" and value) or \
                    (name in ("state", "port.state") and str(value) not in ("Active", "LinkUp")) \
                    or (name == "rx_power_dbm" and str(value) == "-inf")
                if dead:
                    found.setdefault(event.block, set()).add(component)
    return found


def _port(component: str) -> str:
    head, _, tail = component.rpartition("/")
    return head if head and tail.startswith("lane") else component


def check_rows(report: dict[str, Any], text: str, down: dict[str, set[str]]) -> int:
    """Every criteria row of `report` (its JSON) and of `text` (its markdown) is consistent;
    returns how many rows were checked."""
    rows = [*report["criteria"], *report.get("other_criteria", [])]
    for row in rows:
        verdict = Verdict(row["verdict"])
        value = row["value"]
        bounds = [Bound.model_validate(b) for b in row["bounds"]]
        where = f"{row['name']}: {row['measured']} | {row['requirement']} | {verdict}"
        if bounds:
            assert isinstance(value, (int, float)), where
            assert judged_by(bounds, float(value)) is verdict, where
            for bound in bounds:  # the limits shown are the limits applied
                assert f"{bound.verdict.value.upper()} if {bound.op}" in row["requirement"], where
        elif verdict is Verdict.OK:
            # A pass without a limit shown must be a number its rule names in words, or the
            # very word the rule asks for (`link Active (any other state fails)`).
            assert isinstance(value, (int, float)) or (
                isinstance(value, str) and value and value in row["requirement"]), where
        if verdict is Verdict.OK:
            text_value = str(value).lower()
            assert "inf" not in text_value and "down" not in text_value, where
            block = row["source"]["block"]
            dead = {_port(c) for c in down.get(block, set())} | down.get(block, set())
            assert row["component"] not in dead and _port(row["component"] or "") not in {
                c for c in dead if "/lane" not in c}, f"PASS on a dead link: {where}"
        # The markdown row shows this very reading, limit and verdict.
        line = next((ln for ln in text.splitlines() if ln.startswith(f"| {row['name']} |")
                     and f"| {BADGE[verdict]} |" in ln and _md(row["measured"]) in ln), None)
        assert line is not None, where
        assert _md(row["requirement"]) in line, where
    return len(rows)


def _md(text: str) -> str:
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|") \
        .replace("<", "\\<").replace("[", "\\[")


_FILES = scenario_files([shipped_scenarios()])
SCENARIOS = sorted(_FILES)
"""Every scenario the demo fabric ships (`fabtui sim list`)."""
_INFINIBAND = {name for name, path in _FILES.items()
               if load_scenario(path).scenario.topology is not None}
"""Scenarios on the InfiniBand variant: customer-acceptance checks an Ethernet (RoCE) fabric
through the switches' Ethernet CLIs, so there the report of ib-fabric-triage is checked."""


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_scenarios_acceptance_report_is_consistent_row_by_row(
        scenario: str, tmp_path: Path) -> None:
    config = _config(tmp_path)
    if scenario in _INFINIBAND:
        _cli(config, "--scenario", scenario, "runbook", "run", "ib-fabric-triage")
        session = _newest(config)
        report, text = _report(config, session)
        assert report["kind"] != "acceptance"
        assert check_rows(report, text, _down_in_journal(config, session)) >= 1
        return
    _cli(config, "--scenario", scenario, "runbook", "run", "customer-acceptance",
         "--answer", "idle=yes")
    session = _newest(config)
    report, text = _report(config, session)
    assert report["kind"] == "acceptance"
    assert check_rows(report, text, _down_in_journal(config, session)) > 5
    assert report["summary"] and text.index("## Summary") < text.index("## Test environment")
    failing = {p["element"] for p in report["problems"]}
    assert len(failing) == len(report["problems"])  # one line per element
    assert not [p for p in report["problems"] if re.search(r"/lane\d", p["element"])]


JOURNEY_PORT = "leaf-g00-r5:Ethernet16"


def _triage_then_repair_to_the_swap(config: Path) -> tuple[str, str]:
    """Journey (a) headless up to the swap: the NCCL-hang triage, then the optic replacement
    it hands over to (the port, the node it drained, the link), stopped at its swap gate
    (nobody answered); the two sessions."""
    _cli(config, "--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage",
         "--answer", "cordon=node003", "--answer", "restart=yes")
    triage = _newest(config)
    _cli(config, "runbook", "run", "optic-replacement", "--input", f"port={JOURNEY_PORT}",
         "--input", "scheduler_host=node001", "--input", "drained_node=node003",
         "--handed-over-from", triage, "--input", "soak_s=300",
         "--answer", f"shut-port={JOURNEY_PORT}", "--answer", "cleaned=yes",
         "--answer", f"shut-again={JOURNEY_PORT}")
    return triage, _newest(config)


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Journey (a) of the field review, headless: the NCCL-hang triage, then the optic
    replacement it hands over to, which stops at its swap gate (nobody answered), the optic
    swapped, the session resumed to its end."""
    config = _config(tmp_path_factory.mktemp("journey"))
    triage, repair = _triage_then_repair_to_the_swap(config)
    port = JOURNEY_PORT
    code, stopped, _ = _cli(config, "report", repair, "--json")
    code, stopped_text, _ = _cli(config, "report", repair)
    _cli(config, "sim", "repair", port)
    code, out, err = _cli(config, "runbook", "resume", repair, "--answer", "swapped=yes",
                          "--answer", "resume=node003")
    assert code == 0, out + err
    yield {"config": config, "triage": triage, "repair": repair, "stopped": stopped,
           "stopped_text": stopped_text}


def test_the_journeys_reports_are_consistent_row_by_row(journey: dict[str, Any]) -> None:
    """The triage's incident review, the repair's report (resumed after the swap), both as
    one incident, and the repair's report as it stood stopped at the swap gate: every row."""
    config = journey["config"]
    for sessions in ([journey["triage"]], [journey["repair"]],
                     [journey["triage"], journey["repair"]]):
        report, text = _report(config, *sessions)
        down: dict[str, set[str]] = {}
        for session in sessions:
            down |= _down_in_journal(config, session)
        assert check_rows(report, text, down) > 5
    # Stopped at the swap gate (before the resume; the journal then held no after-state).
    stopped = json.loads(journey["stopped"])
    assert stopped["kind"] == "repair"
    assert check_rows(stopped, journey["stopped_text"], _down_in_journal(
        config, journey["repair"])) > 5


def test_a_resumed_repair_is_judged_on_how_it_ended_after_the_swap(
        journey: dict[str, Any]) -> None:
    # Stopped at the gate it had not finished: incomplete, no verdict on the optic.
    stopped = json.loads(journey["stopped"])
    assert stopped["verdict"] == "error" and stopped["conclusion"].startswith("INCOMPLETE")
    report, text = _report(journey["config"], journey["repair"])
    assert report["kind"] == "repair" and text.startswith("# Repair report")
    assert report["verdict"] == "ok"
    assert "**Result: PASS** — REPAIRED and verified" in text
    assert "INCOMPLETE" not in text and "needs an answer" not in text
    assert "hand-over FAILS" not in text
    # The after-state decides, the before is beside it.
    dom = next(c for c in report["criteria"] if c["name"] == "switch.dom rx_power_dbm")
    assert dom["verdict"] == "ok" and isinstance(dom["value"], float) and dom["value"] > -3
    assert dom["before"].startswith("no light (-inf dBm) on leaf-g00-r5:Ethernet16/lane")
    # The plain-language summary comes first: dark before, the swap (old and new serial),
    # verified after the soak.
    summary = " ".join(report["summary"])
    assert "leaf-g00-r5:Ethernet16 (optic MT24000043): no light on lanes 1-4" in summary
    assert "old serial MT24000043, new serial" in summary
    assert "clean FEC at both ends over 300 s" in summary
    before = {p["element"] for p in report["before_problems"]}
    assert {"leaf-g00-r5:Ethernet16", "node003:mlx5_5"} <= before
    assert not report["problems"]
    # The NIC end is judged on its after-state too: its counters cleared after the swap, its
    # BER read after the soak (counted from the clear, not the old optic's errors), the
    # before-reading beside it (#38 point 1).
    rows = {c["name"]: c for c in report["criteria"]}
    state = rows["nic.mlxlink state"]
    assert (state["value"], state["verdict"]) == ("Active", "ok")
    assert state["before"].startswith("Disable on node003:mlx5_5 (fail)")
    for name in ("nic.mlxlink raw_ber", "nic.mlxlink effective_ber"):
        row = rows[name]
        assert row["verdict"] == "ok" and isinstance(row["value"], float), row
        assert row["before"] == "link down (state Disable) on node003:mlx5_5 (fail)", row
        assert row["source"]["block"] == "nic-ber-after", row
    assert "not read after the repair" not in text
    # A counter probe read beside the dark optic in the same step measures nothing there: its
    # before is the dark port's, never an ok 0 (#38: a dark lane is never PASS on any metric).
    fec = rows["switch.fec delta.fec_uncorr"]
    assert fec["before"].startswith("no light on any lane on leaf-g00-r5:Ethernet16"), fec
    assert fec["before"].endswith("(fail)"), fec


def test_an_nccl_hang_triage_is_an_incident_not_an_acceptance(
        journey: dict[str, Any]) -> None:
    report, text = _report(journey["config"], journey["triage"])
    assert report["kind"] == "incident" and text.startswith("# Incident review")
    assert "Acceptance" not in text and "hand-over" not in text
    assert "**Result: OPEN**" in text and "handed over to optic-replacement" in text
    # The log host is where the log was read, not a failing element.
    elements = {p["element"] for p in report["problems"]}
    assert "node001" not in elements and not any(e.startswith("node001:") for e in elements)
    assert {"leaf-g00-r5:Ethernet16", "node003:mlx5_5"} <= elements
    assert "## What the job's logs said" in text and "ALLREDUCE #1276" in text
    rows = {c["name"]: c for c in report["criteria"]}
    # A BER read on a link that is down measured nothing; a dead port fails.
    assert rows["nic.mlxlink raw_ber"]["verdict"] == "fail"
    assert rows["nic.mlxlink raw_ber"]["value"].startswith("link down")
    assert "1.5e-254" not in text
    assert rows["switch.port_counters state_down"]["verdict"] == "fail"
    # Lanes folded: one line per element.
    leaf = next(p for p in report["problems"] if p["element"] == "leaf-g00-r5:Ethernet16")
    assert "no light on lanes 1-4 (rx_power_dbm -inf dBm)" in leaf["what"]
    # Parameters never print as empty code spans.
    assert "= ` `" not in text and "suspect_nic = (not given)" in text


def test_triage_and_its_repair_together_are_one_resolved_incident(
        journey: dict[str, Any]) -> None:
    report, text = _report(journey["config"], journey["triage"], journey["repair"])
    assert report["kind"] == "incident"
    assert "**Result: RESOLVED**" in text
    assert f"repaired and verified in session {journey['repair']}" in report["conclusion"]
    # The headline says the incident in words, as its case is titled.
    assert report["conclusion"].startswith(
        "Resolved: NCCL hang on node003 (node003:mlx5_5, rank 13, 21): dark optic MT24000043 "
        "in leaf-g00-r5:Ethernet16 replaced; ")
    assert "unknown (" not in report["conclusion"]
    assert "injected faults" not in text.lower()


def test_thresholds_are_numbers_with_their_source(journey: dict[str, Any]) -> None:
    report, text = _report(journey["config"], journey["triage"])
    assert "within the module's own alarm limits" not in text
    bias = next(c for c in report["criteria"] if c["name"] == "switch.dom tx_bias_ma")
    assert bias["verdict"] == "fail" and bias["bounds"]  # the module's low alarm, in mA
    assert re.search(r"FAIL if < [\d.]+ mA", bias["requirement"])
    for row in report["criteria"]:
        assert row["reference"], row["name"]  # every threshold says where it comes from
    # A pass judged against the module's own thresholds shows them, as the module printed them.
    repair, _ = _report(journey["config"], journey["repair"])
    rows = {c["name"]: c for c in repair["criteria"]}
    bias = rows["switch.dom tx_bias_ma"]
    assert bias["verdict"] == "ok" and bias["requirement"].startswith(
        "FAIL if < 2 mA; FAIL if > 15 mA; WARN if < 4 mA; WARN if > 13 mA")


def test_a_repair_stopped_before_anything_was_repaired_says_so(tmp_path: Path) -> None:
    """Journey (b)'s `n` at "Is node003 drained?": nothing was repaired. Whether the engine
    ends the session there or waits for the answer, the report judges the state as found and
    never calls it repaired."""
    config = _config(tmp_path)
    _cli(config, "--scenario", "optic-degrading", "runbook", "run", "optic-replacement",
         "--input", "port=leaf-g00-r3:Ethernet16", "--answer", "drain=node003",
         "--answer", "drained=no")
    session = _newest(config)
    report, text = _report(config, session)
    assert report["kind"] == "repair" and report["verdict"] not in ("ok", "warn")
    assert "REPAIRED and verified" not in text and "after the repair" not in text
    assert "No repair was made" in report["summary"][0]
    assert "leaf-g00-r3:Ethernet16" in {p["element"] for p in report["problems"]}
    assert check_rows(report, text, _down_in_journal(config, session)) > 5


def test_a_new_optic_that_is_still_bad_fails_on_the_nic_ber_read_after_the_soak(
        tmp_path: Path) -> None:
    """Journey (a)'s repair with a bad replacement: the new leaf optic launches too little
    light (planted as an optic-degrading fault on the port right after the swap), so the NIC
    end receives a high pre-FEC BER while the link stays up. The NIC's BER, counted from the
    clear after the swap, fails on the after-reading, with the before (link down) beside it."""
    config = _config(tmp_path)
    _, repair = _triage_then_repair_to_the_swap(config)
    port = JOURNEY_PORT
    _cli(config, "sim", "repair", port)
    code, out, err = _cli(config, "sim", "inject", "optic-degrading", port, "--param",
                          "ramp_s=1", "--param", "end_dbm=-8", "--param", "flap_after_s=7200")
    assert code == 0, out + err
    _cli(config, "runbook", "resume", repair, "--answer", "swapped=yes")
    report, text = _report(config, repair)
    assert report["kind"] == "repair" and report["verdict"] == "fail"
    assert "REPAIRED and verified" not in text
    rows = {c["name"]: c for c in report["criteria"]}
    assert rows["nic.mlxlink state"]["value"] == "Active"  # up: the BER measures traffic
    ber = rows["nic.mlxlink raw_ber"]
    assert ber["verdict"] == "fail" and ber["value"] >= 1e-5, ber
    assert ber["source"]["block"] == "nic-ber-after", ber
    assert ber["before"] == "link down (state Disable) on node003:mlx5_5 (fail)", ber
    assert check_rows(report, text, _down_in_journal(config, repair)) > 5


def test_a_review_of_a_case_alone_shows_the_case_environment_not_the_configured_fabric(
        tmp_path: Path) -> None:
    """A Chinese case from another cluster (H200, Arista spines), reviewed with no session
    recorded here: its environment is the case's, the demo fabric's H100 inventory is not
    claimed for it, and nothing says a summary is missing or links to sessions."""
    config = _config(tmp_path)
    report, text = _report(config, "--case", "optic-fec-ber-fr4-spine-zh")
    assert report["kind"] == "incident" and report["inventory"] is None
    assert report["environment"]["gpu"] == "H200-SXM-141GB"
    assert "| GPU | H200-SXM-141GB |" in text and "H100" not in text
    assert "from case `optic-fec-ber-fr4-spine-zh`." in text and "0 session(s)" not in text
    assert "Not in this report" not in text and "## Sources" not in text
    code, _, err = _cli(config, "report", "--case", "optic-fec-ber-fr4-spine-zh",
                           "-o", str(tmp_path / "zh.html"))
    html = (tmp_path / "zh.html").read_text()
    assert code == 0 and "from case optic-fec-ber-fr4-spine-zh.</footer>" in html, err
    assert "<h2>Sources</h2>" not in html and "H100" not in html


def test_a_neighbour_ports_fec_errors_neither_fail_nor_decide_the_repair(
        tmp_path: Path) -> None:
    """Journey (a)'s repair of leaf-g00-r5:Ethernet16 while a neighbour on the same leaf,
    Ethernet8, receives through a dirty connector (planted at its NIC end, node002:mlx5_5):
    `switch.fec` reads every port of the leaf. The repair's rows name and judge the repaired
    port (and its NIC end) and pass; Ethernet8's errors are shown apart, failing there, and
    decide nothing about the repair."""
    config = _config(tmp_path)
    _cli(config, "--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage",
         "--answer", "cordon=node003", "--answer", "restart=yes")
    triage = _newest(config)
    port = "leaf-g00-r5:Ethernet16"
    code, out, err = _cli(config, "sim", "inject", "dirty-connector", "node002:mlx5_5",
                          "--param", "loss_db=7.5")
    assert code == 0, out + err
    _cli(config, "runbook", "run", "optic-replacement", "--input", f"port={port}",
         "--input", "drained_node=node003", "--handed-over-from", triage,
         "--input", "soak_s=300", "--answer", f"shut-port={port}", "--answer", "cleaned=yes",
         "--answer", f"shut-again={port}")
    repair = _newest(config)
    _cli(config, "sim", "repair", port)
    _cli(config, "runbook", "resume", repair, "--answer", "swapped=yes",
         "--answer", "resume=node003")
    report, text = _report(config, repair)
    assert report["kind"] == "repair" and report["verdict"] == "ok", report["conclusion"]
    assert "**Result: PASS** — REPAIRED and verified" in text
    rows = {c["name"]: c for c in report["criteria"]}
    for name in ("switch.fec fec_pre_ber", "switch.fec delta.fec_uncorr"):
        row = rows[name]
        assert row["component"] == port and row["verdict"] == "ok", row
        assert row["measured"].startswith(f"{show(row['value'], row['unit'])} on {port}"), row
        assert row["source"]["block"] == "fec-after", row
    assert not any("Ethernet8" in (c["component"] or "") or "Ethernet8" in c["measured"]
                   for c in report["criteria"])
    assert not report["problems"] and "Ethernet8" not in str(report["before_problems"])
    # The neighbour is shown, apart, as what it is: failing, on its own port.
    other = {c["name"]: c for c in report["other_criteria"]}
    ber = other["switch.fec fec_pre_ber"]
    assert ber["component"] == "leaf-g00-r5:Ethernet8" and ber["verdict"] == "fail", ber
    assert "## Other ports read by the same probes (not part of this repair)" in text
    assert any("Not part of this repair" in line and "leaf-g00-r5:Ethernet8" in line
               for line in report["summary"])
    assert check_rows(report, text, _down_in_journal(config, repair)) > 5
