"""Validation rules: each catches its fault, names the component and the line to fix."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.model.findings import Finding, Severity
from fabtui.paths import shipped_templates
from fabtui.topology.loader import load_topology
from fabtui.topology.validate import validate

BASE = """\
template: rail-optimized
params:
  nodes: 4
  nodes_per_leaf: 2
  rails: 4
  spines: 2
  uplinks_per_leaf: 4
"""


def check(path: Path) -> list[Finding]:
    return validate(load_topology(path, label=path.name))


def rules(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.rule, f.component) for f in findings]


def test_generated_base_is_clean(write: Callable[[str, str], Path]) -> None:
    assert check(write("base.yaml", BASE)) == []


@pytest.mark.parametrize("name", sorted(p.stem for p in shipped_templates().glob("*.yaml")))
def test_every_shipped_template_is_clean(name: str) -> None:
    assert check(shipped_templates() / f"{name}.yaml") == []


def test_the_demo_fabric_is_clean(run: Callable[..., Result], demo: Path) -> None:
    result = run("topo", "check", str(demo))
    assert result.exit_code == 0, result.output
    assert "ok, no findings" in result.stdout


def _fault_lines(path: Path) -> dict[int, int]:
    """FAULT number -> the line of the entry right below its `# FAULT n:` comment."""
    lines = path.read_text().splitlines()
    found = {}
    for number, line in enumerate(lines, start=1):
        match = re.match(r"\s*# FAULT (\d+):", line)
        if match:
            found[int(match.group(1))] = number + 1
    return found


def test_faulty_example_names_each_planted_fault_with_its_line(
        run: Callable[..., Result], faulty: Path) -> None:
    lines = _fault_lines(faulty)
    assert sorted(lines) == [1, 2, 3, 4]
    result = run("topo", "check", str(faulty), "--json")
    assert result.exit_code == 1
    import json

    findings = {(f["rule"], f["component"], f["location"].rsplit(":", 1)[1])
                for f in json.loads(result.stdout)["findings"]}
    expected = {
        ("rail-symmetry", "node003:mlx5_2", str(lines[1])),
        ("uplink-symmetry", "leaf-g00-r5", str(lines[2])),
        ("oversubscription", "leaf-g00-r5", str(lines[2])),
        ("gpu-nic-affinity", "node005:mlx5_6", str(lines[3])),
        ("dangling-link-end", "node009:mlx5_0", str(lines[4])),
    }
    assert expected <= findings
    # The only other finding is a consequence of fault 1: the rail-3 leaf got a ninth host.
    assert {(r, c) for r, c, _ in findings - expected} == {("oversubscription", "leaf-g00-r3")}


def test_faulty_example_text_output(run: Callable[..., Result], faulty: Path) -> None:
    result = run("topo", "check", str(faulty))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-1].endswith("faulty.yaml: 3 errors, 3 warnings, 0 notes")
    assert all(re.match(r"^\S+faulty\.yaml:\d+: (error|warning) \[[a-z-]+\] ", line)
               for line in lines[:-1])


def test_miscabled_rail(write: Callable[[str, str], Path]) -> None:
    text = BASE + ("overrides:\n  links:\n"
                   "    - {a: 'node001:mlx5_2', b: 'leaf-g00-r3:Ethernet64', speed: 400}\n")
    found = check(write("mis.yaml", text))
    assert rules(found) == [("rail-symmetry", "node001:mlx5_2")]
    assert found[0].location == "mis.yaml:10"
    assert found[0].severity is Severity.ERROR
    assert "lands on leaf-g00-r3:Ethernet64, a rail-3 leaf" in found[0].message


def test_nic_on_another_groups_leaf(write: Callable[[str, str], Path]) -> None:
    text = BASE + ("overrides:\n  links:\n"
                   "    - {a: 'node001:mlx5_2', b: 'leaf-g01-r2:Ethernet64', speed: 400}\n")
    found = check(write("group.yaml", text))
    assert rules(found) == [("rail-symmetry", "node001:mlx5_2")]
    assert "in group 1, but node001's other NICs are in group 0" in found[0].message


def test_host_cabled_to_a_spine(write: Callable[[str, str], Path]) -> None:
    text = BASE + ("overrides:\n  links:\n"
                   "    - {a: 'node001:mlx5_2', b: 'spine-01:Ethernet200', speed: 400}\n")
    found = check(write("spine.yaml", text))
    assert ("rail-symmetry", "node001:mlx5_2") in rules(found)
    assert any("hosts belong on leaves" in f.message for f in found)


def test_missing_uplinks(write: Callable[[str, str], Path]) -> None:
    # Leaf ports: 2 hosts (Ethernet0, Ethernet8), then 4 uplinks (Ethernet16..Ethernet40).
    text = BASE + ("overrides:\n  remove_links:\n    - leaf-g00-r1:Ethernet24\n"
                   "    - leaf-g00-r1:Ethernet32\n    - leaf-g00-r1:Ethernet40\n")
    found = check(write("up.yaml", text))
    assert sorted(rules(found)) == [("oversubscription", "leaf-g00-r1"),
                                    ("uplink-symmetry", "leaf-g00-r1")]
    by_rule = {f.rule: f for f in found}
    assert "has 1 uplinks (400 Gb/s); most leaves have 4 (1600 Gb/s)" in \
        by_rule["uplink-symmetry"].message
    assert "oversubscribed 2.00:1 (800 Gb/s down, 400 Gb/s up)" in \
        by_rule["oversubscription"].message
    assert {f.location for f in found} == {"up.yaml:1"}  # generated: the template line


def test_uplinks_spread_unevenly_over_spines(write: Callable[[str, str], Path]) -> None:
    text = BASE + ("overrides:\n  links:\n"
                   "    - {a: 'leaf-g00-r1:Ethernet24', b: 'spine-01:Ethernet200', speed: 400}\n")
    found = check(write("spread.yaml", text))
    assert rules(found) == [("uplink-symmetry", "leaf-g00-r1")]
    assert "unevenly over spines (spine-01: 3, spine-02: 1)" in found[0].message


def test_affinity_by_pcie_switch_and_by_numa(write: Callable[[str, str], Path]) -> None:
    node = ("    - hostname: node001\n"
            "      gpus:\n"
            "        - {index: 0, pci: '18:00.0', numa: 0, pcie_switch: pexA}\n"
            "        - {index: 1, pci: '9a:00.0', numa: 1, pcie_switch: pexB}\n"
            "      nics:\n"
            "        - {name: mlx5_0, pci: '17:00.0', numa: 0, rail: 0, speed: 400, "
            "pcie_switch: pexC}\n"
            "        - {name: mlx5_1, pci: '99:00.0', numa: 0, rail: 1, speed: 400}\n")
    text = BASE.replace("rails: 4", "rails: 2") + "overrides:\n  nodes:\n" + node
    found = [f for f in check(write("aff.yaml", text)) if f.rule == "gpu-nic-affinity"]
    assert rules(found) == [("gpu-nic-affinity", "node001:mlx5_0"),
                            ("gpu-nic-affinity", "node001:mlx5_1")]
    assert "under PCIe switch pexC, GPU 0 under pexA" in found[0].message
    assert "on NUMA node 0, GPU 1 on NUMA node 1" in found[1].message
    assert [f.location for f in found] == ["aff.yaml:15", "aff.yaml:16"]


SMALL = """\
cluster: {name: lab}
nodes:
  - hostname: n1
    gpus: [{index: 0, pci: "18:00.0", numa: 0}]
    nics: [{name: mlx5_0, pci: "17:00.0", numa: 0, rail: 0, speed: 400, mtu: 9000}]
  - hostname: n2
    gpus: [{index: 0, pci: "18:00.0", numa: 0}]
    nics: [{name: mlx5_0, pci: "17:00.0", numa: 0, rail: 0, speed: 400, mtu: 9000}]
switches:
  - {name: leaf1, role: leaf, rail: 0, mgmt: 10.0.0.1, port_speed: 400, mtu: 9216}
  - {name: leaf2, role: leaf, rail: 0, mgmt: 10.0.0.2, port_speed: 400, mtu: 9216}
links:
  - {a: "n1:mlx5_0", b: "leaf1:Ethernet0", speed: 400, optic: OPT1}
  - {a: "n2:mlx5_0", b: "leaf1:Ethernet8", speed: 400, optic: OPT2}
"""


def test_small_fabric_is_clean(write: Callable[[str, str], Path]) -> None:
    assert check(write("small.yaml", SMALL)) == []


@pytest.mark.parametrize("change, expected", [
    (("hostname: n2", "hostname: n1"),
     [("duplicate-name", "n1"), ("dangling-link-end", "n2:mlx5_0")]),
    (("name: leaf2", "name: n1"), [("duplicate-name", "n1")]),
    (("mgmt: 10.0.0.2", "mgmt: 10.0.0.1"), [("duplicate-address", "leaf2")]),
    (("leaf1:Ethernet8", "leaf1:Ethernet0"), [("duplicate-port", "leaf1:Ethernet0")]),
    (("optic: OPT2", "optic: OPT1"), [("duplicate-optic", "OPT1")]),
    (("leaf1:Ethernet8", "leaf9:Ethernet8"), [("dangling-link-end", "leaf9:Ethernet8")]),
    (('b: "leaf1:Ethernet8", speed: 400', 'b: "leaf1:Ethernet8", speed: 200'),
     [("speed-mismatch", "n2:mlx5_0 <-> leaf1:Ethernet8")]),
    (("speed: 400, mtu: 9000}]\nswitches", "speed: 400, mtu: 9500}]\nswitches"),
     [("mtu-mismatch", "n2:mlx5_0 <-> leaf1:Ethernet8")]),
    (('  - {a: "n2:mlx5_0", b: "leaf1:Ethernet8", speed: 400, optic: OPT2}\n', ""),
     [("unconnected-nic", "n2:mlx5_0")]),
    (('b: "leaf1:Ethernet8"', 'b: "n1:mlx5_0"'),
     [("duplicate-port", "n1:mlx5_0"), ("host-to-host-link", "n2:mlx5_0 <-> n1:mlx5_0")]),
    (('  - {a: "n2:mlx5_0", b: "leaf1:Ethernet8", speed: 400, optic: OPT2}\n',
      '  - {a: "n2:mlx5_0", b: "leaf1:Ethernet8", speed: 400, optic: OPT2}\n'
      '  - {a: "leaf1:Ethernet64", b: "leaf2:Ethernet64", speed: 400}\n'),
     [("tier-violation", "leaf1:Ethernet64 <-> leaf2:Ethernet64")]),
])
def test_each_rule_fires_on_its_fault(write: Callable[[str, str], Path],
                                      change: tuple[str, str],
                                      expected: list[tuple[str, str]]) -> None:
    old, new = change
    assert old in SMALL
    found = check(write("small.yaml", SMALL.replace(old, new, 1)))
    assert rules(found) == expected
    assert all(f.location and re.match(r"small\.yaml:\d+$", f.location) for f in found)


def test_duplicate_pci_and_nic_names_inside_a_node(write: Callable[[str, str], Path]) -> None:
    text = SMALL.replace(
        'nics: [{name: mlx5_0, pci: "17:00.0", numa: 0, rail: 0, speed: 400, mtu: 9000}]\n'
        '  - hostname: n2',
        'nics: [{name: mlx5_0, pci: "17:00.0", numa: 0, rail: 0, speed: 400, mtu: 9000},\n'
        '           {name: mlx5_0, pci: "18:00.0", numa: 0, rail: 0, speed: 400}]\n'
        '  - hostname: n2')
    found = check(write("dup.yaml", text))
    assert ("duplicate-name", "n1:mlx5_0") in rules(found)
    assert ("duplicate-address", "n1:mlx5_0") in rules(found)


def test_node_shape_flags_the_odd_node_out(write: Callable[[str, str], Path]) -> None:
    node = ("    - hostname: node003\n"
            "      gpus: [{index: 0, pci: '18:00.0', numa: 0}]\n"
            "      nics: [{name: mlx5_0, pci: '17:00.0', numa: 0, rail: 0, speed: 400}]\n")
    text = BASE + "overrides:\n  remove_links: [node003:mlx5_1, node003:mlx5_2, " \
        "node003:mlx5_3]\n  nodes:\n" + node
    found = check(write("shape.yaml", text))
    assert ("node-shape", "node003") in rules(found)


def test_duplicate_nic_ips(write: Callable[[str, str], Path]) -> None:
    text = SMALL.replace("rail: 0, speed: 400, mtu: 9000}]", "rail: 0, speed: 400, mtu: 9000, "
                         "ip: 10.200.0.1}]")
    found = check(write("ip.yaml", text))
    assert rules(found) == [("duplicate-address", "n2:mlx5_0")]
    assert "IP 10.200.0.1, already used by n1:mlx5_0" in found[0].message
