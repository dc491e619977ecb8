"""`fabtui prom rules`: the alerting rules beside the recording rules (issue 40, point 2).

The pack is generated for the demo fabric; Prometheus's own `promtool` checks it (`check
rules`) and runs unit tests of a few rules on hand-made series (`test rules`): a host port
receiving pause fires the storm alert and an uplink receiving as much does not, an uplink
sending pause fires the spreading alert, a port that goes down and up is a flap, an ageing
optic's launch power fires. Every limit taken from the catalog cites its source as
docs/thresholds.md lists it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.config import load_settings
from fabtui.workspace import Workspace
from fabtui.workspace.promsource import live_source

PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
DOCS = Path(__file__).parents[1] / "docs" / "thresholds.md"


def require_promtool() -> None:
    if not Path(PROMTOOL).exists():
        if os.environ.get("FABTUI_REQUIRE_PROMETHEUS") == "1":
            pytest.fail("promtool is required (apt-get install prometheus)")
        pytest.skip("promtool not installed (apt-get install prometheus)")


def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\nsource = "prometheus"\n[prometheus]\n'
                    'url = "http://127.0.0.1:9"\nwindow = "8s"\n')
    return path


@pytest.fixture
def pack(tmp_path: Path, run: Callable[..., Result]) -> Path:
    result = run("--config", str(config(tmp_path)), "prom", "rules")
    assert result.exit_code == 0, result.output
    path = tmp_path / "rules.yml"
    path.write_text(result.output)
    return path


def test_promtool_accepts_the_pack(pack: Path) -> None:
    require_promtool()
    checked = subprocess.run([PROMTOOL, "check", "rules", str(pack)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout


def test_every_rule_names_its_element_and_cites_its_source(tmp_path: Path) -> None:
    source = live_source(Workspace(load_settings(config(tmp_path))))
    assert source is not None
    document = json.loads(source.rules(as_json=True, alerting=True))
    names = [g["name"] for g in document["groups"]]
    assert names == ["fabtui", "fabtui-alerts"]
    alerts = document["groups"][1]["rules"]
    wanted = {"FabricPfcStormFromHost", "FabricPauseSpreadingUplink", "FabricPfcStormFromNic",
              "FabricPortDown", "FabricNicLinkDown", "FabricPortFlapping",
              "FabricNicLinkFlapping", "FabricFecUncorrectable", "FabricPreFecBerHigh",
              "FabricNicPreFecBerHigh", "FabricOpticRxPowerLow", "FabricOpticRxPowerHigh",
              "FabricOpticHot", "FabricNicOutOfSequence", "FabricNicCnpStorm", "FabricGpuXid",
              "FabricExporterDown"}
    assert wanted <= {r["alert"] for r in alerts}
    docs = DOCS.read_text(encoding="utf-8")
    for rule in alerts:
        labels, notes = rule["labels"], rule["annotations"]
        assert labels["fabtui_element"] in ("port", "nic", "ibport", "gpu", "target")
        assert labels["fabtui_role"] in ("cause", "symptom")
        assert labels["fabtui_suspect"] in ("self", "far-end", "link")
        assert notes["threshold_source"], rule["alert"]
        probe = notes["threshold"].split()[0]
        if "." in probe:  # a catalog threshold: cited as docs/thresholds.md lists it
            assert notes["threshold_source"] in docs, rule["alert"]
    # The recording rules alone, as before, without the alerting group.
    assert [g["name"] for g in json.loads(source.rules(as_json=True))["groups"]] == ["fabtui"]


def test_a_threshold_changed_in_the_catalog_changes_the_rule(tmp_path: Path) -> None:
    """The limits are the catalog's, read when the pack is written (not copied into code)."""
    from fabtui.model.probe import Threshold

    source = live_source(Workspace(load_settings(config(tmp_path))))
    assert source is not None
    before = {r.name: r.expr for r in source.alert_rules()}
    assert before["FabricPfcStormFromNic"].endswith(">= 0.5")
    nic = source.catalog["nic.ethtool"]
    changed = [t.model_copy(update={"fail": 0.7}) if t.metric == "pause_ratio.tx_prio*" else t
               for t in nic.thresholds]
    assert all(isinstance(t, Threshold) for t in changed)
    source.catalog = {**source.catalog,
                      "nic.ethtool": nic.model_copy(update={"thresholds": changed})}
    after = {r.name: r.expr for r in source.alert_rules()}
    assert after["FabricPfcStormFromNic"].endswith(">= 0.7")


def _labels(suspect: str, severity: str, element: str, role: str, fault: str,
            **where: str) -> dict[str, object]:
    return {"exp_labels": {"severity": severity, "fabtui_element": element,
                           "fabtui_role": role, "fabtui_fault": fault,
                           "fabtui_suspect": suspect, **where}}


def test_promtool_unit_tests_of_the_storm_flap_and_optic_rules(pack: Path,
                                                              tmp_path: Path) -> None:
    require_promtool()
    import yaml

    groups = yaml.safe_load(pack.read_text())["groups"]
    notes = {r["alert"]: r["annotations"] for r in groups[1]["rules"]}

    def expect(rule: str, summary: str, *labels: dict[str, object]) -> list[dict[str, object]]:
        return [{**item, "exp_annotations": {**notes[rule], "summary": summary}}
                for item in labels]

    storm = 'sonic_interface_receive_pfc_packets{priority="3",instance="leaf-g00-r4",' \
            'device="%s"}'
    spread = 'sonic_interface_transmit_pfc_packets{priority="3",instance="leaf-g00-r4",' \
             'device="Ethernet80"}'
    oper = 'sonic_interface_operational_status{instance="leaf-g00-r1",device="Ethernet32"}'
    launch = 'sonic_interface_optic_transmit_power_dbm{instance="leaf-g00-r3",' \
             'device="Ethernet16",unit="%d"}'
    tests = {"rule_files": [str(pack)], "evaluation_interval": "1s", "tests": [{
        "interval": "1s",
        "input_series": [
            {"series": storm % "Ethernet40", "values": "0+12000x40"},  # a full 400G storm
            {"series": storm % "Ethernet80", "values": "0+12000x40"},  # an uplink: not a host
            {"series": storm % "Ethernet48", "values": "0+100x40"},    # a little pause
            {"series": spread, "values": "0+3000x40"},                # 25 % of the time
            {"series": oper, "values": "1x10 0x5 1x24"},
            {"series": launch % 1, "values": "-7x40"},
            {"series": launch % 2, "values": "1x40"},
        ],
        "alert_rule_test": [
            {"eval_time": "20s", "alertname": "FabricPfcStormFromHost",
             "exp_alerts": expect("FabricPfcStormFromHost", "leaf-g00-r4 Ethernet40 receives "
                                  "PFC pause from its host 100% of the time",
                                  _labels("far-end", "critical", "port", "cause", "pfc-storm",
                                          instance="leaf-g00-r4", device="Ethernet40"))},
            {"eval_time": "20s", "alertname": "FabricPauseSpreadingUplink",
             "exp_alerts": expect("FabricPauseSpreadingUplink", "pause spreads up the fabric:"
                                  " leaf-g00-r4 Ethernet80 pauses its spine 25.17% of the time",
                                  _labels("self", "warning", "port", "symptom", "pause-spreading",
                                          instance="leaf-g00-r4", device="Ethernet80"))},
            {"eval_time": "5s", "alertname": "FabricPortFlapping", "exp_alerts": []},
            {"eval_time": "30s", "alertname": "FabricPortFlapping",
             "exp_alerts": expect("FabricPortFlapping", "leaf-g00-r1 Ethernet32 went down "
                                  "and up again within 15m",
                                  _labels("link", "warning", "port", "cause", "link-flap",
                                          instance="leaf-g00-r1", device="Ethernet32"))},
            {"eval_time": "20s", "alertname": "FabricOpticLaunchLow",
             "exp_alerts": expect("FabricOpticLaunchLow", "leaf-g00-r3 Ethernet16: its optic "
                                  "launches -7 dBm (an ageing laser)",
                                  _labels("self", "critical", "port", "cause", "optic",
                                          instance="leaf-g00-r3", device="Ethernet16"))},
        ]}]}
    path = tmp_path / "tests.yml"
    path.write_text(json.dumps(tests))
    tested = subprocess.run([PROMTOOL, "test", "rules", str(path)], capture_output=True,
                            text=True, timeout=60)
    assert tested.returncode == 0, tested.stdout + tested.stderr
