"""YAML reading: the values people mean, and the line of every value when something is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui import yamldoc
from fabtui.errors import InputError
from fabtui.yamldoc import load_yaml, parse_yaml

DOC = """\
cluster:
  name: lab
nodes:
  - hostname: a
    gpus:
      - {index: 0, pci: 0000:18:00.0}
  - hostname: b
"""


def test_line_of_points_at_the_key_or_item_asked_for() -> None:
    doc = parse_yaml(DOC, "t.yaml")
    assert doc.line_of(("cluster", "name")) == 2
    assert doc.line_of(("nodes", 1)) == 7
    assert doc.line_of(("nodes", 0, "gpus", 0)) == 6
    assert doc.where(("nodes", 1, "hostname")) == "t.yaml:7"


def test_a_missing_key_is_located_at_the_mapping_that_should_hold_it() -> None:
    doc = parse_yaml(DOC, "t.yaml")
    assert doc.line_of(("nodes", 1, "nics")) == 7
    assert doc.line_of(("nodes", 5)) == 3


@pytest.mark.parametrize("use_rust", [True, False])
def test_both_parsers_read_yaml_1_2_core_values(use_rust: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if not use_rust:
        monkeypatch.setattr(yamldoc, "yaml_rs", None)
    doc = parse_yaml("pci: 0000:18:00.0\nflag: yes\nport: 1:30\nn: 0o17\nx: 1.5\n"
                     "t: true\nnothing: ~\nquoted: '42'\n", "t.yaml")
    assert doc.data == {"pci": "0000:18:00.0", "flag": "yes", "port": "1:30", "n": 15,
                        "x": 1.5, "t": True, "nothing": None, "quoted": "42"}


@pytest.mark.parametrize("use_rust", [True, False])
def test_merge_keys_fill_in_without_overriding(use_rust: bool,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    if not use_rust:
        monkeypatch.setattr(yamldoc, "yaml_rs", None)
    doc = parse_yaml("base: &b {speed: 400, mtu: 9000}\nnic:\n  <<: *b\n  mtu: 4200\n", "t")
    assert doc.data["nic"] == {"speed": 400, "mtu": 4200}
    assert doc.line_of(("nic", "speed")) == 1


@pytest.mark.parametrize("use_rust", [True, False])
def test_duplicate_keys_are_an_error_with_the_line_of_the_second(
        use_rust: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not use_rust:
        monkeypatch.setattr(yamldoc, "yaml_rs", None)
    with pytest.raises(InputError) as caught:
        parse_yaml("a: 1\nb:\n  c: 2\n  c: 3\n", "dup.yaml")
    assert [str(p) for p in caught.value.problems] == [
        "dup.yaml:4: duplicate key 'c' (the later value would win)"]


@pytest.mark.parametrize("text, line", [
    ("a: [1, 2\nb: 3\n", 2),
    ("a: 1\n  b: 2\n", 2),
    ("x:\n  - a\n - b\n", 3),
])
def test_syntax_errors_name_file_and_line(text: str, line: int) -> None:
    with pytest.raises(InputError) as caught:
        parse_yaml(text, "bad.yaml")
    (problem,) = caught.value.problems
    assert (problem.source, problem.line) == ("bad.yaml", line)
    assert problem.message.startswith("invalid YAML")


def test_several_documents_in_one_file_are_refused() -> None:
    with pytest.raises(InputError, match=r"bad\.yaml:2: invalid YAML: expected a single document"):
        parse_yaml("a: 1\n---\nb: 2\n", "bad.yaml")


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.yaml: no such file"):
        load_yaml(tmp_path / "missing.yaml", "missing.yaml")
    with pytest.raises(InputError, match="is a folder, expected a YAML file"):
        load_yaml(tmp_path)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match="not UTF-8"):
        load_yaml(binary)


def _laughs(levels: int, width: int = 9) -> str:
    """A "billion laughs" document: each level an anchored list of `width` aliases to the last."""
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("use_rust", [True, False])
def test_an_alias_bomb_is_refused_at_the_alias_that_tips_it(
        use_rust: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not use_rust:
        monkeypatch.setattr(yamldoc, "yaml_rs", None)
    # 9**9 values once expanded: refused after measuring, never built.
    with pytest.raises(InputError) as caught:
        parse_yaml(_laughs(9), "bomb.yaml")
    (problem,) = caught.value.problems
    assert (problem.source, problem.line) == ("bomb.yaml", 6)  # 9**6 > 100,000 first here
    assert "aliases expand to more than 100,000 values" in problem.message


def test_modest_aliases_and_merges_still_read() -> None:
    doc = parse_yaml(_laughs(4), "ok.yaml")  # 9**4 = 6,561 values
    assert len(doc.data["a3"]) == 9 and doc.data["a3"][0][0][0] == ["lol"] * 9
    merged = parse_yaml("base: &b {mtu: 9000}\nleaf: {<<: *b, name: x}\n", "m.yaml")
    assert merged.data["leaf"] == {"mtu": 9000, "name": "x"}


@pytest.mark.parametrize(("text", "line"), [
    ("- " * 20_000 + "x\n", 1),  # compact block sequences: yaml-rs would overflow its stack
    ("".join(" " * i + f"k{i}:\n" for i in range(150)) + " " * 150 + "x\n", 101),
    ("a: " + "[" * 150 + "]" * 150 + "\n", 1),
    ("a: &a [1, *a]\n", 1),  # an alias inside its own anchor: endless
])
def test_excessive_nesting_is_refused_with_its_line(text: str, line: int) -> None:
    with pytest.raises(InputError) as caught:
        parse_yaml(text, "deep.yaml")
    (problem,) = caught.value.problems
    assert (problem.source, problem.line) == ("deep.yaml", line), problem
    assert "deeper than 100 levels" in problem.message or "endless" in problem.message


def test_nesting_within_the_limit_reads() -> None:
    doc = parse_yaml("".join(" " * i + f"k{i}:\n" for i in range(60)) + " " * 60 + "x\n", "ok")
    value = doc.data
    for i in range(60):
        value = value[f"k{i}"]
    assert value == "x"


def test_an_alias_right_after_a_json_key_colon_is_measured_too() -> None:
    text = '{"a0": &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9], ' + ", ".join(
        f'"a{i}": &a{i} [' + ", ".join([f'"x":*a{i - 1}'] * 9) + "]" for i in range(1, 9)) + "}"
    with pytest.raises(InputError, match="aliases expand to more than 100,000"):
        parse_yaml(text, "flow.json")


def test_an_alias_that_would_nest_too_deep_is_refused() -> None:
    inner = "a: &deep " + "[" * 60 + "]" * 60 + "\n"
    assert parse_yaml(inner + "b: *deep\n", "ok.yaml").data["b"] == parse_yaml(
        inner, "x").data["a"]
    nested = inner + "b: " + "[" * 45 + "*deep" + "]" * 45 + "\n"
    with pytest.raises(InputError) as caught:
        parse_yaml(nested, "deep.yaml")
    assert [str(p) for p in caught.value.problems] == [
        "deep.yaml:2: alias *deep nests the document deeper than 100 levels"]


def test_ordinary_fabric_files_are_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    from fabtui.paths import demo_topology, shipped_templates

    def walked(text: str, source: str) -> None:
        raise AssertionError(f"{source} was walked for aliases and depth")

    monkeypatch.setattr(yamldoc, "_check_expansion", walked)
    files = [demo_topology(), *sorted(shipped_templates().glob("*.yaml"))]
    for path in files:
        assert load_yaml(path).data
    many_flows = "links:\n" + "".join(f'  - {{a: "n{i}:mlx5_0", b: "leaf:Ethernet{i}"}}\n'
                                      for i in range(2_000))
    assert len(parse_yaml(many_flows, "flows.yaml").data["links"]) == 2_000
