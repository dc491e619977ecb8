"""The design as NetBox data (issue 41 point 4): exported through pynetbox into a NetBox 4.x
API and imported back, over real HTTP to tests/support/netbox_server.py; the 1,024-GPU template
round-trips through NetBox JSON with zero differences, recorded NetBox 4.6 answers import as
the design they hold, and data that is no design is refused object by object."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabtui.cli.app import cli
from fabtui.config import load_settings
from fabtui.topology.export import dump_yaml
from fabtui.topology.loader import load_topology
from fabtui.topology.netbox import NetboxError
from fabtui.workspace.netbox import connect, export_design, import_design
from tests.support.netbox_server import netbox_server

HERE = Path(__file__).parent / "netbox"
RECORDED = HERE / "recorded-4.6"


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NB_TOKEN", "0123456789abcdef")


def test_the_1024_gpu_template_round_trips_through_netbox_json_with_zero_differences(
        tmp_path: Path) -> None:
    settings = load_settings(None)
    path = settings.find_template("h100-1024gpu-rail")
    assert path is not None
    design = load_topology(path, find_template=settings.find_template).topology
    with netbox_server() as live:
        result = export_design(connect(live.url, "env:NB_TOKEN"), design)
        posted = {p.split("?")[0] for verb, p in live.requests if verb == "POST"}
        live.record(tmp_path / "json")
    assert result.counts == {"devices": 176, "inventory_items": 1024, "interfaces": 4096,
                             "ip_addresses": 1024, "cables": 2048, "racks": 0}
    assert {"/api/dcim/devices/", "/api/dcim/interfaces/", "/api/dcim/cables/"} <= posted
    with netbox_server(recorded=tmp_path / "json") as recorded:
        back, records = import_design(connect(recorded.url, "env:NB_TOKEN"), result.site)
        pages = [p for verb, p in recorded.requests if "dcim/interfaces" in p]
    assert len(records.interfaces) == 4096 and len(pages) >= 5  # paginated, 1,000 a page
    assert back == design
    assert dump_yaml(back) == dump_yaml(design)


def test_recorded_netbox_46_answers_import_as_the_design_they_hold() -> None:
    design = load_topology(HERE / "lab-a.yaml").topology
    with netbox_server(recorded=RECORDED) as recorded:
        back, _ = import_design(connect(recorded.url, "env:NB_TOKEN"), "lab-a")
    assert back == design
    assert back.links[0].a == "gpu01:enp23s0np0"  # the NIC as the link named it (netdev)
    assert back.nodes[0].rack == "R1" and back.nodes[0].nics[1].ip == "fd00::2:1"
    assert back.switches[0].ports["Ethernet8"].speed == 200
    assert back.switches[0].credentials == "env:LEAF_PASS"


def _broken(tmp_path: Path) -> Path:
    folder = tmp_path / "broken"
    shutil.copytree(RECORDED, folder)
    devices = json.loads((folder / "dcim__devices.json").read_text())
    devices["results"][0]["role"]["slug"] = "server"
    cables = json.loads((folder / "dcim__cables.json").read_text())
    cables["results"][1]["length"], cables["results"][1]["length_unit"] = 3, {"value": "ft"}
    cables["results"][2]["b_terminations"] = []
    (folder / "dcim__devices.json").write_text(json.dumps(devices))
    (folder / "dcim__cables.json").write_text(json.dumps(cables))
    return folder


def test_objects_that_are_no_design_are_each_named(tmp_path: Path) -> None:
    with netbox_server(recorded=_broken(tmp_path)) as recorded, \
            pytest.raises(NetboxError) as caught:
        import_design(connect(recorded.url, "env:NB_TOKEN"), "lab-a")
    problems = caught.value.problems
    assert problems[0] == "dcim/devices/41 (gpu01): role 'server' is none of gpu-node, leaf, " \
                          "spine, super-spine"
    assert any(p.startswith("dcim/cables/64: length in ft") for p in problems)
    assert any(p.startswith("dcim/cables/65: a fabtui link has exactly one interface")
               for p in problems)


def test_the_commands_export_import_and_refuse_cleanly(tmp_path: Path) -> None:
    runner = CliRunner()
    with netbox_server() as live:
        made = runner.invoke(cli, ["topo", "netbox", "export", "--url", live.url,
                                   "--token", "env:NB_TOKEN", "-t", str(HERE / "lab-a.yaml"),
                                   "--json"])
        assert made.exit_code == 0, made.output
        assert json.loads(made.stdout)["created"]["cables"] == 6
        again = runner.invoke(cli, ["topo", "netbox", "export", "--url", live.url,
                                    "--token", "env:NB_TOKEN", "-t", str(HERE / "lab-a.yaml")])
        assert again.exit_code == 2 and "site lab-a already holds devices" in again.output
        out = tmp_path / "lab.yaml"
        back = runner.invoke(cli, ["topo", "netbox", "import", "lab-a", "--url", live.url,
                                   "--token", "env:NB_TOKEN", "-o", str(out)])
        assert back.exit_code == 0, back.output
        assert load_topology(out).topology == load_topology(HERE / "lab-a.yaml").topology
        denied = runner.invoke(cli, ["topo", "netbox", "import", "lab-a", "--url", live.url])
        assert denied.exit_code == 2 and "NetBox refused" in denied.output
    with netbox_server(recorded=_broken(tmp_path)) as recorded:
        bad = runner.invoke(cli, ["topo", "netbox", "import", "lab-a", "--url", recorded.url,
                                  "--token", "env:NB_TOKEN"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert f"{recorded.url}/api: dcim/devices/41 (gpu01): role 'server'" in bad.output
    with netbox_server(api_version="3.7") as old:
        refused = runner.invoke(cli, ["topo", "netbox", "import", "x", "--url", old.url,
                                      "--token", "env:NB_TOKEN"])
    assert refused.exit_code == 2 and "NetBox API version 3.7" in refused.output
