"""Config templates by scenario (issue 41, point 1): rendered from the topology and the fleet's
reviewed intent (runbooks/templates/roce-qos.toml, fleet.toml), sandboxed, strict, and every
scenario renders for the fabrics it is meant for."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.errors import InputError
from fabtui.intent.render import Rendered, environment, render_all, render_device
from fabtui.intent.scenario import configs_dir, load_scenario, scenario_names
from fabtui.paths import demo_topology, shipped_templates
from fabtui.runbooks.functions import template
from fabtui.topology.graph import FabricGraph
from fabtui.topology.headroom import xoff_needed
from fabtui.topology.loader import load_topology


def _graph(path: Path | None = None) -> FabricGraph:
    return FabricGraph(load_topology(path or demo_topology()).topology)


def _file(files: list[Rendered], name: str) -> str:
    return next(f.text for f in files if f.name == name)


def test_sonic_leaf_tables_follow_the_intent_and_each_cable() -> None:
    graph = _graph()
    qos = template("roce-qos")
    files = render_device(load_scenario("roce-lossless"), graph, "leaf-g00-r0")
    db = json.loads(_file(files, "sonic-qos.json"))
    ports = sorted(p.split(":")[1] for p in graph.port_links if p.startswith("leaf-g00-r0:"))
    assert set(db["CABLE_LENGTH"]["AZURE"]) == set(ports)
    assert db["DSCP_TO_TC_MAP"]["AZURE"][str(qos["host"]["rdma_dscp"])] == "3"
    assert db["DSCP_TO_TC_MAP"]["AZURE"][str(qos["host"]["cnp_dscp"])] == "6"
    assert db["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_min_threshold"] == \
        str(qos["switch"]["ecn_min_kb"] * 1024)
    assert db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3,4"
    # rail 0 is cabled with 30 m AOCs (demo.yaml): its host ports need the 30 m headroom
    assert db["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "30m"
    profile = db["BUFFER_PG"]["Ethernet0|3-4"]["profile"]
    assert profile == "pg_lossless_400000_30m_profile"
    assert db["BUFFER_PROFILE"][profile]["xoff"] == str(xoff_needed(400, 30))
    other = json.loads(_file(render_device(load_scenario("roce-lossless"), graph,
                                           "leaf-g00-r1"), "sonic-qos.json"))
    assert other["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "5m"


def test_host_files_name_the_nodes_own_nics() -> None:
    graph = _graph()
    files = render_device(load_scenario("roce-lossless"), graph, "node003")
    names = [n.name for n in graph.nodes["node003"].nics]
    conf = dict(line.split("=", 1) for line in _file(files, "nccl.conf").splitlines()
                if line and not line.startswith("#"))
    assert conf == {"NCCL_IB_HCA": "=" + ",".join(names), "NCCL_IB_GID_INDEX": "3",
                    "NCCL_IB_TC": "106"}
    script = _file(files, "host-nic.sh")
    for nic in graph.nodes["node003"].nics:
        assert f"mlnx_qos -i {nic.netdev} --trust dscp --pfc 0,0,0,1,0,0,0,0" in script
        assert f"/sys/class/net/{nic.netdev}/ecn/roce_np/enable/3" in script


def test_every_scenario_renders_for_its_fabric() -> None:
    fabrics = {"roce": demo_topology(), "infiniband": shipped_templates() / "h100-64gpu-ib.yaml"}
    for name in scenario_names():
        scenario = load_scenario(name)
        files = render_all(scenario, _graph(fabrics[scenario.fabric]))
        assert files, name
        assert all(f.text.strip() for f in files), name
        if scenario.fabric == "infiniband":
            assert not any("NCCL_IB_TC" in line for f in files for line in f.text.splitlines()
                           if not line.startswith("#"))


def test_a_misspelt_value_is_an_error_at_its_line(tmp_path: Path) -> None:
    root = tmp_path / "configs"
    shutil.copytree(configs_dir(), root)
    (root / "templates" / "nccl.conf.j2").write_text("A=1\nNCCL_IB_TC={{ v.nccl_ib_ct }}\n")
    scenario = load_scenario("roce-lossless", root)
    with pytest.raises(InputError) as caught:
        render_device(scenario, _graph(), "node001", environment(root))
    problem = caught.value.problems[0]
    assert problem.source.endswith("nccl.conf.j2") and problem.line == 2
    assert "nccl_ib_ct" in problem.message


def test_templates_cannot_reach_python(tmp_path: Path) -> None:
    root = tmp_path / "configs"
    shutil.copytree(configs_dir(), root)
    (root / "templates" / "nccl.conf.j2").write_text(
        "{{ v.__class__.__mro__[1].__subclasses__() }}\n")
    with pytest.raises(InputError, match=r"unsafe|not safely"):
        render_device(load_scenario("roce-lossless", root), _graph(), "node001",
                      environment(root))


def test_a_value_without_why_is_refused_at_its_line(tmp_path: Path) -> None:
    root = tmp_path / "configs"
    shutil.copytree(configs_dir(), root)
    path = root / "scenarios" / "roce-lossless.toml"
    text = path.read_text().replace('[values.nccl_ib_tc]\nvalue = 106\nwhy = ',
                                    '[values.nccl_ib_tc]\nvalue = 106\nwas = ')
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_scenario("roce-lossless", root)
    problem = caught.value.problems[0]
    assert problem.line == text.splitlines().index("[values.nccl_ib_tc]") + 1
    assert "why" in problem.message


def test_cli_renders_one_device_and_refuses_unknown_ones(
        run: Callable[..., Result], tmp_path: Path) -> None:
    result = run("config", "render", "roce-lossless", "--device", "leaf-g00-r3")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3,4"
    bad = run("config", "render", "roce-lossless", "--device", "node999")
    assert bad.exit_code == 2 and "node999" in bad.stderr
    written = run("config", "render", "roce-lossless", "-o", str(tmp_path / "out"))
    assert written.exit_code == 0
    assert (tmp_path / "out" / "spine-01" / "eos-qos.cfg").is_file()
    assert run("config").exit_code == 0


def test_text_files_carry_the_sources_of_their_values() -> None:
    graph = _graph()
    scenario = load_scenario("roce-lossless")
    for device in ("node001", "leaf-g00-r0", "spine-01"):
        for rendered in render_device(scenario, graph, device):
            if rendered.name.endswith(".json"):
                continue  # JSON has no comments: its sources are the template's header
            assert "roce-qos.toml" in rendered.text or "fleet.toml" in rendered.text, \
                rendered.name
