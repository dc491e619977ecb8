"""Bad topology input: one `file:line: message` per problem, exit code 2, never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.errors import InputError
from fabtui.topology.loader import load_topology

SMALL = """\
cluster:
  name: lab
nodes:
  - hostname: n1
    gpus:
      - {index: 0, pci: "0000:18:00.0", numa: 0}
    nics:
      - {name: mlx5_0, pci: "0000:17:00.0", numa: 0, rail: 0, speed: 400G}
switches:
  - {name: leaf1, role: leaf, rail: 0}
links:
  - {a: "n1:mlx5_0", b: "leaf1:Ethernet0", speed: 400}
"""


def problems(path: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_topology(path, label=path.name)
    return [str(p) for p in caught.value.problems]


def test_the_small_fabric_loads(write: Callable[[str, str], Path]) -> None:
    loaded = load_topology(write("ok.yaml", SMALL))
    nic = loaded.topology.nodes[0].nics[0]
    assert nic.speed == 400 and nic.pci == "0000:17:00.0"
    assert loaded.topology.switches[0].rail == (0,)


def test_malformed_yaml(write: Callable[[str, str], Path]) -> None:
    path = write("bad.yaml", SMALL.replace("rail: 0}\nlinks", "rail: 0\nlinks"))
    (message,) = problems(path)
    assert message.startswith("bad.yaml:10: invalid YAML") or \
        message.startswith("bad.yaml:11: invalid YAML")


def test_unknown_key_names_the_key_and_suggests_the_right_one(
        write: Callable[[str, str], Path]) -> None:
    path = write("typo.yaml", SMALL.replace("rail: 0, speed", "rial: 0, speed"))
    assert sorted(problems(path)) == [
        "typo.yaml:8: missing required key 'rail' in nodes[0].nics[0]",
        "typo.yaml:8: unknown key 'rial' in nodes[0].nics[0] (did you mean 'rail'?)",
    ]


def test_wrong_type(write: Callable[[str, str], Path]) -> None:
    path = write("type.yaml", SMALL.replace("rail: 0, speed", "rail: two, speed"))
    (message,) = problems(path)
    assert message.startswith("type.yaml:8: nodes[0].nics[0].rail: Input should be a valid "
                              "integer")
    assert "'two'" in message


def test_every_problem_is_reported_in_one_pass(write: Callable[[str, str], Path]) -> None:
    text = SMALL.replace("rail: 0, speed", "rail: -1, speed").replace("role: leaf", "role: tor")
    found = problems(write("two.yaml", text))
    assert len(found) == 2
    assert found[0].startswith("two.yaml:8: nodes[0].nics[0].rail")
    assert found[1].startswith("two.yaml:10: switches[0].role: Input should be 'leaf', 'spine'")


def test_bad_pci_and_speed_values_say_what_is_expected(write: Callable[[str, str], Path]) -> None:
    text = SMALL.replace('"0000:17:00.0"', '"17-00"').replace("speed: 400G", "speed: fast")
    found = problems(write("values.yaml", text))
    assert any("'17-00' is not a PCI address such as 0000:18:00.0" in m for m in found)
    assert any("'fast' is not a speed" in m for m in found)


def test_a_secret_in_place_of_a_credentials_reference_is_refused(
        write: Callable[[str, str], Path]) -> None:
    text = SMALL.replace("role: leaf, rail: 0}", "role: leaf, rail: 0, credentials: hunter2}")
    (message,) = problems(write("secret.yaml", text))
    assert message.startswith("secret.yaml:10: switches[0].credentials: must be a reference")
    assert "hunter2" not in message


def test_a_dangling_plane_reference(write: Callable[[str, str], Path]) -> None:
    text = SMALL.replace("role: leaf, rail: 0}", "role: leaf, rail: 0, plane: p9}")
    assert problems(write("plane.yaml", text)) == [
        "plane.yaml:10: leaf1 names plane 'p9', which is not defined (none are defined under "
        "`planes:`)"]


def test_a_nic_serving_a_gpu_the_node_lacks(write: Callable[[str, str], Path]) -> None:
    text = SMALL.replace("speed: 400G}", "speed: 400G, gpus: [3]}")
    assert problems(write("gpu.yaml", text)) == [
        "gpu.yaml:8: n1:mlx5_0 serves GPU 3, but n1 has no GPU 3"]


def test_the_file_must_be_a_mapping(write: Callable[[str, str], Path]) -> None:
    assert problems(write("list.yaml", "- a\n- b\n")) == [
        "list.yaml:1: a topology file must be a mapping, this one is a list"]
    assert problems(write("empty.yaml", "\n")) == [
        "empty.yaml: a topology file must be a mapping, this one is empty"]


TEMPLATE = """\
template: rail-optimized
params:
  nodes: 4
  nodes_per_leaf: 4
  rails: 8
  spines: 2
  uplinks_per_leaf: 8
"""


def test_template_parameter_out_of_range(write: Callable[[str, str], Path]) -> None:
    found = problems(write("t.yaml", TEMPLATE.replace("nodes: 4", "nodes: 0")))
    assert found == ["t.yaml:3: parameter nodes: Input should be greater than or equal to 1 "
                     "(got 0)"]


def test_template_parameters_that_do_not_fit_together(write: Callable[[str, str], Path]) -> None:
    text = TEMPLATE.replace("rails: 8", "rails: 8\n  rails_per_leaf: 3")
    assert problems(write("t.yaml", text)) == [
        "t.yaml:6: parameter rails_per_leaf: must divide rails (8)"]


def test_unknown_template_parameter_and_template(write: Callable[[str, str], Path]) -> None:
    found = problems(write("t.yaml", TEMPLATE + "  gpus: 8\n"))
    assert found == ["t.yaml:8: unknown template parameter 'gpus'; see `fabtui topo templates`"]
    found = problems(write("u.yaml", TEMPLATE.replace("rail-optimized", "fat-tree")))
    assert found[0].startswith("u.yaml:1: unknown template 'fat-tree'")


def test_overrides_must_name_real_things(write: Callable[[str, str], Path]) -> None:
    text = TEMPLATE + "overrides:\n  remove_nodes: [node009]\n  remove_links: [node001:mlx5_9]\n"
    assert problems(write("o.yaml", text)) == [
        "o.yaml:9: no node 'node009' to remove",
        "o.yaml:10: no link plugged into node001:mlx5_9",
    ]


def test_cli_reports_bad_input_on_stderr_with_exit_2(
        run: Callable[..., Result], write: Callable[[str, str], Path]) -> None:
    path = write("typo.yaml", SMALL.replace("hostname: n1", "hostnme: n1"))
    result = run("topo", "check", str(path))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "typo.yaml:4: unknown key 'hostnme' in nodes[0] (did you mean 'hostname'?)" in \
        result.stderr
    assert "Traceback" not in result.stderr


def test_cli_missing_file_is_exit_2(run: Callable[..., Result], tmp_path: Path) -> None:
    result = run("topo", "check", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("nope.yaml: no such file")
