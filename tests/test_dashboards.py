"""The generated Grafana dashboards as Grafana reads them (no Prometheus here; every panel's
queries run against a real one in tests/test_dashboards_live.py): the SDK's own model types read
each back unchanged, panel ids are unique, every query goes to the `datasource` variable, every
variable a query or link uses exists, links land on generated dashboards, the names and labels
follow the config's label mapping and metric names, and `fabtui prom dashboards` writes them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models import prometheus as sdk_prometheus
from grafana_foundation_sdk.models.dashboard import Dashboard, Panel, RowPanel

from fabtui.paths import demo_topology
from fabtui.prom.catalog import MAPPED
from fabtui.prom.dashboards import Board, SiteError, boards, site_of
from fabtui.prom.dashboards.site import EXTRAS
from fabtui.prom.labels import LabelMap
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from tests.support.grafana import targets, variables

NAMES = ("gpu", "nic", "switch", "nccl", "job", "symmetry")
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
_USED = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)")
_BUILTIN = {"__rate_interval", "__url_time_range", "__field", "__data"}


@pytest.fixture(scope="module")
def graph() -> FabricGraph:
    return FabricGraph(load_topology(demo_topology()).topology)


@pytest.fixture(scope="module")
def generated(graph: FabricGraph) -> list[Board]:
    return boards(graph)


def _model(board: Board) -> dict[str, Any]:
    return dict(json.loads(board.json()))


def _panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for panel in dashboard["panels"]:
        found += [panel, *panel.get("panels", [])]
    return found


def _used(text: str) -> set[str]:
    return {(a or b) for a, b in _USED.findall(text)} - _BUILTIN - \
        {n for n in {(a or b) for a, b in _USED.findall(text)} if n.isdigit()}


def test_the_six_dashboards_with_stable_uids(generated: list[Board]) -> None:
    assert [b.name for b in generated] == list(NAMES)
    assert [_model(b)["uid"] for b in generated] == [f"fabtui-{n}" for n in NAMES]
    assert all("fabtui" in _model(b)["tags"] for b in generated)


def test_the_same_fabric_gives_the_same_files(graph: FabricGraph,
                                              generated: list[Board]) -> None:
    """Provisioned files are re-generated: nothing in them changes unless the fabric, the
    label mapping or a name does (no timestamps, no random ids)."""
    assert [b.json() for b in boards(graph)] == [b.json() for b in generated]


def test_the_sdk_model_reads_each_dashboard_back_unchanged(generated: list[Board]) -> None:
    register_default_plugins()  # Prometheus queries decode as the SDK's Prometheus type
    for board in generated:
        text = board.json()
        back = Dashboard.from_json(json.loads(text))
        again = json.dumps(back, cls=JSONEncoder, indent=2, sort_keys=True) + "\n"
        assert again == text, board.name
        assert back.panels
        for panel in back.panels:
            assert isinstance(panel, Panel | RowPanel)
            for target in (panel.targets or []) if isinstance(panel, Panel) else []:
                assert isinstance(target, sdk_prometheus.Dataquery), (board.name, panel.title)


def test_panel_ids_are_unique_and_panels_do_not_overlap(generated: list[Board]) -> None:
    for board in generated:
        panels = _panels(_model(board))
        ids = [p["id"] for p in panels]
        assert len(ids) == len(set(ids)) and min(ids) >= 1, board.name
        cells: set[tuple[int, int]] = set()
        for panel in panels:
            grid = panel["gridPos"]
            assert grid["x"] + grid["w"] <= 24, (board.name, panel["title"])
            mine = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                    for y in range(grid["y"], grid["y"] + grid["h"])}
            assert not cells & mine, (board.name, panel["title"])
            cells |= mine


def test_every_query_and_variable_asks_the_datasource_variable(
        generated: list[Board]) -> None:
    for board in generated:
        dashboard = _model(board)
        defined = variables(dashboard)
        assert defined["datasource"]["type"] == "datasource"
        assert defined["datasource"]["query"] == "prometheus"
        for panel in _panels(dashboard):
            if panel["type"] != "row":
                assert panel["datasource"] == DATASOURCE, (board.name, panel["title"])
        for panel, target in targets(dashboard):
            assert target["datasource"] == DATASOURCE, (board.name, panel["title"])
        for variable in defined.values():
            if variable["type"] == "query":
                assert variable["datasource"] == DATASOURCE, (board.name, variable["name"])


def test_every_variable_used_is_defined_before_use(generated: list[Board]) -> None:
    for board in generated:
        dashboard = _model(board)
        order = list(variables(dashboard))
        for index, variable in enumerate(variables(dashboard).values()):
            if variable["type"] == "query":  # chained: only on the ones before it
                assert _used(variable["query"]) <= set(order[:index]), variable["name"]
        for panel, target in targets(dashboard):
            assert _used(target["expr"]) <= set(order), (board.name, panel["title"])


def test_links_land_on_generated_dashboards_with_their_variables(
        generated: list[Board]) -> None:
    defined = {_model(b)["uid"]: set(variables(_model(b))) for b in generated}
    links = 0
    for board in generated:
        dashboard = _model(board)
        assert dashboard["links"][0]["tags"] == ["fabtui"]
        assert dashboard["links"][0]["includeVars"] and dashboard["links"][0]["keepTime"]
        for panel in _panels(dashboard):
            for link in panel.get("fieldConfig", {}).get("defaults", {}).get("links", []):
                links += 1
                match = re.match(r"/d/([\w-]+)\?(.*)$", link["url"])
                assert match, link["url"]
                uid, query = match.groups()
                assert uid in defined, link["url"]
                for name in re.findall(r"var-(\w+)=", query):
                    assert name in defined[uid], (link["url"], name)
                for name in re.findall(r"\$\{(\w+):queryparam\}", query):
                    assert name in defined[uid] and name in defined[dashboard["uid"]]
                assert "${__url_time_range}" in query
    assert links >= 6


def test_every_metric_is_one_the_prometheus_source_or_the_dashboards_name(
        generated: list[Board]) -> None:
    """No metric name made up in a panel: each is a catalog metric (docs/prometheus.md) or one
    of the dashboards' own, with its source (docs/dashboards.md)."""
    known = {m.metric for m in MAPPED} | {e.metric for e in EXTRAS}
    for board in generated:
        for panel, target in targets(_model(board)):
            names = set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\{", target["expr"]))
            assert names, (board.name, panel["title"], target["expr"])
            assert names <= known, (board.name, panel["title"], names - known)


def test_the_label_mapping_and_metric_names_of_the_config(graph: FabricGraph) -> None:
    labels = LabelMap(node="host", gpu_node="hostname", switch="target", port="ifname",
                      nic="netdev")
    custom = boards(graph, labels, {"sonic.pfc_rx": "site_pfc_rx_frames_total"})
    texts = {b.name: b.json() for b in custom}
    assert "site_pfc_rx_frames_total" in texts["switch"]
    assert "sonic_interface_receive_pfc_packets" not in texts["switch"]
    assert 'host=~\\"${node}([:.].*)?\\"' in texts["nic"]
    assert 'netdev=~\\"${rail}\\"' in texts["nic"]
    assert 'hostname=~\\"${node}([:.].*)?\\"' in texts["gpu"]
    assert 'target=~\\"${switch}([:.].*)?\\"' in texts["switch"]
    assert 'ifname=~\\"${port}\\"' in texts["switch"]
    default = {b.name: b.json() for b in boards(graph)}
    assert "instance=~" in default["nic"] and "host=~" not in default["nic"]


def test_rails_and_uplinks_come_from_the_topology(graph: FabricGraph) -> None:
    site = site_of(graph, LabelMap(), {})
    assert [r.number for r in site.rails] == list(range(8))
    rail3 = site.rails[3]
    assert rail3.leaves == ("leaf-g00-r3",)
    assert set(rail3.devices) == {"enp92s0f0np0", "mlx5_3"}
    assert set(site.uplinks) == set(site.leaves) and len(site.leaves) == 8
    assert all(len(ports) == 8 for ports in site.uplinks.values())
    rail_variable = variables(_model(boards(graph)[1]))["rail"]
    assert [o["text"] for o in rail_variable["options"]] == \
        ["all", *(f"rail {r}" for r in range(8))]
    assert {"text": "rail 3", "value": "enp92s0f0np0|mlx5_3", "selected": False} in \
        rail_variable["options"]


def test_a_device_name_on_two_rails_is_refused_with_the_reason(tmp_path: Path) -> None:
    doc = yaml.safe_load(demo_topology().read_text())
    nics = doc["nodes"][1]["nics"]
    nics[0]["rail"], nics[1]["rail"] = 1, 0  # node002's mlx5_0 on rail 1, mlx5_1 on rail 0
    path = tmp_path / "swapped.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(SiteError, match=r"NIC device \S+ is on rail 0 on one node and rail 1 "
                                        r"on node002"):
        boards(FabricGraph(load_topology(path).topology))


def test_the_command_writes_one_json_file_per_dashboard(
        tmp_path: Path, run: Callable[..., Result]) -> None:
    out = tmp_path / "grafana" / "fabtui"
    result = run("prom", "dashboards", str(out))
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(f"fabtui-{n}.json" for n in NAMES)
    assert result.stdout.split() == [str(out / f"fabtui-{n}.json") for n in NAMES]
    model = json.loads((out / "fabtui-symmetry.json").read_text())
    assert model["uid"] == "fabtui-symmetry" and "id" not in model


def test_an_outdir_that_is_a_file_is_a_clear_error(
        tmp_path: Path, run: Callable[..., Result]) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("")
    result = run("prom", "dashboards", str(blocker / "out"))
    assert result.exit_code == 2
    assert "taken is a file, not a folder" in result.stderr
    assert not result.stdout


def test_the_command_says_what_it_wrote_as_json(tmp_path: Path,
                                                run: Callable[..., Result]) -> None:
    result = run("prom", "dashboards", str(tmp_path / "out"), "--json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [item["uid"] for item in listed] == [f"fabtui-{n}" for n in NAMES]
    for item in listed:
        model = json.loads(Path(item["path"]).read_text())
        assert item["panels"] == sum(1 for p in _panels(model) if p["type"] != "row") > 3


def test_the_job_board_counts_gpus_not_inspector_series(generated: list[Board],
                                                         tmp_path: Path) -> None:
    # The NCCL Inspector writes one series per communicator and last collective, with `rank`
    # the rank within that communicator (NVIDIA/nccl ext-profiler/inspector/inspector_prom.cc):
    # one GPU in two communicators is one GPU, whatever count() of the series says.
    import shutil
    import subprocess

    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed")
    job = _model(next(b for b in generated if b.name == "job"))
    expr = next(t["expr"] for p, t in targets(job) if p["title"] == "GPUs reporting")
    expr = expr.replace("$job", "42")
    base = 'nccl_bus_bandwidth_gbs{slurm_job_id="42",hostname="node001",gpu_device_id="GPU0"'
    case = {
        "rule_files": [], "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": [
            {"series": base + ',comm_id="a",rank="0"}', "values": "40 40"},
            {"series": base + ',comm_id="b",rank="3"}', "values": "20 20"},
            {"series": base.replace("GPU0", "GPU1") + ',comm_id="a",rank="1"}',
             "values": "40 40"}],
            "promql_expr_test": [{"expr": expr, "eval_time": "1m",
                                  "exp_samples": [{"labels": "{}", "value": 2}]}]}]}
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(case))
    run = subprocess.run([promtool, "test", "rules", str(path)], capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
